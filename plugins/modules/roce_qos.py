#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Declarative RoCE QoS of one netdev (trust, PFC, ETS, ECN/DCQCN, RDMA-CM ToS)
version_added: 0.1.0
description:
  - Makes the lossless-RoCE settings of one RoCE netdev what they should be, and reports them.
    A RoCE fabric collapses unless MTU, PFC, trust mode, ToS and ECN/DCQCN agree on every node.
  - Reads the current state with C(mlnx_qos -i IF) or iproute2 C(dcb) (C(dcb -j pfc show),
    C(dcb -j ets show), C(dcb app show)), the C(ecn/) files of the netdev in sysfs and the
    RDMA-CM defaults in configfs.
  - Only the options that are given are managed; the diff (C(--diff)) shows before and after of
    exactly that subset. Only what differs is applied; afterwards the state is read again and the
    module fails naming every value the kernel did not take.
  - Every option is checked, and the host is looked at (netdev, RDMA device and port, the C(ecn/)
    files named), before the first change; a refusal names the option and what is allowed.
  - Order of the changes - I(persist_path) first (a failure to write it changes nothing else), then the
    tool commands, the RDMA-CM directory and the sysfs/configfs files. When a step fails after an
    earlier one was applied, the module fails with C(changed=true) and returns C(applied).
  - With I(tool=dcb), trust follows the mlx5 driver rule - DSCP trust while the APP table holds a
    C(dscp-prio) entry - so I(trust=dscp) adds the map DSCP d -> priority d>>3 and I(trust=pcp)
    removes the DSCP entries.
  - Settings made here do not survive a reboot; I(persist_path) keeps the wanted state in a JSON file
    (format in docs/network-tuning.md) for a boot-time re-apply. Besides the settings the file holds a
    C(replay) plan - absolute tool command lines (C(dcb app replace)/C(flush) rather than add/del) and
    the sysfs/configfs values - that a program without Ansible can run again and again with the same
    result, as the role C(gpufleet.cluster.roce_qos) does at boot.
  - Returns the NCCL hints C(NCCL_IB_TC) (the RoCE ToS, DSCP<<2) and C(NCCL_IB_GID_INDEX) (the
    RoCE v2 GID entry holding an IPv4 address of the netdev).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.cluster.hardware_roots
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  interface:
    description:
      - RoCE netdev, for example C(ens1f0np0). A plain name - 1-15 characters without C(/), NUL,
        whitespace or C(..) - that must exist in C(SYSFS_ROOT/sys/class/net/).
    type: str
    required: true
  device:
    description:
      - RDMA device of I(interface) (C(mlx5_0)). Default is the first entry of
        C(/sys/class/net/IF/device/infiniband/).
      - A plain name - 1-63 characters without C(/), NUL, whitespace or C(..). With I(dscp),
        I(roce_tos) or I(roce_mode) it must exist in C(SYSFS_ROOT/sys/class/infiniband/).
    type: str
  port:
    description:
      - RDMA port number (1 or more) for the RDMA-CM defaults and the GID table. With I(dscp),
        I(roce_tos) or I(roce_mode) it must be a port of I(device) in sysfs.
    type: int
    default: 1
  tool:
    description:
      - Tool that reads and sets trust, PFC and ETS. C(auto) uses C(mlnx_qos) when it is installed,
        else C(dcb).
      - No tool is needed when none of I(trust), I(pfc), I(tc_tsa), I(tc_bw), I(prio_tc) is given;
        the tool part of the facts is then empty when none is installed.
    type: str
    choices: [auto, dcb, mlnx_qos]
    default: auto
  dcb_path:
    description: Path of C(dcb). Default is C(dcb) from C(PATH).
    type: path
  mlnx_qos_path:
    description: Path of C(mlnx_qos). Default is C(mlnx_qos) from C(PATH).
    type: path
  trust:
    description: Priority trust mode.
    type: str
    choices: [dscp, pcp]
  pfc:
    description:
      - PFC per priority. Either a list of 8 booleans (priority 0 first) or the list of priorities
        (integers 0-7) that have PFC on; the other priorities get it off. C([]) turns PFC off.
      - Priorities must be whole numbers 0-7 (or strings of one such digit); C(3.7), C(8) or C(true)
        mixed with numbers are refused.
    type: list
    elements: raw
  tc_tsa:
    description: Transmission selection algorithm of the 8 traffic classes.
    type: list
    elements: str
  tc_bw:
    description:
      - ETS bandwidth percentage (0-100) of the 8 traffic classes.
      - When I(tc_tsa) is given too and names C(ets) classes, their shares must add up to 100.
    type: list
    elements: int
  prio_tc:
    description: Traffic class of each of the 8 priorities.
    type: list
    elements: int
  ecn_np:
    description:
      - Priorities with ECN enabled at the notification point (C(ecn/roce_np/enable/PRIO)); the
        others are disabled.
    type: list
    elements: int
  ecn_rp:
    description:
      - Priorities with ECN enabled at the reaction point (C(ecn/roce_rp/enable/PRIO)); the others are
        disabled.
    type: list
    elements: int
  dcqcn_np:
    description:
      - Notification-point parameter files of C(ecn/roce_np/) and their values, for example C(cnp_dscp).
      - Each name must be a file there; each value a whole number 0 or more (C(cnp_dscp) 0-63,
        C(cnp_802p_prio) 0-7).
    type: dict
  dcqcn_rp:
    description:
      - Reaction-point parameter files of C(ecn/roce_rp/) and their values, for example C(rpg_time_reset).
      - Each name must be a file there; each value a whole number 0 or more.
    type: dict
  dscp:
    description:
      - DSCP (0-63) of the RoCE traffic. Sets C(default_roce_tos) to DSCP<<2 and is the base of the
        C(NCCL_IB_TC) hint. Mutually exclusive with I(roce_tos).
    type: int
  roce_tos:
    description: RDMA-CM C(default_roce_tos) (0-255).
    type: int
  roce_mode:
    description: RDMA-CM C(default_roce_mode).
    type: str
    choices: ['RoCE v2', 'IB/RoCE v1']
  configfs_root:
    description:
      - Mount point of configfs (an absolute path); C(rdma_cm/DEV/ports/N/) is read below it. With
        I(dscp), I(roce_tos) or I(roce_mode) it must hold C(rdma_cm/).
    type: path
    default: /sys/kernel/config
  persist_path:
    description:
      - Write the wanted state to this JSON file (for example C(/etc/gpufleet/roce_qos/IF.json)) for a
        boot-time re-apply. Written only when its content differs, before any setting is applied.
      - An absolute path of a file (not a directory); missing parent directories are created.
      - Format C(gpufleet.roce_qos/2) - keys C(interface), C(device), C(port), C(tool), C(sysfs_root),
        C(configfs_root), C(settings) (the options given) and C(replay) with C(mkdir) (configfs
        directories to create), C(commands) (argv lists, run in order) and C(writes) (C(path)/C(value)).
    type: path
