# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of gpufleet.cluster.gpu_settings: check the input, read the GPUs (``nvidia-smi -q -x`` through
the parser of ``nvidia_smi.py``), check every wanted value against what each GPU reports, compute the diff
and the nvidia-smi commands, apply them (persistence file first), read back, and report what needs a reboot.

``run(params, check_mode, diff, find, write)`` returns the module result or raises ``Failure`` (the message
names the option; ``result`` holds ``changed`` and, after a partial apply, ``applied``). ``find(name)`` is the
executable lookup (``_runner.find``), ``write(path, text)`` the atomic file write (``atomic_write.write_text``;
None or why it failed): the only ties to Ansible. Commands run through ``_runner`` as argv lists.

Settings are given per GPU model (the XML's ``product_name``). GPUs of other models are left alone.
What the driver forgets at reboot (persistence mode, power limit, clocks, compute mode) is written to
``persist_path`` for the role's boot replay; ECC and MIG mode are kept by the GPU and take effect after a
reboot (GPU reset), reported as ``reboot_required``. nvidia-smi does not print locked clocks, so the module
keeps what it locked in ``lock_record_path`` (under /run: gone at reboot, like the locks themselves).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure
from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi

PERSIST_FORMAT = "gpufleet.gpu_settings/1"
LOCK_FORMAT = "gpufleet.gpu_settings.locks/1"
NO_GPU = "no GPU"
TIMEOUT = 300
COMPUTE_MODES = {"Default": "0", "Prohibited": "2", "Exclusive_Process": "3"}
ECC_VALUES = ("enabled", "disabled")
SETTING_KEYS = ("persistence_mode", "power_limit_w", "application_clocks", "locked_clocks", "ecc", "compute_mode", "mig")
# Forgotten by the driver at reboot: replayed at boot from persist_path.
VOLATILE_KEYS = ("persistence_mode", "power_limit_w", "application_clocks", "locked_clocks", "compute_mode")
MIG_PROFILE_RE = re.compile(r"^[1-8]g\.[0-9]+gb(\+[a-z0-9.]+)?$")
MIG_PROFILE_ALLOWED = "MIG profile names such as 1g.10gb, 3g.40gb, 7g.80gb or 1g.10gb+me"


class SmiError(Exception):
    """An nvidia-smi command that failed; the message holds the command line."""

    def __init__(self, res, why):
        self.res = res
        Exception.__init__(self, "%s %s" % (res["cmd"], why))


# ---------------------------------------------------------------- input (no host needed)
def _positive(name, value):
    return ac.int_range(name, value, 1, 100000, "MHz" if name.endswith("_mhz") else "W")


def _path_problems(name, value):
    if value is None:
        return []
    if not os.path.isabs(value):
        return ["%s must be an absolute path, got %r" % (name, value)]
    why = atomic_write.file_problem(value)
    return ["%s: %s" % (name, why)] if why else []


def entry_problems(i, entry):
    """Messages for one entry of ``settings`` (its types are checked by the argument spec)."""
    where = "settings[%d]" % i
    errors = []
    model = entry.get("model")
    if not isinstance(model, str) or not model.strip():
        errors.append("%s.model must be the GPU product name as nvidia-smi prints it (for example "
                      "'NVIDIA H100 80GB HBM3'), got %r" % (where, model))
    errors += _positive(where + ".power_limit_w", entry.get("power_limit_w"))
    app, lock = entry.get("application_clocks"), entry.get("locked_clocks")
    if app is not None:
        errors += _positive(where + ".application_clocks.memory_mhz", app.get("memory_mhz"))
        errors += _positive(where + ".application_clocks.graphics_mhz", app.get("graphics_mhz"))
    if lock is not None:
        errors += _positive(where + ".locked_clocks.min_mhz", lock.get("min_mhz"))
        errors += _positive(where + ".locked_clocks.max_mhz", lock.get("max_mhz"))
        if not errors and lock["min_mhz"] > lock["max_mhz"]:
            errors.append("%s.locked_clocks: min_mhz %d is above max_mhz %d; allowed is min_mhz <= max_mhz"
                          % (where, lock["min_mhz"], lock["max_mhz"]))
    if app is not None and lock is not None:
        errors.append("%s: application_clocks and locked_clocks are mutually exclusive (locked clocks supersede "
                      "application clocks); give one of them" % where)
    mig = entry.get("mig")
    if mig is not None:
        instances = mig.get("instances") or []
        if instances and not mig.get("enabled"):
            errors.append("%s.mig.instances needs mig.enabled: true (got %d instance(s) with MIG disabled)"
                          % (where, len(instances)))
        for j, name in enumerate(instances):
            if not isinstance(name, str) or not MIG_PROFILE_RE.match(_profile(name)):
                errors.append("%s.mig.instances[%d]: %r is not a MIG profile name; allowed are %s"
                              % (where, j, name, MIG_PROFILE_ALLOWED))
    return errors


def _profile(name):
    """'MIG 3g.40gb' and '3g.40gb' -> '3g.40gb'."""
    name = name.strip() if isinstance(name, str) else ""
    return name[4:].strip() if name.upper().startswith("MIG ") else name


def input_problems(p):
    errors = ac.nul_errors(p)
    if errors:
        return errors
    errors += ac.executable_errors("nvidia_smi_path", p["nvidia_smi_path"])
    errors += _path_problems("persist_path", p["persist_path"])
    errors += _path_problems("lock_record_path", p["lock_record_path"])
    seen = {}
    for i, entry in enumerate(p["settings"] or []):
        errors += entry_problems(i, entry)
        model = entry.get("model")
        if isinstance(model, str):
            if model in seen:
                errors.append("settings[%d].model %r is also settings[%d].model; each model may appear once"
                              % (i, model, seen[model]))
            seen.setdefault(model, i)
    return errors


# ---------------------------------------------------------------- reading the GPUs
def smi(argv, ok_rcs=(0,)):
    res = _runner.run(argv, timeout=TIMEOUT)
    why = _runner.failure(res, TIMEOUT, ok_rcs)
    if why:
        raise SmiError(res, why)
    return res["stdout"]


def read_gpus(exe):
    """``(parsed, supported_clocks)`` of ``exe -q -x``; raises SmiError or NvidiaSmiParseError."""
    argv = [exe, "-q", "-x"]
    res = _runner.run(argv, timeout=TIMEOUT)
    text = res["stdout"] + "\n" + res["stderr"]
    if res["rc"] != 0 and re.search(r"No devices were found", text, re.IGNORECASE):
        raise nvidia_smi.NvidiaSmiNoDevices("nvidia-smi: No devices were found")
    why = _runner.failure(res, TIMEOUT)
    if why:
        raise SmiError(res, why)
    return nvidia_smi.parse_query_xml(res["stdout"]), nvidia_smi.parse_supported_clocks(res["stdout"])


def read_mig_instances(exe, index):
    """GPU instances of GPU ``index`` (``mig -lgi``); [] when there are none."""
    res = _runner.run([exe, "mig", "-i", str(index), "-lgi"], timeout=TIMEOUT)
    if res["rc"] != 0 and re.search(r"No GPU instances found", res["stdout"] + res["stderr"], re.IGNORECASE):
        return []
    why = _runner.failure(res, TIMEOUT)
    if why:
        raise SmiError(res, why)
    return [r for r in nvidia_smi.parse_mig_gpu_instances(res["stdout"]) if r["gpu"] == index]


def read_locks(path):
    """{uuid: {min_mhz, max_mhz}} from the lock record ({} when absent or unreadable: nothing locked)."""
    text = _sysfs.read_text(path) if path else None
    try:
        doc = json.loads(text) if text else {}
    except ValueError:
        return {}
    locks = doc.get("gpus") if isinstance(doc, dict) and doc.get("format") == LOCK_FORMAT else None
    return locks if isinstance(locks, dict) else {}


def lock_text(locks):
    return json.dumps({"format": LOCK_FORMAT, "gpus": locks}, indent=2, sort_keys=True) + "\n"


def _label(gpu):
    return "GPU %d (%s)" % (gpu["index"], gpu["name"])


def _enabled(text):
    return nvidia_smi.yes_no(text)


def gpu_state(gpu, locks, instances=None):
    """The managed settings of one GPU as the module reports and compares them."""
    ecc, mig = gpu["ecc_mode"], gpu["mig_mode"]
    state = {
        "index": gpu["index"], "uuid": gpu["uuid"], "name": gpu["name"], "pci_bus_id": gpu["pci_bus_id"],
        "persistence_mode": _enabled(gpu["persistence_mode"]),
        "power_limit_w": _watts(gpu["power_limit_requested"] if gpu["power_limit_requested"] is not None
                                else gpu["power_limit"]),
        "power_limit_range_w": [_watts(gpu["power_limit_min"]), _watts(gpu["power_limit_max"])],
        "power_limit_default_w": _watts(gpu["power_limit_default"]),
        "application_clocks": _clocks(gpu["applications_clocks"]),
        "locked_clocks": locks.get(gpu["uuid"]),
        "ecc": {"current": _ecc_word(ecc["current"]), "pending": _ecc_word(ecc["pending"])},
        "compute_mode": gpu["compute_mode"],
        "mig": {"current": _ecc_word(mig["current"]), "pending": _ecc_word(mig["pending"]),
                "instances": sorted(_profile(r["profile_name"]) for r in instances) if instances is not None else None},
        "processes": [p["pid"] for p in gpu["processes"] if p["pid"] is not None],
    }
    return state


def _watts(value):
    return int(round(value)) if isinstance(value, (int, float)) else None


def _clocks(pair):
    if pair["memory_mhz"] is None or pair["graphics_mhz"] is None:
        return None
    return {"memory_mhz": pair["memory_mhz"], "graphics_mhz": pair["graphics_mhz"]}


def _ecc_word(text):
    value = _enabled(text)
    return None if value is None else ("enabled" if value else "disabled")


# ---------------------------------------------------------------- host checks
def host_problems(where, entry, gpu, state, supported):
    """Messages for the values of one entry that this GPU cannot take (nothing is run)."""
    errors, label = [], _label(gpu)
    if entry.get("persistence_mode") is not None and state["persistence_mode"] is None:
        errors.append("%s.persistence_mode: %s does not report a persistence mode" % (where, label))
    watts = entry.get("power_limit_w")
    if watts is not None:
        low, high = state["power_limit_range_w"]
        if low is None or high is None:
            errors.append("%s.power_limit_w: %s reports no power limit range (power management not supported)"
                          % (where, label))
        elif not low <= watts <= high:
            errors.append("%s.power_limit_w: %d W is outside what %s allows: %d..%d W" % (where, watts, label, low, high))
    app = entry.get("application_clocks")
    if app is not None:
        if not supported or state["application_clocks"] is None:
            errors.append("%s.application_clocks: %s reports no application clocks or no supported clocks (application "
                          "clocks are not supported or deprecated on this driver; use locked_clocks)" % (where, label))
        else:
            pairs = dict((s["memory_mhz"], s["graphics_mhz"]) for s in supported)
            if app["memory_mhz"] not in pairs or app["graphics_mhz"] not in pairs[app["memory_mhz"]]:
                allowed = "; ".join("memory %d MHz with graphics %d..%d MHz" % (m, min(g), max(g))
                                    for m, g in sorted(pairs.items(), reverse=True))
                errors.append("%s.application_clocks: memory %d MHz with graphics %d MHz is not a supported pair of %s; "
                              "allowed: %s" % (where, app["memory_mhz"], app["graphics_mhz"], label, allowed))
    lock = entry.get("locked_clocks")
    if lock is not None:
        graphics = sorted(set(g for s in supported or [] for g in s["graphics_mhz"]))
        high = graphics[-1] if graphics else gpu["max_clocks"]["graphics_mhz"]
        low = graphics[0] if graphics else None
        if high is not None and (lock["max_mhz"] > high or (low is not None and lock["min_mhz"] < low)):
            errors.append("%s.locked_clocks: %d..%d MHz is outside the graphics clocks of %s: %s..%d MHz"
                          % (where, lock["min_mhz"], lock["max_mhz"], label, low if low is not None else "?", high))
    if entry.get("ecc") is not None and state["ecc"]["current"] is None:
        errors.append("%s.ecc: %s does not support ECC (ECC mode N/A)" % (where, label))
    if entry.get("compute_mode") is not None and state["compute_mode"] not in COMPUTE_MODES:
        errors.append("%s.compute_mode: %s reports compute mode %r, which this module cannot manage"
                      % (where, label, state["compute_mode"]))
    if entry.get("mig") is not None and state["mig"]["current"] is None:
        errors.append("%s.mig: %s is not MIG-capable (MIG mode N/A)" % (where, label))
    return errors


# ---------------------------------------------------------------- plan
def _set(exe, index, *args):
    return [exe, "-i", str(index)] + list(args)


def plan_gpu(exe, entry, state):
    """(before, after, commands, reboot reasons, needs_mig_instances) of the managed subset of one GPU."""
    before, after, cmds, reasons = {}, {}, [], []
    idx, label = state["index"], "GPU %d (%s)" % (state["index"], state["name"])

    def compare(key, have, want, argv):
        before[key], after[key] = have, want
        if have != want:
            cmds.append(argv)

    if entry.get("persistence_mode") is not None:
        want = bool(entry["persistence_mode"])
        compare("persistence_mode", state["persistence_mode"], want, _set(exe, idx, "-pm", "1" if want else "0"))
    if entry.get("ecc") is not None:
        want = entry["ecc"]
        compare("ecc", state["ecc"]["pending"], want, _set(exe, idx, "-e", "1" if want == "enabled" else "0"))
        if state["ecc"]["current"] != want:
            reasons.append("%s: ECC %s takes effect after a reboot (current: %s)" % (label, want, state["ecc"]["current"]))
    mig = entry.get("mig")
    if mig is not None:
        want = "enabled" if mig["enabled"] else "disabled"
        compare("mig_mode", state["mig"]["pending"], want, _set(exe, idx, "-mig", "1" if mig["enabled"] else "0"))
        if state["mig"]["current"] != want:
            reasons.append("%s: MIG mode %s takes effect after a GPU reset or reboot (current: %s)"
                           % (label, want, state["mig"]["current"]))
        elif mig["enabled"] and mig.get("instances") is not None:  # instances left out: the layout is not managed
            have = state["mig"]["instances"] or []
            wanted = sorted(_profile(n) for n in mig.get("instances") or [])
            before["mig_instances"], after["mig_instances"] = have, wanted
    if entry.get("compute_mode") is not None:
        want = entry["compute_mode"]
        compare("compute_mode", state["compute_mode"], want, _set(exe, idx, "-c", COMPUTE_MODES[want]))
    if entry.get("power_limit_w") is not None:
        want = entry["power_limit_w"]
        compare("power_limit_w", state["power_limit_w"], want, _set(exe, idx, "-pl", str(want)))
    if entry.get("application_clocks") is not None:
        want = {"memory_mhz": entry["application_clocks"]["memory_mhz"],
                "graphics_mhz": entry["application_clocks"]["graphics_mhz"]}
        compare("application_clocks", state["application_clocks"], want,
                _set(exe, idx, "-ac", "%d,%d" % (want["memory_mhz"], want["graphics_mhz"])))
    if entry.get("locked_clocks") is not None:
        want = {"min_mhz": entry["locked_clocks"]["min_mhz"], "max_mhz": entry["locked_clocks"]["max_mhz"]}
        compare("locked_clocks", state["locked_clocks"], want,
                _set(exe, idx, "-lgc", "%d,%d" % (want["min_mhz"], want["max_mhz"])))
    return before, after, cmds, reasons


def mig_instance_commands(exe, index, current_rows, wanted_names):
    """Commands that turn the GPU instances ``current_rows`` into the multiset ``wanted_names``: destroy only
    the surplus (compute instances first, newest instance first), create only the missing."""
    want = collections.Counter(_profile(n) for n in wanted_names)
    have = collections.Counter(_profile(r["profile_name"]) for r in current_rows)
    cmds = []
    for name in sorted(have):
        surplus = have[name] - want.get(name, 0)
        rows = sorted((r for r in current_rows if _profile(r["profile_name"]) == name),
                      key=lambda r: r["instance_id"], reverse=True)
        for row in rows[:max(surplus, 0)]:
            gi = str(row["instance_id"])
            cmds.append([exe, "mig", "-i", str(index), "-dci", "-gi", gi])
            cmds.append([exe, "mig", "-i", str(index), "-dgi", "-gi", gi])
    missing = []
    for name in sorted(want):
        missing += [name] * max(want[name] - have.get(name, 0), 0)
    if missing:
        cmds.append([exe, "mig", "-i", str(index), "-cgi", ",".join(missing), "-C"])
    return cmds


def persist_text(exe, p, entries_by_gpu):
    """The boot replay file: per GPU (addressed by UUID) the volatile settings and the nvidia-smi
    arguments that set them from any state."""
    gpus = []
    for state, entry in entries_by_gpu:
        settings, args = {}, []
        if entry.get("persistence_mode") is not None:
            settings["persistence_mode"] = bool(entry["persistence_mode"])
            args.append(["-pm", "1" if entry["persistence_mode"] else "0"])
        if entry.get("compute_mode") is not None:
            settings["compute_mode"] = entry["compute_mode"]
            args.append(["-c", COMPUTE_MODES[entry["compute_mode"]]])
        if entry.get("power_limit_w") is not None:
            settings["power_limit_w"] = entry["power_limit_w"]
            args.append(["-pl", str(entry["power_limit_w"])])
        if entry.get("application_clocks") is not None:
            app = entry["application_clocks"]
            settings["application_clocks"] = {"memory_mhz": app["memory_mhz"], "graphics_mhz": app["graphics_mhz"]}
            args.append(["-ac", "%d,%d" % (app["memory_mhz"], app["graphics_mhz"])])
        if entry.get("locked_clocks") is not None:
            lock = entry["locked_clocks"]
            settings["locked_clocks"] = {"min_mhz": lock["min_mhz"], "max_mhz": lock["max_mhz"]}
            args.append(["-lgc", "%d,%d" % (lock["min_mhz"], lock["max_mhz"])])
        if settings:
            gpus.append({"uuid": state["uuid"], "index": state["index"], "name": state["name"],
                         "pci_bus_id": state["pci_bus_id"], "settings": settings, "replay": args})
    doc = {"format": PERSIST_FORMAT, "nvidia_smi": exe, "lock_record_path": p["lock_record_path"], "gpus": gpus}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def read_all(exe, p):
    """(states, gpus, supported) of every GPU, with the MIG instances of MIG-enabled GPUs."""
    parsed, supported = read_gpus(exe)
    locks = read_locks(p["lock_record_path"])
    states, rows = [], {}
    for gpu in parsed["gpus"]:
        instances = None
        if _ecc_word(gpu["mig_mode"]["current"]) == "enabled":
            instances = read_mig_instances(exe, gpu["index"])
            rows[gpu["index"]] = instances
        states.append(gpu_state(gpu, locks, instances))
    return states, parsed["gpus"], supported, rows


def make_plan(exe, p, states, gpus, supported, rows):
    """Check every entry against its GPUs, then the plan: {before, after, commands, reasons, matched,
    unmatched, persist_text, persist_changed, locks (wanted lock record)}."""
    entries = dict((e["model"], (i, e)) for i, e in enumerate(p["settings"] or []))
    errors, matched, unmatched = [], [], []
    for gpu, state in zip(gpus, states):
        if gpu["name"] not in entries:
            unmatched.append("%d: %s" % (gpu["index"], gpu["name"]))
            continue
        i, entry = entries[gpu["name"]]
        errors += host_problems("settings[%d]" % i, entry, gpu, state, supported[gpu["index"]])
        matched.append((state, entry))
    if errors:
        raise Failure("; ".join(errors), changed=False)
    before, after, commands, reasons, mig_refusals = {}, {}, [], [], []
    locks = read_locks(p["lock_record_path"])
    for state, entry in matched:
        key = "gpu%d" % state["index"]
        b, a, cmds, why = plan_gpu(exe, entry, state)
        if "mig_instances" in a and b["mig_instances"] != a["mig_instances"]:
            cmds += mig_instance_commands(exe, state["index"], rows.get(state["index"], []), a["mig_instances"])
        mig_cmds = [c for c in cmds if "-mig" in c or (len(c) > 1 and c[1] == "mig")]
        if mig_cmds and state["processes"]:
            i = entries[state["name"]][0]
            mig_refusals.append("settings[%d].mig: GPU %d (%s) runs processes (PID %s); MIG changes are refused while "
                                "processes run on the GPU - stop them and run again"
                                % (i, state["index"], state["name"], ", ".join(str(x) for x in state["processes"])))
        before[key], after[key] = b, a
        commands += cmds
        reasons += why
        if entry.get("locked_clocks") is not None:
            locks[state["uuid"]] = {"min_mhz": entry["locked_clocks"]["min_mhz"], "max_mhz": entry["locked_clocks"]["max_mhz"]}
    if mig_refusals:
        raise Failure("; ".join(mig_refusals), changed=False)
    plan = {"before": before, "after": after, "commands": commands, "reasons": reasons, "matched": matched,
            "unmatched": unmatched, "persist_text": None, "persist_changed": False, "locks": locks}
    if p["persist_path"]:
        plan["persist_text"] = persist_text(exe, p, matched)
        plan["persist_changed"] = _sysfs.read_text(p["persist_path"]) != plan["persist_text"].strip()
        before["persist_path"] = p["persist_path"] if not plan["persist_changed"] else None
        after["persist_path"] = p["persist_path"]
    plan["changed"] = bool(commands or plan["persist_changed"])
    return plan


# ---------------------------------------------------------------- act
def apply_changes(p, plan, write):
    """Persistence file first (a failure there changes nothing), then the commands in order; the lock record
    after a -lgc. A failure after something was applied is a Failure with ``changed=true`` and ``applied``."""
    applied = {"persist_path": None, "commands": []}

    def failure(msg):
        did = bool(applied["persist_path"] or applied["commands"])
        if did:
            done = (["persist_path %s written" % applied["persist_path"]] if applied["persist_path"] else []) + \
                ["ran %s" % _runner.cmdline(c) for c in applied["commands"]]
            msg = "%s; applied before this failure: %s" % (msg, "; ".join(done))
        return Failure(msg, changed=did, applied=applied, commands=plan["commands"])

    if plan["persist_changed"]:
        why = write(p["persist_path"], plan["persist_text"])
        if why:
            raise failure("persist_path: cannot write %s: %s" % (p["persist_path"], why))
        applied["persist_path"] = p["persist_path"]
    for argv in plan["commands"]:
        try:
            smi(argv)
        except SmiError as exc:
            raise failure(str(exc))
        applied["commands"].append(argv)
        if "-lgc" in argv:
            why = write(p["lock_record_path"], lock_text(plan["locks"]))
            if why:
                raise failure("lock_record_path: cannot write %s: %s" % (p["lock_record_path"], why))
    return failure


def run(p, check_mode, diff, find, write):
    """The whole module on its params ``p``: the result for exit_json, or Failure. Every refusal comes before
    the first change; nothing is changed in check mode."""
    errors = input_problems(p)
    if errors:
        raise Failure("; ".join(errors), changed=False)
    exe = find(p["nvidia_smi_path"])
    empty = dict(changed=False, gpus=[], commands=[], reboot_required=False, reboot_reasons=[], unmatched_gpus=[])
    if exe is None:
        return dict(empty, skipped_reason="%s: %s not found" % (NO_GPU, p["nvidia_smi_path"]))
    try:
        states, gpus, supported, rows = read_all(exe, p)
        if not gpus:
            return dict(empty, skipped_reason="%s: nvidia-smi lists no GPU" % NO_GPU)
        plan = make_plan(exe, p, states, gpus, supported, rows)
    except nvidia_smi.NvidiaSmiNoDevices:
        return dict(empty, skipped_reason="%s: nvidia-smi found no devices (No devices were found)" % NO_GPU)
    except (SmiError, nvidia_smi.NvidiaSmiParseError) as exc:
        raise Failure("reading the GPUs: %s; nothing was changed" % exc, changed=False)
    result = dict(changed=plan["changed"], commands=plan["commands"], unmatched_gpus=plan["unmatched"])
    if plan["changed"] or diff:
        result["diff"] = dict(before=plan["before"], after=plan["after"])
    reasons = plan["reasons"]
    if plan["changed"] and not check_mode:
        failure = apply_changes(p, plan, write)
        # Read back: the driver may refuse or round a value silently.
        try:
            states, gpus, supported, rows = read_all(exe, p)
            again = make_plan(exe, p, states, gpus, supported, rows)
        except (SmiError, nvidia_smi.NvidiaSmiParseError, Failure) as exc:
            raise failure("reading the GPUs back: %s" % getattr(exc, "msg", exc))
        if again["commands"]:
            left = sorted(set("%s.%s" % (g, k) for g in again["after"] for k in again["after"][g]
                              if k != "persist_path" and again["before"][g].get(k) != again["after"][g][k]))
            raise failure("the driver did not take: %s" % ", ".join(left))
        reasons = again["reasons"]
    result.update(gpus=states, reboot_required=bool(reasons), reboot_reasons=reasons)
    return result
