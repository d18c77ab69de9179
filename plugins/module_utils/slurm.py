# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for Slurm's ``scontrol show node -o`` and ``squeue`` output, and the node-state rules the
``slurm_node`` module acts on.  Pure standard-library functions (no Slurm needed to run them).

Slurm prints a node's state as a base state plus ``+``-joined flags, e.g. ``IDLE``, ``IDLE+DRAIN``
(drained), ``MIXED+DRAIN`` / ``ALLOCATED+DRAIN`` (draining: jobs still run), ``DOWN*+DRAIN`` or
``IDLE+NOT_RESPONDING``; a ``*`` after the base state means the node does not respond.  ``Reason=`` is
stored by slurmctld with the user and time that set it: ``Reason=TEXT [USER@YYYY-MM-DDTHH:MM:SS]``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import re

# Key=Value tokens of one `scontrol -o` line. A key starts after whitespace; a value runs until the next key
# (values such as OS= contain spaces). Reason= is cut out first because its free text may hold "x=y".
_KEY_RE = re.compile(r'(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=')
_NEXT_KEY = r'(?=\s+[A-Za-z][A-Za-z0-9_]*=|\s*$)'
# Reason=TEXT [USER@TIME]: TEXT runs up to the first "[user@time]" that ends the line or precedes a key, so the
# free text may hold "x=y" and brackets; without the stamp it runs up to the next key.
_REASON_RE = re.compile(r'(?:^|\s)Reason=(.*?)\s*\[([^\]@\s]*)@([^\]\s]*)\]' + _NEXT_KEY)
_REASON_BARE_RE = re.compile(r'(?:^|\s)Reason=(.*?)' + _NEXT_KEY)

# Base states a node can be in (slurm.h node_state_string); anything else is kept as printed.
BASE_STATES = ('IDLE', 'MIXED', 'ALLOCATED', 'COMPLETING', 'DOWN', 'ERROR', 'FUTURE', 'UNKNOWN', 'PLANNED')
# Base states in which jobs still hold the node: a DRAIN flag there means DRAINING, not DRAINED.
BUSY_STATES = ('MIXED', 'ALLOCATED', 'COMPLETING')

SQUEUE_FORMAT = '%i|%u|%T|%P|%j'
# Job states that occupy a node (pending jobs have no node yet).
SQUEUE_STATES = 'CONFIGURING,RUNNING,SUSPENDED,COMPLETING,STOPPED,SIGNALING'

NOT_FOUND_RE = re.compile(r'Node \S+ not found', re.IGNORECASE)


class SlurmParseError(ValueError):
    pass


def parse_state(text):
    """``DOWN*+DRAIN+NOT_RESPONDING`` -> dict(state=the text, base='DOWN', flags=['DRAIN', 'NOT_RESPONDING'],
    not_responding=True, drain=True, drained=..., draining=..., down=...)."""
    text = (text or '').strip()
    if not text:
        raise SlurmParseError('empty node state')
    parts = text.split('+')
    base = parts[0]
    star = base.endswith('*')
    base = base.rstrip('*~#!%$@^-').upper()
    flags = [p.strip().upper() for p in parts[1:] if p.strip()]
    drain = 'DRAIN' in flags or base in ('DRAINED', 'DRAINING', 'DRAIN')
    busy = base in BUSY_STATES or base == 'DRAINING' or 'COMPLETING' in flags
    return {
        'state': text,
        'base_state': base,
        'flags': flags,
        'not_responding': star or 'NOT_RESPONDING' in flags,
        'drain': drain,
        'draining': drain and busy,
        'drained': drain and not busy,
        'down': base in ('DOWN', 'FAIL') or 'FAIL' in flags,
        'busy': busy,
    }


def parse_kv_line(line):
    """One ``scontrol show ... -o`` line -> dict of raw strings (Reason split into reason/_user/_time)."""
    line = line.strip()
    out = {}
    m = _REASON_RE.search(line)
    if m:
        out['Reason'], out['ReasonUser'], out['ReasonTime'] = m.group(1).strip(), m.group(2), m.group(3)
    else:
        m = _REASON_BARE_RE.search(line)
        if m:
            out['Reason'], out['ReasonUser'], out['ReasonTime'] = m.group(1).strip(), None, None
    if m:
        line = (line[:m.start()] + ' ' + line[m.end():]).strip()
    keys = list(_KEY_RE.finditer(line))
    for i, km in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        out[km.group(1)] = line[km.end():end].strip()
    return out


