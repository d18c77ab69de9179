# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the monitoring roles (logic: plugins/plugin_utils/_monitoring.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _monitoring


def _wrap(func):
    def inner(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except _monitoring.MonitoringError as exc:
            raise AnsibleFilterError(str(exc))
    inner.__name__ = func.__name__
    return inner


class FilterModule(object):
    def filters(self):
        return {
            'monitoring_exporter_args': _wrap(_monitoring.exporter_args),
            'monitoring_scrape_configs': _wrap(_monitoring.scrape_configs),
            'monitoring_prometheus_config': _wrap(_monitoring.prometheus_config),
        }
