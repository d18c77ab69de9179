# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter pull_drift_report for playbooks/pull_report.yml (logic: plugins/plugin_utils/_pull.py, docs/scale.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull


def pull_drift_report(merged, fleet_deviations=None):
    try:
        return _pull.drift_report(merged, fleet_deviations)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'pull_drift_report': pull_drift_report}
