# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the version lock (``gpufleet_lock``): validation on the controller before any host is
touched, the node-check expectations it implies, and the Fabric Manager rule (Fabric Manager is exactly
the driver's version) for the roles. Logic: plugins/plugin_utils/_version_lock.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def version_lock_errors(lock, name='gpufleet_lock', provider=None, cdi=False):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import lock_errors

    return lock_errors(lock, name, provider, cdi)


def version_lock_expectations(lock):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import lock_expectations

    return lock_expectations(lock)


def version_lock_fabricmanager(lock):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import lock_fabricmanager

    return lock_fabricmanager(lock)


def version_lock_fabricmanager_errors(fabricmanager, driver, fabricmanager_name='fabricmanager_version',
                                      driver_name='nvidia_driver_version'):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import fabricmanager_errors

    return fabricmanager_errors(fabricmanager, driver, fabricmanager_name, driver_name)


class FilterModule(object):
    def filters(self):
        return {
            'version_lock_errors': version_lock_errors,
            'version_lock_expectations': version_lock_expectations,
            'version_lock_fabricmanager': version_lock_fabricmanager,
            'version_lock_fabricmanager_errors': version_lock_fabricmanager_errors,
        }
