# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for playbooks/rollout.yml (logic: plugins/plugin_utils/_rollout.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def rollout_batches(hosts, serial, partitions=None, cap=None):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._rollout import PlanError, plan_batches

    try:
        return plan_batches(hosts, serial, partitions, cap)
    except PlanError as exc:
        raise AnsibleFilterError(str(exc))


def rollout_cap_blockers(host, batch, partitions, out_of_service, cap, names=None):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._rollout import PlanError, cap_blockers

    try:
        return cap_blockers(host, batch, partitions, out_of_service, cap, names)
    except PlanError as exc:
        raise AnsibleFilterError(str(exc))


def rollout_done_hosts(journal, rollout_id, lock_id):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._rollout import done_hosts

    return done_hosts(journal, rollout_id, lock_id)


class FilterModule(object):
    def filters(self):
        return {
            'rollout_batches': rollout_batches,
            'rollout_cap_blockers': rollout_cap_blockers,
            'rollout_done_hosts': rollout_done_hosts,
        }
