# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Baseline lookup and threshold precedence; every reference equals the figure the parsers read from
the cited recording."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_burn, nccl_tests, p2p_bandwidth, perftest
from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _baselines as baselines


def test_every_metric_has_a_source_and_positive_reference():
    for table in (baselines.GPU_BASELINES, baselines.HCA_BASELINES):
        for model, entry in table.items():
            assert entry['match'], model
            for metric, data in entry['metrics'].items():
                assert data['reference'] > 0 and data['source'] and data['unit'], (model, metric)


@pytest.mark.parametrize('name,key', [('NVIDIA A100-SXM4-80GB', 'A100-SXM4'), ('A100-SXM4-40GB', 'A100-SXM4'),
                                      ('NVIDIA H100 80GB HBM3', 'H100-SXM'), ('NVIDIA GB200', 'GB200'),
                                      ('NVIDIA H200', 'H200'), ('NVIDIA B200', 'B200'), ('NVIDIA L40S', 'L40S'),
                                      ('NVIDIA GeForce RTX 4090', None)])
def test_gpu_models(name, key):
    assert baselines.find_model(baselines.GPU_BASELINES, name) == key


def test_hca_models():
    assert baselines.find_model(baselines.HCA_BASELINES, 'MT4129') == 'ConnectX-7'
    assert baselines.find_model(baselines.HCA_BASELINES, 'Mellanox ConnectX-6 HDR') == 'ConnectX-6'


def test_bands():
    band = baselines.baseline('gpu', 'NVIDIA A100-SXM4-40GB', 'nccl_all_reduce_busbw_node')
    assert band == {'model': 'A100-SXM4', 'metric': 'nccl_all_reduce_busbw_node', 'reference': 235.26,
                    'warn': 211.734, 'fail': 188.208, 'unit': 'GB/s',
                    'source': 'microsoft/superbenchmark tests/data/nccl_allreduce.log', 'lower_is_better': False,
                    'published': False}
    lat = baselines.baseline('hca', 'ConnectX-7', 'rdma_send_lat_us')
    assert lat['fail'] == 1.587 and lat['warn'] == 1.411
    h100 = baselines.baseline('gpu', 'NVIDIA H100 80GB HBM3', 'nccl_all_reduce_busbw_node')
    assert h100['published'] and h100['reference'] == 460.0 and h100['fail'] == 368.0 and h100['warn'] == 414.0
    assert baselines.baseline('gpu', 'NVIDIA H100 80GB HBM3', 'p2p_unidir_gbs') is None  # no citable run
    assert baselines.baseline('gpu', 'NVIDIA H200', 'nccl_all_reduce_busbw_node') is None
    assert baselines.baseline('gpu', 'unknown', 'x') is None


def test_precedence():
    band = baselines.baseline('hca', 'ConnectX-7', 'rdma_send_bw_gbps')
    derived = baselines.derive_rdma_gbps(400)
    assert derived == 320.0
    assert baselines.resolve(350, band, derived) == (350.0, 'inventory')
    assert baselines.resolve(None, band, derived) == (312.44, 'baseline:ConnectX-7')
    assert baselines.resolve(None, None, derived) == (320.0, 'derived')
    assert baselines.resolve() == (None, 'none')
    assert baselines.derive_rdma_gbps(None) is None


def test_references_match_the_recordings(corpus_file):
    """The reference numbers are what our parsers read from the cited recordings."""
    gpu = baselines.GPU_BASELINES
    parsed = nccl_tests.parse(corpus_file('nccl_tests/superbench-allreduce-8xA100-40GB.txt').read_text())
    assert nccl_tests.summarize(parsed)['busbw_at_check'] == gpu['A100-SXM4']['metrics']['nccl_all_reduce_busbw_node']['reference']
    parsed = nccl_tests.parse(corpus_file('nccl_tests/coreweave-gb200-72rank-rack.txt').read_text())
    assert nccl_tests.summarize(parsed)['busbw_at_check'] == gpu['GB200']['metrics']['nccl_all_reduce_busbw_rack']['reference']
    burn = gpu_burn.parse(corpus_file('gpu_burn/superbench-8xA100-80GB-ok.txt').read_text())
    assert min(g['gflops'] for g in burn['gpus']) == gpu['A100-SXM4']['metrics']['gpu_burn_gflops_fp64_tc']['reference']


