# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the output of the nccl-tests binaries (``all_reduce_perf``, ``all_gather_perf``,
``reduce_scatter_perf``, ``alltoall_perf``, ``broadcast_perf``, ``sendrecv_perf`` ...).

Copes with:
- the column layouts of nccl-tests 1.x/2.0 (``error`` float column, with or without ``redop``) and of
  2.x (``redop``, ``root``, ``#wrong``); the layout is taken from the column header and, when an
  excerpt has none, from the number of fields;
- launcher prefixes on every line (OpenMPI ``[1,0]<stdout>:``, srun ``0: ``, ``host: ``);
- ``NCCL INFO``/``NCCL WARN`` lines interleaved with the table, including messages NCCL prints over several
  lines: its logger (NVIDIA/nccl ``src/debug.cc``) puts the ``host:pid:tid [dev] NCCL INFO`` prefix in front of
  the first line of a message only, so the lines after it are bare (and often all numbers). A line is a data
  row only when it has the table's shape (the column header's count and kinds of cells); a line that does not
  is skipped, unless it is a damaged row (a row's start, or the row's shape but for one or two cells);
- data rows wrapped over two lines;
- rank lines of 1000+ rank runs (with or without ``Group``);
- the ``#wrong`` count printed with ``%g`` (``1.67772e+07`` once it reaches a million), ``N/A`` (``-c 0``) or
  ``-1`` (forks that print -1 for "not checked");
- the old ``error`` column with a trailing ``*`` when the error exceeded the tool's threshold (nccl-tests 1.x/2.0
  and rccl-tests print ``# Errors with asterisks indicate errors that have exceeded the maximum threshold.``);
- rccl-tests (AMD) output, which keeps the nccl-tests layout;
- logs holding several runs (one binary after another, or one binary with several collectives): each
  ``# nThread`` line (``# nccl-tests version``/``# Collective test starting`` in 2.17+) opens a run, listed in
  ``runs`` with the line it started on, the binary when the log names it, its rows, whether its closing lines
  came and the failure lines (``Test NCCL failure`` ...) it printed.

A run whose table cannot be found gives ``rows == []``; callers treat that as a failure. A line that starts
like a data row but cannot be read (cut off, garbled figure) is listed in ``malformed``, never half-read; an
output without the closing ``# Out of bounds values``/``# Avg bus bandwidth`` lines has ``complete`` False.

``evaluate`` turns a parsed output and the nccl_bench thresholds into failure messages (a missing figure is a
failure). Everything here is pure: nothing runs a process (the nccl_bench engine, module_utils/nccl_bench_engine.py, does).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils.bench_common import (
    check_min,
    check_output,
    parse_size,
    strip_prefix,
    to_float,
    to_int,
)

_RANK_RE = re.compile(
    r'^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)\s+'
    r'device\s+(?P<device>\d+)\s+\[(?P<busid>[^\]]*)\]\s*(?P<name>.*?)\s*$')
_PARAMS_RE = re.compile(r'^#\s*nThread\s')
_OOB_RE = re.compile(r'^#\s*Out of bounds values\s*:\s*(\d+)\s*(\w+)?', re.IGNORECASE)
_AVG_RE = re.compile(r'^#\s*Avg bus bandwidth\s*:\s*(\S+)(?:\s+(\S+))?', re.IGNORECASE)
_CLOSING_RE = re.compile(r'^#\s*(Out of bounds values|Avg bus bandwidth)\b', re.IGNORECASE)  # ... but unreadable
_VERSION_RE = re.compile(r'^#\s*nccl-tests version\b')
_COLL_START_RE = re.compile(r'^#\s*Collective test starting:\s*(\S+)')
# a binary named on a shell-trace or launcher line ('+ mpirun ... /opt/nccl-tests/build/all_gather_perf -b 8')
_BINARY_RE = re.compile(r'(?:^|[\s/])([a-z][a-z0-9_]*_perf)(?:_mpi)?(?=\s|$)')
_HEADER_RE = re.compile(r'^#\s*size\s+count\s+type\b')
_TYPE_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')
_UINT_RE = re.compile(r'^[0-9]+$')  # str.isdigit() also accepts '²', which int() rejects
_NCCL_LOG_RE = re.compile(r'\bNCCL (INFO|WARN|ERROR)\b')
_FAILURE_RE = re.compile(r'(Test (?:NCCL|CUDA) failure|Test failure|Test timeout|NCCL failure|NCCL error|'
                         r'unhandled (?:system|cuda|internal) error|Segmentation fault|'
                         r'mpirun noticed|srun: error|MPI_ABORT)', re.IGNORECASE)
