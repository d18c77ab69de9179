# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of gpufleet.cluster.roce_qos: check the input and the host, read the current state, compute
the managed subset's diff and plan, apply it (persistence file first), read it back, gather the facts.

``run(params, check_mode, diff, find, write)`` returns the module result or raises ``Failure`` (the
message names the option; ``result`` holds ``changed`` and, after a partial apply, ``applied``). The two
callbacks are the only ties to Ansible: ``find(name)`` is the executable lookup (``_runner.find``) and
``write(path, text)`` the atomic file write (``atomic_write.write_text``; None or why it failed).

Tool commands run through ``_runner``, kernel files are read through ``_sysfs``; the output parsers are
``dcb.py`` and ``mlnx_qos.py``, the sysfs/configfs layout is ``roce_sysfs.py``. Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure
from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import dcb as dcb_utils
from ansible_collections.gpufleet.cluster.plugins.module_utils import mlnx_qos as mlnx_utils
from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_sysfs

TOOL_KEYS = ("trust", "pfc", "tc_tsa", "tc_bw", "prio_tc")
CM_KEYS = ("dscp", "roce_tos", "roce_mode")
PERSIST_FORMAT = "gpufleet.roce_qos/2"
PFC_ALLOWED = "a list of priorities (integers 0-7, for example [3]) or 8 booleans (priority 0 first)"
_PRIO_RE = re.compile(r"^\s*[0-7]\s*$")
_UINT_RE = re.compile(r"^\s*[0-9]+\s*$")


class ToolError(Exception):
    """A QoS tool command that failed; the message holds the command line."""

    def __init__(self, argv, rc, out, err):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        Exception.__init__(self, "%s failed (rc %d): %s" % (" ".join(argv), rc, (err or out or "").strip()))


# ---------------------------------------------------------------- input
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


def input_problems(p):
    """Every problem of the input, each naming the option ([] when none), before anything is read or
    changed. ``p['pfc']`` is normalized to 8 booleans in place when it is valid."""
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
    return errors


# ---------------------------------------------------------------- the host, read-only
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
                have = [n for n in _sysfs.listdir(base) if n != "enable" and os.path.isfile(os.path.join(base, n))]
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
            ports = _sysfs.listdir(os.path.join(ib_dir, "ports"))
            errors.append("port: %d is not a port of %s; allowed are %s" % (p["port"], device, ", ".join(ports) or "none"))
        if not os.path.isdir(os.path.join(p["configfs_root"], "rdma_cm")):
            errors.append("configfs_root: %s has no rdma_cm/ (is configfs mounted and rdma_cm loaded?)"
                          % p["configfs_root"])
    return errors


def wants_rdma_cm(p):
    """Whether an RDMA-CM default (dscp, roce_tos, roce_mode) is managed."""
    return any(p[key] is not None for key in CM_KEYS)


def check_host(p):
    """The RDMA device to use (the option, else the netdev's first); Failure naming the option when the
    host does not have what the input names."""
    interface = p["interface"]
    if not os.path.isdir(os.path.join(p["sysfs_root"], "sys", "class", "net", interface)):
        raise Failure("interface: netdev %s not found under %s/sys/class/net" % (
            interface, p["sysfs_root"].rstrip("/")), changed=False)
    device = p["device"] or (roce_sysfs.rdma_device_for(p["sysfs_root"], interface) or [None])[0]
    wants_cm = wants_rdma_cm(p)
    if wants_cm and not device:
        raise Failure("device: no RDMA device found for %s (set device) but RDMA-CM defaults (dscp, "
                      "roce_tos, roce_mode) are requested" % interface, changed=False)
    errors = host_problems(p, interface, device, wants_cm)
    if errors:
        raise Failure("; ".join(errors), changed=False)
    return device


# ---------------------------------------------------------------- the QoS tool
class Tool(object):
    """mlnx_qos or iproute2 dcb at ``binary``: read the state, build and run the set commands."""

    def __init__(self, kind, binary):
        self.kind, self.binary = kind, binary
        self.app = {}

    def run(self, argv):
        """stdout of ``argv`` (LC_ALL=C, through the collection's runner); ToolError when it failed."""
        res = _runner.run(argv)
        if _runner.failure(res):
            raise ToolError(argv, res["rc"], res["stdout"], res["stderr"])
        return res["stdout"]

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


