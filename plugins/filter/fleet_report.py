# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the fleet report (logic: plugins/plugin_utils/_outliers.py and _report_html.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def acceptance_outliers(report, history=None, percent=5, rungs=None, fail_hosts=None):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._outliers import OutlierError, find_outliers

    try:
        return find_outliers(report, history, percent, rungs, fail_hosts)
    except OutlierError as exc:
        raise AnsibleFilterError(str(exc))


def fleet_report_html(acceptance, site=None, drift=None, journals=None, title='gpufleet fleet report'):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._report_html import build_html

    if not isinstance(acceptance, dict):
        raise AnsibleFilterError('fleet_report_html needs the acceptance report (a dict), got %s' % type(acceptance).__name__)
    return build_html(acceptance, site=site, drift=drift, journals=journals, title=title)


class FilterModule(object):
    def filters(self):
        return {
            'acceptance_outliers': acceptance_outliers,
            'fleet_report_html': fleet_report_html,
        }
