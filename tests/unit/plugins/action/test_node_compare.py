# -*- coding: utf-8 -*-
"""node_compare / fleet_compare action plugins, called as ansible does (``ansible localhost -m ...``),
on facts parsed from REAL recordings of the corpus."""

from __future__ import annotations

import copy

from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi, sysfs_ib

A5000 = 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml'
IB_TREE = 'sysfs_infiniband/node_exporter'

PROFILE = {
    'gpus': 2, 'gpu_model': 'NVIDIA RTX A5000', 'gpu_pcie': {'gen': 4, 'width': 16}, 'driver_branch': '590',
    'gpu_memory_health': True, 'hcas': 1, 'hca_match': '^mlx4_',
    'hca_ports': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'rate_gbps': 40, 'link_layer': 'InfiniBand'},
    'hca_firmware': {'SM_1141000001000': '2.31.5050'},
}


def recorded_facts(corpus):
    gpu = nvidia_smi.parse_query_xml((corpus / A5000).read_text())
    gpu['executable'] = '/usr/bin/nvidia-smi'
    return {'nvidia_gpu': gpu, 'infiniband': sysfs_ib.collect(str(corpus / IB_TREE))}


def test_recording_matches(corpus, run_adhoc):
    rc, result = run_adhoc('node_compare', {'facts': recorded_facts(corpus), 'expected': PROFILE})
    assert rc == 0, result
    assert result['changed'] is False and 'failed' not in result
    assert result['deviations'] == []
    assert result['checked'] == ['driver_branch', 'gpu_memory_health', 'gpu_model', 'gpu_pcie', 'gpus',
                                 'hca_firmware', 'hca_ports', 'hcas']
    assert result['summary']['hcas'] == ['mlx4_0'] and result['summary']['gpu_count'] == 2
    assert result['versions']['hca_firmware'] == {'SM_1141000001000': ['2.31.5050']}
    assert result['msg'].startswith('localhost matches the expected hardware')


def test_every_deviation_fails_the_host(corpus, run_adhoc):
    facts = recorded_facts(corpus)
    port = facts['infiniband']['mlx4_0']['ports']['1']
    port.update(state='DOWN', rate_gbps=20)
    facts['nvidia_gpu']['gpus'][1]['pcie_link_width_current'] = 8
    facts['nvidia_gpu']['gpus'][0]['remapped_rows']['failure'] = True
    rc, result = run_adhoc('node_compare', {'facts': facts, 'expected': PROFILE, 'label': 'node07'})
    assert rc == 2  # the host failed (the minimal callback leaves 'failed' out of the JSON)
    wanted = ['GPU 0: remapped rows failure',
              'GPU 1 (00000000:C1:00.0): pcie width expected 16, found 8',
              'mlx4_0 port 1: rate_gbps expected 40, found 20',
              'mlx4_0 port 1: state expected ACTIVE, found DOWN']
    assert [d['message'] for d in result['deviations']] == wanted
    assert result['msg'] == 'node07: 4 deviation(s) from the expected hardware: ' + '; '.join(wanted)


def test_check_mode_and_no_fail(corpus, run_adhoc):
    facts = recorded_facts(corpus)
    expected = dict(PROFILE, gpus=8)
    rc, result = run_adhoc('node_compare', {'facts': facts, 'expected': expected, 'fail_on_deviation': False},
                           check=True)
    assert rc == 0 and 'failed' not in result and result['changed'] is False
    assert [d['message'] for d in result['deviations']] == ['node: GPUs expected 8, found 2']


def test_nvidia_smi_absent(run_adhoc):
    facts = {'nvidia_gpu': {'executable': None, 'driver_version': None, 'count': 0, 'gpus': []}}
    rc, result = run_adhoc('node_compare', {'facts': facts, 'expected': {'gpus': 8}})
    assert rc == 2
    assert [d['message'] for d in result['deviations']] == ['nvidia-smi not found; expected 8 GPUs']
    assert result['deviations'][0]['actual'] is None


def test_bad_expectation_is_named(run_adhoc):
    rc, result = run_adhoc('node_compare', {'facts': {}, 'expected': {'gpus': -1, 'gpu_pcie': {'lanes': 16}}})
    assert rc == 2
    assert 'expected.gpus must be an integer >= 0' in result['msg']
    assert 'expected.gpu_pcie.lanes is not known' in result['msg']


def test_fleet_names_the_outlier_with_the_majority(corpus, run_adhoc):
    base = recorded_facts(corpus)
    hosts = {}
    for i in range(1, 5):
        facts = copy.deepcopy(base)
        hosts['node%02d' % i] = {'infiniband': facts['infiniband'], 'nvidia_gpu': facts['nvidia_gpu']}
    hosts['node02']['infiniband']['mlx4_0']['fw_ver'] = '2.42.5000'
    profiles = dict((h, 'h100_ib') for h in hosts)
    rc, result = run_adhoc('fleet_compare', {'hosts': hosts, 'profiles': profiles, 'hca_match': '^mlx4_'})
    assert rc == 2  # the host failed (the minimal callback leaves 'failed' out of the JSON)
    assert result['outliers'] == ['node02']
    assert [d['message'] for d in result['deviations']] == [
        'node02: hca firmware board_id SM_1141000001000 expected 2.31.5050 (majority, 3 of 4 hosts of profile h100_ib), '
        'found 2.42.5000']
    assert result['deviations'][0]['expected'] == '2.31.5050'
    rc, result = run_adhoc('fleet_compare', {'hosts': hosts, 'items': ['driver', 'vbios'], 'fail_on_deviation': False},
                           check=True)
    assert rc == 0 and result['deviations'] == [] and result['changed'] is False


def test_fleet_tie(run_adhoc):
    hosts = {'a': {'versions': {'ofed': '24.10-1.1.4'}}, 'b': {'versions': {'ofed': '24.07-0.6.1'}}}
    rc, result = run_adhoc('fleet_compare', {'hosts': hosts, 'items': ['ofed']})
    assert rc == 2 and result['outliers'] == ['a', 'b']
    assert result['deviations'][0]['message'] == (
        'b: ofed 24.07-0.6.1, no majority in profile none (tie: 24.07-0.6.1 on b; 24.10-1.1.4 on a)')
