# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fleet's acceptance results built from REAL recorded outputs (issue #18's tests).

The corpus's nccl-tests all_reduce (8x A100-SXM4-40GB, microsoft/superbenchmark), gpu-burn (8x A100-SXM4-80GB,
same source), p2pBandwidthLatencyTest matrix (8x A100, stas00/ml-engineering) and ib_read_bw (ConnectX-7 NDR) are
parsed by the collection's parsers, and the records are built the way roles/acceptance/tasks/ladder.yml builds them
(figure, threshold with origin, unit, and the detail report.html plots). They are spread over SYNTHETIC node names:
each node's figures are the recorded ones times a SYNTHETIC factor within +-1.2 % (SPREAD), so the fleet has the
scatter of healthy nodes. Two nodes are PLANTED, and named so:
- ``gpu-a06``: its nccl figures (and whole busbw curve) times 0.92 - 8 % below the profile's median, above the
  threshold: a slow node that passes;
- ``gpu-a03``: healthy today, but the history report (HISTORY) has its gpu_burn figure 8 % higher: slower than its
  own previous accepted result.
Nothing else may be flagged. ``gpu-a07``'s history holds a higher gpu_burn figure on a FAILED rung: not accepted,
so never a reference.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

NCCL = 'nccl_tests/superbench-allreduce-8xA100-40GB.txt'
GPU_BURN = 'gpu_burn/superbench-8xA100-80GB-ok.txt'
P2P = 'p2p_bandwidth/mleng-8xA100-unidir-p2p-writes-matrix.txt'
RDMA = 'perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt'
FILES = (NCCL, GPU_BURN, P2P, RDMA)

# thresholds and origins as the ladder reports them (docs/thresholds.md, the A100-SXM4 and ConnectX-7 fail bands)
THRESHOLDS = {'gpu_burn': (13512.0, 'baseline:A100-SXM4'), 'p2p_bandwidth': (216.67, 'baseline:A100-SXM4'),
              'nccl_bench': (188.21, 'baseline:A100-SXM4'), 'rdma_bw': (262.89, 'baseline:ConnectX-7')}

NODES = ['gpu-a0%d' % i for i in range(1, 9)]
# SYNTHETIC spread of healthy nodes (not measured): within +-1.2 % of the recording.
SPREAD = dict(zip(NODES, (1.000, 0.991, 1.006, 0.997, 1.009, 0.994, 1.003, 0.988)))
RACK = dict((n, 'r01' if i < 4 else 'r02') for i, n in enumerate(NODES))
PLANTED_SLOW = ('gpu-a06', 'nccl_bench', 0.92)
PLANTED_HISTORY = ('gpu-a03', 'gpu_burn', 1.08)
EXPECTED = {('gpu-a06', 'nccl_bench'), ('gpu-a03', 'gpu_burn')}
# a small profile (2 nodes): never compared with its median, said in the notes
SMALL = ['gpu-s01', 'gpu-s02']


def parse_corpus(corpus):
    from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_burn, nccl_tests, p2p_bandwidth, perftest
    text = dict((f, (corpus / f).read_text()) for f in FILES)
    nccl = nccl_tests.parse(text[NCCL])
    nsum = nccl_tests.summarize(nccl)
    burn = gpu_burn.parse(text[GPU_BURN])
    p2p = p2p_bandwidth.parse_p2p(text[P2P])['matrices']['unidirectional_p2p_enabled']['values']
    rdma = perftest.summarize(perftest.parse(text[RDMA]))
    return {
        'nccl_bench': nsum['busbw_at_check'],
        'nccl_curve': [[r['size'], r['oop_busbw']] for r in nccl['rows']],
        'gpu_burn': min(g['gflops'] for g in burn['gpus'] if g['gflops'] is not None),
        'p2p_bandwidth': min(v for r, row in p2p.items() for c, v in row.items() if r != c and v is not None),
        'p2p_matrix': p2p,
        'rdma_bw': rdma['avg_gbps'],
    }


def _rec(rung, figure, unit, device=None, detail=None, status=None):
    thr, origin = THRESHOLDS[rung]
    ok = figure >= thr
    return {'rung': rung, 'device': device, 'status': status or ('pass' if ok else 'fail'), 'figure': figure,
            'threshold': thr, 'threshold_origin': origin, 'threshold_kind': 'min', 'unit': unit,
            'message': '%s %s %s' % (rung, figure, unit), 'detail': detail}


