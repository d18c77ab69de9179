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

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import irq_affinity_engine as engine


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
    module.exit_json(**engine.pin(module))


if __name__ == "__main__":
    main()
