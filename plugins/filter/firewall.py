# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/firewall (logic: plugins/plugin_utils/_firewall.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def _call(func_name, *args):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _firewall

    try:
        return getattr(_firewall, func_name)(*args)
    except _firewall.FirewallInputError as exc:
        raise AnsibleFilterError(str(exc))


def firewall_input_problems(spec, rules_vars=None):
    return _call('input_problems', spec, rules_vars or {})


def firewall_ruleset(spec, rules_vars=None):
    return _call('render', spec, rules_vars or {})


def firewall_firewalld_zone(spec, rules_vars=None):
    return _call('render_firewalld', spec, rules_vars or {})


def firewall_lockout_problems(spec, rules_vars, connection):
    return _call('lockout_problems', spec, rules_vars or {}, connection)


class FilterModule(object):
    def filters(self):
        return {'firewall_input_problems': firewall_input_problems, 'firewall_ruleset': firewall_ruleset,
                'firewall_lockout_problems': firewall_lockout_problems,
                'firewall_firewalld_zone': firewall_firewalld_zone}
