# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resolve the acceptance ladder's thresholds on the controller with the collection's baselines.

Run by roles/acceptance/tasks/thresholds.py once per play: ``python thresholds.py BASELINES_PY`` reads
``{host: {gpu_model, hcas: {dev: {model, rate_gbps}}, overrides, rdma_test, gpu_burn_fp64_tc}}`` as JSON
on stdin and prints ``{host: {key: {value, origin}, rdma_min_gbps: {dev: {value, origin}}}}``, each by
``baselines.resolve`` precedence (inventory > baseline:<model> > derived > none), see docs/thresholds.md.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import runpy
import sys

GPU_METRICS = {
    'nccl_min_busbw': 'nccl_all_reduce_busbw_node',
    'p2p_min_gbps': 'p2p_unidir_gbs',
    'gpu_burn_min_gflops': 'gpu_burn_gflops_fp64_tc',
}
RDMA_METRICS = {'send': 'rdma_send_bw_gbps', 'read': 'rdma_read_bw_gbps'}
PLAIN = ('gpu_burn_max_temp_c', 'nccl_multinode_min_busbw')


def _entry(pair):
    return {'value': pair[0], 'origin': pair[1]}


def host_thresholds(bl, spec):
    overrides = spec.get('overrides') or {}
    out = {}
    for key, metric in GPU_METRICS.items():
        base = None
        if spec.get('gpu_model') and (key != 'gpu_burn_min_gflops' or spec.get('gpu_burn_fp64_tc')):
            base = bl['baseline']('gpu', spec['gpu_model'], metric)
        out[key] = _entry(bl['resolve'](overrides.get(key), base))
    for key in PLAIN:
        out[key] = _entry(bl['resolve'](overrides.get(key)))
    out['rdma_min_gbps'] = {}
    metric = RDMA_METRICS.get(spec.get('rdma_test'))
    for dev, hca in sorted((spec.get('hcas') or {}).items()):
        base = bl['baseline']('hca', hca.get('model'), metric) if metric and hca.get('model') else None
        derived = bl['derive_rdma_gbps'](hca.get('rate_gbps'))
        out['rdma_min_gbps'][dev] = _entry(bl['resolve'](overrides.get('rdma_min_gbps'), base, derived))
    return out


def main():
    bl = runpy.run_path(sys.argv[1])
    hosts = json.load(sys.stdin)
    json.dump({host: host_thresholds(bl, spec) for host, spec in hosts.items()}, sys.stdout, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
