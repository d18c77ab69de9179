# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

The drift report of playbooks/drift.yml, from the gpufleet.cluster.drift callback's record and each node's
node_facts_check result. Pure function."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

LOCK_KIND = 'version lock / hardware'


def build_report(changes, nodes, checks, gpu_nodes, check_mode=True):
    """``changes``: the callback's record ``{hosts: {host: [setting]}, consequences: {host: [setting]}}``;
    ``nodes``: the hosts of the run; ``checks``: host -> node_facts_check_result (missing = not checked);
    ``gpu_nodes``: hosts that must have a check. Returns the report dict (see docs/fleet-operations.md)."""
    changes = changes or {}
    settings_by_host = changes.get('hosts') or {}
    consequences = changes.get('consequences') or {}
    summary, report_nodes, unchecked = {}, {}, []
    for host in nodes:
        settings = settings_by_host.get(host) or []
        check = checks.get(host)
        lock = list((check or {}).get('messages') or [])
        for s in settings:
            kind = s.get('kind') or 'other'
            summary[kind] = summary.get(kind, 0) + 1
        if lock:
            summary[LOCK_KIND] = summary.get(LOCK_KIND, 0) + len(lock)
        checked = check is not None or host not in gpu_nodes
        if not checked:
            unchecked.append(host)
        report_nodes[host] = {
            'drift': bool(settings or lock),
            'settings': settings,
            'consequences': [c.get('task') for c in consequences.get(host) or []],
            'version_lock': lock,
            'checked': checked,
        }
    return {
        'mode': 'check' if check_mode else 'apply',
        'drift': any(n['drift'] for n in report_nodes.values()),
        'drifted_nodes': sorted(h for h, n in report_nodes.items() if n['drift']),
        'unchecked': sorted(unchecked),
        'summary': summary,
        'nodes': report_nodes,
    }
