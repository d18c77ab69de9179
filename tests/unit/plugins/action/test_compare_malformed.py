# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_compare / fleet_compare in-process on malformed facts and a malformed hca_match: a failed result whose
message names the key, never a traceback."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ansible.module_utils import _internal as module_utils_internal


@pytest.fixture(autouse=True)
def controller_flag(monkeypatch):
    """Importing controller code marks the process as the controller; put the flag back after each test so
    later module tests (warnings go into the result only outside the controller) are not affected."""
    monkeypatch.setattr(module_utils_internal, 'is_controller', module_utils_internal.is_controller)


def _plugins():
    from ansible_collections.gpufleet.cluster.plugins.action import fleet_compare, node_compare
    return fleet_compare, node_compare


def run_action(name, args, task_vars=None):
    from ansible.playbook.task import Task
    plugin = dict(zip(('fleet_compare', 'node_compare'), _plugins()))[name]
    task = Task()
    task.args = args
    task.action = 'gpufleet.cluster.' + name
    action = plugin.ActionModule(task, SimpleNamespace(_shell=SimpleNamespace(tmpdir=None)), None, None, None, None)
    action._load_name = 'gpufleet.cluster.' + name
    return action.run(task_vars=dict({'inventory_hostname': 'node01'}, **(task_vars or {})))


@pytest.mark.parametrize('facts, wanted', [
    ({'nvidia_gpu': 'garbage'}, 'facts.nvidia_gpu must be a dict, got str'),
    ({'nvidia_gpu': {'gpus': ['x']}}, 'facts.nvidia_gpu.gpus[0] must be a dict, got str'),
    ({'nvidia_gpu': {'gpus': {'0': {}}}}, 'facts.nvidia_gpu.gpus must be a list, got dict'),
    ({'nvidia_gpu': {'gpus': [{'remapped_rows': 'yes'}]}}, 'facts.nvidia_gpu.gpus[0].remapped_rows must be a dict'),
    ({'infiniband': ['mlx5_0']}, 'facts.infiniband must be a dict, got list'),
    ({'infiniband': {'mlx5_0': {'ports': {'1': 'ACTIVE'}}}}, 'facts.infiniband.mlx5_0.ports.1 must be a dict, got str'),
    ({'firmware': {'hca': {'mlx5_0': {'flash': 'x'}}}}, 'facts.firmware.hca.mlx5_0.flash must be a dict, got str'),
    ({'pci': {'summary': {'nvidia_gpus': 'x'}}}, 'facts.pci.summary.nvidia_gpus must be a list, got str'),
    ({'packages': {'cuda': 'x'}}, 'facts.packages.cuda must be a list, got str'),
    ({'ibv_devinfo': ['x']}, 'facts.ibv_devinfo must be a string, got list'),
], ids=['gpu-str', 'gpu-list-item', 'gpus-dict', 'remapped', 'ib-list', 'port-str', 'flash', 'pci', 'pkgs', 'ibv'])
def test_node_compare_malformed_facts(facts, wanted):
    result = run_action('node_compare', {'facts': facts, 'expected': {
        'gpus': 1, 'hcas': 1, 'hca_ports': {'state': 'ACTIVE'}, 'hca_firmware': '1.0', 'gpu_memory_health': True,
        'packages': {'cuda': '12.4'}, 'ib_mtu': 4096}})
    assert result['failed'] is True and result['changed'] is False
    assert result['msg'].startswith('node_compare: malformed facts (not as the facts modules return them): ')
    assert wanted in result['msg']


def test_node_compare_malformed_host_facts_from_task_vars():
    result = run_action('node_compare', {'expected': {'gpus': 8}},
                        task_vars={'ansible_facts': {'nvidia_gpu': {'gpus': 'eight'}}})
    assert result['failed'] is True
    assert 'malformed ansible_facts' in result['msg'] and 'ansible_facts.nvidia_gpu.gpus must be a list' in result['msg']


@pytest.mark.parametrize('hca_match', ['[', '(mlx5', '*'])
def test_node_compare_bad_hca_match(hca_match):
    result = run_action('node_compare', {'facts': {}, 'expected': {'hca_match': hca_match}})
    assert result['failed'] is True
    assert result['msg'].startswith('node_compare: invalid expected: expected.hca_match is not a regular expression')


@pytest.mark.parametrize('hca_match', ['[', '(mlx5', '*', 'a{2,1}'])
def test_fleet_compare_bad_hca_match(hca_match):
    result = run_action('fleet_compare', {'hosts': {'a': {}, 'b': {}}, 'hca_match': hca_match})
    assert result['failed'] is True and result['changed'] is False
    assert result['msg'].startswith('fleet_compare: hca_match must be a regular expression (for example ^mlx5_), '
                                    'got %r' % hca_match)


@pytest.mark.parametrize('hosts, wanted', [
    ({'a': {'infiniband': {'mlx5_0': 'x'}}}, 'hosts.a.infiniband.mlx5_0 must be a dict, got str'),
    ({'a': {'infiniband': {'mlx5_0': {'fw_ver': ['1']}}}}, 'hosts.a.infiniband.mlx5_0.fw_ver must be a string'),
    ({'a': {'nvidia_gpu': {'gpus': [7]}}}, 'hosts.a.nvidia_gpu.gpus[0] must be a dict, got int'),
    ({'a': {'versions': {'hca_firmware': 'x'}}}, 'hosts.a.versions.hca_firmware must be a dict, got str'),
    ({'a': {'versions': {'hca_firmware': {'MT_1': 'x'}}}}, 'hosts.a.versions.hca_firmware.MT_1 must be a list'),
    ({'a': {'versions': {'vbios': 'x'}}}, 'hosts.a.versions.vbios must be a list, got str'),
], ids=['dev-str', 'fw-list', 'gpu-int', 'hcafw-str', 'board-str', 'vbios-str'])
def test_fleet_compare_malformed_facts(hosts, wanted):
    result = run_action('fleet_compare', {'hosts': hosts})
    assert result['failed'] is True and result['msg'].startswith('fleet_compare: ') and wanted in result['msg']


def test_fleet_compare_bad_profile_name():
    result = run_action('fleet_compare', {'hosts': {'a': {}}, 'profiles': {'a': {'name': 'x'}}})
    assert result['failed'] is True and 'profiles.<host> must be a profile name' in result['msg']


def test_good_facts_still_compare():
    facts = {'nvidia_gpu': {'executable': '/usr/bin/nvidia-smi', 'driver_version': '550.1',
                            'gpus': [{'index': 0, 'name': 'H100', 'vbios_version': '96.1'}]}}
    result = run_action('node_compare', {'facts': facts, 'expected': {'gpus': 1, 'driver_branch': '550'}})
    assert 'failed' not in result and result['deviations'] == []
    result = run_action('fleet_compare', {'hosts': {'a': facts, 'b': facts}, 'hca_match': '^mlx5_'})
    assert 'failed' not in result and result['deviations'] == []
