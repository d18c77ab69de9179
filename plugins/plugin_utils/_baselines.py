# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

Baseline figures per GPU and HCA model for the acceptance modules, and the threshold precedence
(inventory override > baseline > derived from facts). See docs/thresholds.md.

Every number carries its public source. Two kinds of numbers:

- ``spec``: a vendor specification (link rate, NVLink bandwidth), cited to the vendor page;
- ``reference``: a measured figure from a public recording in the shared corpus (``../shared/corpus``,
  MANIFEST.tsv gives repository, path and commit) on that model, or - marked ``published`` - the low end of
  a range a public page reports as measured on that model (cited by URL; no raw output behind it, so it is
  the weaker kind and an inventory override should replace it once the fleet has its own recording).

Warn and fail bands are derived from a ``reference`` with the two POLICY fractions below; they are
gpufleet policy, not measurements, and are applied the same way everywhere. Models without a citable
measured reference have no bands: for them the threshold comes from the inventory or is derived from
facts (a ``spec`` times the policy fraction), and the derivation is reported.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# POLICY (not a measurement): a result below WARN_FRACTION of the reference warns, below
# FAIL_FRACTION fails. 0.8 leaves room for run-to-run noise seen between the two recorded
# 8x A100 all_gather/all_reduce runs of the same family and for healthy nodes of other vendors.
WARN_FRACTION = 0.9
FAIL_FRACTION = 0.8

GPU_BASELINES = {
    'A100-SXM4': {
        'match': ['A100-SXM4', 'A100 SXM4'],
        # spec: NVLink 3 600 GB/s per GPU (bidirectional) - https://www.nvidia.com/en-us/data-center/a100/
        'nvlink_gbs_spec': 600.0,
        'metrics': {
            # reference: all_reduce_perf 8x A100-SXM4-40GB, out-of-place busbw at 8 GiB = 235.26 GB/s
            # corpus nccl_tests/superbench-allreduce-8xA100-40GB.txt (microsoft/superbenchmark tests/data/nccl_allreduce.log)
            'nccl_all_reduce_busbw_node': {'reference': 235.26, 'unit': 'GB/s',
                                           'source': 'microsoft/superbenchmark tests/data/nccl_allreduce.log'},
            # reference: p2pBandwidthLatencyTest 8x A100, lowest off-diagonal unidirectional P2P write = 270.84 GB/s
            # corpus p2p_bandwidth/mleng-8xA100-unidir-p2p-writes-matrix.txt (stas00/ml-engineering network/README.md)
            'p2p_unidir_gbs': {'reference': 270.84, 'unit': 'GB/s',
                               'source': 'stas00/ml-engineering network/README.md (8x A100 P2P writes matrix)'},
            # reference: gpu-burn -d -tc 8x A100-SXM4-80GB, lowest per-GPU last-record Gflop/s = 16890
            # corpus gpu_burn/superbench-8xA100-80GB-ok.txt (microsoft/superbenchmark tests/data/gpu_burn.log)
            'gpu_burn_gflops_fp64_tc': {'reference': 16890.0, 'unit': 'Gflop/s',
                                        'source': 'microsoft/superbenchmark tests/data/gpu_burn.log'},
        },
    },
    'GB200': {
        'match': ['GB200'],
        # spec: NVLink 5 1.8 TB/s per GPU - https://www.nvidia.com/en-us/data-center/gb200-nvl72/
        'nvlink_gbs_spec': 1800.0,
        'metrics': {
            # reference: all_reduce_perf GB200 NVL72 rack (72 ranks), out-of-place busbw at 8 GiB = 834.57 GB/s
            # corpus nccl_tests/coreweave-gb200-72rank-rack.txt (coreweave/nccl-tests README.md)
            'nccl_all_reduce_busbw_rack': {'reference': 834.57, 'unit': 'GB/s',
                                           'source': 'coreweave/nccl-tests README.md (GB200 NVL72, NCCL 2.26.2)'},
            # reference: p2pBandwidthLatencyTest GB200 NVL4, lowest off-diagonal unidirectional P2P write = 743.89 GB/s
            # corpus p2p_bandwidth/mleng-4xGB200-unidir-p2p-writes-matrix.txt (stas00/ml-engineering network/README.md)
            'p2p_unidir_gbs': {'reference': 743.89, 'unit': 'GB/s',
                               'source': 'stas00/ml-engineering network/README.md (GB200 P2P writes matrix)'},
        },
    },
    'H100-SXM': {
        'match': ['H100 80GB HBM3', 'H100-SXM', 'H100 SXM'],
        # spec: NVLink 4 900 GB/s per GPU - https://www.nvidia.com/en-us/data-center/h100/ ; HGX H100 "each GPU has
        # bidirectional BW of 900 GB/s" - https://astra-sim.github.io/astra-sim-docs/validation/hardware/gpu-validation-hgx-h100.html
        'nvlink_gbs_spec': 900.0,
        'metrics': {
            # published: "8xH100 SXM5 NVLink-only: busbw at large sizes 460-480 GB/s" (all_reduce_perf -b 8 -e 8G
            # -f 2 -g 8) - https://docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests ; the low end is used
            'nccl_all_reduce_busbw_node': {'reference': 460.0, 'unit': 'GB/s', 'published': True,
                                           'source': 'https://docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests '
                                                     '(8x H100 SXM5, 460-480 GB/s, low end)'},
        },
    },
    'H200': {
        'match': ['H200'],
        # spec: NVLink 900 GB/s per GPU - https://www.nvidia.com/en-us/data-center/h200/
        'nvlink_gbs_spec': 900.0,
        'metrics': {},
    },
    'B200': {
        'match': ['B200'],
        # spec: NVLink 5 1.8 TB/s per GPU - https://www.nvidia.com/en-us/data-center/dgx-b200/
        'nvlink_gbs_spec': 1800.0,
        'metrics': {},
    },
    'L40S': {
        'match': ['L40S'],
        # spec: no NVLink; PCIe Gen4 x16 - https://www.nvidia.com/en-us/data-center/l40s/
        'nvlink_gbs_spec': None,
        'metrics': {},
    },
}