def find_tool(p, find):
    """The Tool to use (``find(name)`` is the executable lookup: a path is checked as is, a name looked
    up on PATH); None when no tool option is given and none is installed, else Failure."""
    order = ["mlnx_qos", "dcb"] if p["tool"] == "auto" else [p["tool"]]
    for kind in order:
        found = find(p[kind + "_path"] or kind)
        if found:
            return Tool(kind, found)
    if any(p[k] is not None for k in TOOL_KEYS):
        raise Failure("no QoS tool found (tool=%s; tried %s): install mlnx-tools or iproute2 dcb, "
                      "or set dcb_path/mlnx_qos_path" % (p["tool"], ", ".join(order)), changed=False)
    return None


def read_tool(p, tool):
    """The tool's current state ({} without a tool); Failure when it fails or when a managed value
    cannot be read from its output (then no change can be computed)."""
    try:
        current = tool.read(p["interface"]) if tool else {}
    except ToolError as exc:
        raise Failure(str(exc), changed=False, rc=exc.rc, stdout=exc.out, stderr=exc.err, cmd=exc.argv)
    unread = [key for key in TOOL_KEYS if p[key] is not None and current.get(key) is None]
    if unread:
        raise Failure("%s: the current value cannot be read from the %s output for %s (not understood), "
                      "so no change is computed; nothing was changed"
                      % (", ".join(unread), tool.kind, p["interface"]), changed=False)
    return current


# ---------------------------------------------------------------- wanted state, diff and plan
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
    """Text of the persistence file (format ``gpufleet.roce_qos/2``, read by the role's boot replay)."""
    settings = {}
    for key in TOOL_KEYS + ("ecn_np", "ecn_rp", "dcqcn_np", "dcqcn_rp", "dscp", "roce_tos", "roce_mode"):
        if p[key] is not None:
            value = p[key]
            if key in ("ecn_np", "ecn_rp"):
                value = sorted(set(value))
            if key in ("dcqcn_np", "dcqcn_rp"):
                value = dict((k, _uint(v)) for k, v in value.items())
            settings[key] = value
    wants_cm = any(k in settings for k in CM_KEYS)
    replay = {"mkdir": [os.path.join(p["configfs_root"], "rdma_cm", device)] if wants_cm and device else [],
              "commands": replay_commands(tool, p["interface"], settings),
              "writes": [{"path": path, "value": value} for path, (dummy, value) in sorted(sysfs_map.items())]}
    doc = {"format": PERSIST_FORMAT, "interface": p["interface"], "device": device, "port": p["port"],
           "tool": tool.kind if tool else None, "sysfs_root": p["sysfs_root"],
           "configfs_root": p["configfs_root"], "settings": settings, "replay": replay}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def compare(p, current, sysfs_map):
    """(before, after, tool_changes, file_writes) of the managed subset."""
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
        have = _sysfs.read_text(path)
        before[key] = have
        after[key] = value
        if have != value:
            writes.append({"path": path, "value": value})
    return before, after, changes, writes


def make_plan(p, tool, device, current):
    """What to do: {before, after (the diff), changed, commands, writes, sysfs_map, wants_cm,
    persist_changed, persist_text}."""
    sysfs_map = sysfs_wanted(p, p["sysfs_root"], p["interface"], p["configfs_root"], device)
    before, after, changes, writes = compare(p, current, sysfs_map)
    plan = {"before": before, "after": after, "writes": writes, "sysfs_map": sysfs_map,
            "commands": tool.argvs(p["interface"], changes) if changes else [],
            "wants_cm": wants_rdma_cm(p), "persist_changed": False, "persist_text": None}
    if p["persist_path"]:
        plan["persist_text"] = persist_text(p, tool, device, sysfs_map)
        plan["persist_changed"] = _sysfs.read_text(p["persist_path"]) != plan["persist_text"].strip()
        before["persist_path"] = p["persist_path"] if not plan["persist_changed"] else None
        after["persist_path"] = p["persist_path"]
    plan["changed"] = bool(changes or writes or plan["persist_changed"])
    return plan


