# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

Outliers of the acceptance report (issue #18): a node whose figure on a rung is more than ``percent`` below the
median of its profile in the same run, or more than ``percent`` below its own previous accepted result (the
earlier acceptance reports kept in the report directory's ``history/``), is flagged ``warn`` - or ``fail`` when
its profile says so (``acceptance_outlier_fail``). The rules are in docs/thresholds.md ("Outliers").
Pure functions over the report dict the acceptance role writes (acceptance-report.json)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from collections.abc import Mapping

# Rungs whose figure is "more is better" and comparable across the nodes of a profile. dcgm_diag (failed tests)
# and container_gpus (GPUs the container lists) are counts with an exact pass mark: no outliers.
OUTLIER_RUNGS = ('gpu_burn', 'p2p_bandwidth', 'nccl_bench', 'rdma_bw')
DEFAULT_PERCENT = 5.0
# Fewer nodes with a figure than this in a profile: no fleet comparison for that rung (a median of 2 or 3
# figures says little), history still applies. Said in the report's notes.
MIN_FLEET = 4


class OutlierError(ValueError):
    """Bad outlier input; the message names the variable."""


def check_percent(percent, name='acceptance_outlier_percent'):
    if isinstance(percent, bool) or not isinstance(percent, (int, float)):
        try:
            percent = float(str(percent).strip().rstrip('%'))
        except (TypeError, ValueError):
            raise OutlierError('%s: %r is not a number; give a percentage from 0 to 100 (default %g)'
                               % (name, percent, DEFAULT_PERCENT))
    percent = float(percent)
    if math.isnan(percent) or percent < 0 or percent >= 100:
        raise OutlierError('%s: %g is not allowed; give a percentage from 0 (flag any figure below the median) to '
                           'below 100 (default %g); a negative percentage would flag healthy nodes above the median'
                           % (name, percent, DEFAULT_PERCENT))
    return percent


def check_rungs(rungs, name='acceptance_outlier_rungs'):
    if rungs is None:
        return list(OUTLIER_RUNGS)
    if isinstance(rungs, str) or not isinstance(rungs, (list, tuple)):
        raise OutlierError('%s must be a list of rungs from %s, got %r' % (name, ', '.join(OUTLIER_RUNGS), rungs))
    unknown = [r for r in rungs if r not in OUTLIER_RUNGS]
    if unknown:
        raise OutlierError('%s: unknown rung(s) %s; allowed: %s (dcgm_diag and container_gpus have exact pass '
                           'marks, no outliers)' % (name, ', '.join(repr(u) for u in unknown), ', '.join(OUTLIER_RUNGS)))
    return list(rungs)


def median(values):
    """Median; with an even count the mean of the two middle figures."""
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def record_key(record):
    """A rung's key on a node: the rung, and the device for per-HCA rungs (``rdma_bw mlx5_0``)."""
    return record.get('rung') if not record.get('device') else '%s %s' % (record['rung'], record['device'])


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value) else None


def _fmt(value):
    return ('%.2f' % value).rstrip('0').rstrip('.') if isinstance(value, float) else str(value)


def previous_accepted(history, host, key):
    """The figure of ``host``'s most recent accepted ``key`` in ``history`` (oldest first), with the index of that
    report; None when there is none. Accepted: the rung passed and was not flagged as an outlier - a flagged figure
    never becomes the reference, so a node that got slower stays flagged on a re-run until it recovers (and a re-run
    with the same figures writes the same report)."""
    for index in range(len(history) - 1, -1, -1):
        node = ((history[index] or {}).get('nodes') or {}).get(host) or {}
        for rec in node.get('rungs') or []:
            if record_key(rec) == key and rec.get('status') == 'pass' and not rec.get('outlier') \
                    and _number(rec.get('figure')) is not None:
                return rec['figure'], index
    return None


def _copy(value):
    """A deep copy of the report made of new dicts and lists. Not copy.deepcopy: a report Ansible templated is one of
    ansible-core's lazy containers, whose deepcopy copies its Templar and with it every variable of the host (1.3
    million objects and seconds for a 5 KB report in a site.yml run)."""
    if isinstance(value, Mapping):
        return dict((key, _copy(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_copy(item) for item in value]
    return value


def find_outliers(report, history=None, percent=DEFAULT_PERCENT, rungs=None, fail_hosts=None):
    """Return ``report`` (a copy) with the outliers marked, and the outlier summary under ``outliers``.

    ``history``: earlier acceptance reports, oldest first. ``fail_hosts``: hosts whose profile fails an outlier
    (``acceptance_outlier_fail``). Each flagged record gets ``outlier: {status, reasons, fleet_median,
    previous, limit_percent}``; each flagged node ``outlier: warn|fail``; a node with a failing outlier becomes
    ``failed`` at that rung unless it failed already."""
    percent = check_percent(percent)
    rungs = check_rungs(rungs)
    if not isinstance(report, dict) or not isinstance(report.get('nodes'), dict):
        raise OutlierError('the acceptance report must be a dict with "nodes" (host -> result), got %s'
                           % type(report).__name__)
    if history is None:
        history = []
    if not isinstance(history, (list, tuple)):
        raise OutlierError('acceptance report history must be a list of earlier reports, got %s' % type(history).__name__)
    history = [h for h in history if isinstance(h, dict)]
    fail_hosts = set(fail_hosts or [])
    out = _copy(report)
    nodes = out['nodes']
    factor = 1.0 - percent / 100.0

    # figures per (profile, key)
    groups = {}
    for host in sorted(nodes):
        node = nodes[host] or {}
        for rec in node.get('rungs') or []:
            if rec.get('rung') not in rungs or _number(rec.get('figure')) is None:
                continue
            groups.setdefault((node.get('profile') or 'none', record_key(rec)), []).append((host, rec['figure']))

    notes = []
    fleet = {}
    for (profile, key), figures in sorted(groups.items()):
        values = [v for dummy, v in figures]
        med = round(median(values), 4)
        entry = {'profile': profile, 'rung': key, 'nodes': len(values), 'median': med, 'compared': False,
                 'limit': None}
        fleet['%s|%s' % (profile, key)] = entry
        if len(values) < MIN_FLEET:
            notes.append('%s %s: %d node(s) with a figure, fewer than %d: not compared with the fleet median '
                         '(history still checked)' % (profile, key, len(values), MIN_FLEET))
            continue
        entry['compared'] = True
        entry['limit'] = round(med * factor, 4)
        below = [h for h, v in figures if v < entry['limit']]
        at_limit = [h for h, v in figures if v == entry['limit']]
        if at_limit:
            notes.append('%s %s: %s exactly %g%% below the median %s: not flagged (the rule is "more than")'
                         % (profile, key, ', '.join(at_limit), percent, _fmt(med)))
        if len(values) % 2 == 0 and below and 2 * len(below) == len(values):
            notes.append('%s %s: tie - the profile splits into two equal halves; the median %s lies between them and '
                         'the lower half (%s) is flagged: check whether the profile mixes hardware'
                         % (profile, key, _fmt(med), ', '.join(below)))
        elif len(set(values)) == 1:
            notes.append('%s %s: all %d figures are equal (%s): nothing to flag against the fleet'
                         % (profile, key, len(values), _fmt(values[0])))

    flagged = {}
    for host in sorted(nodes):
        node = nodes[host] or {}
        profile = node.get('profile') or 'none'
        for rec in node.get('rungs') or []:
            fig = _number(rec.get('figure'))
            if rec.get('rung') not in rungs or fig is None or rec.get('status') != 'pass':
                continue
            key = record_key(rec)
            unit = (' ' + rec['unit']) if rec.get('unit') else ''
            reasons = []
            entry = fleet.get('%s|%s' % (profile, key))
            if entry and entry['compared'] and fig < entry['limit']:
                reasons.append({'basis': 'fleet', 'reference': entry['median'],
                                'below_percent': round(100.0 * (1 - fig / entry['median']), 2),
                                'text': '%s%s is %.1f%% below the median %s of profile %s (%d nodes; limit %g%%)'
                                        % (_fmt(fig), unit, 100.0 * (1 - fig / entry['median']), _fmt(entry['median']),
                                           profile, entry['nodes'], percent)})
            prev = previous_accepted(history, host, key)
            if prev is not None and prev[0] > 0 and fig < round(prev[0] * factor, 4):
                reasons.append({'basis': 'history', 'reference': prev[0],
                                'below_percent': round(100.0 * (1 - fig / prev[0]), 2),
                                'text': '%s%s is %.1f%% below this node\'s previous accepted %s (limit %g%%)'
                                        % (_fmt(fig), unit, 100.0 * (1 - fig / prev[0]), _fmt(prev[0]), percent)})
            if not reasons:
                continue
            status = 'fail' if host in fail_hosts else 'warn'
            rec['outlier'] = {'status': status, 'reasons': reasons, 'limit_percent': percent,
                              'fleet_median': entry['median'] if entry else None,
                              'previous': prev[0] if prev else None}
            flagged.setdefault(host, []).append(rec)

    for host, recs in flagged.items():
        node = nodes[host]
        fails = [r for r in recs if r['outlier']['status'] == 'fail']
        node['outlier'] = 'fail' if fails else 'warn'
        node['outlier_messages'] = ['%s: %s' % (record_key(r), '; '.join(x['text'] for x in r['outlier']['reasons']))
                                    for r in recs]
        if fails and node.get('status') != 'failed':
            node['status'] = 'failed'
            node['failed_rung'] = fails[0]['rung']
            for r in fails:
                r['status'] = 'fail'
                r['message'] = ('outlier (the profile fails outliers: acceptance_outlier_fail): '
                                + '; '.join(x['text'] for x in r['outlier']['reasons']))

    status = [(n or {}).get('status') for n in nodes.values()]
    summary = out.setdefault('summary', {})
    if fail_hosts & set(flagged):
        summary['passed'] = status.count('passed')
        summary['failed'] = status.count('failed')
    summary['warned'] = len([h for h in flagged if nodes[h]['outlier'] == 'warn'])
    summary['outliers'] = len(flagged)
    out['outliers'] = {
        'percent': percent,
        'rungs': rungs,
        'min_fleet': MIN_FLEET,
        'nodes': {h: nodes[h]['outlier_messages'] for h in sorted(flagged)},
        'failing': sorted(h for h in flagged if nodes[h]['outlier'] == 'fail'),
        'fleet': [fleet[k] for k in sorted(fleet)],
        'notes': notes,
    }
    return out
