# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for perftest output (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_*_lat``).

Bandwidth tables come in ``Gb/sec`` (``--report_gbits``), ``MB/sec`` (older perftest; MB meant 2^20 bytes)
and ``MiB/sec`` (newer perftest); every figure is also returned in Gb/s (10^9 bit/s). Latency tables have
``t_min``, ``t_max``, ``t_typical`` and, in newer versions, ``t_avg``, ``t_stdev`` and the 99%/99.9%
percentiles, in microseconds. Server and client output interleaved in one log (a loopback run captured
together) gives duplicated rows; identical duplicates are dropped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils.bench_common import to_float

_TEST_RE = re.compile(r'^\s*(RDMA_Write|RDMA_Read|Send|Atomic(?: \w+)?)\s+(BW|Latency)\s+Test\s*$')
_BW_HEADER_RE = re.compile(r'^\s*#bytes\s+#iterations\s+BW peak\[([^\]]+)\]\s+BW average\[([^\]]+)\]\s+MsgRate\[Mpps\]')
_LAT_HEADER_RE = re.compile(r'^\s*#bytes\s+#iterations\s+t_min')
_ADDR_RE = re.compile(r'^\s*(local|remote) address:\s*(.*)$')
_GID_RE = re.compile(r'^\s*GID:\s*(\S+)\s*$')
_KV_RE = re.compile(r'([A-Za-z][A-Za-z0-9 _.*/-]*?)\s*:\s*(\S+)')
_PROBLEM_RE = re.compile(r"(Couldn't|Unable to|Failed to|failed to|\bError\b|\berror\b|not found|No IB devices|"
                         r'Problems? with|Conflicting CPU frequency|Segmentation fault)')
# bytes per second of one unit
_UNIT_BYTES = {'Gb/sec': 1e9 / 8, 'MB/sec': 1048576.0, 'MiB/sec': 1048576.0, 'GB/sec': 1e9}
_SETTINGS = {
    'Device': 'device', 'Link type': 'link_type', 'Transport type': 'transport', 'Connection type': 'connection',
    'Number of qps': 'qps', 'Mtu': 'mtu', 'TX depth': 'tx_depth', 'CQ Moderation': 'cq_moderation',
    'Outstand reads': 'outstand_reads', 'Max inline data': 'max_inline', 'Dual-port': 'dual_port',
    'Using SRQ': 'srq', 'PCIe relax order': 'pcie_relax_order', 'ibv_wr* API': 'ibv_wr_api', 'rdma_cm QPs': 'rdma_cm',
    'Data ex. method': 'data_exchange', 'GID index': 'gid_index',
}
_LAT_COLUMNS = (('t_min', 't_min_us'), ('t_max', 't_max_us'), ('t_typical', 't_typical_us'), ('t_avg', 't_avg_us'),
                ('t_stdev', 't_stdev_us'), ('99%', 'p99_us'), ('99.9%', 'p999_us'))


def to_gbps(value, unit):
    """Convert a perftest bandwidth figure in ``unit`` to Gb/s (10^9 bit/s)."""
    if value is None or unit not in _UNIT_BYTES:
        return None
    return round(value * _UNIT_BYTES[unit] * 8 / 1e9, 3)


def _lat_columns(line):
    names = []
    for key, name in _LAT_COLUMNS:
        if re.search(r'(?:^|\s)%s' % re.escape(key), line):
            names.append(name)
    return names