_PARAM_KEYS = (('nThread', 'nthread'), ('nGpus', 'ngpus'), ('minBytes', 'min_bytes'),
               ('maxBytes', 'max_bytes'), ('warmup iters', 'warmup_iters'), ('iters', 'iters'),
               ('agg iters', 'agg_iters'), ('validation', 'validation'), ('graph', 'graph'))

# number of fields in a data row -> leading columns (before the 2 x 4 timing columns)
_LEADING_BY_COUNT = {
    13: ('size', 'count', 'type', 'redop', 'root'),
    12: ('size', 'count', 'type', 'redop'),
    11: ('size', 'count', 'type'),
}


def _layout_from_header(tokens):
    """Leading columns and the name of the 4th timing column ('#wrong' or 'error') from a header."""
    leading = []
    for tok in tokens:
        if tok in ('size', 'count', 'type', 'redop', 'root'):
            leading.append(tok)
        elif tok == 'time':
            break
    check = 'error' if 'error' in tokens else 'wrong'
    return tuple(leading), check


def _params(line):
    out = {}
    for key, name in _PARAM_KEYS:
        match = re.search(r'(?<!warmup )(?<!agg )(?:^|(?<=\s))%s:?\s+(\d+)' % re.escape(key), line)
        if match:
            out[name] = int(match.group(1))
    step = re.search(r'step:\s*(\d+)\((factor|bytes)\)', line)
    if step:
        out['step'] = int(step.group(1))
        out['step_kind'] = step.group(2)
    return out


def _is_number(tok):
    return tok.upper() == 'N/A' or to_float(tok) is not None


def _is_check(tok):
    """A #wrong/error cell: a number, ``N/A``, or an old-layout error flagged with ``*``."""
    return _is_number(tok) or (tok.endswith('*') and to_float(tok[:-1]) is not None)


def _wrong(tok):
    """#wrong cell -> int, None for ``N/A`` and for negative "not checked" markers. nccl-tests prints the
    count with ``%g``, so a million wrong elements read ``1e+06``."""
    value = to_float(tok)
    if value is None or value < 0:
        return None
    return int(value)


def _row(tokens, leading, check):
    """One data row as a dict, or None when ``tokens`` is not a data row of this layout."""
    if len(tokens) != len(leading) + 8:
        return None
    if not (_UINT_RE.match(tokens[0]) and _UINT_RE.match(tokens[1]) and _TYPE_RE.match(tokens[2])):
        return None
    if 'redop' in leading and not _fits(tokens[leading.index('redop')], 'word'):
        return None
    if 'root' in leading and not _fits(tokens[leading.index('root')], 'int'):
        return None
    rest = tokens[len(leading):]
    if not (_is_check(rest[3]) and _is_check(rest[7])):
        return None
    if check == 'wrong' and (rest[3].endswith('*') or rest[7].endswith('*')):
        return None
    for i in (0, 1, 2, 4, 5, 6):
        if to_float(rest[i]) is None and rest[i].upper() != 'N/A':
            return None
    row = {'size': int(tokens[0]), 'count': int(tokens[1]), 'type': tokens[2], 'redop': None, 'root': None}
    if 'redop' in leading:
        row['redop'] = tokens[leading.index('redop')]
    if 'root' in leading:
        row['root'] = to_int(tokens[leading.index('root')])
    for prefix, part in (('oop', rest[:4]), ('ip', rest[4:])):
        row[prefix + '_time_us'] = to_float(part[0])
        row[prefix + '_algbw'] = to_float(part[1])
        row[prefix + '_busbw'] = to_float(part[2])
        if check == 'wrong':
            row[prefix + '_wrong'] = _wrong(part[3])  # N/A (not checked) -> None
            row[prefix + '_error'] = None
        else:
            row[prefix + '_wrong'] = None
            row[prefix + '_error'] = to_float(part[3].rstrip('*'))
    return row


