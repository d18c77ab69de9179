# -*- coding: utf-8 -*-
"""ib_port_facts module: in-process (AnsibleModule harness) and end-to-end via ``ansible``."""

from __future__ import annotations

from ansible_collections.gpufleet.cluster.plugins.modules import ib_port_facts

PROCFS = 'sysfs_infiniband/procfs/fixtures'


def test_main_recorded_tree(corpus, run_module):
    result = run_module(ib_port_facts.main, {'sysfs_root': str(corpus / PROCFS)})
    assert result['changed'] is False
    ib = result['ansible_facts']['infiniband']
    assert sorted(ib) == ['hfi1_0', 'mlx4_0', 'mlx5_0']
    assert ib['mlx5_0']['fw_ver'] == '14.28.2006'
    assert ib['mlx5_0']['ports']['1']['hw_counters']['resp_cqe_error'] == 8109


def test_main_check_mode_no_devices(tmp_path, run_module):
    result = run_module(ib_port_facts.main, {'sysfs_root': str(tmp_path), '_ansible_check_mode': True})
    assert result['changed'] is False
    assert result['ansible_facts'] == {'infiniband': {}}


def test_adhoc_end_to_end(corpus, run_adhoc):
    rc, result = run_adhoc('ib_port_facts', {'sysfs_root': str(corpus / 'sysfs_infiniband/node_exporter')})
    assert rc == 0
    ib = result['ansible_facts']['infiniband']
    assert ib['mlx4_0']['ports']['1']['counters']['port_xmit_wait'] == 4294967295
    assert ib['i40iw0']['ports']['1']['rate_gbps'] == 10
    assert result['changed'] is False


def test_adhoc_check_mode(corpus, run_adhoc):
    rc, result = run_adhoc('ib_port_facts', {'sysfs_root': str(corpus / PROCFS)}, check=True)
    assert rc == 0 and result['changed'] is False
    assert result['ansible_facts']['infiniband']['mlx4_0']['ports']['2']['rate_gbps'] == 40
