# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the acceptance role (logic: plugins/plugin_utils/_baselines.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._baselines import host_thresholds


def acceptance_thresholds(spec):
    if not isinstance(spec, dict):
        raise AnsibleFilterError('acceptance_thresholds needs a dict (gpu_model, hcas, overrides, rdma_test, gpu_burn_fp64_tc), '
                                 'got %s' % type(spec).__name__)
    return host_thresholds(spec)


class FilterModule(object):
    def filters(self):
        return {'acceptance_thresholds': acceptance_thresholds}
