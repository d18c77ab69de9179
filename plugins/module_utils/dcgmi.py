# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for ``dcgmi diag`` output: the JSON of ``-j`` and the text table.

JSON layouts:
- DCGM 2.x/3.x: ``{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results":
  [{"status", "gpu_ids": "0", "info": "...", "warnings": "..."}]}]}]}}``;
- DCGM 4.x (per NVIDIA/DCGM ``testing/python3/dcgm_diag_schema.json``): ``{"DCGM Diagnostic": {"test_categories":
  [... "results": [{"entity_group": "GPU", "entity_id": 0, "status", "warnings": [{"warning", "error_id",
  "error_category", "error_severity"}]}], "test_summary": {"status"}], "runtime_error"}, "entity_groups": [...],
  "metadata": {"version", "Driver Version Detected"}}``.
Anything else (invalid JSON, the diagnostic key missing, ``test_categories`` missing, a category, test or result
that is not an object, a test without a name, a non-numeric ``entity_id``) raises DcgmiParseError.

Text table (DCGM 1.x-3.x, and the per-entity rows of 4.x): sections ``|-----  Deployment  ---+``, rows
``| Test name | Pass |``, ``Pass - All``, ``Pass - GPUs: 1, 2``, ``Fail - GPU: 0``, ``GPU0: Fail``, and
``Warning``/``Error``/``Info`` rows whose text wraps over following rows at a fixed width (cut mid-word).
DCGM 4 prints a test-level row (``| pcie | Fail |``) and then one ``GPUn: status`` row per entity; the
test-level ``Fail`` may stand next to per-GPU ``Pass`` rows when the failure is not a GPU's (NVIDIA/DCGM
issue #253: internal error of the pcie plugin).