"""

EXAMPLES = r"""
- name: Lossless RoCE on priority 3, DSCP 26, ECN on priority 3
  gpufleet.cluster.roce_qos:
    interface: ens1f0np0
    trust: dscp
    pfc: [3]
    ecn_np: [3]
    ecn_rp: [3]
    dcqcn_np:
      cnp_dscp: 48
      cnp_802p_prio: 6
    dscp: 26
    roce_mode: RoCE v2
    persist_path: /etc/gpufleet/roce_qos/ens1f0np0.json
  register: qos

- name: Use the hints
  ansible.builtin.debug:
    msg: "NCCL_IB_TC={{ qos.nccl_env.NCCL_IB_TC }} NCCL_IB_GID_INDEX={{ qos.nccl_env.NCCL_IB_GID_INDEX }}"

- name: Only read the state, with iproute2 dcb
  gpufleet.cluster.roce_qos:
    interface: ens1f0np0
    tool: dcb
"""

RETURN = r"""
changed:
  description: Whether a setting (or the persistence file) was, or in check mode would be, changed.
  returned: always
  type: bool
commands:
  description: Tool command lines run, or in check mode that would run.
  returned: always
  type: list
  elements: list
  sample: [["mlnx_qos", "-i", "ens1f0np0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"]]
writes:
  description: sysfs/configfs files written (or that would be), with the value.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3", "value": "1"}]