def _exceeded(tokens, leading):
    """True when an old-layout error cell of this row carries the tool's ``*`` (error above threshold)."""
    rest = tokens[len(leading):]
    return len(rest) == 8 and (rest[3].endswith('*') or rest[7].endswith('*'))


def _guess_layout(tokens):
    leading = _LEADING_BY_COUNT.get(len(tokens))
    if leading is None:
        return None, None
    check = 'wrong'
    if tokens[-1].upper() != 'N/A' and not _UINT_RE.match(tokens[-1].lstrip('-')):
        check = 'error'
    if len(leading) >= 4 and _is_number(tokens[3]):
        return None, None  # 4th field is a number: not a redop
    return leading, check


def parse(text):
    """Parse nccl-tests output. Returns a dict:

    - ``rows``: one dict per data row (``size`` bytes, ``count``, ``type``, ``redop``, ``root``, then
      ``oop_``/``ip_`` + ``time_us``, ``algbw``, ``busbw`` (GB/s), ``wrong`` (int, None for N/A or the old
      layout) and ``error`` (float of the old layout, else None));
    - ``layout``: leading column names and the check column (``wrong`` or ``error``);
    - ``params``: the ``# nThread ...`` line (nthread, ngpus, min_bytes, max_bytes, iters, validation ...);
    - ``ranks``: ``{rank, group, pid, host, device, busid, name}`` per ``#  Rank`` line;
    - ``out_of_bounds`` (int or None), ``out_of_bounds_status`` (``OK``/``FAILED`` or None);
    - ``avg_busbw_reported`` (float from ``# Avg bus bandwidth``, None when absent) and ``avg_busbw_status``
      (``OK``/``FAILED`` that rccl-tests appends when ``NCCL_TESTS_MIN_BW`` is set, else None);
    - ``nccl_warnings`` (``NCCL WARN`` lines, first 50), ``errors`` (failure lines: ``Test NCCL failure``,
      ``mpirun noticed``, ``Test timeout`` ...), ``malformed`` (lines that started a data row but could not be
      read: cut off, wrapped and never completed, or with a garbled figure; and closing lines whose count or
      verdict cannot be read);
    - ``error_exceeded``: sizes whose old-layout ``error`` cell carries ``*`` (error above the tool's threshold);
    - ``complete``: True once the closing ``# Out of bounds values`` or ``# Avg bus bandwidth`` line was seen
      after the table (False for an output cut short, or an excerpt without them);
    - ``runs``: one dict per run in the log (``index`` from 1, ``line`` it started on, ``binary`` when the log
      names it, ``rows`` count, ``complete`` as above for that run, ``errors`` as ``line N: text``).
    """
    result = {
        'rows': [], 'layout': None, 'params': {}, 'ranks': [], 'out_of_bounds': None,
        'out_of_bounds_status': None, 'avg_busbw_reported': None, 'avg_busbw_reported_raw': None,
        'nccl_warnings': [], 'errors': [], 'malformed': [], 'error_exceeded': [], 'complete': False,
        'avg_busbw_status': None, 'runs': [],
    }
    leading, check = None, None
    pending = None  # tokens of a data row that wrapped
    seen_ranks = set()
    runs = _Runs(result)
    lines = text.replace('\r\n', '\n').replace('\r', '\n').split('\n')
    for lineno, raw in enumerate(lines, 1):
        line = strip_prefix(raw).rstrip()
        if not line.strip():
            continue
        if _NCCL_LOG_RE.search(line):
            if ' NCCL WARN' in line and len(result['nccl_warnings']) < 50:
                result['nccl_warnings'].append(line.strip())
            continue
        stripped = line.strip()
        if stripped.startswith('#'):
            if pending:
                result['malformed'].append(' '.join(pending))
                pending = None
            match = _RANK_RE.match(stripped)
            if match:
                rank = int(match.group('rank'))
                if rank not in seen_ranks:
                    seen_ranks.add(rank)
                    result['ranks'].append({
                        'rank': rank, 'group': to_int(match.group('group')), 'pid': int(match.group('pid')),
                        'host': match.group('host'), 'device': int(match.group('device')),
                        'busid': match.group('busid'), 'name': match.group('name')})
                continue
            if _VERSION_RE.match(stripped):
                runs.start(lineno, 'version')
                continue
            match = _COLL_START_RE.match(stripped)
            if match:
                runs.start(lineno, 'collective', binary=match.group(1))
                continue
            if _PARAMS_RE.match(stripped):
                runs.start(lineno, 'params')
                result['params'] = _params(stripped)
                continue
            if _HEADER_RE.match(stripped):
                runs.start(lineno, 'header')
                leading, check = _layout_from_header(stripped.lstrip('#').split())
                result['layout'] = {'leading': list(leading), 'check': check}
                continue
            match = _OOB_RE.match(stripped)
            if match:
                result['out_of_bounds'] = int(match.group(1))
                status = (match.group(2) or '').upper() or None
                result['out_of_bounds_status'] = status
                if status not in (None, 'OK', 'FAILED'):
                    result['malformed'].append(stripped)  # a verdict that cannot be read is not an OK
                result['complete'] = bool(result['rows'])
                runs.closed()
                continue
            match = _AVG_RE.match(stripped)
            if match:
                result['avg_busbw_reported_raw'] = match.group(1)
                result['avg_busbw_reported'] = to_float(match.group(1))
                status = (match.group(2) or '').upper() or None
                result['avg_busbw_status'] = status if status in ('OK', 'FAILED') else None
                if status not in (None, 'OK', 'FAILED') or not _is_float_text(match.group(1)):
                    result['malformed'].append(stripped)
                result['complete'] = bool(result['rows'])
                runs.closed()
            elif _CLOSING_RE.match(stripped) or _damaged_row(stripped.lstrip('#').split(), leading):
                result['malformed'].append(stripped)  # a data row behind a stray '#', or a garbled closing line
            continue
        if _FAILURE_RE.search(stripped):
            result['errors'].append(stripped)
            runs.error(lineno, stripped)
        else:
            match = _BINARY_RE.search(stripped)
            if match and not _UINT_RE.match(stripped.split()[0]):
                runs.binary(match.group(1))
        tokens = stripped.split()
        if pending is not None:
            joined = pending + tokens
            row = _try_row(joined, leading, check, result)
            if row is not None:
                _add_row(result, row, joined)
                runs.row(lineno)
                pending = None
                continue
            result['malformed'].append(' '.join(pending))
            pending = None
        row = _try_row(tokens, leading, check, result)
        if row is not None:
            _add_row(result, row, tokens)
            runs.row(lineno)
        elif _starts_row(tokens, leading):
            pending = tokens
        elif _damaged_row(tokens, leading):
            result['malformed'].append(stripped)
        # else: not a row of this table (e.g. the bare continuation lines of a multi-line NCCL INFO message)
    if pending:
        result['malformed'].append(' '.join(pending))
    result['runs'] = runs.public()
    return result


