# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: pull_results
short_description: Read and merge the nodes' pull-mode results
version_added: 0.1.0
author: gpufleet maintainers (@gpufleet)
description:
  - Pull mode (docs/scale.md). Reads every C(<node>.json) the C(gpufleet-pull) runners delivered to a directory (a shared
    file system, or where an HTTP endpoint stores them), checks each one and merges them into the inputs of the fleet
    drift report (P(gpufleet.cluster.pull_drift_report#filter)), naming the expected nodes that did not report.
  - A file that is not a result (unreadable, not JSON, wrong format, a second file for a node) makes its node an error
    in the report, named with the file and the reason; the other nodes are merged. Results of check and apply runs mixed
    in one directory are refused.
  - Runs on the controller; used by C(playbooks/pull_report.yml).
options:
  _terms:
    description: The directory of the results (exactly one).
    type: list
    elements: path
    required: true
  expected:
    description: The nodes that must report (e.g. C(groups['gpu_nodes'])); any of them without a result is named.
    type: list
    elements: str
  run_id:
    description: Count only results of this run (C(gpufleet-pull --run-id), by default the Slurm job id); the others
      are named as not reported, with their run.
    type: str
  max_age:
    description: Count only results written in the last C(max_age) seconds.
    type: int
"""

EXAMPLES = r"""
- name: Merge the nodes' results
  ansible.builtin.set_fact:
    merged: "{{ lookup('gpufleet.cluster.pull_results', '/shared/gpufleet/pull', expected=groups['gpu_nodes']) }}"
"""

RETURN = r"""
_raw:
  description: One dict - C(mode), C(nodes), C(expected), C(reported), C(not_reported), C(stale) and C(errors) (node to
    reason), C(unexpected), C(changes) and C(checks) (the drift report's inputs), C(fleet) (fleet_compare's hosts,
    profiles, items), C(runner) (each node's wall and CPU seconds), C(run_id).
  type: list
  elements: dict
"""

import time

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if len(terms) != 1:
            raise AnsibleLookupError('pull_results takes one directory (the gpufleet-pull --dest), got %d' % len(terms))
        expected = self.get_option('expected')
        try:
            return [_pull.merge_results(_pull.read_results(terms[0]), expected=list(expected) if expected is not None else None,
                                        run_id=self.get_option('run_id'), max_age=self.get_option('max_age'),
                                        now=time.time())]
        except ValueError as exc:
            raise AnsibleLookupError(str(exc))
