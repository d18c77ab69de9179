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
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: complex
  contains:
    roce_qos:
      description:
        - Current QoS state (after the change; in check mode before it) of the netdev. Keys
          C(interface), C(device), C(port), C(tool), C(trust), C(pfc) (8 booleans),
          C(pfc_enabled) (priorities), C(tc_tsa), C(tc_bw), C(prio_tc), C(dscp2prio), C(ecn)
          (C(np)/C(rp) with C(enable) and C(params)), C(rdma_cm), C(gids), C(nccl_env); keys whose
          source is missing are absent or null.
      returned: always
      type: dict
"""

import json
import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import dcb as dcb_utils
from ansible_collections.gpufleet.cluster.plugins.module_utils import mlnx_qos as mlnx_utils
from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_sysfs

TOOL_KEYS = ("trust", "pfc", "tc_tsa", "tc_bw", "prio_tc")
PERSIST_FORMAT = "gpufleet.roce_qos/2"
PFC_ALLOWED = "a list of priorities (integers 0-7, for example [3]) or 8 booleans (priority 0 first)"
_PRIO_RE = re.compile(r"^\s*[0-7]\s*$")
_UINT_RE = re.compile(r"^\s*[0-9]+\s*$")


class ToolError(Exception):
    """A QoS tool command that failed; the message holds the command line."""

    def __init__(self, argv, rc, out, err):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        Exception.__init__(self, "%s failed (rc %d): %s" % (" ".join(argv), rc, (err or out or "").strip()))


def _prio(item):
    """Priority 0-7 of one ``pfc`` item; None for anything else (booleans, fractions, 8, '3.7')."""
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item if 0 <= item <= 7 else None
    if isinstance(item, str) and _PRIO_RE.match(item):
        return int(item)
    return None


def _uint(value):
    """Non-negative integer of a DCQCN value (int or digit string); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and _UINT_RE.match(value):
        return int(value)
    return None


def normalize_pfc(value):
    """8 booleans, or priorities -> 8 booleans; ValueError naming pfc and what is allowed otherwise."""
    if value is None:
        return None
    if len(value) == 8 and all(isinstance(v, bool) or (isinstance(v, str) and not v.strip().isdigit()) for v in value):
        try:
            return [boolean(v) for v in value]
        except (TypeError, ValueError):
            raise ValueError("pfc: %r is not 8 booleans; allowed is %s" % (value, PFC_ALLOWED))
    bad = [item for item in value if _prio(item) is None]
    if bad:
        raise ValueError("pfc: %s %s not a priority 0-7; allowed is %s, got %r" % (
            ", ".join(repr(b) for b in bad), "is" if len(bad) == 1 else "are", PFC_ALLOWED, value))
    prios = set(_prio(item) for item in value)
    return [p in prios for p in range(8)]


def persist_path_problem(path):
    """Why ``path`` cannot be the persistence file (read-only look), or None."""
    if not os.path.isabs(path):
        return "an absolute file path is needed (for example /etc/gpufleet/roce_qos/IF.json), got %r" % path
    if path.endswith("/") or os.path.isdir(path):
        return "%s is a directory; a file path is needed (for example %s/IF.json)" % (path, path.rstrip("/"))
    return atomic_write.file_problem(path)


