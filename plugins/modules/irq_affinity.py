#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: irq_affinity
short_description: Pin a PCI device's IRQs to CPUs of its NUMA node, one IRQ per core
version_added: 0.1.0
description:
  - Finds the IRQs of a PCI device (its C(msi_irqs/) directory and the C(/proc/interrupts) lines that
    name its PCI address, optionally filtered by name) and writes C(/proc/irq/N/smp_affinity_list) so
    each IRQ runs on one CPU.
  - CPUs are handed out one per physical core first (the lowest thread of each core), then to the
    hyperthread siblings, then round again. I(reserved_cpus) are never used.
  - Idempotent - current and wanted affinities are compared as CPU sets; only differing IRQs are
    written, then read back; the module fails naming IRQs the kernel did not take.
  - A running irqbalance moves IRQs again. By default the module only reports it (a warning and
    C(irqbalance.running)); I(irqbalance=stop) stops the service, I(irqbalance=ban) makes the
    C(--banirq=N) arguments of this device in C(IRQBALANCE_ARGS) of I(irqbalance_config) exactly these
    IRQs and restarts a running irqbalance. C(--banirq) is used rather than
    C(IRQBALANCE_BANNED_CPULIST), which would take whole CPUs away from irqbalance instead of leaving
    just these IRQs alone.
  - The edit of I(irqbalance_config) reads the file as shell assignments - C(NAME=value),
    C(NAME="value"), C(NAME='value'), optional C(export), a trailing C(# comment). Only the last
    assignment of C(IRQBALANCE_ARGS) is edited, because it is the one that counts (shell and systemd
    C(EnvironmentFile=) alike); earlier ones are left as they are. Its quoting, C(export) and comment
    are kept (an unquoted value that gets a second word is put in double quotes); every other line
    stays as it is. Without an assignment, one is appended. A value glued from several quoted parts,
    an unclosed quote or a command after the value is refused.
  - >-
    Which bans are the module's - a comment line
    C(# gpufleet.cluster.irq_affinity bans of PCI_ADDRESS: IRQS) above the assignment records the IRQs
    the module added for that device. A recorded C(--banirq=N) that the device no longer needs (its
    IRQ numbers changed) is removed, unless another device's record holds it too. Bans without a
    record are the operator's and are kept; remove the record line to hand a ban over to the operator.
  - Every option is checked before the first change. The irqbalance file is written first, then
    irqbalance is stopped or restarted, then the IRQs are pinned; when a step fails after an earlier
    one changed something, the module fails with C(changed=true) and the message lists what was done.
  - Affinity written to C(/proc) does not survive a reboot or a driver reload; the role
    C(gpufleet.cluster.irq_affinity) persists device, name
    filter and CPU order and re-pins at boot with C(gpufleet-irq-affinity@NAME.service).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  device:
    description:
      - PCI address of the device, for example C(0000:81:00.0) (DOMAIN:BUS:DEVICE.FUNCTION in hex).
        One of I(device) and I(interface) is required.
    type: str
  interface:
    description:
      - Netdev whose PCI device is meant (C(/sys/class/net/IF/device)); a netdev name of 1-15 characters
        without C(/), C(:), NUL, whitespace or C(..).
    type: str
  policy:
    description:
      - C(local-node) - CPUs of the device's NUMA node (C(local_cpulist)).
      - C(spread) - every online CPU, those of the device's node first.
      - C(explicit) - the CPUs in I(cpus).
    type: str
    choices: [local-node, spread, explicit]
    default: local-node
  cpus:
    description:
      - CPUs for I(policy=explicit); items are CPU numbers or kernel cpulists (C(8-15), lowest first).
      - Every CPU must be online. CPU numbers above the host's highest CPU (C(possible), else
        C(present), else C(online) in C(/sys/devices/system/cpu/); 8191 when sysfs tells none) are
        refused before any list is built.
    type: list
    elements: str
  reserved_cpus:
    description:
      - CPUs never given an IRQ (for example GPU feeder threads); numbers or cpulists, bounded like I(cpus)
        (offline CPUs are allowed).
    type: list
    elements: str
    default: []
  irq_name_regex:
    description:
      - Only IRQs whose C(/proc/interrupts) name matches this Python regular expression (for example
        C(mlx5_comp)). An expression that does not compile is refused.
    type: str
  irqbalance:
    description: What to do about a running irqbalance (see description).
    type: str
    choices: [report, stop, ban]
    default: report
  irqbalance_config:
    description:
      - irqbalance environment file for I(irqbalance=ban) (C(/etc/sysconfig/irqbalance) on RHEL).
      - An absolute path of a file, not a directory (checked whatever I(irqbalance) is); missing parent
        directories are created.
    type: path
    default: /etc/default/irqbalance
  proc_root:
    description:
      - Directory under which C(proc/) is read and written (absolute, with a C(proc/) directory). Point it
        at a fixture tree to test.
    type: path
    default: /
  sysfs_root:
    description: Directory under which C(sys/) is read (absolute, with a C(sys/) directory).
    type: path
    default: /
"""

EXAMPLES = r"""
- name: Pin the HCA's completion IRQs to its NUMA node, keeping cores 8 and 9 for GPU feeders
  gpufleet.cluster.irq_affinity:
    interface: ens1f0np0
    irq_name_regex: mlx5_comp
    reserved_cpus: ["8", "9"]
    irqbalance: ban

- name: Explicit CPUs
  gpufleet.cluster.irq_affinity:
    device: "0000:81:00.0"
    policy: explicit
    cpus: ["12-15"]
"""

RETURN = r"""
device:
  description: PCI address, NUMA node and the CPUs used.
  returned: always
  type: dict
  sample: {"address": "0000:81:00.0", "numa_node": 1, "cpus": [10, 11, 12, 13, 14, 15, 24, 25]}
plan:
  description: One entry per IRQ with its name and the CPU list before and after.
  returned: always
  type: list
  elements: dict
  sample: [{"irq": 120, "name": "mlx5_async0@pci:0000:81:00.0", "before": "0-31", "after": "10", "changed": true}]
irqbalance:
  description: C(running), C(pids), C(action) (C(report), C(stopped), C(banned), C(none)) and C(config_changed).
  returned: always
  type: dict
diff:
  description:
    - smp_affinity_list of each IRQ before and after (keyed by IRQ number); with I(irqbalance=ban) a second
      entry with the irqbalance file before and after.
  returned: when changed or in diff mode
  type: list
  elements: dict
"""

import errno
import os
import re

from ansible.module_utils.basic import AnsibleModule
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


def candidates(module, dev, wanted, reserved):
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
            plan["systemctl"] = [module.get_bin_path("systemctl", required=True), "stop", "irqbalance"]
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
                plan["systemctl"] = [module.get_bin_path("systemctl", required=True), "restart", "irqbalance"]
    return info, plan


def main():
    module = AnsibleModule(
        argument_spec=dict(
            device=dict(type="str"),
            interface=dict(type="str"),
            policy=dict(type="str", default="local-node", choices=["local-node", "spread", "explicit"]),
            cpus=dict(type="list", elements="str"),
            reserved_cpus=dict(type="list", elements="str", default=[]),
            irq_name_regex=dict(type="str"),
            irqbalance=dict(type="str", default="report", choices=["report", "stop", "ban"]),
            irqbalance_config=dict(type="path", default="/etc/default/irqbalance"),
            proc_root=dict(type="path", default="/"),
            sysfs_root=dict(type="path", default="/"),
        ),
        required_one_of=[["device", "interface"]],
        mutually_exclusive=[["device", "interface"]],
        required_if=[["policy", "explicit", ["cpus"]]],
        supports_check_mode=True,
    )
    # 1. Every option, then the device, read-only.
    wanted_cpus, reserved = validate(module)
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

    # 2. Compute: the CPUs, the affinity of each IRQ, what to do about irqbalance.
    cpus = candidates(module, dev, wanted_cpus, reserved)
    wanted = irq_utils.plan(irqs, cpus)
    plan, before, after, todo = [], {}, {}, []
    for irq in irqs:
        have = irq_utils.read_affinity(p["proc_root"], irq)
        want = wanted[irq]
        differs = have is None or set(have) != set(want)
        plan.append({"irq": irq, "name": interrupts.get(irq, {}).get("name", ""),
                     "before": irq_utils.format_cpulist(have or []), "after": irq_utils.format_cpulist(want),
                     "changed": differs})
        before[str(irq)] = irq_utils.format_cpulist(have or [])
        after[str(irq)] = irq_utils.format_cpulist(want)
        if differs:
            todo.append(irq)
    warnings = []
    info, ib_plan = plan_irqbalance(module, irqs, address, warnings)
    result = dict(device={"address": address, "numa_node": dev["numa_node"], "cpus": cpus}, plan=plan,
                  irqbalance=info)
    changed = bool(todo or ib_plan["write"] is not None or ib_plan["systemctl"])

    # 3. Act: irqbalance file, irqbalance service, then the IRQs. A failure after a change reports it.
    if not module.check_mode:
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
            rc, out, err = module.run_command(ib_plan["systemctl"])
            if rc != 0:
                fail("%s failed (rc %d): %s" % (" ".join(ib_plan["systemctl"]), rc, (err or out).strip()))
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
    result["changed"] = changed
    if changed or module._diff:
        result["diff"] = [dict(before_header="smp_affinity_list", after_header="smp_affinity_list",
                               before=before, after=after)]
        if ib_plan["write"] is not None:
            result["diff"].append(dict(before_header=p["irqbalance_config"], after_header=p["irqbalance_config"],
                                       before=ib_plan["old"] or "", after=ib_plan["write"]))
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
