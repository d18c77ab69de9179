# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for GPU-to-GPU bandwidth matrices: CUDA samples' ``p2pBandwidthLatencyTest`` and NVIDIA's
``nvbandwidth``.

A matrix is returned as ``{'title', 'unit', 'rows': [ids], 'columns': [ids], 'values': {row: {col: float|None}}}``
with string ids (JSON object keys); ``N/A`` cells are None. A matrix cut short (an excerpt, or a tool that died)
simply lacks rows; ``missing_pairs`` lists the off-diagonal pairs whose figure is missing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils.bench_common import to_float

# ``--p2p_read`` adds a ``(P2P Reads)`` unidirectional and latency matrix after the ``(P2P Writes)`` ones
# (cuda-samples p2pBandwidthLatencyTest.cu); they get keys of their own so neither hides the other.
_P2P_TITLES = (
    (re.compile(r'^Unidirectional P2P=Disabled Bandwidth'), 'unidirectional_p2p_disabled', 'GB/s'),
    (re.compile(r'^Unidirectional P2P=Enabled Bandwidth \(P2P Reads\)'), 'unidirectional_p2p_enabled_reads', 'GB/s'),
    (re.compile(r'^Unidirectional P2P=Enabled Bandwidth'), 'unidirectional_p2p_enabled', 'GB/s'),
    (re.compile(r'^Bidirectional P2P=Disabled Bandwidth'), 'bidirectional_p2p_disabled', 'GB/s'),
    (re.compile(r'^Bidirectional P2P=Enabled Bandwidth'), 'bidirectional_p2p_enabled', 'GB/s'),
    (re.compile(r'^P2P=Disabled Latency'), 'latency_p2p_disabled', 'us'),
    (re.compile(r'^P2P=Enabled Latency \(P2P Reads\)'), 'latency_p2p_enabled_reads', 'us'),
    (re.compile(r'^P2P=Enabled Latency'), 'latency_p2p_enabled', 'us'),
    (re.compile(r'^P2P Connectivity Matrix'), 'connectivity', None),
)
_UINT_RE = re.compile(r'^[0-9]+$')
_DEVICE_RE = re.compile(r'^Device:\s*(\d+),\s*(.*?),\s*pciBusID:\s*([0-9a-fA-F]+),\s*pciDeviceID:\s*([0-9a-fA-F]+),'
                        r'\s*pciDomainID:\s*([0-9a-fA-F]+)')
_ACCESS_RE = re.compile(r'^Device=(\d+)\s+(CAN|CANNOT)\s+Access Peer Device=(\d+)')
_HEADER_RE = re.compile(r'^\s*(D\\D|GPU|CPU)((?:\s+\d+)+)\s*$')
_NVB_RUN_RE = re.compile(r'^Running\s+(\S+?)\.?\s*$')
_NVB_TITLE_RE = re.compile(r'^memcpy\s+(CE|SM)\s+(CPU|GPU)\(row\)\s*(->|<-|<->)\s*(CPU|GPU)\(column\)\s+bandwidth\s*\(([^)]+)\)')
_NVB_COLS_RE = re.compile(r'^\s+(\d+(?:\s+\d+)*)\s*$')
_NVB_SUM_RE = re.compile(r'^SUM\s+(\S+)\s+([\d.]+)')
# cudaCheckError() in the sample prints "Cuda failure <file>:<line>: '<error string>'" and exits
_PROBLEM_RE = re.compile(r'(error|failed|failure|not supported|Waived|CUDA_ERROR|no CUDA-capable)', re.IGNORECASE)


def _matrix(title, unit):
    return {'title': title, 'unit': unit, 'rows': [], 'columns': [], 'values': {}}


def missing_pairs(matrix):
    """Off-diagonal (row, column) pairs of a square GPU matrix whose value is missing. A matrix whose title was
    printed but whose column header never came (the tool died right after the title, or an excerpt) has no
    known GPUs: it gives the single pair ``('*', '*')`` (every figure missing), never an empty list."""
    ids = matrix['columns']
    if not ids:
        return [('*', '*')]
    out = []
    for src in ids:
        for dst in ids:
            if src != dst and matrix['values'].get(src, {}).get(dst) is None:
                out.append((src, dst))
    return out


