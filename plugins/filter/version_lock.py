# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the version lock (``gpufleet_lock``): validation on the controller before any host is
touched, and the node-check expectations it implies. Logic: plugins/plugin_utils/_version_lock.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import (
    lock_errors,
    lock_expectations,
)


def version_lock_errors(lock, name='gpufleet_lock', provider=None):
    return lock_errors(lock, name, provider)


def version_lock_expectations(lock):
    return lock_expectations(lock)


class FilterModule(object):
    def filters(self):
        return {
            'version_lock_errors': version_lock_errors,
            'version_lock_expectations': version_lock_expectations,
        }
