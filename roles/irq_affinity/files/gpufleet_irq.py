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

Pure functions over root directories plus ``plan()``, which assigns one IRQ per core, and
``irqbalance_config_with_bans()``, the shell-assignment-aware edit of the irqbalance environment file.
Standard library only: the role irq_affinity copies this file to the node as ``gpufleet_irq.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re


def _read(path):
    """Text of a kernel file, stripped; None when it is missing, unreadable or not text."""
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError, ValueError):  # ValueError: UnicodeDecodeError
        return None


# The largest NR_CPUS a Linux kernel is built with (x86-64 MAXSMP): CPU numbers are 0-8191.
MAX_CPUS = 8192
_CPU_RANGE_RE = re.compile(r"^([0-9]+)\s*(?:-\s*([0-9]+))?$")


def cpulist_ranges(text):
    """'0-3,8' -> [(0, 3), (8, 8)], not expanded (a range of a billion CPUs costs nothing here).

    ValueError on garbage and on a reversed range such as ``5-2``."""
    out = []
    for part in (text or "").replace("\n", "").split(","):
        part = part.strip()
        if not part:
            continue
        m = _CPU_RANGE_RE.match(part)
        if not m:
            raise ValueError("%r is not a CPU number or a range like 8-15" % part)
        low = int(m.group(1))
        high = int(m.group(2)) if m.group(2) is not None else low
        if high < low:
            raise ValueError("the range %s is reversed (write %d-%d)" % (part, high, low))
        out.append((low, high))
    return out