def _none(value):
    if value is None:
        return None
    value = value.strip()
    return None if value in ('', '(null)', 'N/A', 'n/a', 'n/s', 'None') else value


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_nodes(text):
    """All nodes of ``scontrol show node -o [NAMES]`` -> list of node dicts (see :func:`node_from_kv`)."""
    nodes = []
    for line in (text or '').splitlines():
        if not line.strip().startswith('NodeName='):
            continue
        nodes.append(node_from_kv(parse_kv_line(line)))
    return nodes


def node_from_kv(kv):
    if 'NodeName' not in kv or 'State' not in kv:
        raise SlurmParseError('not a node line (NodeName= and State= needed): %r' % sorted(kv))
    node = {'name': kv['NodeName']}
    node.update(parse_state(kv['State']))
    reason = _none(kv.get('Reason'))
    node['reason'] = reason or ''
    node['reason_user'] = _none(kv.get('ReasonUser')) if reason else None
    node['reason_time'] = _none(kv.get('ReasonTime')) if reason else None
    node['node_addr'] = _none(kv.get('NodeAddr'))
    node['partitions'] = [p for p in (_none(kv.get('Partitions')) or '').split(',') if p]
    node['cpus_alloc'] = _int(kv.get('CPUAlloc'))
    node['cpus_total'] = _int(kv.get('CPUTot'))
    node['slurm_version'] = _none(kv.get('Version'))
    return node


def parse_node(text, name):
    """The node called ``name`` from ``scontrol show node -o NAME`` output; SlurmParseError when absent."""
    for node in parse_nodes(text):
        if node['name'] == name:
            return node
    raise SlurmParseError('no NodeName=%s line in the scontrol output' % name)


# ---- The whole node as the slurm inventory plugin reads it: `scontrol show nodes -o` and `scontrol show nodes --json` ----
#
# Both forms give the same record (node_record): the node_from_kv keys plus hostname, features, active_features,
# gres (as printed), gres_list, gpus, gpu_models, real_memory / alloc_memory / free_memory (MB), arch, os, boards,
# sockets, cores_per_socket, threads_per_core, cpu_load. The two JSON shapes of Slurm's data_parser:
#   older (seen in public data of Slurm 21.08): "state": "idle" + "state_flags": ["DRAIN"], "features": "a,b",
#       "slurmd_version", "free_memory", "reason_changed_at": epoch
#   newer (our recording of Slurm 24.11, data_parser v0.0.42): "state": ["IDLE", "DRAIN"], "features": ["a", "b"],
#       "version", "free_mem", numbers as {"set": true, "infinite": false, "number": N}
# A reason's time is the controller's local time in the text form and UTC (from the epoch) in JSON.

_NUM_SUFFIX = {'': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4, 'P': 1024 ** 5}
_GRES_COUNT_RE = re.compile(r'^(\d+)([KMGTP]?)$')
_NULLS = ('', '(null)', 'N/A', 'n/a', 'none', 'None')


