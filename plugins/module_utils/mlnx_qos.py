# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the output of ``mlnx_qos -i <netdev>`` (NVIDIA/Mellanox mlnx-tools) and build its set argv.

Pure functions over text. Parsed keys (absent when the section is absent, so a fragment parses):
``dcbx_mode``, ``trust`` (``dscp``/``pcp``), ``dscp2prio`` ({dscp: prio}), ``cable_len``,
``pfc`` (8 booleans), ``pfc_buffer`` (8 ints), ``tc_tsa``/``tc_bw`` (per traffic class),
``prio_tc`` (8 ints: the traffic class of each priority).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_TC_RE = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]+),\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)\s*%)?", re.I)


def parse(text):
    """Parse ``mlnx_qos -i X`` output into a dict (see module docstring)."""
    out = {}
    lines = [line.rstrip("\r") for line in (text or "").splitlines()]
    dscp2prio = {}
    tcs = {}
    prio_tc = {}
    current_tc = None
    in_pfc = False
    pfc_prios = None
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        low = line.lower()
        if low.startswith("dcbx mode:"):
            out["dcbx_mode"] = line.split(":", 1)[1].strip()
        elif low.startswith("priority trust state:") or low.startswith("priority trust mode:"):
            out["trust"] = line.split(":", 1)[1].strip().lower()
        elif low.startswith("cable len:"):
            try:
                out["cable_len"] = int(line.split(":", 1)[1])
            except ValueError:
                pass
        elif low.startswith("prio:") and "dscp:" in low:
            m = re.match(r"prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)", line, re.I)
            if m:
                for item in m.group(2).split(","):
                    if item.strip():
                        dscp2prio[int(item)] = int(m.group(1))
        elif low.startswith("pfc configuration"):
            in_pfc = True
        elif in_pfc and low.startswith("priority") and ":" not in low:
            pfc_prios = [int(v) for v in line.split()[1:]]
        elif in_pfc and low.startswith("enabled") and pfc_prios is not None:
            vals = [v == "1" for v in line.split()[1:]]
            out["pfc"] = [vals[pfc_prios.index(p)] if p in pfc_prios and pfc_prios.index(p) < len(vals) else False
                          for p in range(8)]
        elif in_pfc and low.startswith("buffer") and pfc_prios is not None:
            vals = [int(v) for v in line.split()[1:]]
            out["pfc_buffer"] = [vals[pfc_prios.index(p)] if p in pfc_prios and pfc_prios.index(p) < len(vals) else 0
                                 for p in range(8)]
        elif _TC_RE.match(line):
            in_pfc = False
            m = _TC_RE.match(line)
            current_tc = int(m.group(1))
            tcs[current_tc] = {"ratelimit": m.group(2).strip(), "tsa": m.group(3).lower(),
                               "bw": int(m.group(4)) if m.group(4) is not None else None}
        elif current_tc is not None and low.startswith("priority:"):
            for item in line.split(":", 1)[1].replace(",", " ").split():
                if item.isdigit():
                    prio_tc[int(item)] = current_tc
        else:
            if not low.startswith(("enabled", "buffer", "priority")):
                in_pfc = False
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
