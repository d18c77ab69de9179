# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters job_slice, merge_slices, merge_slices_apply: AWX sliced jobs (logic: plugins/plugin_utils/_job_slice.py,
docs/scale.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def _call(func_name, *args):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _job_slice

    try:
        return getattr(_job_slice, func_name)(*args)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


def job_slice(*args):
    return _call('job_slice', *args)


def merge_slices(*args):
    return _call('merge_slices', *args)


def merge_slices_apply(*args):
    return _call('merge_slices_apply', *args)


class FilterModule(object):
    def filters(self):
        return {'job_slice': job_slice, 'merge_slices': merge_slices, 'merge_slices_apply': merge_slices_apply}
