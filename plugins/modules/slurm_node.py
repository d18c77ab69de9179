#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_node
short_description: Drain, resume or down a Slurm node with a reason, and read its state and jobs
version_added: 0.1.0
description:
  - Reads one node with C(scontrol show node -o NAME) and the jobs on it with C(squeue), then drains, resumes or
    downs it with C(scontrol update nodename=NAME state=...) when, and only when, its state differs from the one
    asked for. Run it where the Slurm commands reach slurmctld - the controller or a login node - usually with
    C(delegate_to).
  - "Slurm semantics. I(state=drain): the node takes no new jobs; running jobs go on. While jobs run the node is
    DRAINING (C(MIXED+DRAIN) or C(ALLOCATED+DRAIN), C(drng) in sinfo), then DRAINED (C(IDLE+DRAIN)). Use
    I(wait_idle) to wait for the jobs to end."
  - "I(state=resume) clears DRAIN and DOWN (C(scontrol update state=RESUME)): a drained node takes jobs again, a
    DOWN node returns to service if its slurmd responds (else it goes back to DOWN as not responding)."
  - "I(state=down): the node is marked DOWN at once; its running jobs are killed (batch jobs that may be requeued
    are requeued). With C(ReturnToService=2) in slurm.conf a DOWN node whose slurmd is alive returns to service
    when it next registers, so a later run may find it up again and down it again."
  - "Marker. Every reason this module writes starts with a marker: C(PREFIX[RUN-ID]: TEXT), or
    C(PREFIX[RUN-ID] FAILED: TEXT) with I(failure=true) - for example C(gpufleet[2026q4-570]: upgrading) or
    C(gpufleet[2026q4-570] FAILED: step verify: kernel expected ...). PREFIX is I(reason_prefix), RUN-ID is
    I(run_id), TEXT is I(reason) with whitespace runs made one space."
  - "Ownership. Slurm stores the reason with the user and time that set it. A drained or down node is ours only when
    its reason starts with that exact marker (any run id). Everything else belongs to someone else: an operator's
    reason (also one that merely starts with the word C(gpufleet), such as C(gpufleet is broken here, do not
    touch)), Slurm's own C(Not responding), and a DOWN or DRAIN node with an empty reason. Such a node is not
    resumed, its reason is not overwritten and it is not drained again or downed unless I(force=true); the module
    reports C(changed=false), C(foreign=true) and a warning instead, so a rollout never undoes an operator's drain."
  - "Upgrades. The two exact shapes that earlier versions of this collection wrote are read as ours too:
    C(gpufleet rollout ID: ...) (a failure when it goes on with C(failed at )) and C(gpufleet acceptance failed at
    ...) (a failure). Nothing else that starts with C(gpufleet) is; an old C(gpufleet: TEXT) drain counts as an
    operator's and needs I(force=true) once."
  - "Failures. A drain or down written with I(failure=true) by any run stays until the node passes: a later drain or
    down without I(failure) keeps the failure reason (C(kept_failure=true)), and I(state=resume) leaves the node
    drained with a warning unless I(passed=true) (the caller verified the node since) or I(force=true). A new
    failure replaces an older failure reason."
  - A drained node whose own reason differs from the wanted one gets the new reason; that counts as C(changed).
  - Check mode reads the node and reports what would change, with the diff; it never waits.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: The diff shows the node's state (base state and flags) and reason before and after.
  platform:
    platforms: posix
