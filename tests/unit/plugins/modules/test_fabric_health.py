# -*- coding: utf-8 -*-
"""fabric_health module: in-process with the HAND-MADE pair of reads (the second tree is copied over the first while
the module waits), a fake sminfo, and end to end through ``ansible`` on recorded trees."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import fabric_health_engine as engine
from ansible_collections.gpufleet.cluster.plugins.modules import fabric_health

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made' / 'fabric' / 'ndr-3hca-climbing-HANDMADE'
SMINFO_MASTER = 'sminfo: sm lid 1 sm guid 0x248a0703009c0196, activity count 38526 priority 15 state 3 SMINFO_MASTER'


@pytest.fixture
def climbing(tmp_path, monkeypatch):
    """A sysfs root holding the first read; the module's wait puts the second read in place."""
    root = tmp_path / 'root'
    shutil.copytree(str(HAND / 'read1'), str(root))
    waited = []

    def _swap(seconds):
        waited.append(seconds)
        shutil.rmtree(str(root))
        shutil.copytree(str(HAND / 'read2'), str(root))

    monkeypatch.setattr(engine, '_sleep', _swap)
    return root, waited


def fake_sminfo(tmp_path, text, rc=0):
    path = tmp_path / 'bin' / 'sminfo'
    path.parent.mkdir(exist_ok=True)
    (tmp_path / 'sminfo.calls').write_text('')
    path.write_text('#!/bin/sh\necho "$*" >> "%s"\necho "%s"\nexit %d\n' % (tmp_path / 'sminfo.calls', text, rc))
    path.chmod(0o755)
    return path


def test_fails_naming_port_counter_and_growth(climbing, tmp_path, run_module):
    root, waited = climbing
    sminfo = fake_sminfo(tmp_path, SMINFO_MASTER)
    result = run_module(fabric_health.main, {'sysfs_root': str(root), 'interval': 7, 'sminfo_path': str(sminfo),
                                             'min_rate_gbps': 400})
    assert waited == [7]
    assert result['failed'] is True and result['changed'] is False and result['status'] == 'fail'
    assert result['failures'] == [
        'mlx5_0/1: flapping: link_downed grew by 2 in 7 s (from 1 to 3; max 0)',
        'mlx5_0/1: symbol_error grew by 25 in 7 s (from 3 to 28; max 10)',
        "mlx5_2/1: rate 200 Gb/s (200 Gb/sec (2X NDR)) below the profile's 400 Gb/s"]
    # sminfo asked once per InfiniBand port, on that device and port
    assert (tmp_path / 'sminfo.calls').read_text().split('\n')[:3] == ['-C mlx5_0 -P 1', '-C mlx5_1 -P 1',
                                                                       '-C mlx5_2 -P 1']
    assert result['ports'][1]['sminfo']['state'] == 'MASTER' and result['sminfo_path'] == str(sminfo)


def test_healthy_with_thresholds_and_check_mode(climbing, tmp_path, run_module):
    root, waited = climbing
    result = run_module(fabric_health.main, {
        'sysfs_root': str(root), 'interval': 0, 'sminfo_path': str(tmp_path / 'absent-sminfo'),
        'max_growth': {'symbol_error': 30, 'link_downed': 2}, '_ansible_check_mode': True})
    assert result.get('failed') is not True, result['msg']
    assert result['status'] == 'pass' and waited == [0]
    assert result['sminfo_note'].startswith('sminfo not installed')


def test_sminfo_standby_fails(climbing, tmp_path, run_module):
    root, dummy = climbing
    sminfo = fake_sminfo(tmp_path, SMINFO_MASTER.replace('state 3 SMINFO_MASTER', 'state 2 SMINFO_STANDBY'))
    result = run_module(fabric_health.main, {'sysfs_root': str(root), 'interval': 0, 'sminfo_path': str(sminfo),
                                             'devices': ['mlx5_1']})
    assert result['failures'] == ['mlx5_1/1: the subnet manager at LID 1 is STANDBY, not MASTER']


def test_no_hca_is_skipped_with_the_reason(tmp_path, run_module):
    result = run_module(fabric_health.main, {'sysfs_root': str(tmp_path)})
    assert result['skipped'] is True and result['status'] == 'skipped' and result.get('failed') is not True
    assert result['msg'] == 'skipped: no HCA (fabric_health: no RDMA device under %s/sys/class/infiniband)' % tmp_path


def test_named_device_on_a_host_without_hca_fails(tmp_path, run_module):
    result = run_module(fabric_health.main, {'sysfs_root': str(tmp_path), 'devices': ['mlx5_0'], 'interval': 0})
    assert result['failed'] is True
    assert result['failures'] == ['mlx5_0: no such RDMA device (found: none)']


def test_bad_input_refused_before_reading(tmp_path, run_module, monkeypatch):
    monkeypatch.setattr(engine, '_sleep', lambda s: pytest.fail('slept on bad input'))
    result = run_module(fabric_health.main, {'sysfs_root': str(tmp_path), 'interval': -3,
                                             'max_growth': {'symbol_error': -1}})
    assert result['failed'] is True
    assert result['msg'] == ('interval must be an integer from 0 to 3600 seconds, got -3; max_growth.symbol_error must '
                             'be an integer >= 0 (the growth allowed between the two reads) or null (do not check it), '
                             'got -1')


def test_adhoc_recorded_tree(corpus, run_adhoc):
    rc, result = run_adhoc('fabric_health', {'sysfs_root': str(corpus / 'sysfs_infiniband/procfs/fixtures'),
                                             'interval': 0, 'check_sm': False, 'devices': ['mlx4_0', 'hfi1_0']})
    assert rc == 0, result
    assert result['status'] == 'pass' and [p['device'] for p in result['ports']] == ['mlx4_0', 'mlx4_0', 'hfi1_0']


def test_adhoc_recorded_tree_missing_counters_fail(corpus, run_adhoc):
    rc, result = run_adhoc('fabric_health', {'sysfs_root': str(corpus / 'sysfs_infiniband/node_exporter'),
                                             'interval': 0, 'check_sm': False, 'devices': ['mlx4_0/2']}, check=True)
    assert rc != 0 and result['status'] == 'fail'
    assert 'mlx4_0/2: counter symbol_error missing or unreadable in either read' in result['msg']
