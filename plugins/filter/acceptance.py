# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the acceptance role (logic: plugins/plugin_utils/_baselines.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def acceptance_thresholds(spec):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._baselines import RENAMED_KEYS, canonical_overrides, host_thresholds

    if not isinstance(spec, dict):
        raise AnsibleFilterError('acceptance_thresholds needs a dict (gpu_model, hcas, overrides, rdma_test, gpu_burn_fp64_tc), '
                                 'got %s' % type(spec).__name__)
    try:
        overrides, deprecated = canonical_overrides(spec.get('overrides'))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))
    for old in deprecated:
        Display().deprecated('acceptance_thresholds key %s is deprecated, use %s (the unit is in the name)'
                             % (old, RENAMED_KEYS[old]), version='2.0.0', collection_name='gpufleet.cluster')
    return host_thresholds(dict(spec, overrides=overrides))


class FilterModule(object):
    def filters(self):
        return {'acceptance_thresholds': acceptance_thresholds}