HCA_BASELINES = {
    'ConnectX-7': {
        # PCI device id 0x1021 (MT4129) - pci.ids; board names in ibv_devinfo/ib_port_facts contain ConnectX-7
        'match': ['ConnectX-7', 'MT4129', '0x1021'],
        # spec: up to 400 Gb/s (NDR) per port - https://www.nvidia.com/en-us/networking/ethernet-adapters/connectx-7/
        'line_rate_gbps_spec': 400.0,
        'metrics': {
            # reference: ib_send_bw 64 KiB, ConnectX-7 NDR back-to-back, average 46557.03 MiB/s = 390.55 Gb/s
            # corpus perftest/cx7-ndr-ib_send_bw-client-mib.txt (doc 'How to connect two GPU servers using Infiniband DAC')
            'rdma_send_bw_gbps': {'reference': 390.55, 'unit': 'Gb/s',
                                  'source': 'corpus perftest/cx7-ndr-ib_send_bw-client-mib.txt (CX-7 NDR DAC)'},
            # reference: ib_read_bw --report_gbits 64 KiB, same link, average 328.61 Gb/s
            # corpus perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt
            'rdma_read_bw_gbps': {'reference': 328.61, 'unit': 'Gb/s',
                                  'source': 'corpus perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt (CX-7 NDR DAC)'},
            # reference: ib_send_lat 2 B, same link, t_avg 1.27 us (max threshold: reference / FAIL_FRACTION)
            # corpus perftest/cx7-ndr-ib_send_lat-client.txt
            'rdma_send_lat_us': {'reference': 1.27, 'unit': 'us', 'lower_is_better': True,
                                 'source': 'corpus perftest/cx7-ndr-ib_send_lat-client.txt (CX-7 NDR DAC)'},
        },
    },
    'ConnectX-6': {
        # PCI device id 0x101b (MT4123)
        'match': ['ConnectX-6', 'MT4123', '0x101b'],
        # spec: up to 200 Gb/s (HDR) per port - https://www.nvidia.com/en-us/networking/ethernet-adapters/connectx-6/
        'line_rate_gbps_spec': 200.0,
        'metrics': {},
    },
}


def _norm(text):
    return re.sub(r'[\s_]+', ' ', str(text or '')).strip().lower()


def find_model(table, name):
    """Key of ``table`` whose ``match`` strings occur in ``name`` (nvidia-smi product name, HCA board/device id),
    or None. The longest matching string wins (``H100 80GB HBM3`` before ``H100``)."""
    best, best_len = None, 0
    for key, entry in table.items():
        for pattern in entry['match']:
            if _norm(pattern) in _norm(name) and len(pattern) > best_len:
                best, best_len = key, len(pattern)
    return best


def baseline(kind, name, metric):
    """Bands for ``metric`` of the model ``name`` (``kind``: ``gpu`` or ``hca``): a dict with ``model``,
    ``reference``, ``warn``, ``fail``, ``unit``, ``source``, ``lower_is_better``; None without a citable reference."""
    table = GPU_BASELINES if kind == 'gpu' else HCA_BASELINES
    model = find_model(table, name)
    if model is None:
        return None
    entry = table[model]['metrics'].get(metric)
    if entry is None:
        return None
    ref = entry['reference']
    lower = entry.get('lower_is_better', False)
    if lower:
        warn, fail = round(ref / WARN_FRACTION, 3), round(ref / FAIL_FRACTION, 3)
    else:
        warn, fail = round(ref * WARN_FRACTION, 3), round(ref * FAIL_FRACTION, 3)
    return {'model': model, 'metric': metric, 'reference': ref, 'warn': warn, 'fail': fail, 'unit': entry['unit'],
            'source': entry['source'], 'lower_is_better': lower, 'published': bool(entry.get('published'))}


