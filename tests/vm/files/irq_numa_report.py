# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""VM tier: where the IRQs of the given netdevs really are, read from the VM's own kernel.

Prints one JSON object: per interface, its PCI function, the function's NUMA node, that node's CPUs
(all online CPUs when the node is -1), and each MSI IRQ with its smp_affinity_list. Written for the
checks of tests/vm/tune-verify.yml; independent of the collection's own code, so it can catch it out.
"""
import json
import os
import sys


def cpulist(text):
    cpus = set()
    for part in text.strip().split(","):
        if part:
            lo, dummy, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def read(path):
    with open(path) as f:
        return f.read().strip()


def main(names):
    online = cpulist(read("/sys/devices/system/cpu/online"))
    out = {"online_cpus": online, "interfaces": {}}
    for name in names:
        dev = os.path.realpath("/sys/class/net/%s/device" % name)
        if os.path.basename(dev).startswith("virtio"):
            dev = os.path.dirname(dev)
        node = int(read(os.path.join(dev, "numa_node")))
        local = cpulist(read("/sys/devices/system/node/node%d/cpulist" % node)) if node >= 0 else online
        irqs = sorted(int(i) for i in os.listdir(os.path.join(dev, "msi_irqs")))
        out["interfaces"][name] = {
            "pci": os.path.basename(dev), "numa_node": node, "local_cpus": local,
            "irqs": [{"irq": i, "cpus": cpulist(read("/proc/irq/%d/smp_affinity_list" % i))} for i in irqs],
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
