# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the monitoring roles (logic: plugins/plugin_utils/_monitoring.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def _wrap(func_name):
    def inner(*args, **kwargs):
        from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _monitoring

        try:
            return getattr(_monitoring, func_name)(*args, **kwargs)
        except _monitoring.MonitoringError as exc:
            raise AnsibleFilterError(str(exc))
    inner.__name__ = func_name
    return inner


class FilterModule(object):
    def filters(self):
        return {
            'monitoring_exporter_args': _wrap('exporter_args'),
            'monitoring_scrape_configs': _wrap('scrape_configs'),
            'monitoring_prometheus_config': _wrap('prometheus_config'),
        }
