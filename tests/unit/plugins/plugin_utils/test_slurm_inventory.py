# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm inventory plugin's engine (plugin_utils/_slurm_inventory.py) on the real 22.05.8 recording
(tests/unit/fixtures/slurm/inventory) and on hand-made node names (HANDMADE)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import slurm
from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _slurm_inventory as inv

TEXT_2205 = Path(__file__).resolve().parents[2] / 'fixtures' / 'slurm' / 'inventory' / '22.05.8' / \
    'scontrol_show_nodes_o.txt'


@pytest.fixture(scope='module')
def nodes():
    return slurm.parse_nodes_text(TEXT_2205.read_text())


def test_groups_and_vars_of_the_2205_cluster(nodes):
    r = inv.build(nodes, {'profiles': [{'profile': 'a100', 'gres_model': ['a100', 'v100']},
                                       {'profile': 'h100_ib', 'feature': 'ib_ndr'}]})
    g = r['groups']
    assert g['slurm_partition_gpu'] == ['slurminv-n1', 'slurminv-n2', 'slurminv-n3']
    assert g['slurm_state_idle'] == ['slurminv-n1', 'slurminv-n3'] and g['slurm_state_mixed'] == ['slurminv-n2']
    assert g['slurm_state_drain'] == g['slurm_state_drained'] == ['slurminv-n3'] and 'slurm_state_draining' not in g
    assert g['slurm_state_down'] == ['slurminv-n4']
    assert g['profile_h100_ib'] == ['slurminv-n1', 'slurminv-n2'] and g['profile_a100'] == ['slurminv-n3']
    assert r['children'] == {'gpu_nodes': ['profile_h100_ib', 'profile_a100']}
    n4 = r['hosts']['slurminv-n4']
    assert 'gpufleet_profile' not in n4 and (n4['gpufleet_expect_gpus'], n4['slurm_partition']) == (0, 'all')
    assert r['warnings'] == []


def test_first_matching_rule_wins_and_state_rules(nodes):
    rules = [{'profile': 'out', 'state': ['drained', 'down']}, {'profile': 'gpu', 'partition': 'gpu'}]
    r = inv.build(nodes, {'profiles': rules, 'profile_default': 'rest'})
    assert [r['hosts']['slurminv-n%d' % i]['gpufleet_profile'] for i in (1, 2, 3, 4)] == ['gpu', 'gpu', 'out', 'out']


def test_when_rule_uses_the_evaluator(nodes):
    seen = []

    def evaluate(expr, hv):
        seen.append((expr, hv['slurm_node_name']))
        return hv['slurm_gpus'] == 8

    r = inv.build(nodes, {'profiles': [{'profile': 'eight', 'when': 'slurm_gpus == 8', 'partition': 'gpu'}]}, evaluate)
    eight = sorted(h for h, v in r['hosts'].items() if v.get('gpufleet_profile') == 'eight')
    assert eight == ['slurminv-n1', 'slurminv-n2']
    assert ('slurm_gpus == 8', 'slurminv-n4') not in seen  # the partition condition failed first


def test_unsafe_names_duplicates_and_missing_partitions_HANDMADE(nodes):
    odd = copy.deepcopy(nodes[:2])
    odd[0]['partitions'] = ['gpu-a.long']
    odd[0]['features'] = ['rack:r01', 'ib ndr']
    odd.append(copy.deepcopy(odd[1]))  # listed twice
    r = inv.build(odd, {'partitions': ['gpu-a.long', 'gpu', 'nope']})
    assert r['hosts']['slurminv-n1'] and sorted(r['groups']['slurm_partition_gpu_a_long']) == ['slurminv-n1']
    assert 'slurm_feature_rack_r01' in r['groups'] and 'slurm_feature_ib_ndr' in r['groups']
    assert any('listed twice' in w for w in r['warnings'])
    assert any('nope' in w and 'partitions' in w for w in r['warnings'])
    assert inv.build([], {})['warnings'] == ['Slurm listed no node']


def test_ansible_host_only_when_node_addr_differs_HANDMADE(nodes):
    same = copy.deepcopy(nodes[0])
    same['node_addr'] = same['name']
    assert 'ansible_host' not in inv.build([same], {})['hosts'][same['name']]
    assert inv.build(nodes[:1], {})['hosts']['slurminv-n1']['ansible_host'] == '10.254.77.194'


@pytest.mark.parametrize('options, want', [
    ({'profiles': {'a': 1}}, 'profiles must be a list'),
    ({'profiles': [{'profile': 'x', 'state': 3}]}, 'profiles[0].state'),
    ({'profiles': [{'profile': 'ok', 'partition': 'gpu'}, {'partition': 'gpu'}]}, 'profiles[1].profile'),
    ({'partitions': 'gpu'}, 'partitions must be a list'),
    ({'timeout': True}, 'timeout'),
    ({'profile_default': 'a-b'}, 'profile_default'),
])
def test_option_errors_name_the_option(options, want):
    errors = inv.option_errors(options)
    assert errors and any(want in e for e in errors), errors


def test_good_options_have_no_errors():
    assert inv.option_errors({'profiles': [{'profile': 'h100_ib', 'feature': ['ib_ndr'], 'when': 'slurm_gpus > 0'}],
                              'profile_default': 'other', 'profile_parent_group': 'gpu_nodes', 'partitions': ['gpu'],
                              'timeout': 30}) == []