def parse_cpulist(text, max_cpu=None):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]; '' or None -> []. ValueError on garbage, on a reversed
    range and, with ``max_cpu``, on a CPU above it (checked before anything is expanded)."""
    ranges = cpulist_ranges(text)
    if max_cpu is not None:
        for dummy, high in ranges:
            if high > max_cpu:
                raise ValueError("CPU %d is above CPU %d" % (high, max_cpu))
    cpus = set()
    for low, high in ranges:
        cpus.update(range(low, high + 1))
    return sorted(cpus)


def _cpulist(text):
    """parse_cpulist of a kernel file; [] when it does not parse or names CPUs no kernel has."""
    try:
        return parse_cpulist(text, MAX_CPUS - 1)
    except ValueError:
        return []


def host_max_cpu(sysfs_root):
    """(highest CPU number of the host, the sysfs file it comes from) from ``possible``, ``present`` or
    ``online`` in ``sys/devices/system/cpu/``; (MAX_CPUS - 1, None) when none of them is readable."""
    for name in ("possible", "present", "online"):
        rel = os.path.join("sys", "devices", "system", "cpu", name)
        try:
            ranges = cpulist_ranges(_read(os.path.join(sysfs_root, rel)))
        except ValueError:
            continue
        if ranges:
            return min(max(high for dummy, high in ranges), MAX_CPUS - 1), "/" + rel
    return MAX_CPUS - 1, None


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
NETDEV_NAME_MAX = 15  # IFNAMSIZ - 1


def netdev_name_problem(name):
    """Why ``name`` is not a netdev name the kernel accepts (dev_valid_name), or None: 1-15 characters,
    not ``.``/``..``, without ``/``, ``:``, NUL or whitespace - so it stays one path component."""
    if not isinstance(name, str) or not name:
        return "it is empty"
    if len(name) > NETDEV_NAME_MAX:
        return "it is %d characters long" % len(name)
    if name in (".", "..") or ".." in name or any(c in "/:\0" or c.isspace() for c in name):
        return "it contains '/', ':', '..', NUL or whitespace"
    return None


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
            "local_cpus": _cpulist(local) if local else [], "msi_irqs": msi}


def online_cpus(sysfs_root):
    return _cpulist(_read(os.path.join(sysfs_root, "sys", "devices", "system", "cpu", "online")))


def node_cpus(sysfs_root, node):
    return _cpulist(_read(os.path.join(sysfs_root, "sys", "devices", "system", "node",
                                       "node%d" % node, "cpulist")))


def core_order(sysfs_root, cpus):
    """``cpus`` ordered one thread per core first (lowest thread of each core), then the siblings."""
    first, rest = [], []
    for cpu in sorted(cpus):
        siblings = _read(os.path.join(sysfs_root, "sys", "devices", "system", "cpu", "cpu%d" % cpu,
                                      "topology", "thread_siblings_list"))
        sib = _cpulist(siblings) or [cpu]
        (first if cpu == min(sib) else rest).append(cpu)
    return first + rest


def irq_affinity_path(proc_root, irq):
    return os.path.join(proc_root, "proc", "irq", str(irq), "smp_affinity_list")


def read_affinity(proc_root, irq):
    """CPUs of an IRQ; None when the file is missing or does not hold a cpulist."""
    text = _read(irq_affinity_path(proc_root, irq))
    if text is None:
        return None
    try:
        return parse_cpulist(text, MAX_CPUS - 1)
    except ValueError:
        return None


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


IRQBALANCE_VAR = "IRQBALANCE_ARGS"
BAN_RECORD_PREFIX = "# gpufleet.cluster.irq_affinity bans of "
_BAN_RECORD_RE = re.compile(r"^# gpufleet\.cluster\.irq_affinity bans of (\S+): ([0-9,\- ]*?)[ \t]*\r?$")
# NAME=, with optional indentation and "export " (blanks around "=" are accepted, as systemd's
# EnvironmentFile= does; they are kept as they are).
_ASSIGN_RE = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=")
_BLANKS_RE = re.compile(r"[ \t]*")
_AFTER_VALUE_RE = re.compile(r"^[ \t]*(?:#[^\n]*)?$")
_WORD_END = " \t\r\n;&|<>()"
_MAX_IRQ = 1 << 20  # a record naming larger IRQ numbers is not ours (and is not expanded)


def _scan_value(text, pos):
    """The shell word that starts at ``pos``: (end, [(quote, inner), ...]) with quote ``'``, ``"`` or
    ``''`` (unquoted). Quoted parts may span lines. ValueError on an unterminated quote."""
    segments = []
    size = len(text)
    while pos < size and text[pos] not in _WORD_END:
        char = text[pos]
        if char == "'":
            end = text.find("'", pos + 1)
            if end < 0:
                raise ValueError("a single quote is not closed")
            segments.append(("'", text[pos + 1:end]))
            pos = end + 1
        elif char == '"':
            end = pos + 1
            while end < size and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= size:
                raise ValueError("a double quote is not closed")
            segments.append(('"', text[pos + 1:end]))
            pos = end + 1
        else:
            end = pos
            while end < size and text[end] not in _WORD_END + "'\"":
                end += 2 if text[end] == "\\" else 1
            end = min(end, size)
            segments.append(("", text[pos:end]))
            pos = end
    return pos, segments


def parse_env_assignments(text):
    """Assignment lines of a shell environment file, in file order: dicts with ``name``, ``line``
    (1-based), ``start`` (offset of the line), ``value_start``/``value_end`` (offsets of the value as
    written, quotes included), ``segments`` (see _scan_value) and ``error`` (why the line cannot be
    edited safely, else None). Other lines (comments, blank, commands) are skipped."""
    out = []
    pos = 0
    size = len(text)
    while pos < size:
        newline = text.find("\n", pos)
        line_end = size if newline < 0 else newline + 1
        match = _ASSIGN_RE.match(text, pos)
        if match and match.end() <= line_end:
            value_start = _BLANKS_RE.match(text, match.end()).end()
            if value_start >= size or text[value_start] in "#\r\n":
                value_start = match.end()  # empty value (a comment may follow the blanks)
            entry = {"name": match.group(1), "line": text.count("\n", 0, pos) + 1, "start": pos,
                     "value_start": value_start, "value_end": None, "segments": None, "error": None}
            try:
                value_end, segments = _scan_value(text, value_start)
            except ValueError as exc:
                entry["error"] = str(exc)
            else:
                newline = text.find("\n", value_end)
                eol = size if newline < 0 else newline
                rest = text[value_end:eol].rstrip("\r")
                if not _AFTER_VALUE_RE.match(rest):
                    entry["error"] = "%r follows the value (only a # comment may)" % rest.strip()
                entry["value_end"], entry["segments"] = value_end, segments
                line_end = size if newline < 0 else newline + 1
            out.append(entry)
        pos = line_end
    return out


def _split_words(inner):
    """'  a  b ' -> ([['  ', 'a'], ['  ', 'b']], ' '): each word with the blanks before it, and the tail."""
    items = []
    pos = 0
    for match in re.finditer(r"\S+", inner):
        items.append([inner[pos:match.start()], match.group()])
        pos = match.end()
    return items, inner[pos:]


def _join_words(items, lead, tail):
    return "".join((lead if idx == 0 else (sep or " ")) + word for idx, (sep, word) in enumerate(items)) + tail


def banned_irqs(words):
    """IRQs banned by irqbalance arguments (``--banirq=N``, ``--banirq N``, ``-iN``, ``-i N``)."""
    out = set()
    for idx, word in enumerate(words):
        nxt = words[idx + 1] if idx + 1 < len(words) else ""
        if word in ("--banirq", "-i") and nxt.isdigit():
            out.add(int(nxt))
        elif word.startswith("--banirq=") and word[9:].isdigit():
            out.add(int(word[9:]))
        elif word.startswith("-i") and word[2:].isdigit():
            out.add(int(word[2:]))
    return out


def ban_records(text):
    """{owner: set of IRQs} of the record comment lines this module keeps in the irqbalance file."""
    out = {}
    for line in (text or "").split("\n"):
        match = _BAN_RECORD_RE.match(line)
        if match:
            try:
                nums = parse_cpulist(match.group(2).replace(" ", ""), _MAX_IRQ)
            except ValueError:
                continue
            out.setdefault(match.group(1), set()).update(nums)
    return out


def irqbalance_config_with_bans(text, irqs, owner):
    """Return the irqbalance environment file ``text`` whose ``IRQBALANCE_ARGS`` bans exactly the IRQs
    ``owner`` (a device's PCI address) wants now; ValueError (the line and why) when the assignment
    cannot be edited safely.

    - The last assignment of IRQBALANCE_ARGS is the one that counts (shell and systemd
      ``EnvironmentFile=`` alike) and is the only one edited; earlier ones are left as they are. Its
      quoting (``'...'``, ``"..."``, none), ``export``, blanks and trailing ``# comment`` are kept; an
      unquoted value that gets a second word is put in double quotes. A value glued from several
      quoted parts, an unclosed quote or a command after the value is refused.
    - Which bans are ours: a comment line ``# gpufleet.cluster.irq_affinity bans of OWNER: 120-135``
      (above the assignment) records the IRQs this module added for OWNER. A ``--banirq=N`` recorded
      for OWNER and no longer wanted is removed - unless another owner's record holds N too. Bans not
      in any record are the operator's: kept, and not recorded even when wanted.
    - Without an assignment, ``IRQBALANCE_ARGS="--banirq=N ..."`` is appended with its record.
    """
    text = text or ""
    wanted = set(int(i) for i in irqs)
    records = ban_records(text)
    mine = records.get(owner, set())
    others = set()
    for name, nums in records.items():
        if name != owner:
            others |= nums
    assignments = [a for a in parse_env_assignments(text) if a["name"] == IRQBALANCE_VAR]
    target = assignments[-1] if assignments else None
    if target is not None:
        where = "%s on line %d" % (IRQBALANCE_VAR, target["line"])
        if target["error"]:
            raise ValueError("%s cannot be edited safely: %s" % (where, target["error"]))
        if len(target["segments"]) > 1:
            raise ValueError("%s is glued from several quoted or unquoted parts; write it as one quoted "
                             "string, for example %s=\"--foo --bar\"" % (where, IRQBALANCE_VAR))
        quote, inner = target["segments"][0] if target["segments"] else ('"', "")  # empty: as if ""
        if quote == "" and "\\" in inner:
            raise ValueError("%s is unquoted and holds a backslash; put the value in quotes" % where)
    else:
        quote, inner = '"', ""
    items, tail = _split_words(inner)
    lead = items[0][0] if items else ""
    present = banned_irqs([word for dummy, word in items])
    operators = present - mine - others
    stale = mine - wanted - others
    kept = [item for item in items
            if not (item[1].startswith("--banirq=") and item[1][9:].isdigit() and int(item[1][9:]) in stale)]
    present = banned_irqs([word for dummy, word in kept])
    kept += [[" ", "--banirq=%d" % n] for n in sorted(wanted - present)]
    new_inner = _join_words(kept, lead, tail)
    if quote == "" and re.search(r"\s", new_inner):
        quote = '"'
    new_value = quote + new_inner + quote
    record = wanted - operators
    eol = "\r\n" if "\r\n" in text else "\n"  # lines added follow the file's line ends
    record_line = "%s%s: %s%s" % (BAN_RECORD_PREFIX, owner, format_cpulist(record), eol) if record else ""

    edits = []  # (start, end, replacement), applied from the end
    record_spans = []
    pos = 0
    for line in text.split("\n"):
        line += "\n" if pos + len(line) < len(text) else ""
        match = _BAN_RECORD_RE.match(line.rstrip("\n"))
        if match and match.group(1) == owner:
            record_spans.append((pos, pos + len(line)))
        pos += len(line)
    for idx, (start, end) in enumerate(record_spans):
        replacement = record_line if idx == 0 else ""
        if replacement and not text[start:end].endswith("\n"):
            replacement = replacement.rstrip("\r\n")
        edits.append((start, end, replacement))
    if target is not None:
        if not record_spans and record_line:
            edits.append((target["start"], target["start"], record_line))
        edits.append((target["value_start"], target["value_end"], new_value))
    else:
        sep = eol if text and not text.endswith("\n") else ""
        edits.append((len(text), len(text), sep + ("" if record_spans else record_line)
                      + '%s=%s%s' % (IRQBALANCE_VAR, new_value, eol)))
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