options:
  name:
    description:
      - Slurm NodeName of the node (one node, not a hostlist expression).
    type: str
    required: true
  state:
    description:
      - C(drain), C(resume) or C(down) the node, or only C(query) it (never changes anything).
    type: str
    choices: [drain, resume, down, query]
    default: query
  reason:
    description:
      - "Why the node is drained or down; required with I(state=drain) and I(state=down). Stored by Slurm after
        the marker (C(PREFIX[RUN-ID]: REASON), see the description) and shown by C(sinfo -R)."
    type: str
  reason_prefix:
    description:
      - First word of the marker that tells this automation's drains and downs from everyone else's.
      - A letter, then up to 31 letters, digits, C(_), C(.) or C(-). Anything else (also an empty string, which
        earlier versions read as "own every reason") is refused; use I(force=true) to act on someone else's drain.
    type: str
    default: gpufleet
  run_id:
    description:
      - Name of the run that drains or downs the node, written in the marker as C(PREFIX[RUN-ID]) (a rollout passes
        its C(rollout_id)). Any run id is ours when reading a reason.
      - A letter or digit, then up to 63 letters, digits, C(.), C(_) or C(-).
    type: str
    default: adhoc
  failure:
    description:
      - With I(state=drain) or I(state=down) - the node is taken out because it failed (acceptance, a rollout step).
        The marker says C(FAILED); such a drain is kept by later drains without I(failure) and by I(state=resume)
        unless I(passed=true). Ignored with the other states.
    type: bool
    default: false
  passed:
    description:
      - With I(state=resume) - the node passed its verification after it was drained, so a failure drain (of any
        run) may be lifted. Without it a failure drain stays. Ignored with the other states.
    type: bool
    default: false
  force:
    description:
      - Resume, re-drain or down the node even when its current reason belongs to someone else, and resume or
        re-drain over a failure drain.
    type: bool
    default: false
  wait_idle:
    description:
      - After the action, wait until no job runs on the node (C(squeue) states CONFIGURING, RUNNING, SUSPENDED,
        COMPLETING, STOPPED, SIGNALING). When I(timeout) passes first the module fails listing the jobs and leaves
        the node as it is (drained nodes stay drained). Not done in check mode.
    type: bool
    default: false
  timeout:
    description:
      - Seconds I(wait_idle) waits at most.
      - From C(1) to C(2592000) (30 days); other values (also C(0)) are refused.
    type: int
    default: 3600
  poll_interval:
    description: Seconds between two C(squeue) calls while waiting, from C(1) to C(3600).
    type: int
    default: 5
  scontrol_path:
    description: Path of C(scontrol). Default is C(scontrol) from C(PATH) (the module fails naming this option when
      there is none).
    type: path
  squeue_path:
    description: Path of C(squeue). Default is C(squeue) from C(PATH).
    type: path
notes:
  - Bad input is refused before Slurm is asked, with a message naming the option - a NUL byte in any text, a
    O(name) that is a hostlist or starts with C(-), an empty O(reason) to drain or down, O(timeout) or
    O(poll_interval) out of range, a O(reason_prefix) or O(run_id) that cannot make an unambiguous marker, or a
    O(scontrol_path)/O(squeue_path) that is missing, a directory or not executable (or no C(scontrol)/C(squeue) on
    C(PATH) when they are not given).
  - A failure after C(scontrol update) succeeded (reading the node back, C(squeue), the wait) reports
    C(changed=true) with the failure.
  - The commands run with C(LC_ALL=C) and the environment of the task; set C(SLURM_CONF) through the task's
    C(environment) to reach another cluster.
  - Tested with Slurm 22.05.8 (Debian 12 C(slurm-wlm)) controller and nodes.
seealso:
  - name: scontrol
    description: Slurm's scontrol manual (update NodeName, State, Reason).
    link: https://slurm.schedmd.com/scontrol.html
"""

EXAMPLES = r"""
- name: Drain the node before its driver update (on the Slurm controller)
  gpufleet.cluster.slurm_node:
    name: "{{ inventory_hostname_short }}"
    state: drain
    reason: "rollout driver 550 ({{ ansible_date_time.date | default('') }})"
    run_id: 2026q4-550
    wait_idle: true
    timeout: 7200
  delegate_to: slurm-ctl01

- name: Put it back into service after it passed (not if an operator drained it meanwhile)
  gpufleet.cluster.slurm_node:
    name: "{{ inventory_hostname_short }}"
    state: resume
    passed: true
  delegate_to: slurm-ctl01

- name: 'Keep a node that failed acceptance out until it passes (stored as "gpufleet[accept-0522] FAILED: ...")'
  gpufleet.cluster.slurm_node:
    name: gpu017
    state: drain
    reason: "acceptance gpu_burn: 3064 Gflop/s (min 15000)"
    run_id: accept-0522
    failure: true
  delegate_to: slurm-ctl01

- name: Read the node's state and jobs
  gpufleet.cluster.slurm_node:
    name: gpu017
    state: query
  delegate_to: login01
  register: node

- name: Take a broken node out now, killing its jobs
  gpufleet.cluster.slurm_node:
    name: gpu017
    state: down
    reason: "XID 79 on GPU 3"
    failure: true
  delegate_to: slurm-ctl01
