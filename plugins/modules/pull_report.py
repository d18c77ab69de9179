#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: pull_report
short_description: Merge the nodes' pull-mode results into the fleet drift report
version_added: 0.1.0
description:
  - Pull mode (docs/scale.md, "Pull mode"). Reads every C(<node>.json) the C(gpufleet-pull) runners delivered to
    O(results), compares the versions across each profile over every reported node (as M(gpufleet.cluster.fleet_compare)
    does, and node_facts_check in a push run), and writes the same drift report as push mode's C(playbooks/drift.yml) -
    C(drift.json) and C(drift.md), with push mode's report builder and template - into O(dest).
  - The report's C(pull) key (and a paragraph of C(drift.md)) names the O(expected) nodes that did not report, those
    whose result is of another run (O(run_id)) or too old (O(max_age)), and those whose run failed, with the reason.
    Such nodes are also in C(unchecked), as an unreachable node is in push mode. A file that is not a result (not JSON,
    another format, a second file for one node) makes its node a failure naming the file; the others are merged.
  - Runs on the controller (action plugin, used by C(playbooks/pull_report.yml)); nothing runs on a target. Check
    mode reports whether the files would change and writes nothing (the playbook runs it with C(check_mode=false),
    the report being the point of the run).
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Says which report files would change; writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  results:
    description:
      - The directory the nodes deliver their results to (C(gpufleet-pull --dest), or where an HTTP endpoint stores them).
    type: path
    required: true
  dest:
    description:
      - The report directory (absolute); created when missing. C(drift.json) and C(drift.md) are replaced through a
        temporary file in it.
    type: path
    required: true
  expected:
    description:
      - The nodes that must report (for example the hosts of the profile's group).
    type: list
    elements: str
    required: true
  run_id:
    description:
      - Count only the results of this run (C(gpufleet-pull --run-id), by default the Slurm job id).
    type: str
  max_age:
    description:
      - Count only the results written in the last O(max_age) seconds.
    type: int
  template:
    description:
      - The Markdown template (default the collection's C(playbooks/templates/drift.md.j2), push mode's).
    type: path
notes:
  - Results of check and apply runs mixed in O(results), a O(results) that is not a directory, a relative O(dest) or an
    empty O(expected) fail the task before anything is written, with a message naming the option.
seealso:
  - module: gpufleet.cluster.fleet_compare
'''

EXAMPLES = r'''
- name: Merge the nodes' results of Slurm job 4711
  gpufleet.cluster.pull_report:
    results: /srv/gpufleet/pull
    dest: "{{ playbook_dir }}/../build/drift"
    expected: "{{ groups['profile_h100_ib'] }}"
    run_id: "4711"
  check_mode: false
  register: pull
'''

RETURN = r'''
mode:
  description: C(check) (a drift check) or C(apply) (remediation) - the nodes' runs.
  returned: success
  type: str
drift:
  description: Whether any node has drift (a setting that differs, a version lock or hardware deviation).
  returned: success
  type: bool
drifted_nodes:
  description: The nodes with drift, sorted.
  returned: success
  type: list
  elements: str
unchecked:
  description: The nodes without a check - not reported, their result of another run or too old, or failed.
  returned: success
  type: list
  elements: str
summary:
  description: Kind (role, or C(version lock / hardware)) to the number of differences over the fleet.
  returned: success
  type: dict
pull:
  description: C(expected) and C(reported) (counts), C(not_reported) and C(errors) (node to reason), C(unexpected),
    C(run_id), C(node_wall_s) and C(node_cpu_s) (min, median, max, n of the nodes' own runs), C(findings) (one line
    each for drift, not reported and failed nodes).
  returned: success
  type: dict
nodes:
  description: The number of nodes in the report.
  returned: success
  type: int
written:
  description: The report files that changed (in check mode, would change).
  returned: success
  type: list
  elements: str
msg:
  description: The findings joined with C(; ), or C(no drift), and how many nodes reported.
  returned: always
  type: str
'''
