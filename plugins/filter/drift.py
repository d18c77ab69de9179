# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for playbooks/drift.yml (logic: plugins/plugin_utils/_drift.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def drift_report(changes, nodes, checks, gpu_nodes, check_mode=True):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._drift import build_report

    return build_report(changes, list(nodes or []), dict(checks or {}), list(gpu_nodes or []), bool(check_mode))


class FilterModule(object):
    def filters(self):
        return {'drift_report': drift_report}