# ---------------------------------------------------------------- act
def describe_applied(applied):
    parts = []
    if applied["persist_path"]:
        parts.append("persist_path %s written" % applied["persist_path"])
    parts += ["ran %s" % " ".join(argv) for argv in applied["commands"]]
    parts += ["made %s" % path for path in applied["mkdir"]]
    parts += ["wrote %s to %s" % (w["value"], w["path"]) for w in applied["writes"]]
    return "; ".join(parts)


def apply_changes(p, tool, device, plan, write):
    """Act on a computed plan: persistence file first (a failure there changes nothing), then the tool
    commands, the RDMA-CM directory and the sysfs/configfs writes, then the read-back. A failure after
    something was applied is a Failure with ``changed=true`` and ``applied``."""
    applied = {"persist_path": None, "commands": [], "mkdir": [], "writes": []}

    def failure(msg):
        did = bool(applied["persist_path"] or applied["commands"] or applied["mkdir"] or applied["writes"])
        if did:
            msg = "%s; applied before this failure: %s" % (msg, describe_applied(applied))
        return Failure(msg, changed=did, applied=applied, commands=plan["commands"], writes=plan["writes"])

    if plan["persist_changed"]:
        why = write(p["persist_path"], plan["persist_text"])
        if why:
            raise failure("persist_path: cannot write %s: %s" % (p["persist_path"], why))
        applied["persist_path"] = p["persist_path"]
    for argv in plan["commands"]:
        try:
            tool.run(argv)
        except ToolError as exc:
            raise failure(str(exc))
        applied["commands"].append(argv)
    if plan["writes"] and plan["wants_cm"]:
        cm_dir = os.path.join(p["configfs_root"], "rdma_cm", device)
        if not os.path.isdir(cm_dir):
            try:
                roce_sysfs.ensure_rdma_cm_dir(p["configfs_root"], device)
            except OSError as exc:
                raise failure("cannot create %s: %s" % (cm_dir, exc))
            applied["mkdir"].append(cm_dir)
    for item in plan["writes"]:
        try:
            roce_sysfs.write_value(item["path"], item["value"])
        except (IOError, OSError) as exc:
            raise failure("cannot write %s to %s: %s" % (item["value"], item["path"], exc))
        applied["writes"].append(item)
    # Read back: the kernel may refuse or round a value silently.
    try:
        current = tool.read(p["interface"]) if tool else {}
    except ToolError as exc:
        raise failure("reading the state back: %s" % exc)
    dummy, dummy2, left, left_writes = compare(p, current, plan["sysfs_map"])
    if left or left_writes:
        wrong = sorted(left) + [w["path"] for w in left_writes]
        raise failure("the kernel did not take: %s" % ", ".join(wrong))


# ---------------------------------------------------------------- report
def gather(p, tool, device):
    """The ``roce_qos`` facts: tool state, ECN/DCQCN files, RDMA-CM defaults, GIDs and the NCCL hints."""
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


def run(p, check_mode, diff, find, write):
    """The whole module on its params ``p`` (``pfc`` is normalized in place): the result for exit_json,
    or Failure. Every refusal comes before the first change; nothing is changed in check mode."""
    # 1. Input, then the host, read-only.
    errors = input_problems(p)
    if errors:
        raise Failure("; ".join(errors), changed=False)
    device = check_host(p)
    # 2. Compute the wanted state, the diff and the plan.
    tool = find_tool(p, find)
    plan = make_plan(p, tool, device, read_tool(p, tool))
    # 3. Act (not in check mode) and report.
    result = dict(changed=plan["changed"], commands=plan["commands"], writes=plan["writes"])
    if plan["changed"] and not check_mode:
        apply_changes(p, tool, device, plan, write)
    if plan["changed"] or diff:
        result["diff"] = dict(before=plan["before"], after=plan["after"])
    try:
        facts = gather(p, tool, device)
    except ToolError as exc:
        raise Failure("reading the state for the facts: %s" % exc, **result)
    result["nccl_env"] = facts["nccl_env"]
    result["state"] = facts
    # Deprecated (removed in 2.0.0): one key for every interface, so in a loop the last interface wins.
    result["ansible_facts"] = {"roce_qos": facts}
    return result