def test_references_match_the_recordings_full_corpus(corpus_file):
    gpu, hca = baselines.GPU_BASELINES, baselines.HCA_BASELINES
    m = p2p_bandwidth.parse_p2p(corpus_file('p2p_bandwidth/mleng-8xA100-unidir-p2p-writes-matrix.txt').read_text())
    assert min(v for s, d, v in p2p_bandwidth.below(m['matrices']['unidirectional_p2p_enabled'], 1e9)) == \
        gpu['A100-SXM4']['metrics']['p2p_unidir_gbs']['reference']
    m = p2p_bandwidth.parse_p2p(corpus_file('p2p_bandwidth/mleng-4xGB200-unidir-p2p-writes-matrix.txt').read_text())
    assert min(v for s, d, v in p2p_bandwidth.below(m['matrices']['unidirectional_p2p_enabled'], 1e9)) == \
        gpu['GB200']['metrics']['p2p_unidir_gbs']['reference']
    send = perftest.summarize(perftest.parse(corpus_file('perftest/cx7-ndr-ib_send_bw-client-mib.txt').read_text()))
    assert round(send['avg_gbps'], 2) == hca['ConnectX-7']['metrics']['rdma_send_bw_gbps']['reference']
    read = perftest.summarize(perftest.parse(corpus_file('perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt').read_text()))
    assert read['avg_gbps'] == hca['ConnectX-7']['metrics']['rdma_read_bw_gbps']['reference']
    lat = perftest.summarize(perftest.parse(corpus_file('perftest/cx7-ndr-ib_send_lat-client.txt').read_text()))
    assert lat['latency_us'] == hca['ConnectX-7']['metrics']['rdma_send_lat_us']['reference']


def test_host_thresholds_by_precedence():
    """The acceptance role's thresholds (gpufleet.cluster.acceptance_thresholds): inventory > baseline > derived."""
    spec = {'gpu_model': 'NVIDIA H100 80GB HBM3', 'hcas': {'mlx5_0': {'model': None, 'rate_gbps': 400}},
            'overrides': {'p2p_min_gbytes_per_s': 300}, 'rdma_test': 'write', 'gpu_burn_fp64_tc': False}
    out = baselines.host_thresholds(spec)
    assert out['p2p_min_gbytes_per_s'] == {'value': 300, 'origin': 'inventory'}
    assert out['nccl_min_busbw_gbytes_per_s']['origin'].startswith('baseline:')
    assert out['gpu_burn_min_gflops'] == {'value': None, 'origin': 'none'}  # the baseline is FP64 tensor-core only
    assert out['rdma_min_gbits_per_s'] == {'mlx5_0': {'value': 320.0, 'origin': 'derived'}}
    assert out['gpu_burn_max_temp_c'] == {'value': None, 'origin': 'none'}
    assert out['nccl_multinode_min_busbw_gbytes_per_s'] == {'value': None, 'origin': 'none'}
    empty = baselines.host_thresholds({})
    assert empty['rdma_min_gbits_per_s'] == {} and empty['nccl_min_busbw_gbytes_per_s']['origin'] == 'none'


def test_deprecated_threshold_keys_count_under_their_names_now():
    """The keys before the unit was in the name (p2p_min_gbps was GB/s, rdma_min_gbps Gb/s) still count."""
    old = {'p2p_min_gbps': 300, 'nccl_min_busbw': 360, 'rdma_min_gbps': 150, 'nccl_multinode_min_busbw': 90,
           'gpu_burn_max_temp_c': 85}
    overrides, used = baselines.canonical_overrides(old)
    assert overrides == {'p2p_min_gbytes_per_s': 300, 'nccl_min_busbw_gbytes_per_s': 360, 'rdma_min_gbits_per_s': 150,
                         'nccl_multinode_min_busbw_gbytes_per_s': 90, 'gpu_burn_max_temp_c': 85}
    assert used == ['nccl_min_busbw', 'nccl_multinode_min_busbw', 'p2p_min_gbps', 'rdma_min_gbps']
    assert baselines.canonical_overrides(overrides) == (overrides, []) and baselines.canonical_overrides(None) == ({}, [])
    spec = {'gpu_model': 'NVIDIA A100-SXM4-40GB', 'hcas': {'mlx5_0': {'model': 'ConnectX-7', 'rate_gbps': 400}},
            'rdma_test': 'send'}
    assert baselines.host_thresholds(dict(spec, overrides=old)) == baselines.host_thresholds(dict(spec, overrides=overrides))
    out = baselines.host_thresholds(dict(spec, overrides=old))
    assert out['p2p_min_gbytes_per_s'] == {'value': 300.0, 'origin': 'inventory'}
    assert out['rdma_min_gbits_per_s'] == {'mlx5_0': {'value': 150.0, 'origin': 'inventory'}}
    assert not set(out) & set(baselines.RENAMED_KEYS)
    with pytest.raises(ValueError, match='acceptance_thresholds sets both rdma_min_gbits_per_s and rdma_min_gbps'):
        baselines.canonical_overrides({'rdma_min_gbps': 150, 'rdma_min_gbits_per_s': 150})