def _split_top(text, sep=','):
    """Split on ``sep`` outside parentheses: ``gpu:h100:2(S:0-1),nic:1`` -> 2 items."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth = max(depth - 1, 0)
        if ch == sep and depth == 0:
            parts.append(''.join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append(''.join(cur))
    return [x.strip() for x in parts if x.strip()]


def parse_gres(text):
    """A node's Gres as Slurm prints it -> list of dict(name, type, count, detail).

    ``gpu:h100:8`` -> name gpu, type h100, count 8; ``gpu:8`` -> no type; ``gpu`` -> count 1;
    ``gpu:a100:4(S:0-1)`` -> detail 'S:0-1' (socket binding, Slurm >= 23); ``shard:2K`` -> count 2048;
    ``(null)`` or empty -> []. A count that is not a number with an optional K/M/G/T/P suffix raises
    SlurmParseError."""
    if text is None or (isinstance(text, str) and text.strip() in _NULLS):
        return []
    if isinstance(text, (list, tuple)):
        text = ','.join(str(x) for x in text)
    out = []
    for item in _split_top(str(text)):
        detail = None
        m = re.match(r'^(.*?)\((.*)\)$', item)
        if m:
            item, detail = m.group(1), m.group(2)
        parts = item.split(':')
        name, gtype, count = parts[0], None, 1
        if not name:
            raise SlurmParseError('GRES %r has no name (want name[:type][:count])' % item)
        rest = parts[1:]
        if rest and _GRES_COUNT_RE.match(rest[-1].upper()):
            cm = _GRES_COUNT_RE.match(rest[-1].upper())
            count = int(cm.group(1)) * _NUM_SUFFIX[cm.group(2)]
            rest = rest[:-1]
        elif len(rest) >= 2:
            raise SlurmParseError('GRES %r: count %r is not a number (want name[:type][:count])' % (item, rest[-1]))
        if rest:
            gtype = ':'.join(rest)
        out.append({'name': name, 'type': gtype, 'count': count, 'detail': detail})
    return out


def gpu_summary(gres_list):
    """(GPU count, sorted GPU models) of a parse_gres list: every ``gpu`` entry counts, typed or not."""
    gpus = [g for g in gres_list if g['name'] == 'gpu']
    return sum(g['count'] for g in gpus), sorted(set(g['type'] for g in gpus if g['type']))


def _csv(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip() and str(v).strip() not in _NULLS]
    value = str(value).strip()
    if value in _NULLS:
        return []
    return [v.strip() for v in value.split(',') if v.strip()]


def _add_common(node, gres):
    node['gres'] = '' if gres is None or (isinstance(gres, str) and gres.strip() in _NULLS) else gres
    node['gres_list'] = parse_gres(gres)
    node['gpus'], node['gpu_models'] = gpu_summary(node['gres_list'])
    return node


def node_record_from_kv(kv):
    """One ``scontrol show nodes -o`` line's key/values -> the inventory record (see above)."""
    node = node_from_kv(kv)
    node['hostname'] = _none(kv.get('NodeHostName'))
    node['features'] = _csv(kv.get('AvailableFeatures'))
    node['active_features'] = _csv(kv.get('ActiveFeatures'))
    node['real_memory'] = _int(kv.get('RealMemory'))
    node['alloc_memory'] = _int(kv.get('AllocMem'))
    node['free_memory'] = _int(kv.get('FreeMem'))
    node['arch'] = _none(kv.get('Arch'))
    node['os'] = _none(kv.get('OS'))
    for key, src in (('boards', 'Boards'), ('sockets', 'Sockets'), ('cores_per_socket', 'CoresPerSocket'),
                     ('threads_per_core', 'ThreadsPerCore')):
        node[key] = _int(kv.get(src))
    node['cpu_load'] = _none(kv.get('CPULoad'))
    return _add_common(node, _none(kv.get('Gres')))


def parse_nodes_text(text):
    """``scontrol show nodes -o`` -> list of inventory records; lines that are not node lines are ignored."""
    nodes = []
    for line in (text or '').splitlines():
        if line.strip().startswith('NodeName='):
            nodes.append(node_record_from_kv(parse_kv_line(line)))
    return nodes


def _num(value):
    """A JSON number as Slurm writes it: N, or {"set": bool, "infinite": bool, "number": N} (None when unset)."""
    if isinstance(value, dict):
        if not value.get('set', True) or value.get('infinite'):
            return None
        value = value.get('number')
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    return _int(value)