def parse_p2p(text):
    """Parse p2pBandwidthLatencyTest output. Returns ``devices`` (index, name, pci bus/device/domain),
    ``peer_access`` ({'0': {'1': False}}), ``matrices`` (keys ``connectivity``, ``unidirectional_p2p_disabled``,
    ``unidirectional_p2p_enabled``, ``bidirectional_p2p_disabled``, ``bidirectional_p2p_enabled``,
    ``latency_p2p_disabled``/``latency_p2p_enabled`` (GPU) and ``..._cpu`` variants; with ``--p2p_read`` also
    ``unidirectional_p2p_enabled_reads`` and ``latency_p2p_enabled_reads``), ``problems`` and ``malformed``
    (matrix rows that could not be read: cut off or garbled; their figures are missing)."""
    result = {'tool': 'p2pBandwidthLatencyTest', 'devices': [], 'peer_access': {}, 'matrices': {}, 'problems': [],
              'malformed': []}
    current = None
    key = None
    header_ok = False  # a column header belongs to a matrix only right under its title (or the latency CPU part)
    for raw in text.replace('\r', '').splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        title_above, header_ok = header_ok, False
        match = _DEVICE_RE.match(stripped)
        if match:
            result['devices'].append({'index': int(match.group(1)), 'name': match.group(2), 'pci_bus_id': match.group(3),
                                      'pci_device_id': match.group(4), 'pci_domain_id': match.group(5)})
            continue
        match = _ACCESS_RE.match(stripped)
        if match:
            result['peer_access'].setdefault(match.group(1), {})[match.group(3)] = match.group(2) == 'CAN'
            continue
        found = False
        for rx, name, unit in _P2P_TITLES:
            if rx.match(stripped):
                key, current, found, header_ok = name, None, True, True
                result['matrices'][name] = _matrix(stripped, unit)
                break
        if found:
            continue
        match = _HEADER_RE.match(line)
        if match and key and (title_above or (match.group(1) == 'CPU' and key.startswith('latency')
                                              and current is not None and current is result['matrices'][key])):
            label = match.group(1)
            name = key + '_cpu' if (label == 'CPU' and key.startswith('latency')) else key
            if name not in result['matrices']:
                result['matrices'][name] = _matrix(result['matrices'][key]['title'] + ' CPU', 'us')
            current = result['matrices'][name]
            if current['columns']:  # a second header: the title of the matrix it opens was lost (garbled)
                current = None
                result['malformed'].append(stripped)
                continue
            current['columns'] = match.group(2).split()
            continue
        tokens = stripped.split()
        if current is not None and tokens and _UINT_RE.match(tokens[0]):
            if len(tokens) == len(current['columns']) + 1 and tokens[0] not in current['values'] \
                    and all(to_float(t) is not None or t.upper() == 'N/A' for t in tokens[1:]):
                current['rows'].append(tokens[0])
                current['values'][tokens[0]] = dict(zip(current['columns'], [to_float(t) for t in tokens[1:]]))
                continue
            if not _PROBLEM_RE.search(stripped):
                result['malformed'].append(stripped)
                continue
        if current is None and key and tokens and _UINT_RE.match(tokens[0]) and len(tokens) > 1 \
                and all(to_float(t) is not None or t.upper() == 'N/A' for t in tokens[1:]):
            result['malformed'].append(stripped)  # a matrix row whose matrix could not be told
            continue
        if _PROBLEM_RE.search(stripped) and not stripped.startswith('NOTE') and 'falls back' not in stripped:
            result['problems'].append(stripped)
            current = None
        elif current is not None and re.search(r'[0-9]', stripped) and not stripped.startswith('NOTE'):
            result['malformed'].append(stripped)  # an unreadable line inside a matrix ends it: rows are not guessed
            current = None
    return result


def parse_nvbandwidth(text):
    """Parse nvbandwidth output. ``matrices`` is keyed by test case name (``device_to_device_memcpy_write_ce``
    ...) with ``engine`` (CE/SM), ``direction`` (``->``, ``<-``, ``<->``), ``row_kind``/``column_kind`` (CPU/GPU)
    added; ``sums`` maps test case to its ``SUM`` line; ``devices`` lists ``Device N: name`` lines."""
    result = {'tool': 'nvbandwidth', 'devices': [], 'peer_access': {}, 'matrices': {}, 'sums': {}, 'problems': [],
              'version': None}
    testcase = None
    current = None
    for raw in text.replace('\r', '').splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith('nvbandwidth Version:'):
            result['version'] = stripped.split(':', 1)[1].strip()
            continue
        match = re.match(r'^Device (\d+):\s*(.+?)(?:\s*\(.*\))?$', stripped)
        if match and current is None:
            result['devices'].append({'index': int(match.group(1)), 'name': match.group(2)})
            continue
        match = _NVB_RUN_RE.match(stripped)
        if match:
            testcase, current = match.group(1), None
            continue
        match = _NVB_TITLE_RE.match(stripped)
        if match:
            name = testcase or stripped
            current = _matrix(stripped, match.group(5))
            current.update(engine=match.group(1), row_kind=match.group(2), direction=match.group(3),
                           column_kind=match.group(4))
            result['matrices'][name] = current
            continue
        match = _NVB_SUM_RE.match(stripped)
        if match:
            result['sums'][match.group(1)] = float(match.group(2))
            current = None
            continue
        if current is not None and not current['columns'] and _NVB_COLS_RE.match(line):
            current['columns'] = line.split()
            continue
        tokens = stripped.split()
        if current is not None and current['columns'] and tokens and _UINT_RE.match(tokens[0]) \
                and len(tokens) == len(current['columns']) + 1:
            current['rows'].append(tokens[0])
            current['values'][tokens[0]] = dict(zip(current['columns'], [to_float(t) for t in tokens[1:]]))
            continue
        if _PROBLEM_RE.search(stripped) and not stripped.startswith('NOTE'):
            result['problems'].append(stripped)
    return result


def below(matrix, threshold, off_diagonal=True):
    """(row, column, value) cells below ``threshold`` (diagonal excluded for GPU-GPU matrices)."""
    out = []
    for src in matrix['rows']:
        for dst, value in matrix['values'][src].items():
            if off_diagonal and src == dst:
                continue
            if value is not None and value < threshold:
                out.append((src, dst, value))
    return out


def above(matrix, threshold, off_diagonal=True):
    """(row, column, value) cells above ``threshold`` (latency)."""
    out = []
    for src in matrix['rows']:
        for dst, value in matrix['values'][src].items():
            if off_diagonal and src == dst:
                continue
            if value is not None and value > threshold:
                out.append((src, dst, value))
    return out
