# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection: AWX / Automation Platform job slices (docs/scale.md) - which slice a run is, and one
sliced job's per-slice verify results merged and checked complete. Used by plugins/filter/job_slice.py.
Errors are ValueError with a message that names the variable or the slice."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

# AWX and its predecessor's names for the same extra vars.
PREFIXES = ('awx', 'tower')


def _int(name, value):
    if isinstance(value, bool):
        raise ValueError('%s must be a whole number, got %r' % (name, value))
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise ValueError('%s must be a whole number, got %r' % (name, value))
    return number


def job_slice(variables):
    """{'sliced', 'number', 'count'} from the slice extra vars in ``variables`` (hostvars of a host: extra vars included)."""
    if not isinstance(variables, Mapping):
        raise ValueError('job_slice needs a mapping of variables (hostvars[inventory_hostname]), got %s'
                         % type(variables).__name__)
    found = {}
    for key in ('count', 'number'):
        for prefix in PREFIXES:
            name = '%s_job_slice_%s' % (prefix, key)
            value = variables.get(name)
            if value is None or value == '':
                continue
            value = _int(name, value)
            if key in found and found[key][1] != value:
                raise ValueError('%s=%d disagrees with %s=%d' % (found[key][0], found[key][1], name, value))
            found.setdefault(key, (name, value))
    count = found.get('count', (None, 1))[1]
    number = found.get('number', (None, 1 if count == 1 else None))[1]
    if count < 1:
        raise ValueError('%s must be 1 or more, got %d' % (found['count'][0], count))
    if number is None:
        raise ValueError('%s=%d says this run is one of %d slices, but awx_job_slice_number (or '
                         'tower_job_slice_number) is not set: the slice number is needed to keep the '
                         'slices\' results apart' % (found['count'][0], count, count))
    if not 1 <= number <= count:
        raise ValueError('%s must be between 1 and the slice count %d, got %d'
                         % (found.get('number', ('awx_job_slice_number',))[0], count, number))
    return {'sliced': count > 1, 'number': number, 'count': count}


def _slice_problem(path, msg):
    return ValueError('merge_slices: %s: %s' % (path, msg))


def merge_slices(slices):
    """One job's slice results (verify_report.yml's files) as one: every slice 1..count once, every node once.

    Returns ``{'count', 'nodes': {host: {'gpufleet_verify', 'acceptance_result'}}, 'fleet': {'hosts', 'profiles',
    'items'}, 'multinode'}`` (``fleet``: fleet_compare's input over every node whose slice compared versions;
    ``multinode``: the acceptance role's multi-node record, every slice's hosts in it, or None).
    """
    if not isinstance(slices, list) or not slices:
        raise ValueError('merge_slices: no slice results found (each slice of the job writes '
                         'slices/slice-<number>-of-<count>.json in the report directory)')
    counts, numbers, nodes, owner, multinode = set(), {}, {}, {}, None
    fleet = {'hosts': {}, 'profiles': {}, 'items': []}
    for i, sl in enumerate(slices):
        where = 'slice file %d' % (i + 1)
        if not isinstance(sl, dict) or not isinstance(sl.get('slice'), dict) or not isinstance(sl.get('nodes'), dict):
            raise _slice_problem(where, 'not a slice result (keys slice, hosts, nodes)')
        count, number = sl['slice'].get('count'), sl['slice'].get('number')
        where = 'slice %s of %s' % (number, count)
        counts.add(count)
        if number in numbers:
            raise _slice_problem(where, 'two results for the same slice (an earlier job\'s file left in slices/?)')
        numbers[number] = sl
        # acceptance's multi-node record (skipped in a slice: slice_check refuses acceptance_multinode): the
        # first slice's, with every slice's hosts that passed, as an unsliced run lists them
        mn = sl.get('multinode')
        if isinstance(mn, dict):
            if multinode is None:
                multinode = dict(mn, hosts=list(mn.get('hosts') or []))
            else:
                multinode['hosts'] += [h for h in mn.get('hosts') or [] if h not in multinode['hosts']]
        for host, node in sorted(sl['nodes'].items()):
            if host in owner:
                raise _slice_problem(where, '%s is in slice %s too' % (host, owner[host]))
            owner[host] = number
            nodes[host] = {'gpufleet_verify': node.get('gpufleet_verify'), 'acceptance_result': node.get('acceptance_result')}
            fl = node.get('fleet') or {}
            if fl.get('fleet') and fl.get('entry'):
                fleet['hosts'][host] = fl['entry']
                fleet['profiles'][host] = fl['entry'].get('profile')
                for item in fl.get('items') or []:
                    if item not in fleet['items']:
                        fleet['items'].append(item)
    if len(counts) != 1:
        raise ValueError('merge_slices: the results are of different sliced jobs (slice counts %s): '
                         'keep one job\'s files in slices/' % ', '.join(str(c) for c in sorted(counts, key=str)))
    count = counts.pop()
    missing = [n for n in range(1, (count if isinstance(count, int) else 0) + 1) if n not in numbers]
    if missing:
        raise ValueError('merge_slices: slice(s) %s of %s did not report (no slice-<n>-of-%s.json): the merged '
                         'report would leave their nodes out' % (', '.join(map(str, missing)), count, count))
    if multinode is not None:
        multinode['hosts'] = sorted(multinode['hosts'])
    return {'count': count, 'nodes': nodes, 'fleet': fleet, 'multinode': multinode}


def merge_slices_apply(nodes, fleet_deviations):
    """``nodes`` (merge_slices') with fleet_compare's deviations: each appended to its node's deviations, the node
    failed - what node_facts_check records in an unsliced run."""
    if not isinstance(nodes, dict) or not isinstance(fleet_deviations, list):
        raise ValueError('merge_slices_apply needs merge_slices\' nodes (a dict) and fleet_compare\'s '
                         'deviations (a list)')
    out = dict(nodes)
    for dev in fleet_deviations:
        node = out.get(dev.get('host')) if isinstance(dev, dict) else None
        if node is None or not isinstance(node.get('gpufleet_verify'), dict):
            continue
        verify = dict(node['gpufleet_verify'])
        verify['deviations'] = list(verify.get('deviations') or []) + [dev.get('message')]
        verify['status'] = 'failed'
        out[dev['host']] = dict(node, gpufleet_verify=verify)
    return out