def node_result(fig, host, profile, factors):
    """One host's acceptance_result; ``factors`` rung -> factor on the recorded figure."""
    f = dict((k, factors.get(k, 1.0)) for k in ('gpu_burn', 'p2p_bandwidth', 'nccl_bench', 'rdma_bw'))
    rungs = [
        {'rung': 'dcgm_diag', 'device': None, 'status': 'pass', 'figure': 0, 'threshold': 0, 'threshold_origin': 'policy',
         'threshold_kind': 'max', 'unit': 'failed tests', 'message': 'dcgmi diag -r 2: all passed', 'detail': None},
        _rec('gpu_burn', round(fig['gpu_burn'] * f['gpu_burn'], 1), 'Gflop/s'),
        _rec('p2p_bandwidth', round(fig['p2p_bandwidth'] * f['p2p_bandwidth'], 2), 'GB/s',
             detail={'matrix': dict((r, dict((c, None if v is None else round(v * f['p2p_bandwidth'], 2))
                                             for c, v in row.items())) for r, row in fig['p2p_matrix'].items())}),
        _rec('nccl_bench', round(fig['nccl_bench'] * f['nccl_bench'], 2), 'GB/s',
             detail={'busbw_by_size': [[s, None if b is None else round(b * f['nccl_bench'], 2)]
                                       for s, b in fig['nccl_curve']]}),
        _rec('rdma_bw', round(fig['rdma_bw'] * f['rdma_bw'], 2), 'Gb/s', device='mlx5_0'),
    ]
    status = 'failed' if any(r['status'] == 'fail' for r in rungs) else 'passed'
    return {'profile': profile, 'rack': RACK.get(host, 'r03'), 'status': status,
            'failed_rung': next((r['rung'] for r in rungs if r['status'] == 'fail'), None), 'gpus': 8,
            'gpu_model': 'A100-SXM4', 'hcas': ['mlx5_0'], 'rungs': rungs}


def results(fig):
    """host -> acceptance_result of this run (the planted slow node included), plus a GPU-less host."""
    out = {}
    for host in NODES:
        factors = dict((k, SPREAD[host]) for k in THRESHOLDS)
        if host == PLANTED_SLOW[0]:
            factors[PLANTED_SLOW[1]] = SPREAD[host] * PLANTED_SLOW[2]
        out[host] = node_result(fig, host, 'profile_a100', factors)
    for i, host in enumerate(SMALL):
        out[host] = node_result(fig, host, 'profile_small', dict((k, 1.0 - 0.07 * i) for k in THRESHOLDS))
    out['cpu-01'] = {'profile': 'profile_cpu', 'rack': 'r03', 'status': 'skipped', 'failed_rung': None, 'gpus': 0,
                     'gpu_model': None, 'hcas': [], 'rungs': [
                         {'rung': r, 'device': None, 'status': 'skipped', 'figure': None, 'threshold': None,
                          'threshold_origin': 'none', 'threshold_kind': 'min', 'unit': '', 'message': 'skipped: no GPU',
                          'detail': None} for r in ('dcgm_diag', 'gpu_burn', 'p2p_bandwidth', 'nccl_bench')]}
    return out


def report(res):
    """The acceptance report as report.yml builds it (before outliers)."""
    st = [r['status'] for r in res.values()]
    return {'schema_version': 1, 'ladder': ['dcgm_diag', 'gpu_burn', 'p2p_bandwidth', 'nccl_bench', 'container_gpus',
                                            'rdma_bw'],
            'summary': {'nodes': len(res), 'passed': st.count('passed'), 'failed': st.count('failed'),
                        'skipped': st.count('skipped'), 'not_run': st.count('not run')},
            'multinode': {'status': 'skipped', 'message': 'skipped: acceptance_multinode is false', 'hosts': []},
            'nodes': copy.deepcopy(res)}


def history(fig):
    """The previous run's report: every node at this run's healthy figures (gpu-a06 too: it got slow since), except
    gpu-a03's gpu_burn 8 % higher, and gpu-a07's gpu_burn higher on a rung that FAILED (not a reference)."""
    res = {}
    for host in NODES:
        factors = dict((k, SPREAD[host]) for k in THRESHOLDS)
        if host == PLANTED_HISTORY[0]:
            factors[PLANTED_HISTORY[1]] = SPREAD[host] * PLANTED_HISTORY[2]
        if host == 'gpu-a07':
            factors['gpu_burn'] = SPREAD[host] * 1.2
        res[host] = node_result(fig, host, 'profile_a100', factors)
        if host == 'gpu-a07':
            burn = res[host]['rungs'][1]
            burn['status'] = 'fail'
            burn['message'] = 'SYNTHETIC: GPU 3 FAULTY'
            res[host]['status'], res[host]['failed_rung'] = 'failed', 'gpu_burn'
    for i, host in enumerate(SMALL):
        res[host] = node_result(fig, host, 'profile_small', dict((k, 1.0 - 0.07 * i) for k in THRESHOLDS))
    return report(res)
