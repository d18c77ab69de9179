# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for GPU-to-GPU bandwidth matrices: CUDA samples' ``p2pBandwidthLatencyTest`` and NVIDIA's
``nvbandwidth``.

A matrix is returned as ``{'title', 'unit', 'rows': [ids], 'columns': [ids], 'values': {row: {col: float|None}}}``
with string ids (JSON object keys); ``N/A`` cells are None. A matrix cut short (an excerpt, or a tool that died)
simply lacks rows; ``missing_pairs`` lists the off-diagonal pairs whose figure is missing.

nvbandwidth prints ``N/A`` for a pair it did not measure because the measurement does not apply: the diagonal, and
GPU pairs without peer access (NVIDIA/nvbandwidth leaves the cell of a pair whose ``enablePeerAccess`` fails empty and
prints an empty cell as ``N/A``). Those cells are listed in the matrix's ``not_applicable`` and are not missing
figures; a number that cannot be read is. Its bidirectional test cases print three matrices each, titled
``... GPU(column) Read1 bandwidth``/``Read2``/``Total`` (``Write1``/``Write2``/``Total`` for the write variants):
they are kept apart under the tool's own keys, ``<testcase>_read1`` ... ``<testcase>_total``, as its ``SUM`` lines
name them.
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
# the part of a bidirectional test case (Read1, Read2, Write1, Write2, Total) stands between GPU(column) and bandwidth
_NVB_TITLE_RE = re.compile(r'^memcpy\s+(CE|SM)\s+(CPU|GPU)\(row\)\s*(->|<-|<->)\s*(CPU|GPU)\(column\)\s+'
                           r'(?:([A-Za-z]+[0-9]*)\s+)?bandwidth\s*\(([^)]+)\)')
_NVB_COLS_RE = re.compile(r'^\s+(\d+(?:\s+\d+)*)\s*$')
# 'SUM <key> <value>', or '&&&& PERF <key> <value><unit>' with nvbandwidth's perf formatter
_NVB_SUM_RE = re.compile(r'^(?:SUM|&&&& PERF)\s+(\S+)\s+(\d+(?:\.\d+)?)(?![\d.])')
# cudaCheckError() in the sample prints "Cuda failure <file>:<line>: '<error string>'" and exits
_PROBLEM_RE = re.compile(r'(error|failed|failure|not supported|Waived|CUDA_ERROR|no CUDA-capable)', re.IGNORECASE)


def _matrix(title, unit):
    return {'title': title, 'unit': unit, 'rows': [], 'columns': [], 'values': {}}


def missing_pairs(matrix):
    """Off-diagonal (row, column) pairs of a square GPU matrix whose value is missing (for a matrix whose rows are
    not GPUs - nvbandwidth's one ``CPU`` row, or the one ``ALL`` row of its all-to-one/one-to-all cases - every
    cell of its rows). A matrix whose title was printed but whose column header or rows never came (the tool died
    right after the title, an excerpt, a cut header) gives the single pair ``('*', '*')`` (every figure missing),
    never an empty list. Cells nvbandwidth printed as ``N/A`` (``not_applicable``) are not missing."""
    ids = matrix['columns']
    if not ids or not matrix['rows']:
        return [('*', '*')]
    not_applicable = set(tuple(pair) for pair in matrix.get('not_applicable') or ())
    out = []
    if matrix.get('row_kind', 'GPU') != matrix.get('column_kind', 'GPU'):
        for src in matrix['rows']:
            for dst in ids:
                if matrix['values'][src].get(dst) is None and (src, dst) not in not_applicable:
                    out.append((src, dst))
        return out
    for src in ids:
        for dst in ids:
            if src != dst and matrix['values'].get(src, {}).get(dst) is None and (src, dst) not in not_applicable:
                out.append((src, dst))
    return out


def not_applicable_pairs(matrix):
    """Off-diagonal (row, column) pairs the tool printed as ``N/A`` (nvbandwidth: no peer access between them)."""
    return [tuple(pair) for pair in matrix.get('not_applicable') or () if pair[0] != pair[1]]


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
    ...), for the parts of a bidirectional test case by test case and part (``..._read1``, ``..._read2``,
    ``..._total``), with ``engine`` (CE/SM), ``direction`` (``->``, ``<-``, ``<->``), ``row_kind``/``column_kind``
    (CPU/GPU; ``ALL`` for the one row of the all_to_one/one_to_all cases), ``testcase``, ``part`` (``read1`` ...
    ``total``, None for a single matrix) and ``not_applicable``
    (``[row, column]`` cells printed ``N/A``) added; ``sums`` maps the key of each ``SUM`` line to its figure;
    ``devices`` lists ``Device N: name`` lines."""
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
            part = match.group(5).lower() if match.group(5) else None
            name = testcase or stripped
            if part and testcase:
                name = '%s_%s' % (testcase, part)
            current = _matrix(stripped, match.group(6))
            row_kind = match.group(2)
            if (testcase or '').startswith(('all_to_one', 'one_to_all')):
                row_kind = 'ALL'  # one row: all the other GPUs at once, to (from) the GPU of the column
            elif row_kind == 'CPU' and (testcase or '').startswith('device_to_device'):
                # some versions title the device-to-device bidirectional parts 'CPU(row) <-> GPU(column)'
                # (NVIDIA/nvbandwidth testcases_ce.cpp); their rows are GPUs all the same
                row_kind = 'GPU'
            current.update(engine=match.group(1), row_kind=row_kind, direction=match.group(3),
                           column_kind=match.group(4), testcase=testcase, part=part, not_applicable=[])
            result['matrices'][name] = current
            continue
        match = _NVB_SUM_RE.match(stripped)
        if match:
            result['sums'][match.group(1)] = to_float(match.group(2))
            current = None
            continue
        if current is not None and not current['columns'] and _NVB_COLS_RE.match(line):
            current['columns'] = line.split()
            continue
        tokens = stripped.split()
        if current is not None and current['columns'] and tokens and _UINT_RE.match(tokens[0]) \
                and len(tokens) == len(current['columns']) + 1 and tokens[0] not in current['values']:
            current['rows'].append(tokens[0])
            current['values'][tokens[0]] = dict(zip(current['columns'], [to_float(t) for t in tokens[1:]]))
            current['not_applicable'] += [[tokens[0], col] for col, cell in zip(current['columns'], tokens[1:])
                                          if cell == 'N/A']
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
