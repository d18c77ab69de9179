# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/rdma_stack. ``ofed_info -s`` is parsed by its one parser,
plugins/module_utils/ofed_info.py (the same one the modules and unit tests use)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
# The keys of the role's rdma_stack_ofed (the parser's flavor and base are not part of it).
KEYS = ('raw', 'distribution', 'version')


def ofed_info_version(output):
    from ansible_collections.gpufleet.cluster.plugins.module_utils.ofed_info import parse_ofed_info_short

    if output is None:
        output = ''
    if isinstance(output, (list, tuple)):
        output = '\n'.join(str(line) for line in output)
    if not isinstance(output, str):
        raise AnsibleFilterError('ofed_info_version: the ofed_info -s output must be its stdout (a string) or '
                                 'its stdout_lines (a list), got %s' % type(output).__name__)
    parsed = parse_ofed_info_short(output)
    return dict((key, parsed[key]) for key in KEYS) if parsed else {}


class FilterModule(object):
    def filters(self):
        return {'ofed_info_version': ofed_info_version}
