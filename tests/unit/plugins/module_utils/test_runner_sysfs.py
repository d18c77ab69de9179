# -*- coding: utf-8 -*-
"""The one runner (_runner.py) and the one kernel-file reader (_sysfs.py): hand-made cases."""

from __future__ import annotations

import ast
import os
import stat
import time
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs as sysfs


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text('#!/bin/sh\n' + body + '\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_run_ok_locale_and_quoting(tmp_path):
    exe = _script(tmp_path, 'loc', 'echo "$LC_ALL $EXTRA"; echo err >&2')
    res = runner.run([exe, 'a b'], env_update={'EXTRA': 'x'})
    assert res['rc'] == 0 and res['stdout'] == 'C x\n' and res['stderr'] == 'err\n'
    assert res['cmd'] == "%s 'a b'" % exe and res['start_error'] is None
    assert runner.failure(res) is None


def test_run_failure_names_rc_and_last_line(tmp_path):
    exe = _script(tmp_path, 'bad', 'echo first >&2; echo "the reason" >&2; exit 3')
    res = runner.run([exe])
    assert runner.failure(res) == 'exited with rc=3 (the reason)'
    assert runner.failure(res, ok_rcs=(0, 3)) is None
    assert runner.rc_failure('rung', 'tool', res, None) == 'rung: tool exited with rc=3 (the reason); cmd: %s' % exe


def test_run_missing_and_unstartable(tmp_path):
    res = runner.run([str(tmp_path / 'absent')])
    assert res['rc'] == runner.START_RC and 'No such file' in res['start_error']
    garbage = tmp_path / 'garbage'
    garbage.write_bytes(b'\x7fELF\x00junk')
    garbage.chmod(0o755)
    res = runner.run([str(garbage)])
    assert res['rc'] == runner.START_RC
    assert runner.failure(res).startswith('could not be started: ')


def test_timeout_kills_the_process_group(tmp_path):
    marker = tmp_path / 'child-alive'
    exe = _script(tmp_path, 'slow', '(sleep 3; touch %s) & sleep 30' % marker)
    started = time.monotonic()
    res = runner.run([exe], timeout=1)
    assert res['timed_out'] and res['rc'] == runner.TIMEOUT_RC
    assert time.monotonic() - started < 10
    assert runner.failure(res, timeout=1) == 'did not finish within timeout 1 s (killed)'
    time.sleep(3.5)
    assert not marker.exists(), 'a child of the timed-out program survived'


def test_binary_output_is_kept_as_bytes(tmp_path):
    exe = _script(tmp_path, 'bin', r"printf 'ok\377'")
    res = runner.run([exe], binary=True)
    assert res['stdout'] == b'ok\xff'
    res = runner.run([exe])
    assert res['stdout'] == 'ok\ufffd'


def test_find(tmp_path):
    exe = _script(tmp_path, 'tool', 'true')
    plain = tmp_path / 'plain'
    plain.write_text('x')

    class Module:
        def get_bin_path(self, name, required=False, opt_dirs=None):
            return os.path.join(opt_dirs[0], name) if opt_dirs else None

    assert runner.find(Module(), exe) == exe
    assert runner.find(Module(), str(plain)) is None
    assert runner.find(Module(), 'tool') is None
    assert runner.find(Module(), 'tool', opt_dirs=[str(tmp_path)]) == exe
    assert runner.find(Module(), '') is None


def test_sysfs_reader(tmp_path):
    (tmp_path / 'a').write_bytes(b' 42\n')
    (tmp_path / 'hex').write_text('0x15b3\n')
    (tmp_path / 'empty').write_text('\n')
    (tmp_path / 'vpd').write_bytes(b'caf\xe9\n')
    (tmp_path / 'dir').mkdir()
    assert sysfs.read_text(str(tmp_path / 'a')) == '42'
    assert sysfs.read_int(str(tmp_path / 'a')) == 42
    assert sysfs.read_int(str(tmp_path / 'hex'), 16) == 0x15b3
    assert sysfs.read_int(str(tmp_path / 'vpd')) is None
    assert sysfs.read_text(str(tmp_path / 'empty')) == ''
    assert sysfs.read_text(str(tmp_path / 'empty'), empty=None) is None
    assert sysfs.read_text(str(tmp_path / 'vpd')) == 'caf\xe9'
    assert sysfs.read_text(str(tmp_path / 'dir')) is None
    assert sysfs.read_text(str(tmp_path / 'absent')) is None
    assert sysfs.listdir(str(tmp_path / 'absent')) == []
    assert sysfs.listdir(str(tmp_path)) == ['a', 'dir', 'empty', 'hex', 'vpd']


# The parsers (docs/architecture.md: one per tool or kernel interface) start no process: only engines import the
# runner. Each parser's imports, read from its source. (docker_daemon_json.py holds its module's engine too.)
PARSERS = ('bench_common', 'bonding', 'dcb', 'dcgmi', 'fabricmanager', 'gpu_burn', 'ibstat',
           'ibv_devinfo', 'irq', 'mlnx_qos', 'mlx_fw', 'nccl_tests', 'nvidia_smi', 'ofed_info', 'p2p_bandwidth',
           'perftest', 'roce_sysfs', 'slurm', 'ssh_login', 'sysfs_ib', 'sysfs_pci')
PROCESS_MODULES = {'subprocess', 'ansible_collections.gpufleet.cluster.plugins.module_utils._runner',
                   'ansible.module_utils.basic'}


@pytest.mark.parametrize('name', PARSERS)
def test_parsers_start_no_process(name):
    source = (Path(runner.__file__).parent / ('%s.py' % name)).read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
            imported.update('%s.%s' % (node.module, alias.name) for alias in node.names)
    assert not imported & PROCESS_MODULES, imported & PROCESS_MODULES
    assert 'os.system' not in source and 'os.popen' not in source
