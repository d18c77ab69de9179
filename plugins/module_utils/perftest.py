# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for perftest output (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_*_lat``).

Bandwidth tables come in ``Gb/sec`` (``--report_gbits``), ``MB/sec`` (older perftest; MB meant 2^20 bytes)
and ``MiB/sec`` (newer perftest); every figure is also returned in Gb/s (10^9 bit/s). Latency tables have
``t_min``, ``t_max``, ``t_typical`` and, in newer versions, ``t_avg``, ``t_stdev`` and the 99%/99.9%
percentiles, in microseconds. Server and client output interleaved in one log (a loopback run captured
together) gives duplicated rows; identical duplicates are dropped.

The table columns are read from the header line, so these perftest layouts (linux-rdma/perftest
``src/perftest_parameters.h`` over its versions) are all understood:

- old perftest: ``#bytes #iterations BW peak[MB/sec] BW average[MB/sec]`` (no message rate);
- ``MsgRate[Mpps]`` (perftest 2.x onwards), ``--report_gbits`` (``[Gb/sec]``);
- ``--report-per-port``: ``BW Port1[..] MsgRate Port1[Mpps] BW Port2[..] MsgRate Port2[Mpps]`` appended;
- ``--sl``/QoS runs: ``#bytes #sl #iterations ...``; ``--cpu_util``: ``CPU_Util[%]`` appended;
- latency: ``t_min``/``t_max``/``t_typical`` (older), plus ``t_avg``, ``t_stdev`` and the 99%/99.9% percentiles
  (newer), ``--duration`` latency (``#bytes #iterations t_avg[usec]`` only); a header in ``[cycles]`` (``-C``)
  gives ``*_cycles`` figures and no ``*_us`` figures.

A row that cannot be read under its header (cut off, garbled, ``-nan``) is listed in ``malformed``; ``complete``
is True once the dashed line that closes the table follows the rows.

``evaluate`` turns a parsed output and the rdma_bw thresholds into failure messages (a missing figure is a failure).
Everything here is pure: nothing runs a process (the rdma_bw engine, module_utils/rdma_bw_engine.py, does).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils.bench_common import (
    check_max,
    check_min,
    check_output,
    to_float,
)

_TEST_RE = re.compile(r'^\s*(RDMA_Write|RDMA_Read|Send|Atomic(?: \w+)?)\s+(BW|Latency)\s+Test\s*$')
_BW_HEADER_RE = re.compile(r'^\s*#bytes\s.*\bBW average\[([^\]]+)\]')
_LAT_HEADER_RE = re.compile(r'^\s*#bytes\s+(?:#\w+\s+)*#iterations\s+t_(?:min|avg|typical)\b')
# the cells of a bandwidth header (see _bw_columns for the row key of each)
_BW_COLUMN_RE = re.compile(r'#bytes|#sl|#iterations|BW peak\[[^\]]*\]|BW average\[[^\]]*\]|MsgRate\[[^\]]*\]|'
                           r'BW Port(\d+)\[[^\]]*\]|MsgRate Port(\d+)\[[^\]]*\]|CPU_Util\[[^\]]*\]')
_UINT_RE = re.compile(r'^[0-9]+$')
_ADDR_RE = re.compile(r'^\s*(local|remote) address:\s*(.*)$')
_GID_RE = re.compile(r'^\s*GID:\s*(\S+)\s*$')
_KV_RE = re.compile(r'([A-Za-z][A-Za-z0-9 _.*/-]*?)\s*:\s*(\S+)')
_PROBLEM_RE = re.compile(r"(Couldn't|Unable to|Failed to|failed to|Failed status|\bError\b|\berror\b|not found|No IB devices|"
                         r'Problems? with|Conflicting CPU frequency|Segmentation fault)')
# bytes per second of one unit
_UNIT_BYTES = {'Gb/sec': 1e9 / 8, 'MB/sec': 1048576.0, 'MiB/sec': 1048576.0, 'GB/sec': 1e9}
_BW_KEYS = ('bw_peak', 'bw_avg', 'bw_peak_gbps', 'bw_avg_gbps', 'msg_rate_mpps')
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
    """Row keys of a latency header, in order; ``[cycles]`` headers give ``*_cycles`` keys."""
    found = []
    for key, name in _LAT_COLUMNS:
        match = re.search(r'(?:^|\s)%s' % re.escape(key), line)
        if match:
            found.append((match.start(), name))
    names = [name for dummy, name in sorted(found)]
    if '[cycles]' in line:
        names = [name[:-3] + '_cycles' for name in names]
    lead = re.match(r'^\s*#bytes\s+((?:#\w+\s+)*)#iterations', line)
    extra = [tok.lstrip('#') for tok in lead.group(1).split()] if lead else []
    return extra + names


def _bw_columns(line):
    """Row keys of a bandwidth header, in order."""
    cols = []
    for match in _BW_COLUMN_RE.finditer(line):
        cell = match.group(0)
        if cell.startswith('#'):
            cols.append(cell[1:])
        elif cell.startswith('BW peak'):
            cols.append('bw_peak')
        elif cell.startswith('BW average'):
            cols.append('bw_avg')
        elif cell.startswith('MsgRate Port'):
            cols.append('msg_rate_port%s_mpps' % match.group(2))
        elif cell.startswith('MsgRate'):
            cols.append('msg_rate_mpps')
        elif cell.startswith('BW Port'):
            cols.append('bw_port%s' % match.group(1))
        else:
            cols.append('cpu_util_pct')
    return cols


def parse(text):
    """Parse perftest output. Returns a dict:

    - ``test`` (``RDMA_Write``, ``RDMA_Read``, ``Send`` ...), ``kind`` (``BW`` or ``Latency``);
    - ``settings``: banner values (``device``, ``link_type``, ``mtu``, ``qps``, ``connection`` ...);
    - ``local``/``remote``: the address lines as dicts (``LID``, ``QPN``, ``PSN``, ``GID`` ...);
    - ``unit``: unit of the bandwidth columns as printed (``Gb/sec``, ``MB/sec``, ``MiB/sec``);
    - ``rows``: per size ``bytes``, ``iterations`` and for BW ``bw_peak``, ``bw_avg`` (printed unit),
      ``bw_peak_gbps``, ``bw_avg_gbps``, ``msg_rate_mpps`` (None when the layout has no such column; plus
      ``sl``, ``bw_port1``, ``msg_rate_port1_mpps`` ..., ``cpu_util_pct`` when printed); for latency ``t_min_us``,
      ``t_max_us``, ``t_typical_us`` and when printed ``t_avg_us``, ``t_stdev_us``, ``p99_us``, ``p999_us``;
    - ``problems``: error lines (``Couldn't connect``, ``Unable to init``, ``Failed status`` ...); ``warnings``:
      CPU frequency lines;
    - ``malformed``: lines that started a result row but could not be read under the header;
    - ``complete``: True when the table was closed by perftest's dashed line after at least one row.
    """
    result = {'test': None, 'kind': None, 'settings': {}, 'local': None, 'remote': None, 'unit': None,
              'rows': [], 'problems': [], 'warnings': [], 'malformed': [], 'complete': False}
    mode = None
    last_addr = None
    lat_cols = []
    bw_cols = []
    seen = set()
    open_rows = False  # rows read since the last header/closing line
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
            mode, result['unit'], bw_cols = 'bw', match.group(1), _bw_columns(line)
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
            if open_rows and stripped.startswith('-----'):
                result['complete'] = True
                open_rows = False
            continue
        tokens = stripped.split()
        if mode and tokens and _UINT_RE.match(tokens[0]):
            row = None
            if all(to_float(t) is not None for t in tokens):
                row = _row(mode, tokens, lat_cols if mode == 'lat' else bw_cols, result['unit'])
            if row is not None:
                key = tuple(sorted(row.items()))
                if key not in seen:
                    seen.add(key)
                    result['rows'].append(row)
                open_rows = True
                result['complete'] = False
                continue
            if len(tokens) >= 2 and _UINT_RE.match(tokens[1]) and not _PROBLEM_RE.search(line):
                result['malformed'].append(stripped)
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


def _row(mode, tokens, cols, unit):
    """One result row under the header's columns ``cols`` (bandwidth: every cell; latency: after #bytes and
    #iterations), or None when the row does not fit them."""
    if mode == 'bw':
        if len(tokens) != len(cols) or 'bw_avg' not in cols or cols[0] != 'bytes' or 'iterations' not in cols:
            return None
        cells = dict(zip(cols, tokens))
        if not _UINT_RE.match(cells['iterations']):
            return None
        row = {'bytes': int(cells.pop('bytes')), 'iterations': int(cells.pop('iterations'))}
        for key in _BW_KEYS:
            row[key] = None
        for key, tok in cells.items():
            row[key] = int(float(tok)) if key == 'sl' else to_float(tok)
        row['bw_peak_gbps'] = to_gbps(row['bw_peak'], unit)
        row['bw_avg_gbps'] = to_gbps(row['bw_avg'], unit)
        return row
    extra = [c for c in cols if not c.startswith(('t_', 'p99'))]
    names = cols[len(extra):]
    if len(tokens) != 2 + len(cols) or not names or not _UINT_RE.match(tokens[1 + len(extra)]):
        return None
    row = {'bytes': int(tokens[0]), 'iterations': int(tokens[1 + len(extra)])}
    for name, tok in zip(extra, tokens[1:]):
        row[name] = int(float(tok))
    for name, tok in zip(names, tokens[2 + len(extra):]):
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


def is_latency_tool(executable):
    """True for the latency tools (``ib_write_lat``, ``/opt/perftest/ib_send_lat`` ...): names ending in ``_lat``."""
    return posixpath.basename(executable).endswith('_lat')


def subject(parsed, params):
    """The HCA and port a run measured, for messages: ``HCA mlx5_0 port 1 (IB, server gpu002)``. The device and
    link type come from the banner when printed, else the ``device`` option; no server in ``server`` role."""
    device = parsed['settings'].get('device') or params['device'] or 'default HCA'
    server = '' if params['role'] == 'server' else ', server %s' % (params['server'] or '127.0.0.1')
    return 'HCA %s port %d (%s%s)' % (device, params['ib_port'], parsed['settings'].get('link_type') or 'link ?', server)


def evaluate(parsed, params, rung, cmd):
    """Check a ``parse()`` result against the thresholds; pure (runs nothing, reads no file).

    ``params`` holds the rdma_bw options read here: ``executable`` (a name ending in ``_lat`` is a latency test),
    ``check_size`` (bytes, None for the largest size), ``min_gbits_per_s`` (Gb/s) and ``min_msg_rate_mpps`` for
    bandwidth tests, ``max_latency_us`` for latency tests (None for no threshold), and ``device``, ``ib_port``,
    ``role`` and ``server`` for the subject of the messages. ``rung`` and ``cmd`` go into every message.
    Returns ``(failures, summary)``: one text per failed check (no result rows, a cut or garbled output, a
    threshold missed or its figure missing) and ``summarize()``'s figures. Whether the processes ended well
    (exit codes, timeouts, the loopback server) is the caller's check."""
    summary = summarize(parsed, params['check_size'])
    who = subject(parsed, params)
    failures = []
    if not parsed['rows']:
        failures.append('%s: no result rows parsed on %s (missing figures fail); cmd: %s' % (rung, who, cmd))
        check_output(failures, rung, who, cmd, malformed=parsed['malformed'])
        return failures, summary
    check_output(failures, rung, who, cmd, complete=parsed['complete'],
                 missing="perftest's closing dashed line does not follow the result rows",
                 malformed=parsed['malformed'])
    size = '%s B' % summary['bytes']
    if is_latency_tool(params['executable']):
        check_max(failures, rung, who, 'latency at %s' % size, summary['latency_us'], params['max_latency_us'], 'us',
                  cmd)
    else:
        check_min(failures, rung, who, 'average bandwidth at %s' % size, summary['avg_gbps'],
                  params['min_gbits_per_s'], 'Gb/s', cmd)
        check_min(failures, rung, who, 'message rate at %s' % size, summary['msg_rate_mpps'],
                  params['min_msg_rate_mpps'], 'Mpps', cmd)
    return failures, summary
