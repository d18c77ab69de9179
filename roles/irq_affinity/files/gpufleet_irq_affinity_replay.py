# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-pin a device's IRQs at boot as gpufleet.cluster.irq_affinity did, without Ansible: run by
gpufleet-irq-affinity@NAME.service.

    gpufleet-irq-affinity-replay [--check] [--wait SECONDS] /etc/gpufleet/irq_affinity/NAME.json

IRQ numbers change between boots, so the file (format gpufleet.irq_affinity/1) holds what is stable:
the device (PCI address or netdev), the IRQ name filter and the ordered CPU list the role computed
from the policy. The IRQs are found again (msi_irqs/ and /proc/interrupts, the module's own code in
gpufleet_irq.py next to this program) and the i-th IRQ gets the i-th CPU, as the module does. Waits
up to --wait seconds for the device and as many IRQs as the role saw. Only differing IRQs are
written; each is read back. --check changes nothing and exits 1 on drift. Exit 0 ok, 1 failed or
drift, 2 bad file. Python 3.6+ standard library only.
"""

from __future__ import absolute_import, division, print_function

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import gpufleet_irq as irq  # noqa: E402  pylint: disable=wrong-import-position

FORMAT = "gpufleet.irq_affinity/1"
PROG = "gpufleet-irq-affinity-replay"


def err(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))


def load(path):
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        err("cannot read %s: %s" % (path, exc))
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not doc.get("cpus") \
            or not (doc.get("device") or doc.get("interface")):
        err("%s is not a %s file with a device or interface and cpus; run the gpufleet.cluster.irq_affinity "
            "role again" % (path, FORMAT))
        return None
    return doc


def find(doc):
    """(address, irqs, interrupts) of the device now; address None when it is not there."""
    sysfs_root, proc_root = doc.get("sysfs_root") or "/", doc.get("proc_root") or "/"
    address = doc.get("device") or irq.pci_address_of(sysfs_root, doc["interface"])
    if not address:
        return None, [], {}
    dev = irq.read_device(sysfs_root, address)
    if not dev["exists"] or dev["msi_irqs"] is None:
        return address if dev["exists"] else None, [], {}
    interrupts = irq.read_interrupts(proc_root)
    irqs = irq.device_irqs(interrupts, dev["msi_irqs"], address, doc.get("irq_name_regex"))
    irqs = [i for i in irqs if os.path.isdir(os.path.join(proc_root, "proc", "irq", str(i)))]
    return address, irqs, interrupts


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    check, wait = False, 0.0
    paths = []
    while argv:
        arg = argv.pop(0)
        if arg == "--check":
            check = True
        elif arg == "--wait" and argv:
            wait = float(argv.pop(0))
        else:
            paths.append(arg)
    if len(paths) != 1:
        err("usage: %s [--check] [--wait SECONDS] FILE.json" % PROG)
        return 2
    doc = load(paths[0])
    if doc is None:
        return 2
    name = doc.get("interface") or doc.get("device")
    want_count = int(doc.get("irq_count") or 1)
    deadline = time.time() + wait
    while True:
        address, irqs, dummy = find(doc)
        if len(irqs) >= want_count or time.time() >= deadline:
            break
        time.sleep(0.5)
    if not address:
        err("%s: device not found" % name)
        return 1
    if not irqs:
        err("%s (%s): no IRQs found%s" % (name, address, " matching %r" % doc["irq_name_regex"]
                                          if doc.get("irq_name_regex") else ""))
        return 1
    if len(irqs) < want_count:
        err("%s: %d IRQs found, the role saw %d; pinning those there are" % (name, len(irqs), want_count))
    proc_root = doc.get("proc_root") or "/"
    wanted = irq.plan(irqs, [int(c) for c in doc["cpus"]])
    drift, written, failed = [], 0, []
    for number in irqs:
        have = irq.read_affinity(proc_root, number)
        if have is not None and set(have) == set(wanted[number]):
            continue
        text = irq.format_cpulist(wanted[number])
        if check:
            drift.append("IRQ %d is %s, wanted %s" % (number, irq.format_cpulist(have or []), text))
            continue
        try:
            with open(irq.irq_affinity_path(proc_root, number), "w") as handle:
                handle.write(text + "\n")
        except (IOError, OSError) as exc:
            failed.append("IRQ %d -> %s: %s" % (number, text, exc))
            continue
        written += 1
        if set(irq.read_affinity(proc_root, number) or []) != set(wanted[number]):
            failed.append("IRQ %d: the kernel did not take %s" % (number, text))
    for line in drift + failed:
        err("%s: %s" % (name, line))
    if check:
        print("%s: %s: %d of %d IRQ(s) differ" % (PROG, name, len(drift), len(irqs)))
        return 1 if drift else 0
    print("%s: %s (%s): %d IRQ(s), %d written, %d error(s)" % (PROG, name, address, len(irqs), written, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
