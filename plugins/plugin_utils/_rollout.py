# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

Rollout planning (playbooks/rollout.yml): batches that respect ``serial`` and a cap on the nodes of one
Slurm partition out of service at once, and the journal's per-node verdicts. Pure functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

DONE_VERDICTS = ('passed',)


class PlanError(ValueError):
    """Bad rollout input; the message names the variable."""


def batch_size(spec, total, name='rollout_serial'):
    """Hosts per batch for one ``serial`` item: an int >= 1 or ``"N%"`` (1-100) of ``total`` (floor, at least
    1) - Ansible's own rule for ``serial``."""
    if isinstance(spec, bool):
        raise PlanError('%s: %r is not a batch size (an integer >= 1 or a percentage "1%%".."100%%")' % (name, spec))
    if isinstance(spec, int):
        if spec < 1:
            raise PlanError('%s: %d is not a batch size: it must be >= 1 (0 would never roll anything out)' % (name, spec))
        return spec
    text = str(spec).strip()
    if re.match(r'^\d+$', text):
        return batch_size(int(text), total, name)
    m = re.match(r'^(\d+(\.\d+)?)\s*%$', text)
    if not m or not 0 < float(m.group(1)) <= 100:
        raise PlanError('%s: %r is not a batch size (an integer >= 1 or a percentage "1%%".."100%%")' % (name, spec))
    return max(1, int(total * float(m.group(1)) / 100))


def partition_cap(cap):
    """``rollout_partition_cap`` as an int >= 1, or None for no cap (``-e rollout_partition_cap=2`` arrives as a
    string)."""
    if isinstance(cap, str) and re.match(r'^\s*\d+\s*$', cap):
        cap = int(cap)
    elif isinstance(cap, str) and cap.strip().lower() in ('', 'none', 'null'):
        cap = None
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise PlanError('rollout_partition_cap: %r must be an integer >= 1 or null (no cap)' % (cap,))
    return cap


def _parts(partitions, host):
    value = (partitions or {}).get(host)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def plan_batches(hosts, serial, partitions=None, cap=None, name='rollout_serial'):
    """Split ``hosts`` (ordered) into batches. ``serial`` is one size or a list of sizes (the last repeats, as
    in Ansible). ``partitions`` maps a host to its partition name or list of names; ``cap`` (int >= 1 or None)
    is the most hosts of one partition in a batch, i.e. out of service at once. A host that would break the
    cap waits for a later batch; order is otherwise kept."""
    hosts = list(hosts)
    specs = serial if isinstance(serial, (list, tuple)) else [serial]
    if not specs:
        raise PlanError('%s: an empty list is not a batch size' % name)
    sizes = [batch_size(s, len(hosts), name) for s in specs]
    cap = partition_cap(cap)
    partitions = partitions or {}

    def parts(host):
        return _parts(partitions, host)

    batches, pending, i = [], list(hosts), 0
    while pending:
        size = sizes[min(i, len(sizes) - 1)]
        batch, used, rest = [], {}, []
        for host in pending:
            ok = len(batch) < size and (cap is None or all(used.get(p, 0) < cap for p in parts(host)))
            if ok:
                batch.append(host)
                for p in parts(host):
                    used[p] = used.get(p, 0) + 1
            else:
                rest.append(host)
        batches.append(batch)
        pending, i = rest, i + 1
    return batches


def done_hosts(journal, rollout_id, lock_id):
    """Hosts whose journal entry says this rollout (same id and same lock) already passed on them."""
    out = []
    for entry in journal or []:
        if not isinstance(entry, dict):
            continue
        if entry.get('rollout_id') == rollout_id and entry.get('lock_id') == lock_id and \
                entry.get('verdict') in DONE_VERDICTS and entry.get('host'):
            out.append(entry['host'])
    return sorted(set(out))


def cap_blockers(host, batch, partitions, out_of_service, cap, names=None):
    """Why ``host`` must stay in service instead of being drained now, as a list of messages (empty: it may go).

    The batches already hold at most ``cap`` hosts of one partition; this adds what only the scheduler knows at
    the batch's start: nodes of the same partition that are out of service already (``out_of_service``: the
    scheduler's names of drained, draining or down nodes - failed in an earlier batch, drained by an operator or
    before the rollout). For each partition of ``host``: those nodes (other than ``host``) plus the hosts of
    ``batch`` ahead of it that go out with it must stay below ``cap``. A host that is out of service itself
    takes nothing more away and is never held back. ``names`` maps an inventory host to its scheduler name
    (default: the host name up to the first dot). Only hosts in ``partitions`` (the inventory's) are counted."""
    cap = partition_cap(cap)
    if cap is None:
        return []
    names = names or {}
    out = set(out_of_service or [])

    def sname(h):
        return names.get(h) or h.split('.')[0]

    order = list(batch or [])
    if host not in order:
        order.append(host)
    taken = {}
    for h in order:
        messages = []
        if sname(h) not in out:
            for p in _parts(partitions, h):
                down = sorted(x for x in (partitions or {}) if x != h and p in _parts(partitions, x) and sname(x) in out)
                ahead = taken.get(p, [])
                if len(down) + len(ahead) >= cap:
                    messages.append('partition %s already has %d node(s) out of service (%s)%s; rollout_partition_cap '
                                    'is %d' % (p, len(down), ', '.join(down) or 'none',
                                               ' and %s of this batch going out first' % ', '.join(ahead) if ahead else '',
                                               cap))
        if h == host:
            return messages
        if not messages and sname(h) not in out:
            for p in _parts(partitions, h):
                taken.setdefault(p, []).append(h)
    return []
