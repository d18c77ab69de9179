# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the output of ``mlnx_qos -i <netdev>`` (NVIDIA/Mellanox mlnx-tools) and build its set argv.

Pure functions over text. Parsed keys (absent when the section is absent, so a fragment parses):
``dcbx_mode``, ``trust`` (``dscp``/``pcp``), ``dscp2prio`` ({dscp: prio}), ``cable_len``,
``pfc`` (8 booleans), ``pfc_buffer`` (8 ints), ``tc_tsa``/``tc_bw`` (per traffic class),
``prio_tc`` (8 ints: the traffic class of each priority; None for a priority no tc lists),
``receive_buffer_size`` (ints, bytes per receive buffer, MLNX_OFED 4.x and later) plus the
``name=value`` extras of that line (``total_size``), ``default_prio`` (the ``prio:N`` lines under
``default priority:``).

Layouts seen: MLNX_OFED 4.x-24.x (``Priority trust state``, ``priority:`` lines under each ``tc:``,
``tsa: vendor`` or ``tsa: ets, bw: N%``) and the MLNX_OFED 2.x/3.x one (``up:`` lines, each followed
by ``skprio:`` lines).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_TC_RE = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]+),\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)\s*%)?", re.I)
# Priorities of a traffic class: "priority:  1" (MLNX_OFED 4.x and later) or "up:  0" (MLNX_OFED 2.x/3.x,
# whose "skprio:" lines under each "up:" are socket priorities, not user priorities, and are ignored).
_TC_PRIO_RE = re.compile(r"^(?:priority|up)\s*:\s*(.*)$", re.I)


def _int(text):
    try:
        return int(text.strip())
    except (AttributeError, ValueError):
        return None


def _per_prio(prios, values, default):
    """Values of a PFC table row reordered by priority 0..7; None when the row does not line up."""
    if values is None or len(values) != len(prios):
        return None
    by_prio = dict(zip(prios, values))
    return [by_prio.get(p, default) for p in range(8)]


def _row_ints(words):
    nums = [_int(w) for w in words]
    return None if any(n is None for n in nums) else nums


def parse(text):
    """Parse ``mlnx_qos -i X`` output into a dict (see module docstring).

    Lines that do not parse (a cut or garbled output) leave their key out; a PFC row whose columns
    do not match the ``priority`` header is left out as well, never guessed.
    """
    out = {}
    lines = [line.rstrip("\r") for line in (text or "").splitlines()]
    dscp2prio = {}
    tcs = {}
    prio_tc = {}
    current_tc = None
    in_pfc = False
    in_default = False
    pfc_prios = None
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        low = line.lower()
        if not low.startswith("prio:"):
            in_default = False
        tc_match = _TC_RE.match(line)
        if low.startswith("dcbx mode:"):
            out["dcbx_mode"] = line.partition(":")[2].strip() or None
        elif low.startswith("priority trust state:") or low.startswith("priority trust mode:"):
            out["trust"] = line.partition(":")[2].strip().lower() or None
        elif low.startswith("cable len:"):
            value = _int(line.partition(":")[2])
            if value is not None:
                out["cable_len"] = value
        elif low.startswith("receive buffer size"):
            # "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016"
            sizes = []
            for item in line.partition(":")[2].split(","):
                item = item.strip()
                if "=" in item:
                    key, dummy, value = item.partition("=")
                    if _int(value) is not None:
                        out[key.strip()] = _int(value)
                elif item:
                    sizes.append(_int(item))
            if sizes and all(v is not None for v in sizes):
                out["receive_buffer_size"] = sizes
        elif low.startswith("default priority:"):
            in_default = True
            continue
        elif in_default and re.match(r"prio:\s*\d+$", low):
            # "default priority:" then one "prio:N" line per default-priority APP entry (mlnx-tools)
            out.setdefault("default_prio", []).append(int(low.split(":")[1]))
            continue
        elif low.startswith("prio:") and "dscp:" in low:
            m = re.match(r"prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)$", line, re.I)
            if m:
                for item in m.group(2).split(","):
                    if item.strip().isdigit():
                        dscp2prio[int(item)] = int(m.group(1))
        elif low.startswith("pfc configuration"):
            in_pfc = True
            pfc_prios = None
        elif in_pfc and low.split()[0] == "priority" and ":" not in low:
            pfc_prios = _row_ints(line.split()[1:])
        elif in_pfc and low.split()[0] == "enabled" and pfc_prios:
            vals = _per_prio(pfc_prios, _row_ints(line.split()[1:]), 0)
            if vals is not None and all(v in (0, 1) for v in vals):
                out["pfc"] = [v == 1 for v in vals]
        elif in_pfc and low.split()[0] == "buffer" and pfc_prios:
            vals = _per_prio(pfc_prios, _row_ints(line.split()[1:]), 0)
            if vals is not None:
                out["pfc_buffer"] = vals
        elif tc_match:
            in_pfc = False
            current_tc = int(tc_match.group(1))
            tcs[current_tc] = {"ratelimit": tc_match.group(2).strip(), "tsa": tc_match.group(3).lower(),
                               "bw": int(tc_match.group(4)) if tc_match.group(4) is not None else None}
        elif current_tc is not None and _TC_PRIO_RE.match(line):
            for item in _TC_PRIO_RE.match(line).group(1).replace(",", " ").split():
                if item.isdigit() and int(item) < 8:
                    prio_tc[int(item)] = current_tc
        elif low.startswith("skprio:"):
            continue
        else:
            in_pfc = False
            if low.startswith("tc:"):
                current_tc = None  # a garbled tc header: its priorities must not go to the previous tc
    if dscp2prio:
        out["dscp2prio"] = dict(sorted(dscp2prio.items()))
    if tcs:
        n = max(tcs) + 1
        out["tc_tsa"] = [tcs[i]["tsa"] if i in tcs else None for i in range(n)]
        out["tc_bw"] = [tcs[i]["bw"] if i in tcs else None for i in range(n)]
        out["tc_ratelimit"] = [tcs[i]["ratelimit"] if i in tcs else None for i in range(n)]
    if prio_tc:
        out["prio_tc"] = [prio_tc.get(p) for p in range(8)]
    return out


def _csv(values):
    return ",".join(str(int(v)) if isinstance(v, bool) else str(v) for v in values)


def set_argv(binary, interface, changes):
    """One ``mlnx_qos`` argv applying ``changes`` (keys trust, pfc, tc_tsa, tc_bw, prio_tc); None when empty."""
    argv = [binary, "-i", interface]
    if "trust" in changes:
        argv += ["--trust", changes["trust"]]
    if "pfc" in changes:
        argv += ["--pfc", _csv(changes["pfc"])]
    if "tc_tsa" in changes:
        argv += ["--tsa", ",".join(changes["tc_tsa"])]
    if "tc_bw" in changes:
        argv += ["--tcbw", _csv(changes["tc_bw"])]
    if "prio_tc" in changes:
        argv += ["--prio_tc", _csv(changes["prio_tc"])]
    return argv if len(argv) > 3 else None
