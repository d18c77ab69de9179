# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/bench_tools: the acceptance tools' packages at the versions of the lock (logic:
plugins/plugin_utils/_bench_tools.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def _wrap(name, func_name, *args):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _bench_tools

    try:
        return getattr(_bench_tools, func_name)(*args)
    except _bench_tools.BenchToolsError as exc:
        raise AnsibleFilterError('%s: %s' % (name, exc))


def bench_tools_apt_pin(version):
    return _wrap('bench_tools_apt_pin', 'apt_pin', version)


def bench_tools_package_state(output, wanted):
    return _wrap('bench_tools_package_state', 'package_state', output, wanted)


def bench_tools_install_specs(output, wanted, names):
    return _wrap('bench_tools_install_specs', 'install_specs', output, wanted, names)


def bench_tools_found(lines, programs):
    return _wrap('bench_tools_found', 'program_results', lines, programs)


def bench_tools_missing(results, packages, installed=None):
    return _wrap('bench_tools_missing', 'missing_tools', results, packages, installed)


class FilterModule(object):
    def filters(self):
        return {
            'bench_tools_apt_pin': bench_tools_apt_pin,
            'bench_tools_package_state': bench_tools_package_state,
            'bench_tools_install_specs': bench_tools_install_specs,
            'bench_tools_missing': bench_tools_missing,
            'bench_tools_found': bench_tools_found,
        }