def validate(module):
    """Refuse bad input before anything is read or changed; every message names the option."""
    p = module.params
    errors = []
    for key, max_len, what in (("interface", roce_sysfs.NETDEV_NAME_MAX, "netdev name like ens1f0np0"),
                               ("device", roce_sysfs.RDMA_NAME_MAX, "RDMA device name like mlx5_0")):
        if p[key] is None and key == "device":
            continue
        why = roce_sysfs.name_problem(p[key], max_len)
        if why:
            errors.append("%s: %r is not a plain %s (%s); allowed are 1-%d characters without '/', NUL, "
                          "whitespace or '..'" % (key, p[key], what, why, max_len))
    if p["port"] < 1:
        errors.append("port: an RDMA port number >= 1 is needed, got %d" % p["port"])
    try:
        p["pfc"] = normalize_pfc(p["pfc"])
    except (TypeError, ValueError) as exc:
        errors.append(str(exc))
    for key, low, high in (("tc_bw", 0, 100), ("prio_tc", 0, 7)):
        if p[key] is not None and (len(p[key]) != 8 or any(v < low or v > high for v in p[key])):
            errors.append("%s: 8 integers %d-%d are needed, got %r" % (key, low, high, p[key]))
    tsa_ok = ("strict", "ets", "vendor")
    if p["tc_tsa"] is not None and (len(p["tc_tsa"]) != 8 or any(v not in tsa_ok for v in p["tc_tsa"])):
        errors.append("tc_tsa: 8 of strict, ets, vendor are needed, got %r" % (p["tc_tsa"],))
    elif p["tc_tsa"] is not None and p["tc_bw"] is not None and len(p["tc_bw"]) == 8 and "ets" in p["tc_tsa"]:
        share = sum(bw for bw, tsa in zip(p["tc_bw"], p["tc_tsa"]) if tsa == "ets")
        if share != 100:
            errors.append("tc_bw: the shares of the ets traffic classes must add up to 100 (IEEE 802.1Qaz), "
                          "got %d for %r" % (share, p["tc_bw"]))
    for key in ("ecn_np", "ecn_rp"):
        if p[key] is not None and any(v < 0 or v > 7 for v in p[key]):
            errors.append("%s: priorities 0-7 are allowed, got %r" % (key, p[key]))
    for key in ("dcqcn_np", "dcqcn_rp"):
        for name, value in sorted((p[key] or {}).items()):
            if not roce_sysfs.PARAM_RE.match(name) or name == "enable":
                errors.append("%s: %r is not a parameter file name (lower-case letters, digits, _; not enable)"
                              % (key, name))
                continue
            low, high = roce_sysfs.PARAM_RANGES.get(name, (0, None))
            number = _uint(value)
            if number is None or number < low or (high is not None and number > high):
                errors.append("%s.%s: an integer %s is needed, got %r" % (
                    key, name, "%d-%d" % (low, high) if high is not None else ">= 0", value))
    if p["dscp"] is not None and not 0 <= p["dscp"] <= 63:
        errors.append("dscp: 0-63 is allowed, got %d" % p["dscp"])
    if p["roce_tos"] is not None and not 0 <= p["roce_tos"] <= 255:
        errors.append("roce_tos: 0-255 is allowed, got %d" % p["roce_tos"])
    for key, sub in (("sysfs_root", "sys"), ("configfs_root", None)):
        if not os.path.isabs(p[key]):
            errors.append("%s: an absolute directory path is needed, got %r" % (key, p[key]))
        elif sub and not os.path.isdir(os.path.join(p[key], sub)):
            errors.append("%s: %s has no %s/ directory; allowed is the directory %s/ is below (default /)"
                          % (key, p[key], sub, sub))
    if p["persist_path"] is not None:
        why = persist_path_problem(p["persist_path"])
        if why:
            errors.append("persist_path: %s" % why)
    if errors:
        module.fail_json(msg="; ".join(errors), changed=False)


class Tool(object):
    def __init__(self, module, kind, binary):
        self.module, self.kind, self.binary = module, kind, binary
        self.app = {}

    def run(self, argv):
        rc, out, err = self.module.run_command(argv, environ_update={"LC_ALL": "C"})
        if rc != 0:
            raise ToolError(argv, rc, out, err)
        return out

    def read(self, interface):
        if self.kind == "mlnx_qos":
            state = mlnx_utils.parse(self.run([self.binary, "-i", interface]))
            if "tc_bw" in state:  # mlnx_qos prints no bw for non-ETS classes: their share is 0
                state["tc_bw"] = [bw or 0 for bw in state["tc_bw"]]
            return state
        state = {}
        pfc = dcb_utils.parse_pfc(self.run([self.binary, "-j", "pfc", "show", "dev", interface]))
        if "pfc" in pfc:
            state["pfc"] = pfc["pfc"]
        state.update(dcb_utils.parse_ets(self.run([self.binary, "-j", "ets", "show", "dev", interface])))
        text = self.run([self.binary, "app", "show", "dev", interface])
        self.app = dcb_utils.parse_app(text)
        state["dscp2prio"] = self.app["dscp2prio"]
        state["trust"] = dcb_utils.trust_from_app(self.app) if dcb_utils.app_readable(text) else None
        return state

    def argvs(self, interface, changes):
        if self.kind == "mlnx_qos":
            argv = mlnx_utils.set_argv(self.binary, interface, changes)
            return [argv] if argv else []
        return dcb_utils.set_argvs(self.binary, interface, changes, self.app)


def find_tool(module):
    p = module.params
    wanted = any(p[k] is not None for k in TOOL_KEYS)
    order = ["mlnx_qos", "dcb"] if p["tool"] == "auto" else [p["tool"]]
    for kind in order:
        path = p[kind + "_path"]
        if path:
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return Tool(module, kind, path)
            continue
        found = module.get_bin_path(kind)
        if found:
            return Tool(module, kind, found)
    if wanted:
        module.fail_json(msg="no QoS tool found (tool=%s; tried %s): install mlnx-tools or iproute2 dcb, "
                             "or set dcb_path/mlnx_qos_path" % (p["tool"], ", ".join(order)), changed=False)
    return None