class _Runs(object):
    """Splits a log into runs: ``# nccl-tests version``, ``# Collective test starting``, ``# nThread`` and the
    column header open a run unless the run they belong to is still at its start."""

    # what each opening line may follow within the same run
    _ORDER = {'version': 0, 'collective': 1, 'params': 2, 'header': 3}

    def __init__(self, result):
        self.result = result
        self.runs = []
        self.next_binary = None

    def _new(self, lineno):
        run = {'index': len(self.runs) + 1, 'line': lineno, 'binary': self.next_binary, 'rows': 0,
               'complete': False, 'errors': [], '_stage': -1, '_closed': False}
        self.next_binary = None
        self.runs.append(run)
        return run

    def current(self, lineno):
        if not self.runs:
            return self._new(lineno)
        return self.runs[-1]

    def start(self, lineno, what, binary=None):
        stage = self._ORDER[what]
        run = self.runs[-1] if self.runs else None
        if run is None or run['rows'] or run['_closed'] or run['_stage'] >= stage:
            run = self._new(lineno)
        run['_stage'] = stage
        if binary:
            run['binary'] = binary

    def binary(self, name):
        """A binary named outside the table (a shell trace, a launcher line): it belongs to the next run,
        or to the current one while that has not printed its table yet."""
        run = self.runs[-1] if self.runs else None
        if run is not None and not run['binary'] and not run['rows'] and run['_stage'] < self._ORDER['header']:
            run['binary'] = name
        else:
            self.next_binary = name

    def row(self, lineno):
        run = self.current(lineno)
        if run['_closed']:  # rows after the closing lines: another table without a header of its own
            run = self._new(lineno)
            run['_stage'] = self._ORDER['header']
        run['rows'] += 1
        run['complete'] = False

    def closed(self):
        if self.runs:
            run = self.runs[-1]
            run['_closed'] = True
            run['complete'] = run['rows'] > 0

    def error(self, lineno, text):
        self.current(lineno)['errors'].append('line %d: %s' % (lineno, text))

    def public(self):
        return [dict((k, v) for k, v in run.items() if not k.startswith('_')) for run in self.runs]