def _epoch_utc(value):
    value = _num(value)
    if not value or value <= 0:
        return None
    try:
        return datetime.datetime.fromtimestamp(int(value), datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S')
    except (OverflowError, OSError, ValueError):
        return None


def _json_state(raw):
    """The text form of a JSON node state: ``"idle"`` + flags, or ``["IDLE", "DRAIN"]`` -> ``IDLE+DRAIN``."""
    state, flags = raw.get('state'), raw.get('state_flags') or []
    if isinstance(state, (list, tuple)):
        words = [str(s).upper() for s in state if str(s).strip()]
        base = [w for w in words if w in BASE_STATES][:1]
        rest = [w for w in words if w not in base]
        words = base + rest
    elif isinstance(state, str) and state.strip():
        words = [state.strip().upper()] + [str(f).upper() for f in flags]
    else:
        raise SlurmParseError('node %r has no state' % raw.get('name'))
    return '+'.join(words)


def _jstr(value):
    """A JSON string field (None for anything else, and for Slurm's empty/null spellings)."""
    return _none(value) if isinstance(value, str) else None


def node_record_from_json(raw):
    """One element of ``scontrol show nodes --json``'s ``nodes`` -> the inventory record (see above)."""
    if not isinstance(raw, dict) or not _jstr(raw.get('name')):
        raise SlurmParseError('a node without a name in the JSON nodes list: %r' % (raw,))
    node = {'name': _jstr(raw['name'])}
    node.update(parse_state(_json_state(raw)))
    reason = _jstr(raw.get('reason'))
    node['reason'] = reason or ''
    node['reason_user'] = _jstr(raw.get('reason_set_by_user')) if reason else None
    node['reason_time'] = _epoch_utc(raw.get('reason_changed_at')) if reason else None
    node['node_addr'] = _jstr(raw.get('address'))
    node['partitions'] = _csv(raw.get('partitions'))
    node['cpus_alloc'] = _num(raw.get('alloc_cpus'))
    node['cpus_total'] = _num(raw.get('cpus'))
    version = raw.get('version') or raw.get('slurmd_version')
    node['slurm_version'] = _jstr(version)
    node['hostname'] = _jstr(raw.get('hostname'))
    node['features'] = _csv(raw.get('features'))
    node['active_features'] = _csv(raw.get('active_features'))
    node['real_memory'] = _num(raw.get('real_memory'))
    node['alloc_memory'] = _num(raw.get('alloc_memory'))
    node['free_memory'] = _num(raw.get('free_mem', raw.get('free_memory')))
    if node['free_memory'] is not None and node['free_memory'] < 0:  # -2: not known yet (NO_VAL in 22.05)
        node['free_memory'] = None
    node['arch'] = _jstr(raw.get('architecture'))
    node['os'] = _jstr(raw.get('operating_system'))
    for key, src in (('boards', 'boards'), ('sockets', 'sockets'), ('threads_per_core', 'threads')):
        node[key] = _num(raw.get(src))
    node['cores_per_socket'] = _num(raw.get('cores'))
    load = _num(raw.get('cpu_load'))
    node['cpu_load'] = None if load is None or load >= 0xFFFFFFF0 else '%.2f' % (load / 100.0)
    return _add_common(node, raw.get('gres'))


def parse_nodes_json(text):
    """``scontrol show nodes --json`` -> list of inventory records. SlurmParseError when the text is not that JSON
    or Slurm reported errors in it (its ``errors`` list)."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SlurmParseError('not JSON (%s)' % e)
    if not isinstance(data, dict) or not isinstance(data.get('nodes'), list):
        raise SlurmParseError('JSON without a "nodes" list (keys: %s)' % (sorted(data) if isinstance(data, dict)
                                                                          else type(data).__name__))
    errors = [e for e in data.get('errors') or [] if e]
    if errors:
        raise SlurmParseError('Slurm reported errors: %s' % '; '.join(
            (e.get('description') or e.get('error') or json.dumps(e)) if isinstance(e, dict) else str(e)
            for e in errors))
    return [node_record_from_json(n) for n in data['nodes']]


def detect_format(text):
    """'json' when ``text`` starts with ``{``, 'text' when it holds a ``NodeName=`` line, else None."""
    stripped = (text or '').lstrip()
    if stripped.startswith('{'):
        return 'json'
    if re.search(r'(?m)^\s*NodeName=', text or ''):
        return 'text'
    return None


def parse_squeue(text):
    """``squeue --noheader --format='%i|%u|%T|%P|%j'`` -> list of dict(job_id, user, state, partition, name).
    The job name is the last field, so a name containing ``|`` stays whole."""
    jobs = []
    for line in (text or '').splitlines():
        if not line.strip():
            continue
        parts = line.strip().split('|', 4)
        if len(parts) != 5:
            raise SlurmParseError('unexpected squeue line (want %s): %r' % (SQUEUE_FORMAT, line))
        jobs.append({'job_id': parts[0], 'user': parts[1], 'state': parts[2], 'partition': parts[3],
                     'name': parts[4]})
    return jobs


# ---- Ownership: the marker this collection writes in front of every drain/down reason (one owner: this file) ----
#
#   <prefix>[<run-id>]: <text>          a drain or down for maintenance (a rollout's "upgrading")
#   <prefix>[<run-id>] FAILED: <text>   a drain or down because the node failed (acceptance, a rollout step):
#                                       never replaced by a maintenance reason, never resumed unless the node
#                                       passed since (passed=true) or force=true
#
# <prefix> is reason_prefix (default "gpufleet"), <run-id> names the run that wrote it (RUN_ID_RE). Only a reason
# that parses here is ours; anything else - an operator's "gpufleet is broken here, do not touch", Slurm's
# "Not responding", and an EMPTY reason on a DOWN or DRAIN node - is someone else's.
# Upgrades: the exact shapes earlier versions wrote are read as ours too (never a bare startswith):
#   "<prefix> rollout <id>: ..."           (a failure when the text goes on with "failed at ")
#   "<prefix> acceptance failed at ..."    (a failure; playbooks/verify.yml's gpufleet_drain_failed)

MARKER_PREFIX = 'gpufleet'
FAILED_TAG = 'FAILED'
RUN_ID_PATTERN = r'[A-Za-z0-9][A-Za-z0-9._-]{0,63}'
RUN_ID_RE = re.compile(r'^%s\Z' % RUN_ID_PATTERN)
PREFIX_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_.-]{0,31}\Z')


def marker_errors(prefix, run_id):
    """Messages for a reason_prefix / run_id that cannot make an unambiguous marker (empty list when fine)."""
    errors = []
    if not isinstance(prefix, str) or not PREFIX_RE.match(prefix):
        errors.append('reason_prefix must be 1-32 characters, a letter then letters, digits, "_", "." or "-" '
                      '(it starts the marker %s[RUN-ID]: that tells our drains from an operator\'s), got %r'
                      % (MARKER_PREFIX, prefix))
    if not isinstance(run_id, str) or not RUN_ID_RE.match(run_id):
        errors.append('run_id must be 1-64 characters, a letter or digit then letters, digits, ".", "_" or "-" '
                      '(it is written as %s[RUN-ID] in the Slurm reason), got %r' % (MARKER_PREFIX, run_id))
    return errors


def format_reason(text, run_id, failure=False, prefix=MARKER_PREFIX):
    """The reason as stored: ``gpufleet[RUN-ID]: TEXT`` or, for a failure, ``gpufleet[RUN-ID] FAILED: TEXT``
    (whitespace runs, newlines too, become one space)."""
    return '%s[%s]%s: %s' % (prefix, run_id, (' ' + FAILED_TAG) if failure else '', ' '.join((text or '').split()))


def parse_reason(reason, prefix=MARKER_PREFIX):
    """``None`` when ``reason`` is not ours, else dict(run_id, failure, text, legacy).  See the marker rules above;
    an empty reason is never ours."""
    reason = reason or ''
    if not prefix:
        return None
    p = re.escape(prefix)
    m = re.match(r'%s\[(%s)\]( %s)?: ' % (p, RUN_ID_PATTERN, FAILED_TAG), reason)
    if m:
        return {'run_id': m.group(1), 'failure': bool(m.group(2)), 'text': reason[m.end():], 'legacy': False}
    m = re.match(r'%s rollout (\S+): ' % p, reason)
    if m:
        text = reason[m.end():]
        return {'run_id': m.group(1), 'failure': text.startswith('failed at '), 'text': text, 'legacy': True}
    m = re.match(r'%s (acceptance failed at )' % p, reason)
    if m:
        return {'run_id': None, 'failure': True, 'text': reason[m.start(1):], 'legacy': True}
    return None


def owned(reason, prefix=MARKER_PREFIX):
    """True when a drain/down reason was written by this automation (:func:`parse_reason`)."""
    return parse_reason(reason, prefix) is not None


def is_foreign(node, prefix=MARKER_PREFIX):
    """The node's drain/down (or its reason) is someone else's: a reason that is not ours, or no reason at all on
    a DOWN or DRAIN node (an operator's or Slurm's - never ours, since we always write one)."""
    held = node['drain'] or node['down'] or bool(node['reason'])
    return held and not owned(node['reason'], prefix)


def plan(node, state, reason, prefix, force, passed=False):
    """Decide what ``state`` needs on ``node`` (a parsed node).

    ``reason`` is the full stored reason (:func:`format_reason`); whether it is a failure is read from its marker.
    ``passed``: the node passed its verification since it was drained (lets resume lift a failure drain).

    Returns dict(action=None|'drain'|'resume'|'down', reason=the reason to write (None for resume), after=predicted
    {state, reason}, message=str, skipped_foreign=bool, kept_failure=bool).

    Rules: someone else's drain/down (:func:`is_foreign`) is never resumed, re-drained or downed unless ``force``.
    A failure drain of any gpufleet run is kept: a maintenance drain/down over it keeps the failure reason, and
    resume leaves it drained unless ``passed`` or ``force``."""
    before = {'state': node['state'], 'reason': node['reason']}
    foreign = is_foreign(node, prefix)
    cur = parse_reason(node['reason'], prefix) if (node['drain'] or node['down']) else None
    new = parse_reason(reason, prefix) if reason else None
    result = {'action': None, 'reason': None, 'after': dict(before), 'message': '', 'skipped_foreign': False,
              'kept_failure': False}
    if state == 'query':
        result['message'] = 'queried'
        return result
    if state in ('drain', 'down'):
        keep = bool(cur and cur['failure'] and not (new and new['failure']) and not force)
        want = node['reason'] if keep else reason
        result['reason'] = want
        result['kept_failure'] = keep
        kept = (' (the failure reason %r is kept: a failed node stays drained until it passes)' % node['reason']
                if keep else '')
    if state == 'drain':
        if node['drain'] and node['reason'] == want:
            result['message'] = 'already drained/draining with this reason' + kept
        elif (node['drain'] or node['down']) and foreign and not force:
            result['skipped_foreign'] = True
            result['message'] = ('already drained/down by someone else (reason %r); the reason is kept, set force=true '
                                 'to replace it' % node['reason'])
        else:
            result['action'] = 'drain'
            result['after'] = {'state': _with_flag(node, 'DRAIN'), 'reason': want}
            result['message'] = ('reason updated' if node['drain'] else 'drain requested') + kept
        return result
    if state == 'down':
        if node['base_state'] == 'DOWN' and node['reason'] == want:
            result['message'] = 'already down with this reason' + kept
        elif (node['drain'] or node['down']) and foreign and not force:
            result['skipped_foreign'] = True
            result['message'] = ('already drained/down by someone else (reason %r); the reason is kept, set force=true '
                                 'to replace it' % node['reason'])
        else:
            result['action'] = 'down'
            flags = [f for f in node['flags'] if f not in ('COMPLETING',)]
            base = 'DOWN' + ('*' if node['not_responding'] and 'NOT_RESPONDING' not in flags else '')
            result['after'] = {'state': '+'.join([base] + flags), 'reason': want}
            result['message'] = 'down requested (running jobs are killed or requeued)' + kept
        return result
    if state == 'resume':
        if not (node['drain'] or node['down']):
            result['message'] = 'not drained or down: nothing to resume'
        elif foreign and not force:
            result['skipped_foreign'] = True
            result['message'] = ('not resumed: drained/down by someone else (reason %r by %s); set force=true to '
                                 'resume it anyway' % (node['reason'] or '(none)', node['reason_user'] or 'unknown'))
        elif cur and cur['failure'] and not passed and not force:
            result['kept_failure'] = True
            result['message'] = ('not resumed: drained for a failure by gpufleet run %s (reason %r); a failed node '
                                 'stays drained until it passes - set passed=true after a passed verification'
                                 % (cur['run_id'] or '(before run ids)', node['reason']))
        else:
            result['action'] = 'resume'
            flags = [f for f in node['flags'] if f not in ('DRAIN', 'FAIL')]
            base = 'IDLE' if node['base_state'] in ('DOWN', 'DRAINED', 'DRAIN', 'FAIL') else node['base_state']
            if base == 'DRAINING':
                base = 'MIXED'
            result['after'] = {'state': '+'.join([base] + flags), 'reason': ''}
            result['message'] = 'resume requested' + (' (the node passed: its failure drain is lifted)'
                                                      if cur and cur['failure'] and passed else '')
        return result
    raise ValueError('unknown state %r' % state)


def _with_flag(node, flag):
    if flag in node['flags']:
        return node['state']
    parts = node['state'].split('+')
    return '+'.join([parts[0], flag] + parts[1:])
