# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""IRQs of a PCI device and their CPU affinity, from ``/proc`` and ``/sys``.

- ``<proc_root>/proc/interrupts``: IRQ number -> name (last column, e.g. ``mlx5_comp3@pci:0000:81:00.0``).
- ``<proc_root>/proc/irq/<N>/smp_affinity_list``: current CPUs of an IRQ (written to pin it).
- ``<sysfs_root>/sys/bus/pci/devices/<addr>/msi_irqs/``: the device's MSI/MSI-X IRQ numbers;
  ``numa_node`` and ``local_cpulist`` beside it.
- ``<sysfs_root>/sys/devices/system/cpu/online`` and ``cpuN/topology/thread_siblings_list``: the
  CPUs and which of them share a core.

Pure functions over root directories plus ``plan()``, which assigns one IRQ per core.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def parse_cpulist(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]; '' or None -> []. ValueError on garbage."""
    cpus = set()
    for part in (text or "").replace("\n", "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.update(range(int(low), int(high) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def _ranges(cpus):
    """Sorted CPUs -> [(first, last), ...] of consecutive runs."""
    runs = []
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], cpu)
        else:
            runs.append((cpu, cpu))
    return runs


def format_cpulist(cpus):
    """[0, 1, 2, 3, 8] -> '0-3,8'."""
    return ",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in _ranges(sorted(set(cpus))))


def parse_interrupts(text):
    """``/proc/interrupts`` -> {irq (int): {'name': last column, 'desc': text after the counts}}.

    Only numbered IRQs are returned (NMI, LOC, ... are skipped)."""
    lines = (text or "").splitlines()
    if not lines:
        return {}
    ncpu = len(lines[0].split())
    out = {}
    for line in lines[1:]:
        head, sep, rest = line.partition(":")
        if not sep or not head.strip().isdigit():
            continue
        fields = rest.split()
        desc = fields[ncpu:]
        out[int(head)] = {"name": desc[-1] if desc else "", "desc": " ".join(desc)}
    return out


def read_interrupts(proc_root):
    return parse_interrupts(_read(os.path.join(proc_root, "proc", "interrupts")))


def pci_dir(sysfs_root, address):
    return os.path.join(sysfs_root, "sys", "bus", "pci", "devices", address)


PCI_ADDRESS_RE = re.compile(r"^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def pci_address_of(sysfs_root, interface):
    """PCI address of a netdev: the ``device`` link's target or, when that is not a PCI function
    (virtio-net: ``.../0000:00:02.0/virtio0``), its nearest PCI ancestor; None when unknown."""
    path = os.path.join(sysfs_root, "sys", "class", "net", interface, "device")
    if not os.path.exists(path):
        return None
    real = os.path.realpath(path)
    for dummy in range(4):
        if PCI_ADDRESS_RE.match(os.path.basename(real)):
            return os.path.basename(real)
        real = os.path.dirname(real)
    return os.path.basename(os.path.realpath(path))


def read_device(sysfs_root, address):
    """{'address', 'numa_node', 'local_cpus', 'msi_irqs' (list or None when no msi_irqs/)}."""
    base = pci_dir(sysfs_root, address)
    node = _read(os.path.join(base, "numa_node"))
    try:
        msi = sorted(int(n) for n in os.listdir(os.path.join(base, "msi_irqs")) if n.isdigit())
    except OSError:
        msi = None
    local = _read(os.path.join(base, "local_cpulist"))
    return {"address": address, "exists": os.path.isdir(base),
            "numa_node": int(node) if node is not None and node.lstrip("-").isdigit() else None,
            "local_cpus": parse_cpulist(local) if local else [], "msi_irqs": msi}


def online_cpus(sysfs_root):
    return parse_cpulist(_read(os.path.join(sysfs_root, "sys", "devices", "system", "cpu", "online")))


def node_cpus(sysfs_root, node):
    return parse_cpulist(_read(os.path.join(sysfs_root, "sys", "devices", "system", "node",
                                            "node%d" % node, "cpulist")))


def core_order(sysfs_root, cpus):
    """``cpus`` ordered one thread per core first (lowest thread of each core), then the siblings."""
    first, rest = [], []
    for cpu in sorted(cpus):
        siblings = _read(os.path.join(sysfs_root, "sys", "devices", "system", "cpu", "cpu%d" % cpu,
                                      "topology", "thread_siblings_list"))
        sib = parse_cpulist(siblings) if siblings else [cpu]
        (first if cpu == min(sib) else rest).append(cpu)
    return first + rest


def irq_affinity_path(proc_root, irq):
    return os.path.join(proc_root, "proc", "irq", str(irq), "smp_affinity_list")


def read_affinity(proc_root, irq):
    text = _read(irq_affinity_path(proc_root, irq))
    return None if text is None else parse_cpulist(text)


def device_irqs(interrupts, msi_irqs, address, name_regex=None):
    """IRQs of the device: its ``msi_irqs`` plus /proc/interrupts lines naming its PCI address,
    optionally only those whose name matches ``name_regex``. Sorted list of ints."""
    irqs = set(msi_irqs or [])
    for irq, info in interrupts.items():
        if address and address in info["desc"]:
            irqs.add(irq)
    if name_regex:
        pattern = re.compile(name_regex)
        irqs = set(i for i in irqs if pattern.search(interrupts.get(i, {}).get("name", "")))
    return sorted(irqs)


def plan(irqs, candidates):
    """IRQ -> [cpu]: the i-th IRQ gets the i-th candidate (wrapping), so with candidates ordered
    one-thread-per-core first each core takes one IRQ before any core takes two."""
    if not candidates:
        return {}
    return dict((irq, [candidates[i % len(candidates)]]) for i, irq in enumerate(sorted(irqs)))


def irqbalance_pids(proc_root):
    """PIDs whose ``comm`` is ``irqbalance``."""
    base = os.path.join(proc_root, "proc")
    out = []
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        if name.isdigit() and _read(os.path.join(base, name, "comm")) == "irqbalance":
            out.append(int(name))
    return sorted(out)


BANIRQ_RE = re.compile(r"--banirq[= ](\d+)")


def irqbalance_config_with_bans(text, irqs):
    """Return the irqbalance environment file ``text`` whose ``IRQBALANCE_ARGS`` also holds
    ``--banirq=N`` for each of ``irqs`` (other arguments and bans kept); the line is added if missing."""
    lines = (text or "").splitlines()
    for idx, line in enumerate(lines):
        m = re.match(r'^\s*IRQBALANCE_ARGS\s*=\s*"?(.*?)"?\s*$', line)
        if m:
            args = m.group(1)
            have = set(int(n) for n in BANIRQ_RE.findall(args))
            other = BANIRQ_RE.sub("", args).split()
            bans = sorted(have | set(irqs))
            lines[idx] = 'IRQBALANCE_ARGS="%s"' % " ".join(other + ["--banirq=%d" % n for n in bans])
            return "\n".join(lines) + "\n"
    lines.append('IRQBALANCE_ARGS="%s"' % " ".join("--banirq=%d" % n for n in sorted(set(irqs))))
    return "\n".join(lines) + "\n"