def derive_rdma_gbps(port_rate_gbps):
    """Fail threshold derived from facts: FAIL_FRACTION of the port's active rate (``ib_port_facts`` rate,
    e.g. 400 for ``400 Gb/sec (4X NDR)``). None when the rate is unknown."""
    if not port_rate_gbps:
        return None
    return round(float(port_rate_gbps) * FAIL_FRACTION, 3)


def resolve(override=None, base=None, derived=None):
    """Threshold by precedence: inventory ``override`` > ``base`` (a ``baseline()`` dict, its ``fail``) >
    ``derived`` (from facts). Returns ``(value, origin)`` with origin ``inventory``, ``baseline:<model>``,
    ``derived`` or ``none`` (no threshold: the run still fails on a missing figure or on errors)."""
    if override is not None:
        return float(override), 'inventory'
    if base is not None:
        return base['fail'], 'baseline:%s' % base['model']
    if derived is not None:
        return float(derived), 'derived'
    return None, 'none'


# ------------------------------------------------------------------ one host's thresholds (acceptance role)
# The acceptance threshold keys are the rung's name and the module option they feed (p2p_ + min_gbytes_per_s),
# so the unit is in the name from the inventory to the module: GB/s (gbytes) for GPU and NCCL bandwidth, Gb/s
# (gbits) for RDMA - the same word "gbps" for both hid a factor of 8.
# Acceptance threshold key -> baseline metric of the GPU model.
GPU_METRICS = {
    'nccl_min_busbw_gbytes_per_s': 'nccl_all_reduce_busbw_node',
    'p2p_min_gbytes_per_s': 'p2p_unidir_gbs',
    'gpu_burn_min_gflops': 'gpu_burn_gflops_fp64_tc',
}
# perftest test of the rdma rung -> baseline metric of the HCA model.
RDMA_METRICS = {'send': 'rdma_send_bw_gbps', 'read': 'rdma_read_bw_gbps'}
RDMA_KEY = 'rdma_min_gbits_per_s'
# Thresholds that only come from the inventory.
PLAIN = ('gpu_burn_max_temp_c', 'nccl_multinode_min_busbw_gbytes_per_s')
# Deprecated keys (the names before the unit was in them) -> the key now. Still read until 2.0.0, with a
# deprecation warning (the acceptance_thresholds filter); setting both names of one threshold is an error.
RENAMED_KEYS = {
    'p2p_min_gbps': 'p2p_min_gbytes_per_s',
    'nccl_min_busbw': 'nccl_min_busbw_gbytes_per_s',
    'rdma_min_gbps': RDMA_KEY,
    'nccl_multinode_min_busbw': 'nccl_multinode_min_busbw_gbytes_per_s',
}


def canonical_overrides(overrides):
    """``(overrides, deprecated)``: the inventory ``overrides`` with every deprecated key (``RENAMED_KEYS``)
    under its name now, and the deprecated keys that were used (sorted). Raises ``ValueError`` naming both
    when a threshold is set under both names."""
    out = dict(overrides or {})
    used = []
    for old, new in sorted(RENAMED_KEYS.items()):
        if old not in out:
            continue
        if new in out:
            raise ValueError('acceptance_thresholds sets both %s and %s, the deprecated name of %s; set only %s'
                             % (new, old, new, new))
        out[new] = out.pop(old)
        used.append(old)
    return out, used


def _entry(pair):
    return {'value': pair[0], 'origin': pair[1]}


def host_thresholds(spec):
    """One host's thresholds: ``spec`` is {gpu_model, hcas: {dev: {model, rate_gbps}}, overrides, rdma_test,
    gpu_burn_fp64_tc}; returns {key: {value, origin}, rdma_min_gbits_per_s: {dev: {value, origin}}}, each by
    ``resolve`` precedence (inventory > baseline:<model> > derived > none), see docs/thresholds.md. The
    deprecated keys of ``overrides`` count under their names now (``canonical_overrides``)."""
    overrides = canonical_overrides(spec.get('overrides'))[0]
    out = {}
    for key, metric in GPU_METRICS.items():
        base = None
        if spec.get('gpu_model') and (key != 'gpu_burn_min_gflops' or spec.get('gpu_burn_fp64_tc')):
            base = baseline('gpu', spec['gpu_model'], metric)
        out[key] = _entry(resolve(overrides.get(key), base))
    for key in PLAIN:
        out[key] = _entry(resolve(overrides.get(key)))
    out[RDMA_KEY] = {}
    metric = RDMA_METRICS.get(spec.get('rdma_test'))
    for dev, hca in sorted((spec.get('hcas') or {}).items()):
        base = baseline('hca', hca.get('model'), metric) if metric and hca.get('model') else None
        derived = derive_rdma_gbps(hca.get('rate_gbps'))
        out[RDMA_KEY][dev] = _entry(resolve(overrides.get(RDMA_KEY), base, derived))
    return out
