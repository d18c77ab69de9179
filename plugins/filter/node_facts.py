# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter node_facts_missing: whether a role must call gpufleet.cluster.node_facts, or can reuse what an earlier
call of this play put into ansible_facts (the module's ``ansible_facts.node_facts`` record)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

SUBSETS = ('pci', 'infiniband', 'gpu', 'firmware', 'bonding')


def _epoch(value):
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def node_facts_missing(facts, subsets, sysfs_root='/'):
    """True unless ``facts`` (a host's ansible_facts) hold a node_facts call that read every one of ``subsets`` from
    ``sysfs_root`` and not before the play's fact gathering (``date_time.epoch``, when the play gathered it)."""
    if isinstance(subsets, str) or not isinstance(subsets, (list, tuple)) or not subsets:
        raise AnsibleFilterError('node_facts_missing: subsets must be a non-empty list of %s, got %r'
                                 % (', '.join(SUBSETS), subsets))
    unknown = [s for s in subsets if s not in SUBSETS]
    if unknown:
        raise AnsibleFilterError('node_facts_missing: subsets must be among %s, got %s' % (', '.join(SUBSETS), unknown))
    record = (facts or {}).get('node_facts') if isinstance(facts, dict) else None
    if not isinstance(record, dict):
        return True
    if record.get('sysfs_root') != sysfs_root or not set(subsets) <= set(record.get('subset') or []):
        return True
    if any(facts.get(key) is None for key in _keys(subsets)):  # cleared or overwritten since
        return True
    read_at = _epoch(record.get('epoch'))
    gathered_at = _epoch((facts.get('date_time') or {}).get('epoch')) if isinstance(facts.get('date_time'), dict) else None
    if gathered_at is not None and (read_at is None or read_at < gathered_at):
        return True  # read in an earlier play or run (a persistent fact cache keeps old facts)
    return False


def _keys(subsets):
    return ['nvidia_gpu' if s == 'gpu' else s for s in subsets]


class FilterModule(object):
    def filters(self):
        return {'node_facts_missing': node_facts_missing}
