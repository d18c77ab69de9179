# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the version lock (``gpufleet_lock``): validation on the controller before any host is
touched, the node-check expectations it implies, and the Fabric Manager rule (Fabric Manager is exactly
the driver's version) for the roles. Logic: plugins/plugin_utils/_version_lock.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import (
    fabricmanager_errors,
    lock_errors,
    lock_expectations,
    lock_fabricmanager,
)


def version_lock_errors(lock, name='gpufleet_lock', provider=None, cdi=False):
    return lock_errors(lock, name, provider, cdi)


def version_lock_expectations(lock):
    return lock_expectations(lock)


def version_lock_fabricmanager(lock):
    return lock_fabricmanager(lock)


def version_lock_fabricmanager_errors(fabricmanager, driver, fabricmanager_name='fabricmanager_version',
                                      driver_name='nvidia_driver_version'):
    return fabricmanager_errors(fabricmanager, driver, fabricmanager_name, driver_name)


class FilterModule(object):
    def filters(self):
        return {
            'version_lock_errors': version_lock_errors,
            'version_lock_expectations': version_lock_expectations,
            'version_lock_fabricmanager': version_lock_fabricmanager,
            'version_lock_fabricmanager_errors': version_lock_fabricmanager_errors,
        }
