# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters job_slice, merge_slices, merge_slices_apply: AWX sliced jobs (logic: plugins/plugin_utils/_job_slice.py,
docs/scale.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _job_slice


def _wrap(func):
    def run(*args):
        try:
            return func(*args)
        except ValueError as exc:
            raise AnsibleFilterError(str(exc))
    run.__name__ = func.__name__
    return run


job_slice = _wrap(_job_slice.job_slice)
merge_slices = _wrap(_job_slice.merge_slices)
merge_slices_apply = _wrap(_job_slice.merge_slices_apply)


class FilterModule(object):
    def filters(self):
        return {'job_slice': job_slice, 'merge_slices': merge_slices, 'merge_slices_apply': merge_slices_apply}