"""

RETURN = r"""
name:
  description: The node's name.
  returned: always
  type: str
  sample: gpu017
state:
  description: The node's state as scontrol prints it (base state and C(+) flags) after the action.
  returned: always
  type: str
  sample: MIXED+DRAIN
base_state:
  description: Base state without the not-responding C(*).
  returned: always
  type: str
  sample: MIXED
flags:
  description: The state's flags.
  returned: always
  type: list
  elements: str
  sample: [DRAIN]
drained:
  description: DRAIN is set and no job holds the node (DRAINED).
  returned: always
  type: bool
draining:
  description: DRAIN is set and jobs still hold the node (DRAINING).
  returned: always
  type: bool
down:
  description: The base state is DOWN (or FAIL).
  returned: always
  type: bool
not_responding:
  description: slurmctld cannot reach the node's slurmd (C(*) or C(NOT_RESPONDING)).
  returned: always
  type: bool
reason:
  description: The reason Slurm stores for the node (without the user and time), empty when none.
  returned: always
  type: str
  sample: "gpufleet[2026q4-550]: rollout driver 550"
reason_user:
  description: User who set the reason.
  returned: always
  type: str
  sample: root
reason_time:
  description: When the reason was set (slurmctld's local time, as printed).
  returned: always
  type: str
  sample: "2026-11-22T05:37:21"
foreign:
  description: The node's drain/down or reason (before the action) is someone else's - no marker of ours, or no
    reason on a DOWN or DRAIN node.
  returned: always
  type: bool
marker:
  description: Our marker read from the node's reason before the action, null when the reason is not ours.
  returned: always
  type: dict
  contains:
    run_id:
      description: The run that wrote it (null for the old C(gpufleet acceptance failed at) shape).
      type: str
    failure:
      description: It is a failure drain/down.
      type: bool
    text:
      description: The reason after the marker.
      type: str
    legacy:
      description: One of the old shapes of earlier versions.
      type: bool
  sample: {run_id: 2026q4-570, failure: true, text: "step verify: kernel expected 6.8", legacy: false}
kept_failure:
  description: A failure drain was kept - its reason by a drain or down without I(failure), or the drain itself by
    a resume without I(passed).
  returned: always
  type: bool
action:
  description: The scontrol state that was (or in check mode would be) set, or null.
  returned: always
  type: str
  sample: DRAIN
message:
  description: What was decided and why.
  returned: always
  type: str
  sample: "not resumed: drained/down by someone else (reason 'bad fan' by alice); set force=true to resume it anyway"
jobs:
  description: Jobs on the node (C(squeue --nodelist)) after the action, and after the wait with I(wait_idle).
  returned: always
  type: list
  elements: dict
  contains:
    job_id:
      description: Job id (C(123), or C(123_4) for an array task).
      type: str
    user:
      description: Owner of the job.
      type: str
    name:
      description: Job name.
      type: str
    state:
      description: Job state, for example C(RUNNING) or C(COMPLETING).
      type: str
    partition:
      description: Partition of the job.
      type: str
  sample: [{job_id: "41", user: alice, name: train, state: RUNNING, partition: gpu}]
waited:
  description: Seconds spent waiting for the node to be idle (I(wait_idle)).
  returned: always
  type: float
before:
  description: The node's state and reason before the action.
  returned: always
  type: dict
  sample: {state: MIXED, reason: ""}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import slurm_node_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', default='query', choices=['drain', 'resume', 'down', 'query']),
            reason=dict(type='str'),
            reason_prefix=dict(type='str', default='gpufleet'),
            run_id=dict(type='str', default='adhoc'),
            failure=dict(type='bool', default=False),
            passed=dict(type='bool', default=False),
            force=dict(type='bool', default=False),
            wait_idle=dict(type='bool', default=False),
            timeout=dict(type='int', default=3600),
            poll_interval=dict(type='int', default=5),
            scontrol_path=dict(type='path'),
            squeue_path=dict(type='path'),
        ),
        required_if=[('state', 'drain', ['reason']), ('state', 'down', ['reason'])],
        supports_check_mode=True,
    )
    name = engine.refuse_bad_input(module)
    failed, result = engine.manage(module, name)
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