def parse(text):
    """Parse perftest output. Returns a dict:

    - ``test`` (``RDMA_Write``, ``RDMA_Read``, ``Send`` ...), ``kind`` (``BW`` or ``Latency``);
    - ``settings``: banner values (``device``, ``link_type``, ``mtu``, ``qps``, ``connection`` ...);
    - ``local``/``remote``: the address lines as dicts (``LID``, ``QPN``, ``PSN``, ``GID`` ...);
    - ``unit``: unit of the bandwidth columns as printed (``Gb/sec``, ``MB/sec``, ``MiB/sec``);
    - ``rows``: per size ``bytes``, ``iterations`` and for BW ``bw_peak``, ``bw_avg`` (printed unit),
      ``bw_peak_gbps``, ``bw_avg_gbps``, ``msg_rate_mpps``; for latency ``t_min_us``, ``t_max_us``,
      ``t_typical_us`` and when printed ``t_avg_us``, ``t_stdev_us``, ``p99_us``, ``p999_us``;
    - ``problems``: error lines (``Couldn't connect``, ``Unable to init`` ...); ``warnings``: CPU frequency lines.
    """
    result = {'test': None, 'kind': None, 'settings': {}, 'local': None, 'remote': None, 'unit': None,
              'rows': [], 'problems': [], 'warnings': []}
    mode = None
    last_addr = None
    lat_cols = []
    seen = set()
    for raw in text.replace('\r', '\n').splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        match = _TEST_RE.match(line)
        if match:
            result['test'], result['kind'] = match.group(1), match.group(2)
            continue
        match = _BW_HEADER_RE.match(line)
        if match:
            mode, result['unit'] = 'bw', match.group(2)
            continue
        if _LAT_HEADER_RE.match(line):
            mode, lat_cols = 'lat', _lat_columns(line)
            continue
        match = _ADDR_RE.match(line)
        if match:
            last_addr = match.group(1)
            if result[last_addr] is None:
                words = match.group(2).split()
                result[last_addr] = dict(zip(words[0::2], words[1::2]))
            continue
        match = _GID_RE.match(line)
        if match and last_addr and result[last_addr] is not None:
            result[last_addr].setdefault('GID', match.group(1))
            continue
        if stripped.startswith('-----') or stripped.startswith('*'):
            continue
        tokens = stripped.split()
        if mode and tokens and tokens[0].isdigit() and all(to_float(t) is not None for t in tokens):
            row = _row(mode, tokens, lat_cols, result['unit'])
            if row is not None:
                key = tuple(sorted(row.items()))
                if key not in seen:
                    seen.add(key)
                    result['rows'].append(row)
                continue
        if 'Conflicting CPU frequency' in line:
            result['warnings'].append(stripped)
            continue
        if _PROBLEM_RE.search(line):
            result['problems'].append(stripped)
            continue
        if ':' in line:
            for key, value in _KV_RE.findall(line):
                name = _SETTINGS.get(key.strip())
                if name and name not in result['settings']:
                    result['settings'][name] = value
    return result


def _row(mode, tokens, lat_cols, unit):
    if mode == 'bw':
        if len(tokens) != 5:
            return None
        peak, avg = to_float(tokens[2]), to_float(tokens[3])
        return {'bytes': int(tokens[0]), 'iterations': int(float(tokens[1])), 'bw_peak': peak, 'bw_avg': avg,
                'bw_peak_gbps': to_gbps(peak, unit), 'bw_avg_gbps': to_gbps(avg, unit),
                'msg_rate_mpps': to_float(tokens[4])}
    if len(tokens) != 2 + len(lat_cols) or not lat_cols:
        return None
    row = {'bytes': int(tokens[0]), 'iterations': int(float(tokens[1]))}
    for name, tok in zip(lat_cols, tokens[2:]):
        row[name] = to_float(tok)
    return row


def summarize(parsed, check_size=None):
    """Figures of the row of ``check_size`` bytes (default the largest size): ``bytes``, ``peak_gbps``,
    ``avg_gbps``, ``msg_rate_mpps`` for bandwidth tests; ``latency_us`` (``t_avg`` when printed, else
    ``t_typical``), ``latency_typical_us``, ``latency_max_us``, ``latency_p999_us`` for latency tests; plus
    ``max_peak_gbps`` over all rows. Missing figures are None."""
    out = {'bytes': None, 'peak_gbps': None, 'avg_gbps': None, 'msg_rate_mpps': None, 'max_peak_gbps': None,
           'latency_us': None, 'latency_typical_us': None, 'latency_max_us': None, 'latency_p999_us': None}
    rows = parsed['rows']
    if not rows:
        return out
    size = check_size if check_size is not None else max(r['bytes'] for r in rows)
    matching = [r for r in rows if r['bytes'] == size]
    out['bytes'] = size
    peaks = [r['bw_peak_gbps'] for r in rows if r.get('bw_peak_gbps') is not None]
    out['max_peak_gbps'] = max(peaks) if peaks else None
    if not matching:
        return out
    row = matching[-1]
    if 'bw_avg' in row:
        out.update(peak_gbps=row['bw_peak_gbps'], avg_gbps=row['bw_avg_gbps'], msg_rate_mpps=row['msg_rate_mpps'])
    else:
        out['latency_us'] = row.get('t_avg_us') if row.get('t_avg_us') is not None else row.get('t_typical_us')
        out['latency_typical_us'] = row.get('t_typical_us')
        out['latency_max_us'] = row.get('t_max_us')
        out['latency_p999_us'] = row.get('p999_us')
    return out
