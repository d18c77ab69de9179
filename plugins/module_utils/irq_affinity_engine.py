# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the irq_affinity module: check every option, find the device's IRQs, compute the CPU of each
IRQ and what to do about irqbalance, then (not in check mode) write the irqbalance file, stop or restart
irqbalance and pin the IRQs, reporting what was done before a failure.

The proc/sys reading and the rules (CPU order, the irqbalance file edit) are ``irq.py``'s, which stays
self-contained (the irq_affinity role installs a copy of it as its boot replay's library); systemctl runs
through the collection's runner (``_runner``). The module passed in needs ``params``, ``check_mode``,
``_diff``, ``warn``, ``fail_json``, ``get_bin_path`` and ``atomic_move`` (an AnsibleModule).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import irq as irq_utils


def cpus_param(params, name, max_cpu, source, errors):
    """Set of CPUs of the option ``name``; a bad item goes to ``errors`` (naming the option and what is
    allowed). Ranges are checked against ``max_cpu`` before anything is expanded."""
    where = "this host's CPUs, %s" % source if source else \
        "no CPU list in sysfs: %d is the largest CPU count Linux is built for" % irq_utils.MAX_CPUS
    allowed = "CPU numbers 0-%d (%s) or ranges of them like 8-15, lowest first" % (max_cpu, where)
    out = set()
    for item in params[name] or []:
        try:
            ranges = irq_utils.cpulist_ranges(str(item))
        except ValueError as exc:
            errors.append("%s: %r is not a CPU number or cpulist (%s); allowed are %s" % (name, item, exc, allowed))
            continue
        highest = max([high for dummy, high in ranges] or [0])
        if highest > max_cpu:
            errors.append("%s: %r names CPU %d; allowed are %s" % (name, item, highest, allowed))
            continue
        for low, high in ranges:
            out.update(range(low, high + 1))
    return out


def config_path_problem(path):
    """Why ``path`` cannot be the irqbalance environment file (read-only look), or None."""
    if not os.path.isabs(path):
        return "an absolute file path is needed (for example /etc/default/irqbalance), got %r" % path
    if path.endswith("/") or os.path.isdir(path):
        return "%s is a directory; the irqbalance environment file is needed (for example " \
               "/etc/default/irqbalance or /etc/sysconfig/irqbalance)" % path
    return atomic_write.file_problem(path)


def validate(module):
    """Check every option before anything is read from the device or changed. Returns
    (explicit CPUs, reserved CPUs)."""
    p = module.params
    errors = []
    if p["device"] is not None and not irq_utils.PCI_ADDRESS_RE.match(p["device"]):
        errors.append("device: %r is not a PCI address; allowed is DOMAIN:BUS:DEVICE.FUNCTION in hex, "
                      "for example 0000:81:00.0" % p["device"])
    if p["interface"] is not None:
        why = irq_utils.netdev_name_problem(p["interface"])
        if why:
            errors.append("interface: %r is not a netdev name (%s); allowed are 1-%d characters without '/', "
                          "':', NUL, whitespace or '..'" % (p["interface"], why, irq_utils.NETDEV_NAME_MAX))
    if p["irq_name_regex"] is not None:
        try:
            re.compile(p["irq_name_regex"])
        except (re.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
            errors.append("irq_name_regex: %r is not a valid Python regular expression (%s)"
                          % (p["irq_name_regex"], exc))
    for key, sub in (("proc_root", "proc"), ("sysfs_root", "sys")):
        if not os.path.isabs(p[key]):
            errors.append("%s: an absolute directory path is needed, got %r" % (key, p[key]))
        elif not os.path.isdir(os.path.join(p[key], sub)):
            errors.append("%s: %s has no %s/ directory; allowed is the directory %s/ is below (default /)"
                          % (key, p[key], sub, sub))
    max_cpu, source = irq_utils.host_max_cpu(p["sysfs_root"])
    wanted = cpus_param(p, "cpus", max_cpu, source, errors)
    reserved = cpus_param(p, "reserved_cpus", max_cpu, source, errors)
    why = config_path_problem(p["irqbalance_config"])
    if why:
        errors.append("irqbalance_config: %s" % why)
    if errors:
        module.fail_json(msg="; ".join(errors), changed=False)
    return wanted, reserved


def device_irqs(module):
    """The device (read-only): ``(address, device, interrupts table, IRQ numbers)``; fails when the device,
    its MSI IRQs, /proc/interrupts or any /proc/irq/N is missing."""
    p = module.params
    address = p["device"] or irq_utils.pci_address_of(p["sysfs_root"], p["interface"])
    if not address:
        module.fail_json(msg="interface: netdev %s has no PCI device under %s" % (p["interface"], p["sysfs_root"]),
                         changed=False)
    dev = irq_utils.read_device(p["sysfs_root"], address)
    if not dev["exists"]:
        module.fail_json(msg="PCI device %s not found in %s" % (address, irq_utils.pci_dir(p["sysfs_root"], address)),
                         changed=False)
    if dev["msi_irqs"] is None:
        module.fail_json(msg="PCI device %s has no msi_irqs/ (no MSI/MSI-X in use: is the driver bound?)" % address,
                         changed=False)
    interrupts = irq_utils.read_interrupts(p["proc_root"])
    if not interrupts:
        module.fail_json(msg="proc_root: %s/proc/interrupts is missing or does not read as a table of numbered "
                             "IRQs; nothing was changed" % p["proc_root"].rstrip("/"), changed=False)
    irqs = irq_utils.device_irqs(interrupts, dev["msi_irqs"], address, p["irq_name_regex"])
    if not irqs:
        module.fail_json(msg="no IRQs of %s%s" % (address, " match irq_name_regex %r" % p["irq_name_regex"]
                                                  if p["irq_name_regex"] else ""), changed=False)
    missing = [i for i in irqs if not os.path.isdir(os.path.join(p["proc_root"], "proc", "irq", str(i)))]
    if missing:
        module.fail_json(msg="IRQs %s of %s are absent from %s/proc/irq" % (
            ", ".join(str(i) for i in missing), address, p["proc_root"].rstrip("/")), changed=False)
    return address, dev, interrupts, irqs


def candidates(module, dev, wanted, reserved):
    """The CPUs for the IRQs in the order they are handed out (policy, minus ``reserved``)."""
    p = module.params
    root = p["sysfs_root"]
    online = set(irq_utils.online_cpus(root))
    local = set(dev["local_cpus"])
    if not local and dev["numa_node"] is not None and dev["numa_node"] >= 0:
        local = set(irq_utils.node_cpus(root, dev["numa_node"]))
    if not local:
        local = online
    if online:
        local &= online
    if p["policy"] == "explicit":
        if not wanted:
            module.fail_json(msg="cpus: policy=explicit needs at least one CPU", changed=False)
        offline = sorted(wanted - online) if online else []
        if offline:
            module.fail_json(msg="cpus: %s are not online; allowed are the online CPUs %s" % (
                irq_utils.format_cpulist(offline), irq_utils.format_cpulist(online)), changed=False)
        ordered = irq_utils.core_order(root, wanted)
    elif p["policy"] == "spread":
        ordered = irq_utils.core_order(root, local) + irq_utils.core_order(root, (online or local) - local)
    else:
        ordered = irq_utils.core_order(root, local)
    result = [c for c in ordered if c not in reserved]
    if not result:
        module.fail_json(msg="reserved_cpus: no CPU left for the IRQs (policy %s, reserved %s)" % (
            p["policy"], irq_utils.format_cpulist(reserved)), changed=False)
    return result


def affinity_plan(proc_root, irqs, interrupts, wanted):
    """Compare each IRQ's current affinity with ``wanted`` (IRQ to CPU list) as CPU sets:
    ``(plan entries, before, after, IRQs to write)``; before/after map the IRQ (as text) to its cpulist."""
    plan, before, after, todo = [], {}, {}, []
    for irq in irqs:
        have = irq_utils.read_affinity(proc_root, irq)
        want = wanted[irq]
        differs = have is None or set(have) != set(want)
        plan.append({"irq": irq, "name": interrupts.get(irq, {}).get("name", ""),
                     "before": irq_utils.format_cpulist(have or []), "after": irq_utils.format_cpulist(want),
                     "changed": differs})
        before[str(irq)] = irq_utils.format_cpulist(have or [])
        after[str(irq)] = irq_utils.format_cpulist(want)
        if differs:
            todo.append(irq)
    return plan, before, after, todo


def read_config(module, path):
    """Text of the irqbalance file; None when it does not exist. Other read errors fail (before any
    change): an unreadable file must not be replaced by one holding only the bans."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read()
    except (IOError, OSError) as exc:
        if exc.errno == errno.ENOENT:
            return None
        module.fail_json(msg="irqbalance_config: cannot read %s: %s" % (path, exc), changed=False)


def systemctl(module):
    """Path of systemctl (``_runner.find``); when there is none the module fails with ansible-core's
    'Failed to find required executable' message, as it always has."""
    return runner.find(module, "systemctl") or module.get_bin_path("systemctl", required=True)


def plan_irqbalance(module, irqs, address, warnings):
    """What to do about irqbalance, computed without changing anything: (info, plan) where plan holds
    ``write`` (new file text or None), ``old``, ``systemctl`` (argv to run or None)."""
    p = module.params
    pids = irq_utils.irqbalance_pids(p["proc_root"])
    info = {"running": bool(pids), "pids": pids, "action": "none", "config_changed": False}
    plan = {"write": None, "old": None, "systemctl": None}
    if p["irqbalance"] == "report":
        if pids:
            info["action"] = "report"
            warnings.append("irqbalance is running (pid %s) and may move these IRQs again; choose irqbalance: "
                            "ban or stop" % ", ".join(str(x) for x in pids))
    elif p["irqbalance"] == "stop":
        if pids:
            info["action"] = "stopped"
            plan["systemctl"] = [systemctl(module), "stop", "irqbalance"]
    else:
        path = p["irqbalance_config"]
        old = read_config(module, path)
        try:
            new = irq_utils.irqbalance_config_with_bans(old or "", irqs, address)
        except ValueError as exc:
            module.fail_json(msg="irqbalance_config: %s: %s" % (path, exc), changed=False)
        info["action"] = "banned"
        if new != old:
            info["config_changed"] = True
            plan["write"], plan["old"] = new, old
            if pids:
                plan["systemctl"] = [systemctl(module), "restart", "irqbalance"]
    return info, plan


def apply(module, result, ib_plan, wanted, todo):
    """Act in this order: the irqbalance file, the irqbalance service, then the IRQs (read back). A failure
    after a change fails with ``changed=true`` and lists what was done before it."""
    p = module.params
    done = []

    def fail(msg):
        if done:
            msg = "%s; applied before this failure: %s" % (msg, "; ".join(done))
        module.fail_json(msg=msg, changed=bool(done), **result)

    if ib_plan["write"] is not None:
        why = atomic_write.write_text(module, p["irqbalance_config"], ib_plan["write"], prefix=".irqbalance.")
        if why:
            fail("irqbalance_config: cannot write %s: %s" % (p["irqbalance_config"], why))
        done.append("%s written" % p["irqbalance_config"])
    if ib_plan["systemctl"]:
        res = runner.run(ib_plan["systemctl"])  # a systemctl the OS cannot start: rc 127 and the OS error
        if res["rc"] != 0:
            fail("%s failed (rc %d): %s" % (" ".join(ib_plan["systemctl"]), res["rc"],
                                            (res["stderr"] or res["stdout"]).strip()))
        done.append(" ".join(ib_plan["systemctl"][1:]))
    for irq in todo:
        text = irq_utils.format_cpulist(wanted[irq])
        try:
            with open(irq_utils.irq_affinity_path(p["proc_root"], irq), "w") as handle:
                handle.write(text + "\n")
        except (IOError, OSError) as exc:
            fail("cannot pin IRQ %d to %s: %s" % (irq, text, exc))
        done.append("IRQ %d -> %s" % (irq, text))
    refused = [i for i in todo if set(irq_utils.read_affinity(p["proc_root"], i) or []) != set(wanted[i])]
    if refused:
        fail("the kernel did not take the affinity of IRQs %s" % ", ".join(str(i) for i in refused))


def pin(module):
    """The whole run: check, read, compute, act (not in check mode). Returns the module's result (with
    ``changed`` and, when changed or in diff mode, ``diff``); warnings go to ``module.warn``."""
    # 1. Every option, then the device, read-only.
    wanted_cpus, reserved = validate(module)
    p = module.params
    address, dev, interrupts, irqs = device_irqs(module)

    # 2. Compute: the CPUs, the affinity of each IRQ, what to do about irqbalance.
    cpus = candidates(module, dev, wanted_cpus, reserved)
    wanted = irq_utils.plan(irqs, cpus)
    plan, before, after, todo = affinity_plan(p["proc_root"], irqs, interrupts, wanted)
    warnings = []
    info, ib_plan = plan_irqbalance(module, irqs, address, warnings)
    result = dict(device={"address": address, "numa_node": dev["numa_node"], "cpus": cpus}, plan=plan,
                  irqbalance=info)
    changed = bool(todo or ib_plan["write"] is not None or ib_plan["systemctl"])

    # 3. Act: irqbalance file, irqbalance service, then the IRQs. A failure after a change reports it.
    if not module.check_mode:
        apply(module, result, ib_plan, wanted, todo)
    result["changed"] = changed
    if changed or module._diff:
        result["diff"] = [dict(before_header="smp_affinity_list", after_header="smp_affinity_list",
                               before=before, after=after)]
        if ib_plan["write"] is not None:
            result["diff"].append(dict(before_header=p["irqbalance_config"], after_header=p["irqbalance_config"],
                                       before=ib_plan["old"] or "", after=ib_plan["write"]))
    for warning in warnings:
        module.warn(warning)
    return result