def sysfs_wanted(p, sysfs_root, interface, configfs_root, device):
    """{path: (key, wanted string)} for the managed sysfs/configfs files."""
    out = {}
    for point in roce_sysfs.POINTS:
        prios = p["ecn_" + point]
        if prios is not None:
            for prio in range(8):
                out[roce_sysfs.ecn_enable_path(sysfs_root, interface, point, prio)] = (
                    "ecn_%s[%d]" % (point, prio), "1" if prio in prios else "0")
        for name, value in sorted((p["dcqcn_" + point] or {}).items()):
            out[roce_sysfs.ecn_param_path(sysfs_root, interface, point, name)] = (
                "dcqcn_%s.%s" % (point, name), str(_uint(value)))
    tos = p["roce_tos"] if p["roce_tos"] is not None else (p["dscp"] << 2 if p["dscp"] is not None else None)
    base = roce_sysfs.rdma_cm_port_dir(configfs_root, device, p["port"]) if device else None
    if tos is not None:
        out[os.path.join(base, "default_roce_tos")] = ("roce_tos", str(tos))
    if p["roce_mode"] is not None:
        out[os.path.join(base, "default_roce_mode")] = ("roce_mode", p["roce_mode"])
    return out


def host_problems(p, interface, device, wants_cm):
    """Read-only checks of the host against the input (before any change); messages name the option."""
    errors = []
    root = p["sysfs_root"].rstrip("/")
    for point in roce_sysfs.POINTS:
        base = roce_sysfs.ecn_dir(p["sysfs_root"], interface, point)
        if p["ecn_" + point] is not None or p["dcqcn_" + point]:
            if not os.path.isdir(base):
                errors.append("ecn_%s/dcqcn_%s: %s has no ecn/roce_%s in sysfs (not an mlx5 RoCE netdev?)"
                              % (point, point, interface, point))
                continue
        if p["ecn_" + point] is not None:
            missing = [str(prio) for prio in range(8)
                       if not os.path.isfile(roce_sysfs.ecn_enable_path(p["sysfs_root"], interface, point, prio))]
            if missing:
                errors.append("ecn_%s: %s has no ecn/roce_%s/enable/%s" % (point, interface, point, ",".join(missing)))
        for name in sorted(p["dcqcn_" + point] or {}):
            if not os.path.isfile(roce_sysfs.ecn_param_path(p["sysfs_root"], interface, point, name)):
                have = sorted(n for n in os.listdir(base) if n != "enable" and os.path.isfile(os.path.join(base, n)))
                errors.append("dcqcn_%s: %r is not a parameter of %s; allowed are the files of ecn/roce_%s: %s"
                              % (point, name, interface, point, ", ".join(have) or "none"))
    if wants_cm:
        ib_dir = os.path.join(p["sysfs_root"], "sys", "class", "infiniband", device)
        cm_dev = os.path.join(p["configfs_root"], "rdma_cm", device)
        if not os.path.isdir(ib_dir):
            errors.append("device: %s is not an RDMA device of this host (no %s/sys/class/infiniband/%s)"
                          % (device, root, device))
        elif not os.path.isdir(os.path.join(ib_dir, "ports", str(p["port"]))) or \
                (os.path.isdir(cm_dev) and not os.path.isdir(os.path.join(cm_dev, "ports", str(p["port"])))):
            ports = sorted(os.listdir(os.path.join(ib_dir, "ports"))) if os.path.isdir(os.path.join(ib_dir, "ports")) else []
            errors.append("port: %d is not a port of %s; allowed are %s" % (p["port"], device, ", ".join(ports) or "none"))
        if not os.path.isdir(os.path.join(p["configfs_root"], "rdma_cm")):
            errors.append("configfs_root: %s has no rdma_cm/ (is configfs mounted and rdma_cm loaded?)"
                          % p["configfs_root"])
    return errors


