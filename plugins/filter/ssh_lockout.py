# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for gpufleet.cluster.ssh_hardening (logic: plugins/plugin_utils/_ssh_lockout.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def ssh_lockout_problems(login, settings=None, names=None, check_listen=True, need_connection=True):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._ssh_lockout import SettingsError, lockout_problems

    try:
        return lockout_problems(login, settings, names, bool(check_listen), bool(need_connection))
    except SettingsError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'ssh_lockout_problems': ssh_lockout_problems}
