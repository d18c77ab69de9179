# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fw_facts' engine (module_utils/fw_facts.py) alone: a stand-in module object and HANDMADE stand-in tools
(the recorded outputs are exercised through the module in tests/unit/plugins/modules/test_fw_facts.py)."""

from __future__ import annotations

from ansible_collections.gpufleet.cluster.plugins.module_utils import fw_facts_engine as fw_facts

from .stand_ins import StandInModule, script, unstartable

PARAMS = dict(sysfs_root='/', query_flash=True, mstflint_path='', flint_path='', mlxup_path=None, ofed_info_path='',
              kernel_modules=['mlx5_core'], fabricmanager_path='', fabricmanager_service='', fabricmanager_log='',
              fail_on_error=False)


def test_find_records_each_tool(tmp_path):
    exe = script(tmp_path, 'mstflint', 'exit 0')
    (tmp_path / 'plain').write_text('x')
    probe = fw_facts.Probe(StandInModule(bin_paths={'flint': '/opt/mft/bin/flint'}))
    assert probe.find('mstflint', exe) == exe
    assert probe.find('flint', 'flint') == '/opt/mft/bin/flint'  # a bare name: the module's PATH lookup
    assert probe.find('ofed_info', '') is None
    assert probe.find('mlxup', str(tmp_path / 'plain')) is None  # not executable
    assert probe.tools == {'mstflint': exe, 'flint': '/opt/mft/bin/flint', 'ofed_info': None, 'mlxup': None}


def test_output_failure_is_an_error_and_a_warning(tmp_path):
    exe = script(tmp_path, 'flint', 'echo "first"; echo "  -E- Cannot open Device" >&2; exit 1')
    module = StandInModule()
    probe = fw_facts.Probe(module)
    assert probe.output([exe, '-d', '0000:3b:00.0', 'q']) is None
    assert probe.errors == ['%s -d 0000:3b:00.0 q failed (rc=1) - -E- Cannot open Device' % exe]
    assert module.warnings == probe.errors


def test_output_of_a_program_the_os_cannot_start(tmp_path):
    exe = unstartable(tmp_path, 'ofed_info')
    probe = fw_facts.Probe(StandInModule())
    assert probe.output([str(exe), '-s']) is None
    assert probe.errors[0].startswith("%s -s failed (rc=127) - cannot be started: " % exe)


def test_output_text_and_rc_ignored_when_asked(tmp_path):
    exe = script(tmp_path, 'systemctl', r'printf "inactive \377\n"; exit 3')
    probe = fw_facts.Probe(StandInModule())
    assert probe.output([exe, 'is-active', 'x'], check_rc=False) == 'inactive \ufffd\n'
    assert probe.errors == []


def test_service_state_and_log_tail(tmp_path):
    systemctl = script(tmp_path, 'systemctl', 'echo "$1 $2"; exit 3')
    log = tmp_path / 'fm.log'
    log.write_bytes(b'x' * (fw_facts.LOG_TAIL_BYTES + 10) + b'\n')
    assert len(fw_facts.read_log_tail(str(log))) == fw_facts.LOG_TAIL_BYTES
    probe = fw_facts.Probe(StandInModule(bin_paths={'systemctl': systemctl}))
    facts = fw_facts.fabricmanager_facts(probe, dict(PARAMS, fabricmanager_service='nvidia-fabricmanager'))
    assert facts['service_state'] == 'is-active nvidia-fabricmanager' and facts['version'] is None
    assert probe.tools == {'nv-fabricmanager': None, 'systemctl': systemctl} and probe.errors == []


def test_systemctl_the_os_cannot_start_is_reported_like_a_failed_tool(tmp_path):
    bad = unstartable(tmp_path, 'systemctl')
    probe = fw_facts.Probe(StandInModule(bin_paths={'systemctl': bad}))
    facts = fw_facts.fabricmanager_facts(probe, dict(PARAMS, fabricmanager_service='nvidia-fabricmanager'))
    assert facts['service_state'] is None
    assert probe.errors[0].startswith('%s is-active nvidia-fabricmanager failed (rc=127) - cannot be started' % bad)


def test_kernel_module_versions(tmp_path):
    (tmp_path / 'sys' / 'module' / 'mlx5_core').mkdir(parents=True)
    (tmp_path / 'sys' / 'module' / 'mlx5_core' / 'version').write_text('24.10-1.1.4\n')
    (tmp_path / 'sys' / 'module' / 'ib_core').mkdir()  # loaded, no version file
    assert fw_facts.kernel_module_versions(str(tmp_path), ['mlx5_core', 'ib_core', 'nvidia']) == \
        {'mlx5_core': '24.10-1.1.4'}


def test_input_errors_name_the_option(tmp_path):
    assert fw_facts.input_errors(dict(PARAMS, sysfs_root=str(tmp_path))) == []
    errors = fw_facts.input_errors(dict(PARAMS, sysfs_root=str(tmp_path), kernel_modules=['ok', '../x'],
                                        fabricmanager_service='--now', fabricmanager_log=str(tmp_path)))
    assert [e.split(' ', 1)[0] for e in errors] == ['kernel_modules[1]', 'fabricmanager_service', 'fabricmanager_log']
    assert fw_facts.input_errors(dict(PARAMS, sysfs_root='/x\x00'))[0].startswith('sysfs_root contains a NUL byte')


def test_gather_without_tools(tmp_path):
    module = StandInModule()
    facts = fw_facts.gather(module, dict(PARAMS, sysfs_root=str(tmp_path), mstflint_path='mstflint',
                                         flint_path='flint'))
    assert facts == {'hca': {}, 'ofed': None, 'kernel_modules': {},
                     'fabricmanager': {'version': None, 'service_state': None, 'log': None}, 'mlxup': None,
                     'tools': {'mstflint': None, 'flint': None, 'ofed_info': None, 'nv-fabricmanager': None},
                     'errors': []}
    assert module.warnings == []