def read_file(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def gather(module, tool, device):
    p = module.params
    facts = {"interface": p["interface"], "device": device, "port": p["port"],
             "tool": tool.kind if tool else None}
    if tool:
        facts.update(tool.read(p["interface"]))
    if facts.get("pfc") is not None:
        facts["pfc_enabled"] = [i for i, on in enumerate(facts["pfc"]) if on]
    facts["ecn"] = roce_sysfs.read_ecn(p["sysfs_root"], p["interface"])
    facts["rdma_cm"] = roce_sysfs.read_rdma_cm(p["configfs_root"], device, p["port"]) if device else {}
    facts["gids"] = roce_sysfs.read_gids(p["sysfs_root"], device, p["port"]) if device else []
    tos = facts["rdma_cm"].get("default_roce_tos")
    if tos is None and p["dscp"] is not None:
        tos = p["dscp"] << 2
    facts["nccl_env"] = {"NCCL_IB_TC": tos,
                         "NCCL_IB_GID_INDEX": roce_sysfs.roce_v2_ipv4_gid_index(facts["gids"], p["interface"])}
    return facts


def replay_commands(tool, interface, settings):
    """Absolute tool argvs that set ``settings`` from any state, safe to run again (boot replay)."""
    wanted = dict((k, settings[k]) for k in TOOL_KEYS if k in settings)
    if not tool or not wanted:
        return []
    if tool.kind == "mlnx_qos":
        return [mlnx_utils.set_argv(tool.binary, interface, wanted)]
    argvs = dcb_utils.set_argvs(tool.binary, interface, dict((k, v) for k, v in wanted.items() if k != "trust"))
    if "trust" in wanted:
        argvs.append(dcb_utils.replay_trust_argv(tool.binary, interface, wanted["trust"]))
    return argvs


def persist_text(p, tool, device, sysfs_map):
    settings = {}
    for key in TOOL_KEYS + ("ecn_np", "ecn_rp", "dcqcn_np", "dcqcn_rp", "dscp", "roce_tos", "roce_mode"):
        if p[key] is not None:
            value = p[key]
            if key in ("ecn_np", "ecn_rp"):
                value = sorted(set(value))
            if key in ("dcqcn_np", "dcqcn_rp"):
                value = dict((k, _uint(v)) for k, v in value.items())
            settings[key] = value
    wants_cm = any(k in settings for k in ("dscp", "roce_tos", "roce_mode"))
    replay = {"mkdir": [os.path.join(p["configfs_root"], "rdma_cm", device)] if wants_cm and device else [],
              "commands": replay_commands(tool, p["interface"], settings),
              "writes": [{"path": path, "value": value} for path, (dummy, value) in sorted(sysfs_map.items())]}
    doc = {"format": PERSIST_FORMAT, "interface": p["interface"], "device": device, "port": p["port"],
           "tool": tool.kind if tool else None, "sysfs_root": p["sysfs_root"],
           "configfs_root": p["configfs_root"], "settings": settings, "replay": replay}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def compare(module, tool, current, sysfs_map):
    """(before, after, tool_changes, file_writes) of the managed subset."""
    p = module.params
    before, after, changes, writes = {}, {}, {}, []
    for key in TOOL_KEYS:
        if p[key] is None:
            continue
        have = current.get(key)
        before[key] = have
        after[key] = p[key]
        if have != p[key]:
            changes[key] = p[key]
    for path, (key, value) in sorted(sysfs_map.items()):
        have = read_file(path)
        before[key] = have
        after[key] = value
        if have != value:
            writes.append({"path": path, "value": value})
    return before, after, changes, writes


def describe_applied(applied):
    parts = []
    if applied["persist_path"]:
        parts.append("persist_path %s written" % applied["persist_path"])
    parts += ["ran %s" % " ".join(argv) for argv in applied["commands"]]
    parts += ["made %s" % path for path in applied["mkdir"]]
    parts += ["wrote %s to %s" % (w["value"], w["path"]) for w in applied["writes"]]
    return "; ".join(parts)


def apply_changes(module, tool, interface, device, plan):
    """Act on a computed plan: persistence file first (a failure there changes nothing), then the tool
    commands, the RDMA-CM directory and the sysfs/configfs writes, then the read-back. A failure after
    something was applied reports ``changed=true`` and ``applied``."""
    p = module.params
    applied = {"persist_path": None, "commands": [], "mkdir": [], "writes": []}

    def fail(msg):
        did = bool(applied["persist_path"] or applied["commands"] or applied["mkdir"] or applied["writes"])
        if did:
            msg = "%s; applied before this failure: %s" % (msg, describe_applied(applied))
        module.fail_json(msg=msg, changed=did, applied=applied, commands=plan["commands"], writes=plan["writes"])

    if plan["persist_changed"]:
        why = atomic_write.write_text(module, p["persist_path"], plan["persist_text"], prefix=".roce_qos.")
        if why:
            fail("persist_path: cannot write %s: %s" % (p["persist_path"], why))
        applied["persist_path"] = p["persist_path"]
    for argv in plan["commands"]:
        try:
            tool.run(argv)
        except ToolError as exc:
            fail(str(exc))
        applied["commands"].append(argv)
    if plan["writes"] and plan["wants_cm"]:
        cm_dir = os.path.join(p["configfs_root"], "rdma_cm", device)
        if not os.path.isdir(cm_dir):
            try:
                roce_sysfs.ensure_rdma_cm_dir(p["configfs_root"], device)
            except OSError as exc:
                fail("cannot create %s: %s" % (cm_dir, exc))
            applied["mkdir"].append(cm_dir)
    for item in plan["writes"]:
        try:
            roce_sysfs.write_value(item["path"], item["value"])
        except (IOError, OSError) as exc:
            fail("cannot write %s to %s: %s" % (item["value"], item["path"], exc))
        applied["writes"].append(item)
    # Read back: the kernel may refuse or round a value silently.
    try:
        current = tool.read(interface) if tool else {}
    except ToolError as exc:
        fail("reading the state back: %s" % exc)
    dummy, dummy2, left, left_writes = compare(module, tool, current, plan["sysfs_map"])
    if left or left_writes:
        wrong = sorted(left) + [w["path"] for w in left_writes]
        fail("the kernel did not take: %s" % ", ".join(wrong))


def main():
    module = AnsibleModule(
        argument_spec=dict(
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
        ),
        mutually_exclusive=[["dscp", "roce_tos"]],
        supports_check_mode=True,
    )
    # 1. Input, then the host, read-only: every refusal comes before the first change.
    validate(module)
    p = module.params
    interface = p["interface"]
    if not os.path.isdir(os.path.join(p["sysfs_root"], "sys", "class", "net", interface)):
        module.fail_json(msg="interface: netdev %s not found under %s/sys/class/net" % (
            interface, p["sysfs_root"].rstrip("/")), changed=False)
    device = p["device"] or (roce_sysfs.rdma_device_for(p["sysfs_root"], interface) or [None])[0]
    wants_cm = p["dscp"] is not None or p["roce_tos"] is not None or p["roce_mode"] is not None
    if wants_cm and not device:
        module.fail_json(msg="device: no RDMA device found for %s (set device) but RDMA-CM defaults (dscp, "
                             "roce_tos, roce_mode) are requested" % interface, changed=False)
    errors = host_problems(p, interface, device, wants_cm)
    if errors:
        module.fail_json(msg="; ".join(errors), changed=False)

    # 2. Compute the wanted state, the diff and the plan.
    tool = find_tool(module)
    try:
        current = tool.read(interface) if tool else {}
    except ToolError as exc:
        module.fail_json(msg=str(exc), changed=False, rc=exc.rc, stdout=exc.out, stderr=exc.err, cmd=exc.argv)
    unread = [key for key in TOOL_KEYS if p[key] is not None and current.get(key) is None]
    if unread:
        module.fail_json(msg="%s: the current value cannot be read from the %s output for %s (not understood), "
                             "so no change is computed; nothing was changed"
                             % (", ".join(unread), tool.kind, interface), changed=False)
    sysfs_map = sysfs_wanted(p, p["sysfs_root"], interface, p["configfs_root"], device)
    before, after, changes, writes = compare(module, tool, current, sysfs_map)
    commands = tool.argvs(interface, changes) if changes else []
    plan = {"commands": commands, "writes": writes, "sysfs_map": sysfs_map, "wants_cm": wants_cm,
            "persist_changed": False, "persist_text": None}
    if p["persist_path"]:
        plan["persist_text"] = persist_text(p, tool, device, sysfs_map)
        plan["persist_changed"] = read_file(p["persist_path"]) != plan["persist_text"].strip()
        before["persist_path"] = p["persist_path"] if not plan["persist_changed"] else None
        after["persist_path"] = p["persist_path"]

    # 3. Act (not in check mode) and report.
    changed = bool(changes or writes or plan["persist_changed"])
    result = dict(changed=changed, commands=commands, writes=writes)
    if changed and not module.check_mode:
        apply_changes(module, tool, interface, device, plan)
    if changed or module._diff:
        result["diff"] = dict(before=before, after=after)
    try:
        facts = gather(module, tool, device)
    except ToolError as exc:
        module.fail_json(msg="reading the state for the facts: %s" % exc, **result)
    result["nccl_env"] = facts["nccl_env"]
    result["ansible_facts"] = {"roce_qos": facts}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
