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
    C(irqbalance.running)); I(irqbalance=stop) stops the service, I(irqbalance=ban) adds
    C(--banirq=N) for these IRQs to C(IRQBALANCE_ARGS) in I(irqbalance_config) and restarts a running
    irqbalance. C(--banirq) is used rather than C(IRQBALANCE_BANNED_CPULIST), which would take whole
    CPUs away from irqbalance instead of leaving just these IRQs alone.
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
    description: PCI address of the device, for example C(0000:81:00.0). One of I(device) and I(interface) is required.
    type: str
  interface:
    description: Netdev whose PCI device is meant (C(/sys/class/net/IF/device)).
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
    description: CPUs for I(policy=explicit); items are CPU numbers or kernel cpulists (C(8-15)).
    type: list
    elements: str
  reserved_cpus:
    description: CPUs never given an IRQ (for example GPU feeder threads); numbers or cpulists.
    type: list
    elements: str
    default: []
  irq_name_regex:
    description: Only IRQs whose C(/proc/interrupts) name matches this regular expression (for example C(mlx5_comp)).
    type: str
  irqbalance:
    description: What to do about a running irqbalance (see description).
    type: str
    choices: [report, stop, ban]
    default: report
  irqbalance_config:
    description: irqbalance environment file for I(irqbalance=ban) (C(/etc/sysconfig/irqbalance) on RHEL).
    type: path
    default: /etc/default/irqbalance
  proc_root:
    description: Directory under which C(proc/) is read and written. Point it at a fixture tree to test.
    type: path
    default: /
  sysfs_root:
    description: Directory under which C(sys/) is read.
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

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import irq as irq_utils


def cpus_param(module, name):
    out = set()
    for item in module.params[name] or []:
        try:
            out.update(irq_utils.parse_cpulist(str(item)))
        except ValueError:
            module.fail_json(msg="%s: %r is not a CPU number or cpulist" % (name, item))
    return out


def candidates(module, dev):
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
        wanted = cpus_param(module, "cpus")
        if not wanted:
            module.fail_json(msg="policy=explicit needs cpus")
        offline = sorted(wanted - online) if online else []
        if offline:
            module.fail_json(msg="cpus %s are not online (online: %s)" % (
                irq_utils.format_cpulist(offline), irq_utils.format_cpulist(online)))
        ordered = irq_utils.core_order(root, wanted)
    elif p["policy"] == "spread":
        ordered = irq_utils.core_order(root, local) + irq_utils.core_order(root, (online or local) - local)
    else:
        ordered = irq_utils.core_order(root, local)
    reserved = cpus_param(module, "reserved_cpus")
    result = [c for c in ordered if c not in reserved]
    if not result:
        module.fail_json(msg="no CPU left for the IRQs (policy %s, reserved %s)" % (
            p["policy"], irq_utils.format_cpulist(reserved)))
    return result


def write_file_atomic(module, path, text):
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".irqbalance.")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    module.atomic_move(tmp, path, unsafe_writes=False)


def handle_irqbalance(module, irqs, result, warnings):
    p = module.params
    pids = irq_utils.irqbalance_pids(p["proc_root"])
    info = {"running": bool(pids), "pids": pids, "action": "none", "config_changed": False}
    changed = False
    if p["irqbalance"] == "report":
        if pids:
            info["action"] = "report"
            warnings.append("irqbalance is running (pid %s) and may move these IRQs again; choose irqbalance: "
                            "ban or stop" % ", ".join(str(x) for x in pids))
    elif p["irqbalance"] == "stop":
        if pids:
            info["action"] = "stopped"
            changed = True
            if not module.check_mode:
                systemctl = module.get_bin_path("systemctl", required=True)
                rc, out, err = module.run_command([systemctl, "stop", "irqbalance"])
                if rc != 0:
                    module.fail_json(msg="systemctl stop irqbalance failed: %s" % (err or out).strip(), **result)
    else:
        path = p["irqbalance_config"]
        try:
            with open(path) as handle:
                old = handle.read()
        except (IOError, OSError):
            old = None
        new = irq_utils.irqbalance_config_with_bans(old or "", irqs)
        info["action"] = "banned"
        if new != old:
            info["config_changed"] = changed = True
            result.setdefault("diff_extra", {"before": old or "", "after": new})
            if not module.check_mode:
                if not os.path.isdir(os.path.dirname(path)):
                    os.makedirs(os.path.dirname(path), 0o755)
                write_file_atomic(module, path, new)
                if pids:
                    systemctl = module.get_bin_path("systemctl", required=True)
                    rc, out, err = module.run_command([systemctl, "restart", "irqbalance"])
                    if rc != 0:
                        module.fail_json(msg="systemctl restart irqbalance failed: %s" % (err or out).strip(),
                                         **result)
    return info, changed


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
    p = module.params
    address = p["device"] or irq_utils.pci_address_of(p["sysfs_root"], p["interface"])
    if not address:
        module.fail_json(msg="netdev %s has no PCI device under %s" % (p["interface"], p["sysfs_root"]))
    dev = irq_utils.read_device(p["sysfs_root"], address)
    if not dev["exists"]:
        module.fail_json(msg="PCI device %s not found in %s" % (address, irq_utils.pci_dir(p["sysfs_root"], address)))
    if dev["msi_irqs"] is None:
        module.fail_json(msg="PCI device %s has no msi_irqs/ (no MSI/MSI-X in use: is the driver bound?)" % address)
    interrupts = irq_utils.read_interrupts(p["proc_root"])
    irqs = irq_utils.device_irqs(interrupts, dev["msi_irqs"], address, p["irq_name_regex"])
    if not irqs:
        module.fail_json(msg="no IRQs of %s%s" % (address, " match %r" % p["irq_name_regex"]
                                                  if p["irq_name_regex"] else ""))
    missing = [i for i in irqs if not os.path.isdir(os.path.join(p["proc_root"], "proc", "irq", str(i)))]
    if missing:
        module.fail_json(msg="IRQs %s of %s are absent from %s/proc/irq" % (
            ", ".join(str(i) for i in missing), address, p["proc_root"].rstrip("/")))

    cpus = candidates(module, dev)
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

    result = dict(device={"address": address, "numa_node": dev["numa_node"], "cpus": cpus}, plan=plan)
    warnings = []
    info, ib_changed = handle_irqbalance(module, irqs, result, warnings)
    diff_extra = result.pop("diff_extra", None)
    result["irqbalance"] = info
    changed = bool(todo) or ib_changed
    if todo and not module.check_mode:
        for irq in todo:
            try:
                with open(irq_utils.irq_affinity_path(p["proc_root"], irq), "w") as handle:
                    handle.write(irq_utils.format_cpulist(wanted[irq]) + "\n")
            except (IOError, OSError) as exc:
                module.fail_json(msg="cannot pin IRQ %d to %s: %s" % (
                    irq, irq_utils.format_cpulist(wanted[irq]), exc), changed=True, **result)
        refused = [i for i in todo if set(irq_utils.read_affinity(p["proc_root"], i) or []) != set(wanted[i])]
        if refused:
            module.fail_json(msg="the kernel did not take the affinity of IRQs %s" % ", ".join(str(i) for i in refused),
                             changed=True, **result)
    result["changed"] = changed
    if changed or module._diff:
        result["diff"] = [dict(before_header="smp_affinity_list", after_header="smp_affinity_list",
                               before=before, after=after)]
        if diff_extra:
            result["diff"].append(dict(before_header=p["irqbalance_config"], after_header=p["irqbalance_config"],
                                       before=diff_extra["before"], after=diff_extra["after"]))
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