A result that is not a known status word (a cut-off or garbled row, or the output of another dcgmi command),
and a test without any result, get an ``Error`` message (so the test's status is ``Fail``): a missing figure is
never a pass. ``complete`` (text) is True once the table's closing border follows the last test row.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

STATUS_ORDER = {'Pass': 0, 'Skip': 1, 'Not Run': 1, 'Warn': 2, 'Fail': 3}
_STATUS_WORDS = {'pass': 'Pass', 'fail': 'Fail', 'skip': 'Skip', 'warn': 'Warn', 'warning': 'Warn',
                 'not run': 'Not Run', 'notrun': 'Not Run', 'error': 'Fail'}
_SECTION_RE = re.compile(r'^[|+]-+\s+([A-Za-z][A-Za-z ]*?)\s+-+\+')
_VALUE_RE = re.compile(r'^(Pass|Fail|Skip|Warn|Warning|Not Run)\b\s*(?:-\s*(.*))?$', re.IGNORECASE)
_ENTITY_VALUE_RE = re.compile(r'^(GPU|CPU|Switch|NvSwitch|Link)\s*(\d+)\s*:\s*(Pass|Fail|Skip|Warn|Warning|Not Run)\b',
                              re.IGNORECASE)
_MSG_NAME_RE = re.compile(r'^(Warning|Error|Info)\b\s*:?\s*(?:(GPU|CPU)\s*(\d+))?', re.IGNORECASE)
_GPU_IN_TEXT_RE = re.compile(r'\bGPU\s*(\d+)\b')


class DcgmiParseError(ValueError):
    """Raised when ``dcgmi diag -j`` output is not JSON of a known layout."""


def _status(text):
    if text is None:
        return None
    return _STATUS_WORDS.get(str(text).strip().lower(), str(text).strip())


def worst(statuses):
    """Worst of ``statuses`` (Fail > Warn > Skip > Pass); unknown words count as Fail."""
    best = None
    for status in statuses:
        if status is None:
            continue
        if best is None or STATUS_ORDER.get(status, 3) > STATUS_ORDER.get(best, 3):
            best = status
    return best


def _new_test(category, name):
    return {'category': category, 'name': name, 'status': None, 'results': [], 'messages': []}


def _unknown(test, what, fmt='json', gpus=None):
    """Record an unreadable or missing result as an Error message (the test's status becomes Fail)."""
    msg = {'kind': 'Error', 'gpus': gpus, 'text': what}
    if fmt == 'json':
        msg['error_id'] = None
    test['messages'].append(msg)


def _finish(tests, fmt='text'):
    for test in tests:
        known = [r for r in test['results'] if r['status'] in STATUS_ORDER]
        if not known and test['status'] not in STATUS_ORDER and not any(m['kind'] == 'Error' for m in test['messages']):
            _unknown(test, 'no result status in the dcgmi diag output for this test', fmt)
        statuses = [r['status'] for r in test['results']]
        if any(m['kind'] == 'Error' for m in test['messages']):
            statuses.append('Fail')
        test['status'] = worst(statuses + ([test['status']] if test['status'] else []))
        if test['status'] is not None and test['status'] not in STATUS_ORDER:
            test['status'] = 'Fail'  # an unknown word is never better than Fail
    return tests


def _gpus_from(text):
    """``'All'`` -> 'all'; ``'GPUs: 1, 2, 3'`` -> [1, 2, 3]; '' -> None."""
    if not text:
        return None
    if text.strip().lower() == 'all':
        return 'all'
    ids = [int(n) for n in re.findall(r'\d+', text)]
    return ids or None


def parse_json(text):
    """Parse ``dcgmi diag -j``. Returns the same structure as parse_text (``format: json``)."""
    try:
        data = json.loads(text[text.index('{'):] if '{' in text else text)
    except ValueError as exc:
        raise DcgmiParseError('dcgmi diag output is not valid JSON (%s)' % exc)
    if not isinstance(data, dict):
        raise DcgmiParseError('dcgmi diag JSON is a %s, expected an object' % type(data).__name__)
    key = 'DCGM Diagnostic' if 'DCGM Diagnostic' in data else 'DCGM GPU Diagnostic'
    root = data.get(key)
    if not isinstance(root, dict):
        raise DcgmiParseError('dcgmi diag JSON has no "DCGM Diagnostic"/"DCGM GPU Diagnostic" object (%s is %s)'
                              % (key, type(root).__name__ if root is not None else 'missing'))
    cats = root.get('test_categories')
    runtime_error = root.get('runtime_error')
    if not isinstance(cats, list) and not runtime_error:
        raise DcgmiParseError('dcgmi diag JSON "%s" has no "test_categories" list' % key)
    meta = data.get('metadata') if isinstance(data.get('metadata'), dict) else {}
    metadata = {}
    for name in ('version', 'Driver Version Detected', 'DCGM Version'):
        value = meta.get(name, root.get(name, data.get(name)))
        if value is not None:
            metadata['DCGM Version' if name == 'version' else name] = value
    tests = []
    if cats is not None and not isinstance(cats, list):
        raise DcgmiParseError('dcgmi diag JSON "test_categories" is a %s, expected a list' % type(cats).__name__)
    for cat in cats or []:
        if not isinstance(cat, dict) or not isinstance(cat.get('tests'), list):
            raise DcgmiParseError('dcgmi diag JSON category without a "tests" list: %r' % (cat,))
        for item in cat['tests']:
            if not isinstance(item, dict):
                raise DcgmiParseError('dcgmi diag JSON test is not an object: %r' % (item,))
            tests.append(_json_test(cat.get('category'), item))
    result = {'format': 'json', 'metadata': metadata, 'tests': _finish(tests, 'json'), 'runtime_error': runtime_error,
              'preamble': []}
    return result


def _json_messages(test, holder, gpus):
    for kind, field in (('Warning', 'warnings'), ('Info', 'info')):
        values = holder.get(field)
        if values in (None, '', []):
            continue
        for value in values if isinstance(values, list) else [values]:
            msg = {'kind': kind, 'gpus': gpus, 'text': None, 'error_id': None}
            if isinstance(value, dict):
                msg['text'] = value.get('warning') or value.get('info') or json.dumps(value)
                msg['error_id'] = value.get('error_id')
            else:
                msg['text'] = str(value)
            test['messages'].append(msg)


def _json_test(category, item):
    if not isinstance(item.get('name'), str):
        raise DcgmiParseError('dcgmi diag JSON test without a name string: %r' % (item.get('name'),))
    test = _new_test(category, item['name'])
    summary = item.get('test_summary')
    if summary is not None and not isinstance(summary, dict):
        raise DcgmiParseError('dcgmi diag JSON "test_summary" of %s is not an object' % (item.get('name'),))
    if summary and summary.get('status'):
        test['status'] = _status(summary['status'])
        if test['status'] not in STATUS_ORDER:
            _unknown(test, 'unrecognised test status %r' % (summary['status'],))
    if summary:  # DCGM 4: messages that belong to the test, not to one entity
        _json_messages(test, summary, None)
    results = item.get('results') or []
    if not isinstance(results, list):
        raise DcgmiParseError('dcgmi diag JSON "results" of %s is not a list' % (item.get('name'),))
    for res in results:
        if not isinstance(res, dict):
            raise DcgmiParseError('dcgmi diag JSON result of %s is not an object: %r' % (item.get('name'), res))
        gpus = None
        if 'entity_id' in res:
            try:
                entity_id = int(res['entity_id'])
            except (TypeError, ValueError):
                raise DcgmiParseError('dcgmi diag JSON result of %s has entity_id %r'
                                      % (item.get('name'), res['entity_id']))
            if str(res.get('entity_group', 'GPU')).upper() == 'GPU':
                gpus = [entity_id]
        elif res.get('gpu_ids') not in (None, ''):
            gpus = _gpus_from(str(res['gpu_ids']))
        entry = {'status': _status(res.get('status')), 'gpus': gpus,
                 'entity': '%s%s' % (res.get('entity_group', 'GPU'), res['entity_id']) if 'entity_id' in res else None}
        test['results'].append(entry)
        if entry['status'] not in STATUS_ORDER:
            _unknown(test, 'unrecognised result status %r' % (res.get('status'),), 'json', gpus)
        _json_messages(test, res, gpus)
    return test


def _cells(line):
    """Split a table row into its name cell and raw value cell (the value may lack the closing bar)."""
    parts = line.split('|')
    if len(parts) < 3:
        return None, None
    return parts[1], '|'.join(parts[2:-1]) if len(parts) > 3 else parts[2]


def parse_text(text):
    """Parse the ``dcgmi diag`` text table. Returns a dict:

    - ``format``: ``text`` (or ``json`` from parse_json);
    - ``metadata``: the Metadata section (``DCGM Version``, ``Driver Version Detected``, ...);
    - ``tests``: per test ``category``, ``name``, ``status`` (worst of its results), ``results`` (``status``,
      ``gpus``: list of GPU ids, ``'all'`` or None, ``entity``) and ``messages`` (``kind`` Warning/Error/Info,
      ``gpus``, ``text`` with wrapped rows joined);
    - ``runtime_error``: JSON only; ``preamble``: text lines before the table (``Successfully ran ...``, errors).
    """
    tests = []
    metadata = {}
    preamble = []
    category = None
    current = None
    message = None
    width = 45
    in_table = False
    complete = False
    for raw in text.replace('\r', '').splitlines():
        line = raw.rstrip('\n')
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith(('|', '+')):
            if not in_table:
                preamble.append(stripped)
            elif '|' in stripped and not complete:  # a damaged table row: never drop a result silently
                if current is None:
                    current = _new_test(category, category or 'Diagnostic')
                    tests.append(current)
                _unknown(current, 'unreadable table row %r' % (stripped,), 'text')
                message = None
            continue
        in_table = True
        match = _SECTION_RE.match(stripped)
        if match:
            category, message = match.group(1).strip(), None
            continue
        if set(stripped) <= set('+-=|'):
            if tests and stripped.startswith('+') and '=' not in stripped:
                complete = True
            continue
        complete = False
        name_cell, value_cell = _cells(stripped)
        if name_cell is None:
            continue
        name = name_cell.strip()
        if name == 'Diagnostic' and value_cell.strip() == 'Result':
            width = max(len(value_cell) - 3, 10)
            continue
        piece = value_cell[1:1 + width] if len(value_cell) >= width + 1 else value_cell[1:].rstrip()
        value = value_cell.strip()
        if category == 'Metadata' and name and not (_VALUE_RE.match(value) or _ENTITY_VALUE_RE.match(value)):
            metadata[name] = value
            continue
        if name:
            mmatch = _MSG_NAME_RE.match(name)
            if mmatch and current is not None:
                kind = mmatch.group(1).capitalize()
                gpus = [int(mmatch.group(3))] if mmatch.group(3) else None
                message = {'kind': kind, 'gpus': gpus, 'text': piece}
                current['messages'].append(message)
                continue
            if mmatch and current is None:
                current = _new_test(category, category or 'Diagnostic')
                tests.append(current)
                message = {'kind': mmatch.group(1).capitalize(), 'gpus': None, 'text': piece}
                current['messages'].append(message)
                continue
            current = _new_test(category, name)
            tests.append(current)
            message = None
            if not _add_value(current, value, keep_text=False):
                _unknown(current, 'unrecognised result %r' % (value,), 'text')
            continue
        # continuation row (empty name cell)
        if message is not None and not _VALUE_RE.match(value) and not _ENTITY_VALUE_RE.match(value):
            message['text'] += piece
            continue
        if current is None:  # a result row before any test name (excerpt, garbled): keep it, do not drop it
            current = _new_test(category, category or 'Diagnostic')
            tests.append(current)
        message = None
        if not _add_value(current, value):
            _unknown(current, 'unrecognised result %r' % (value,), 'text')
    for test in tests:
        for msg in test['messages']:
            msg['text'] = re.sub(r'\s+', ' ', msg['text']).strip()
            if msg['gpus'] is None:
                ids = sorted(set(int(n) for n in _GPU_IN_TEXT_RE.findall(msg['text'])))
                msg['gpus'] = ids or None
    return {'format': 'text', 'metadata': metadata, 'tests': _finish(tests), 'runtime_error': None,
            'preamble': preamble, 'complete': complete}


def _add_value(test, value, keep_text=True):
    """Add a result row's value to ``test``; False when it is not a status (kept as an Info message when
    ``keep_text``)."""
    match = _ENTITY_VALUE_RE.match(value)
    if match:
        gpus = [int(match.group(2))] if match.group(1).upper() == 'GPU' else None
        test['results'].append({'status': _status(match.group(3)), 'gpus': gpus,
                                'entity': '%s%s' % (match.group(1).upper(), match.group(2))})
        return True
    match = _VALUE_RE.match(value)
    if match:
        test['results'].append({'status': _status(match.group(1)), 'gpus': _gpus_from(match.group(2)), 'entity': None})
        return True
    if value and keep_text:
        test['messages'].append({'kind': 'Info', 'gpus': None, 'text': value})
    return False


def parse(text):
    """JSON when the output starts with ``{`` (after any leading noise lines), else the text table."""
    body = text.lstrip()
    if body.startswith('{') or re.match(r'^[^|+\n]*\n\s*\{', body):
        return parse_json(text)
    return parse_text(text)


def per_gpu(parsed):
    """``{gpu id or 'all' or 'system': {test name: status}}`` from parsed results."""
    out = {}
    for test in parsed['tests']:
        for res in test['results']:
            keys = res['gpus'] if isinstance(res['gpus'], list) else [res['gpus'] or 'system']
            for key in keys:
                slot = out.setdefault(str(key), {})
                slot[test['name']] = worst([slot.get(test['name']), res['status']])
    return out