def run_name(run):
    """``run 2 (all_gather_perf, from line 57)`` for messages."""
    return 'run %d (%sfrom line %d)' % (run['index'], (run['binary'] + ', ') if run['binary'] else '', run['line'])


def run_problems(parsed):
    """One text per run that failed: a run that printed failure lines (``Test NCCL failure``, ``mpirun noticed``
    ...), or, in a log of several runs, a run whose table never came or never closed. A log whose runs all
    finished cleanly gives []."""
    out = []
    runs = parsed.get('runs') or []
    for run in runs:
        where = run_name(run) if len(runs) > 1 else 'the run'
        if run['errors']:
            out.append('%s printed failure line(s): %s' % (
                where, '; '.join(e[:200] for e in run['errors'][:3])
                + (' and %d more' % (len(run['errors']) - 3) if len(run['errors']) > 3 else '')))
        elif len(runs) > 1 and not run['complete']:
            missing = 'no data rows' if not run['rows'] else \
                'no "# Out of bounds values"/"# Avg bus bandwidth" line after its last row'
            out.append('%s is incomplete: %s' % (where, missing))
    return out


def _is_float_text(text):
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _add_row(result, row, tokens):
    result['rows'].append(row)
    result['complete'] = False  # until the closing lines follow this row
    leading = result['layout']['leading'] if result['layout'] else []
    if _exceeded(tokens, leading) and row['size'] not in result['error_exceeded']:
        result['error_exceeded'].append(row['size'])


_CELL_KINDS = {'size': 'uint', 'count': 'uint', 'type': 'word', 'redop': 'word', 'root': 'int'}
# time, algbw, busbw, #wrong/error; algbw and busbw are printed with two decimals ("%6.2f")
_TIMING_KINDS = ('num', 'dec', 'dec', 'check')


def _fits(tok, kind):
    if kind == 'uint':
        return bool(_UINT_RE.match(tok))
    if kind == 'word':
        return bool(_TYPE_RE.match(tok))
    if kind == 'int':
        return bool(_UINT_RE.match(tok[1:] if tok.startswith('-') else tok))
    if kind == 'dec':
        return tok.upper() == 'N/A' or ('.' in tok and to_float(tok) is not None)
    if kind == 'num':
        return _is_number(tok)
    return _is_check(tok)


def _misfits(tokens, kinds):
    """Cells of ``tokens`` that do not fit the columns ``kinds`` (aligned from the left or from the right,
    whichever fits better; a missing or extra cell counts as one), None when the counts are far apart."""
    have, want = len(tokens), len(kinds)
    if abs(have - want) > 2:
        return None
    both = min(have, want)
    left = sum(1 for i in range(both) if not _fits(tokens[i], kinds[i]))
    right = sum(1 for i in range(1, both + 1) if not _fits(tokens[-i], kinds[-i]))
    return min(left, right) + abs(have - want)


