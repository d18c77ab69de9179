# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/nvidia_driver and roles/fabricmanager (and roles/rdma_stack's install): the package
database's view of the version-pinned packages (logic: plugins/plugin_utils/_driver_packages.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def driver_package_state(output, version, versioned, unversioned=None):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._driver_packages import PackageStateError, package_state

    try:
        return package_state(output, version, versioned, unversioned or [])
    except PackageStateError as exc:
        raise AnsibleFilterError('driver_package_state: %s' % exc)


def driver_installed_version(output):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._driver_packages import PackageStateError, installed_version

    try:
        return installed_version(output)
    except PackageStateError as exc:
        raise AnsibleFilterError('driver_installed_version: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {
            'driver_package_state': driver_package_state,
            'driver_installed_version': driver_installed_version,
        }
