# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_facts: one call gives, key for key, what pci_facts, ib_port_facts, gpu_facts, fw_facts and bond_facts
give one call each - on one tree holding the HAND-MADE HGX PCI layout (tests/fixtures/hand_made), the recorded
mlx5 sysfs device (as test_fw_facts places it), a recorded bonding file and a stand-in nvidia-smi printing a
recorded XML and topology matrix; and a subset reads only what it names."""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import fw_facts_engine, node_facts_engine
from ansible_collections.gpufleet.cluster.plugins.modules import bond_facts, fw_facts, gpu_facts, ib_port_facts
from ansible_collections.gpufleet.cluster.plugins.modules import node_facts, pci_facts

from .test_fw_facts import build_tree
from .test_gpu_facts import DUAL_XML, TOPO_2GPU, fake_smi

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'hand_made'))
import sysfs_pci_tree  # noqa: E402  pylint: disable=wrong-import-position

BOND = 'bonding/telegraf-802.3ad-one-slave-down.txt'


@pytest.fixture
def node(corpus, corpus_file, tmp_path):
    """(params that keep every root and tool in tmp_path, the nvidia-smi call log)."""
    root = build_tree(corpus, tmp_path / 'root', [('mlx5_0', '0000:3b:00.0', '0c42:a103:0016:054c'),
                                                  ('mlx5_1', '0000:3b:00.1', '0c42:a103:0016:054c')])
    sysfs_pci_tree.build(str(root))
    bonds = root / 'proc' / 'net' / 'bonding'
    bonds.mkdir(parents=True)
    shutil.copy(str(corpus / BOND), str(bonds / 'bond0'))
    smi_dir = tmp_path / 'smi'
    smi_dir.mkdir()
    smi = fake_smi(smi_dir, corpus / DUAL_XML, corpus_file(TOPO_2GPU))
    absent = str(tmp_path / 'absent')
    params = dict(sysfs_root=str(root), proc_root=str(root), nvidia_smi_path=str(smi), mstflint_path=absent + '/mstflint',
                  flint_path=absent + '/flint', ofed_info_path=absent + '/ofed_info', fabricmanager_path=absent + '/fm',
                  fabricmanager_service='', fabricmanager_log='')
    return params, smi_dir / 'calls.log'


def single_modules(p):
    """Each facts module with the same roots and tools as ``p``: (main, args, fact key)."""
    fw = dict((k, p[k]) for k in ('sysfs_root', 'mstflint_path', 'flint_path', 'ofed_info_path', 'fabricmanager_path',
                                  'fabricmanager_service', 'fabricmanager_log'))
    return [(pci_facts.main, {'sysfs_root': p['sysfs_root']}, 'pci'),
            (ib_port_facts.main, {'sysfs_root': p['sysfs_root']}, 'infiniband'),
            (gpu_facts.main, {'executable': p['nvidia_smi_path']}, 'nvidia_gpu'),
            (fw_facts.main, fw, 'firmware'),
            (bond_facts.main, {'proc_root': p['proc_root']}, 'bonding')]


def test_one_call_equals_the_five_modules(node, run_module):
    params, calls = node
    result = run_module(node_facts.main, dict(params, _ansible_check_mode=True))
    assert result['changed'] is False and not result.get('failed'), result
    facts = result['ansible_facts']
    for main, args, key in single_modules(params):
        alone = run_module(main, args)
        assert not alone.get('failed'), alone
        assert facts[key] == alone['ansible_facts'][key], key
    # the content is real, not two empty dicts compared
    assert facts['pci']['summary']['nvidia_gpu_count'] == 8 and facts['pci']['summary']['nvswitch_count'] == 4
    assert sorted(facts['infiniband']) == ['mlx5_0', 'mlx5_1'] and sorted(facts['firmware']['hca']) == ['mlx5_0', 'mlx5_1']
    assert facts['nvidia_gpu']['count'] == 2 and facts['nvidia_gpu']['topology']['matrix']['GPU0']['mlx5_0'] == 'PHB'
    assert facts['bonding']['bond0']['degraded'] is True
    assert abs(facts['node_facts'].pop('epoch') - time.time()) < 60
    assert facts['node_facts'] == {'subset': ['pci', 'infiniband', 'gpu', 'firmware', 'bonding'],
                                   'sysfs_root': params['sysfs_root'], 'proc_root': params['proc_root'],
                                   'nvidia_smi': params['nvidia_smi_path']}
    # node_facts ran nvidia-smi once for facts and once for topology; gpu_facts the same again
    assert calls.read_text().splitlines() == ['-q -x', 'topo -m'] * 2


def test_pci_subset_runs_no_tool_and_sets_only_its_key(node, run_module):
    params, calls = node
    result = run_module(node_facts.main, dict(params, subset=['pci']))
    assert sorted(result['ansible_facts']) == ['node_facts', 'pci']
    assert result['ansible_facts']['node_facts']['subset'] == ['pci']
    assert result['ansible_facts']['node_facts']['nvidia_smi'] is None
    assert result['ansible_facts']['pci']['summary']['mellanox_function_count'] == 10
    assert not calls.exists(), 'nvidia-smi ran for subset pci'


def test_node_facts_check_subset_reads_rdma_devices_once(node, run_module, monkeypatch):
    params, calls = node
    seen = []
    real = node_facts_engine.collect
    for owner in (node_facts_engine, fw_facts_engine):
        monkeypatch.setattr(owner, 'collect', lambda root: seen.append(root) or real(root))
    result = run_module(node_facts.main, dict(params, subset=['pci', 'infiniband', 'gpu', 'firmware'],
                                              gpu_topology=False))
    facts = result['ansible_facts']
    assert seen == [params['sysfs_root']]
    assert facts['firmware']['hca']['mlx5_0']['fw_ver'] == facts['infiniband']['mlx5_0']['fw_ver'] == '14.28.2006'
    assert 'bonding' not in facts and facts['node_facts']['proc_root'] is None
    assert calls.read_text().splitlines() == ['-q -x']  # no topo -m


def test_no_nvidia_smi_is_no_gpu_not_a_failure(node, run_module, tmp_path):
    params, _calls = node
    result = run_module(node_facts.main, dict(params, subset=['gpu', 'all'], nvidia_smi_path=str(tmp_path / 'none')))
    assert not result.get('failed'), result
    assert result['msg'] == 'skipped: no GPU (nvidia-smi not found)'
    assert result['ansible_facts']['nvidia_gpu']['count'] == 0
    assert result['ansible_facts']['node_facts']['nvidia_smi'] is None
    assert result['ansible_facts']['node_facts']['subset'] == list(node_facts_engine.SUBSETS)


@pytest.mark.parametrize('extra, option', [
    ({'subset': []}, 'subset'),
    ({'subset': ['pci', 'gpus']}, 'subset'),
    ({'vendors': ['nvidia']}, 'vendors'),
    ({'proc_root': '/nonexistent-gpufleet'}, 'proc_root'),
    ({'kernel_modules': ['../x']}, 'kernel_modules'),
])
def test_bad_input_refused_before_any_tool_runs(node, run_module, extra, option):
    params, calls = node
    result = run_module(node_facts.main, dict(params, **extra))
    assert result.get('failed') and option in result['msg'], result
    assert not calls.exists()