def _damaged_row(tokens, leading):
    """True when ``tokens`` (a line that is not a readable data row) is a data row that was damaged: it starts
    like one (size, count, type), or it has the table's shape - the column header's count and kinds of cells,
    the algbw/busbw cells with their decimals - in all but at most two cells. A line of numbers that does not
    have that shape (the continuation of a multi-line NCCL INFO message) is not a row."""
    if len(tokens) >= 3 and _UINT_RE.match(tokens[0]) and _UINT_RE.match(tokens[1]) and _TYPE_RE.match(tokens[2]):
        return True
    layouts = [leading] if leading is not None else list(_LEADING_BY_COUNT.values())
    for lead in layouts:
        kinds = [_CELL_KINDS[col] for col in lead] + list(_TIMING_KINDS) * 2
        misfits = _misfits(tokens, kinds)
        if misfits is not None and misfits <= 2:
            return True
    return False


def _try_row(tokens, leading, check, result):
    if leading is not None:
        return _row(tokens, leading, check)
    guess, guess_check = _guess_layout(tokens)
    if guess is None:
        return None
    row = _row(tokens, guess, guess_check)
    if row is not None and result['layout'] is None:
        result['layout'] = {'leading': list(guess), 'check': guess_check, 'guessed': True}
    return row


def _starts_row(tokens, leading):
    """True when ``tokens`` look like the first part of a wrapped data row."""
    want = len(leading) + 8 if leading else 13
    return (3 <= len(tokens) < want and bool(_UINT_RE.match(tokens[0])) and bool(_UINT_RE.match(tokens[1]))
            and bool(_TYPE_RE.match(tokens[2]))
            and all(_is_check(t) or _TYPE_RE.match(t) for t in tokens[3:]))


def summarize(parsed, check_size=None):
    """Figures derived from ``parse()``: ``avg_busbw`` (the tool's line when present, else the mean of
    every out-of-place and in-place busbw as nccl-tests computes it, ``avg_busbw_source`` says which),
    ``max_busbw``, ``busbw_at_check`` (out-of-place busbw of the row of size ``check_size``, default the
    largest size), ``check_size``, ``wrong_rows`` (sizes with #wrong > 0, and in the old layout sizes whose
    error the tool flagged with ``*``), ``devices`` (count of distinct host/device pairs) and ``hosts``."""
    rows = parsed['rows']
    out = {'avg_busbw': None, 'avg_busbw_source': None, 'max_busbw': None, 'busbw_at_check': None,
           'check_size': None, 'wrong_rows': [], 'hosts': [], 'devices': 0, 'nranks': len(parsed['ranks'])}
    values = [v for r in rows for v in (r['oop_busbw'], r['ip_busbw']) if v is not None]
    if parsed['avg_busbw_reported'] is not None:
        out['avg_busbw'] = parsed['avg_busbw_reported']
        out['avg_busbw_source'] = 'tool'
    elif values:
        out['avg_busbw'] = round(sum(values) / len(values), 4)
        out['avg_busbw_source'] = 'computed'
    if values:
        out['max_busbw'] = max(values)
    if rows:
        size = check_size if check_size is not None else max(r['size'] for r in rows)
        out['check_size'] = size
        matching = [r for r in rows if r['size'] == size]
        if matching:
            out['busbw_at_check'] = matching[-1]['oop_busbw']
    flagged = parsed.get('error_exceeded') or []
    out['wrong_rows'] = [r['size'] for r in rows
                         if (r['oop_wrong'] or 0) > 0 or (r['ip_wrong'] or 0) > 0 or r['size'] in flagged]
    hosts = []
    devices = set()
    for rank in parsed['ranks']:
        if rank['host'] not in hosts:
            hosts.append(rank['host'])
        devices.add((rank['host'], rank['busid'], rank['device']))
    out['hosts'] = hosts
    out['devices'] = len(devices)
    return out


