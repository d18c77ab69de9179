# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs that used to end in a Python traceback (or in a run with nonsense settings): each is now refused
with ``fail_json`` naming the option and what is allowed, before any tool runs or any file changes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.modules import (
    bond_facts,
    dcgm_diag,
    docker_daemon_json,
    gpu_burn,
    gpu_facts,
    nccl_bench,
    p2p_bandwidth,
    rdma_bw,
    slurm_node,
)

SMI_XML = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made' / 'nvidia-smi-q-x-h100-mig-HANDMADE.xml'


def fake_tool(directory, name, out=b'', rc=0):
    """``directory/name`` printing ``out``; every call is appended to ``directory/name.calls``."""
    data = directory / (name + '.out')
    data.write_bytes(out)
    path = directory / name
    path.write_text('#!/bin/sh\necho "$*" >> "%s.calls"\ncat "%s"\nexit %d\n' % (path, data, rc))
    path.chmod(0o755)
    return path


def tree_state(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            data = None
            if stat.S_ISREG(st.st_mode):
                with open(path, 'rb') as handle:
                    data = handle.read()
            elif stat.S_ISLNK(st.st_mode):
                data = os.readlink(path)
            out[os.path.relpath(path, str(root))] = (st.st_mode, st.st_mtime_ns, data)
    return out


# ---------------------------------------------------------------- nccl_bench env
@pytest.mark.parametrize('env, wanted', [
    ({'NCCL_IB_HCA=x': 'mlx5_0'}, 'env: variable name \'NCCL_IB_HCA=x\' must not contain "=" or a NUL byte'),
    ({'NCCL\x00DEBUG': 'INFO'}, 'env: variable name \'NCCL\\x00DEBUG\' must not contain "=" or a NUL byte'),
    ({'NCCL_DEBUG': 'IN\x00FO'}, "env.NCCL_DEBUG contains a NUL byte ('IN\\x00FO'); values cannot hold NUL"),
    ({'': 'x'}, "env: variable names must be non-empty strings, got ''"),
], ids=['equals-in-name', 'nul-in-name', 'nul-in-value', 'empty-name'])
def test_nccl_bench_bad_env_refused_before_the_run(tmp_path, run_module, env, wanted):
    exe = fake_tool(tmp_path, 'all_reduce_perf')
    result = run_module(nccl_bench.main, {'executable': str(exe), 'env': env})
    assert result['failed'] is True and wanted in result['msg'], result['msg']
    assert not (tmp_path / 'all_reduce_perf.calls').exists()  # refused before the tool ran


def test_nccl_bench_bad_env_refused_with_mpirun_too(tmp_path, run_module):
    mpirun = fake_tool(tmp_path, 'mpirun')
    result = run_module(nccl_bench.main, {'launcher': 'mpirun', 'launcher_executable': str(mpirun),
                                          'hosts': ['gpu01'], 'env': {'A=B': '1'}})
    assert result['failed'] is True and result['msg'].startswith('env: variable name')
    assert not (tmp_path / 'mpirun.calls').exists()


# ---------------------------------------------------------------- rdma_bw loopback with a bad binary
def test_rdma_bw_loopback_binary_not_executable(tmp_path, run_module):
    exe = tmp_path / 'ib_write_bw'
    exe.write_text('#!/bin/sh\necho ran >> %s\n' % (tmp_path / 'ran'))
    exe.chmod(0o644)
    result = run_module(rdma_bw.main, {'executable': str(exe), 'role': 'loopback'})
    assert result['failed'] is True
    assert result['msg'] == ('executable %s exists but is not executable (mode 0644); executable must be an '
                             'executable file' % exe)
    assert not (tmp_path / 'ran').exists()


def test_rdma_bw_loopback_binary_the_os_cannot_start(tmp_path, run_module):
    exe = tmp_path / 'ib_write_bw'
    exe.write_bytes(b'\x00\x01 not a program\n')  # executable bit, but no #! and not ELF: ENOEXEC
    exe.chmod(0o755)
    result = run_module(rdma_bw.main, {'executable': str(exe), 'role': 'loopback'})
    assert result['failed'] is True and result['role'] == 'loopback'
    assert result['msg'].startswith('rdma (ib_write_bw): executable %s could not be started (Exec format error); '
                                    'executable must be a perftest program' % exe)


# ---------------------------------------------------------------- docker_daemon_json
@pytest.fixture
def no_dockerd(monkeypatch):
    monkeypatch.setattr(AnsibleModule, 'get_bin_path', lambda self, *a, **kw: None)


def test_docker_empty_path_refused(tmp_path, run_module, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_module(docker_daemon_json.main, {'path': '', 'config': {'debug': True}, 'validate': False})
    assert result['failed'] is True
    assert result['msg'] == 'path must name the daemon.json file (default /etc/docker/daemon.json), got an empty string'
    assert list(tmp_path.iterdir()) == []


def test_docker_path_is_a_directory_refused(tmp_path, run_module):
    target = tmp_path / 'docker'
    target.mkdir()
    result = run_module(docker_daemon_json.main, {'path': str(target), 'config': {'debug': True}, 'validate': False})
    assert result['failed'] is True
    assert result['msg'] == ('path %s is a directory; path must name the daemon.json file (for example %s/daemon.json)'
                             % (target, target))
    assert list(target.iterdir()) == []


def test_docker_dropin_that_is_a_directory_refused(tmp_path, run_module):
    unit_dir = tmp_path / 'lib' / 'systemd' / 'system'
    unit_dir.mkdir(parents=True)
    (unit_dir / 'docker.service').write_text('[Service]\nExecStart=/usr/sbin/dockerd\n')
    (unit_dir / 'docker.service.d' / 'hosts.conf').mkdir(parents=True)
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": false}\n')
    before = tree_state(tmp_path)
    result = run_module(docker_daemon_json.main, {'path': str(path), 'config': {'hosts': ['fd://']},
                                                  'systemd_root': str(tmp_path), 'validate': False})
    assert result['failed'] is True and result['changed'] is False
    assert result['msg'] == ('systemd_root: %s is a directory; unit files and drop-ins (*.conf) must be regular '
                             'files, remove or rename it (file untouched)' % (unit_dir / 'docker.service.d' / 'hosts.conf'))
    assert tree_state(tmp_path) == before


def test_docker_symlink_is_written_through_and_kept(tmp_path, run_module, no_dockerd):
    real_dir = tmp_path / 'srv' / 'config'
    real_dir.mkdir(parents=True)
    real = real_dir / 'daemon.json'
    real.write_text('{\n  "log-level": "warn"\n}\n')
    os.chmod(real, 0o640)
    link_dir = tmp_path / 'etc' / 'docker'
    link_dir.mkdir(parents=True)
    link = link_dir / 'daemon.json'
    link.symlink_to(real)

    # check mode with diff: nothing changes, the diff names the path the user gave
    before = tree_state(tmp_path)
    res = run_module(docker_daemon_json.main, {'path': str(link), 'config': {'debug': True},
                                               '_ansible_check_mode': True, '_ansible_diff': True})
    assert res['changed'] is True and res['diff']['before_header'] == str(link)
    assert '"debug": true' in res['diff']['after'] and tree_state(tmp_path) == before

    res = run_module(docker_daemon_json.main, {'path': str(link), 'config': {'debug': True}, 'backup': True})
    assert res['changed'] is True
    assert link.is_symlink() and os.readlink(str(link)) == str(real)  # the link stays
    assert json.loads(real.read_text()) == {'log-level': 'warn', 'debug': True}  # its target is updated
    assert os.stat(real).st_mode & 0o777 == 0o640
    assert res['backup_file'].startswith(str(real) + '.') and Path(res['backup_file']).read_text().startswith('{')
    assert sorted(p.name for p in link_dir.iterdir()) == ['daemon.json']  # no temp file next to the link
    assert not [p for p in real_dir.iterdir() if p.name.startswith('.daemon.json.')]

    # a second run changes nothing
    again = run_module(docker_daemon_json.main, {'path': str(link), 'config': {'debug': True}})
    assert again['changed'] is False


def test_docker_relative_symlink_into_other_dir(tmp_path, run_module, no_dockerd):
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    (tmp_path / 'b' / 'real.json').write_text('{}')
    (tmp_path / 'a' / 'daemon.json').symlink_to('../b/real.json')
    res = run_module(docker_daemon_json.main, {'path': str(tmp_path / 'a' / 'daemon.json'), 'config': {'x': 1}})
    assert res['changed'] is True and (tmp_path / 'a' / 'daemon.json').is_symlink()
    assert json.loads((tmp_path / 'b' / 'real.json').read_text()) == {'x': 1}


def test_docker_symlink_loop_refused(tmp_path, run_module):
    link = tmp_path / 'daemon.json'
    link.symlink_to(link)
    res = run_module(docker_daemon_json.main, {'path': str(link), 'config': {'debug': True}, 'validate': False})
    assert res['failed'] is True
    assert res['msg'] == ('path %s is a symlink loop; path must name the daemon.json file or a symlink to it' % link)
    assert link.is_symlink()


# ---------------------------------------------------------------- bond_facts
def test_bond_facts_non_utf8_file_fails_naming_it(tmp_path, run_module):
    base = tmp_path / 'proc' / 'net' / 'bonding'
    base.mkdir(parents=True)
    (base / 'bond0').write_bytes(b'Ethernet Channel Bonding Driver: v6.1\n\nBonding Mode: \xff\xfe load balancing\n')
    result = run_module(bond_facts.main, {'proc_root': str(tmp_path)})
    assert result['failed'] is True
    assert result['msg'] == ("proc_root: %s is not UTF-8 text (byte 53); proc_root must hold the kernel's "
                             "proc/net/bonding files (ASCII text)" % (base / 'bond0'))


def test_bond_facts_proc_root_must_be_a_directory(tmp_path, run_module):
    result = run_module(bond_facts.main, {'proc_root': str(tmp_path / 'nowhere')})
    assert result['failed'] is True and result['msg'].startswith('proc_root must be an existing directory')


# ---------------------------------------------------------------- gpu_facts
def test_gpu_facts_non_utf8_output_fails_naming_the_option(tmp_path, run_module):
    smi = fake_tool(tmp_path, 'nvidia-smi', b'<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>\xff\xfe'
                                            b'</driver_version></nvidia_smi_log>\n')
    result = run_module(gpu_facts.main, {'executable': str(smi)})
    assert result['failed'] is True
    assert result['msg'] == ('%s -q -x printed output that is not UTF-8 text (byte 55, rc=0); executable must be '
                             'nvidia-smi, whose -q -x output is UTF-8 XML' % smi)
    assert 'ansible_facts' not in result


def test_gpu_facts_non_utf8_topology_warns_and_keeps_facts(tmp_path, run_module):
    data = tmp_path / 'q.xml'
    data.write_bytes(SMI_XML.read_bytes())
    smi = tmp_path / 'nvidia-smi'
    smi.write_text('#!/bin/sh\nif [ "$1" = topo ]; then printf "\\377\\376GPU0\\n"; else cat "%s"; fi\n' % data)
    smi.chmod(0o755)
    result = run_module(gpu_facts.main, {'executable': str(smi)})
    assert 'failed' not in result and result['ansible_facts']['nvidia_gpu']['topology'] == {}
    assert 'topo -m printed output that is not UTF-8 text (byte 0); topology left empty' in json.dumps(result['warnings'])


@pytest.mark.parametrize('kind', ['directory', 'not-executable', 'empty'])
def test_gpu_facts_bad_executable_refused(tmp_path, run_module, kind):
    path = tmp_path / 'nvidia-smi'
    if kind == 'directory':
        path.mkdir()
    elif kind == 'not-executable':
        path.write_text('#!/bin/sh\n')
        path.chmod(0o644)
    result = run_module(gpu_facts.main, {'executable': '' if kind == 'empty' else str(path)})
    assert result['failed'] is True and result['msg'].startswith('executable ')


# ---------------------------------------------------------------- dcgm_diag level
@pytest.mark.parametrize('level', ['', '   ', '0', '5', '-r', 'memory,', 'pcie;reboot'])
def test_dcgm_diag_bad_level_refused(tmp_path, run_module, level):
    exe = fake_tool(tmp_path, 'dcgmi')
    result = run_module(dcgm_diag.main, {'executable': str(exe), 'level': level})
    assert result['failed'] is True
    assert result['msg'].startswith('level must be a run level 1, 2, 3 or 4, or comma-separated test names')
    assert not (tmp_path / 'dcgmi.calls').exists()


@pytest.mark.parametrize('level', ['1', '4', 'memory,pcie', 'targeted stress', ' 2 '])
def test_dcgm_diag_good_levels_pass_the_check(tmp_path, run_module, level):
    exe = fake_tool(tmp_path, 'dcgmi')
    result = run_module(dcgm_diag.main, {'executable': str(exe), 'level': level, '_ansible_check_mode': True})
    assert result['skipped'] is True and 'diag -r %s' % ("'%s'" % level.strip() if ' ' in level.strip()
                                                         else level.strip()) in result['cmd']


# ---------------------------------------------------------------- timeout <= 0 everywhere
TIMEOUT_MODULES = [
    (nccl_bench, {}), (rdma_bw, {}), (gpu_burn, {}), (dcgm_diag, {}), (p2p_bandwidth, {}),
]


@pytest.mark.parametrize('timeout', [0, -1, 2592001])
@pytest.mark.parametrize('mod', [m for m, dummy in TIMEOUT_MODULES], ids=lambda m: m.__name__.rsplit('.', 1)[-1])
def test_timeout_out_of_range_refused(tmp_path, run_module, mod, timeout):
    exe = fake_tool(tmp_path, 'tool')
    result = run_module(mod.main, {'executable': str(exe), 'timeout': timeout})
    assert result['failed'] is True
    assert 'timeout must be an integer from 1 to 2592000 seconds, got %d' % timeout in result['msg']
    assert not (tmp_path / 'tool.calls').exists()


@pytest.mark.parametrize('timeout', [0, -1, 2592001])
def test_slurm_node_timeout_out_of_range_refused(tmp_path, run_module, timeout):
    scontrol = fake_tool(tmp_path, 'scontrol')
    squeue = fake_tool(tmp_path, 'squeue')
    result = run_module(slurm_node.main, {'name': 'gpu01', 'timeout': timeout, 'wait_idle': True,
                                          'scontrol_path': str(scontrol), 'squeue_path': str(squeue)})
    assert result['failed'] is True
    assert result['msg'] == 'timeout must be an integer from 1 to 2592000 seconds, got %d' % timeout
    assert not (tmp_path / 'scontrol.calls').exists()


def test_gpu_burn_duration_zero_refused(tmp_path, run_module):
    exe = fake_tool(tmp_path, 'gpu_burn')
    result = run_module(gpu_burn.main, {'executable': str(exe), 'duration': 0})
    assert result['failed'] is True
    assert result['msg'] == 'duration must be an integer from 1 to 2592000 seconds, got 0'