nccl_env:
  description: NCCL hints; a value is null when it cannot be derived.
  returned: always
  type: dict
  sample: {"NCCL_IB_TC": 104, "NCCL_IB_GID_INDEX": 3}
diff:
  description: Managed settings before and after.
  returned: when changed or in diff mode
  type: dict
applied:
  description:
    - What was applied before a failure - C(persist_path) (the file written, or null), C(commands)
      (argvs run), C(mkdir) (configfs directories made), C(writes) (C(path)/C(value)). C(changed) is
      true when any of them is non-empty.
  returned: when a step failed after the changes had begun
  type: dict
  sample: {"persist_path": null, "commands": [["dcb", "pfc", "set", "dev", "ens1f0np0", "prio-pfc", "0:off"]],
           "mkdir": [], "writes": []}
state:
  description:
    - Current QoS state (after the change; in check mode before it) of the netdev O(interface). Keys
      C(interface), C(device), C(port), C(tool), C(trust), C(pfc) (8 booleans),
      C(pfc_enabled) (priorities), C(tc_tsa), C(tc_bw), C(prio_tc), C(dscp2prio), C(ecn)
      (C(np)/C(rp) with C(enable) and C(params)), C(rdma_cm), C(gids), C(nccl_env); keys whose
      source is missing are absent or null.
    - Register it per interface; the role C(gpufleet.cluster.roce_qos) collects it in C(roce_qos_state), keyed by
      interface.
  returned: always
  type: dict
  version_added: 0.3.0
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: complex
  contains:
    roce_qos:
      description:
        - Deprecated, to be removed in 2.0.0 - the same as RV(state). Every call sets this one key, so in a loop over
          interfaces only the last interface's state is left; use RV(state) instead.
      returned: always
      type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_qos_engine as engine


ARGUMENT_SPEC = dict(
    interface=dict(type="str", required=True),
    device=dict(type="str"),
    port=dict(type="int", default=1),
    tool=dict(type="str", default="auto", choices=["auto", "dcb", "mlnx_qos"]),
    dcb_path=dict(type="path"),
    mlnx_qos_path=dict(type="path"),
    trust=dict(type="str", choices=["dscp", "pcp"]),
    pfc=dict(type="list", elements="raw"),
    tc_tsa=dict(type="list", elements="str"),
    tc_bw=dict(type="list", elements="int"),
    prio_tc=dict(type="list", elements="int"),
    ecn_np=dict(type="list", elements="int"),
    ecn_rp=dict(type="list", elements="int"),
    dcqcn_np=dict(type="dict"),
    dcqcn_rp=dict(type="dict"),
    dscp=dict(type="int"),
    roce_tos=dict(type="int"),
    roce_mode=dict(type="str", choices=["RoCE v2", "IB/RoCE v1"]),
    sysfs_root=dict(type="path", default="/"),
    configfs_root=dict(type="path", default="/sys/kernel/config"),
    persist_path=dict(type="path"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=[["dscp", "roce_tos"]],
                           supports_check_mode=True)

    def find(name):
        return _runner.find(module, name)

    def write(path, text):
        return atomic_write.write_text(module, path, text, prefix=".roce_qos.")

    try:
        result = engine.run(module.params, module.check_mode, module._diff, find, write)
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