def subject(params, summary, ranks):
    """What a run covered, for messages: ``16 ranks/16 GPUs on host1,host2 (NVIDIA H100 80GB HBM3)``, else the
    ``hosts`` option or the local GPUs; `` NCCL_IB_HCA=...`` appended when ``params['env']`` sets it."""
    names = []
    for rank in ranks:
        if rank['name'] not in names:
            names.append(rank['name'])
    if ranks:
        text = '%d ranks/%d GPUs on %s (%s)' % (len(ranks), summary['devices'], ','.join(summary['hosts'][:8])
                                                + (',...' if len(summary['hosts']) > 8 else ''),
                                                ','.join(names[:3]))
    elif params['hosts']:
        text = 'hosts %s (no rank lines)' % ','.join(params['hosts'])
    else:
        text = 'local GPUs (no rank lines)'
    hca = params['env'].get('NCCL_IB_HCA')
    if hca:
        text += ' NCCL_IB_HCA=%s' % hca
    return text


def evaluate(parsed, params, rung, cmd):
    """Check a ``parse()`` result against the thresholds; pure (runs nothing, reads no file).

    ``params`` holds the nccl_bench options read here: ``check_size`` (bytes or a size text such as ``'32M'``,
    None for the largest size), ``min_busbw_gbytes_per_s`` and ``min_avg_busbw`` (GB/s, None for no threshold),
    ``expected_ranks``, ``hosts`` and ``env`` (for the subject of the messages). ``rung`` and ``cmd`` go into every
    message. Returns ``(failures, summary)``: one text per failed check (no data rows, out of bounds values,
    ``#wrong`` rows, errors the tool flagged, the tool's own FAILED average, a cut or garbled output, failure
    lines of any run, a threshold missed or its figure missing, the rank count) and ``summarize()``'s figures.
    Whether the process itself ended well (exit code, timeout) is the caller's check."""
    summary = summarize(parsed, parse_size(params['check_size']))
    who = subject(params, summary, parsed['ranks'])
    failures = []
    if not parsed['rows']:
        failures.append('%s: no data rows parsed from the output on %s (missing figures fail); cmd: %s'
                        % (rung, who, cmd))
    if (parsed['out_of_bounds'] or 0) > 0 or parsed['out_of_bounds_status'] == 'FAILED':
        failures.append('%s: out of bounds values = %s %s on %s (wrong results); cmd: %s'
                        % (rung, parsed['out_of_bounds'], parsed['out_of_bounds_status'] or '', who, cmd))
    exceeded = parsed['error_exceeded']
    wrong = [s for s in summary['wrong_rows'] if s not in exceeded]
    if wrong:
        failures.append('%s: #wrong > 0 at sizes %s on %s; cmd: %s'
                        % (rung, ','.join(str(s) for s in wrong), who, cmd))
    if exceeded:
        failures.append('%s: error above the tool\'s threshold (flagged *) at sizes %s on %s; cmd: %s'
                        % (rung, ','.join(str(s) for s in exceeded), who, cmd))
    if parsed['avg_busbw_status'] == 'FAILED':
        failures.append('%s: Avg bus bandwidth %s FAILED (the tool\'s own minimum, NCCL_TESTS_MIN_BW) on %s; cmd: %s'
                        % (rung, parsed['avg_busbw_reported_raw'], who, cmd))
    if parsed['rows']:
        check_output(failures, rung, who, cmd, complete=parsed['complete'],
                     missing='no "# Out of bounds values" or "# Avg bus bandwidth" line after the last row',
                     malformed=parsed['malformed'])
    elif parsed['malformed']:
        check_output(failures, rung, who, cmd, malformed=parsed['malformed'])
    for problem in run_problems(parsed):
        failures.append('%s: %s on %s (a failed run fails the output, whatever the exit code); cmd: %s'
                        % (rung, problem, who, cmd))
    if parsed['rows']:
        check_min(failures, rung, who, 'busbw at %s B' % summary['check_size'], summary['busbw_at_check'],
                  params['min_busbw_gbytes_per_s'], 'GB/s', cmd)
        check_min(failures, rung, who, 'avg busbw (%s)' % summary['avg_busbw_source'], summary['avg_busbw'],
                  params['min_avg_busbw'], 'GB/s', cmd)
    if params['expected_ranks'] is not None and summary['nranks'] != params['expected_ranks']:
        failures.append('%s: %d rank lines on %s, expected %d; cmd: %s'
                        % (rung, summary['nranks'], who, params['expected_ranks'], cmd))
    return failures, summary
