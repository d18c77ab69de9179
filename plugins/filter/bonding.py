# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/bonding (logic: plugins/plugin_utils/_bond_input.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def bond_input_problems(bonds, present, backend='auto'):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._bond_input import BondInputError, input_problems

    try:
        return input_problems(bonds, present, backend)
    except BondInputError as exc:
        raise AnsibleFilterError(str(exc))


def bond_input_defaults(bonds):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._bond_input import BondInputError, with_defaults

    try:
        return with_defaults(bonds)
    except BondInputError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'bond_input_problems': bond_input_problems, 'bond_input_defaults': bond_input_defaults}
