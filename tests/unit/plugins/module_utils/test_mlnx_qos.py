# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mlnx_qos parser on every recorded ``mlnx_qos`` output of the corpus and on HANDMADE full output."""

from __future__ import annotations

import pytest

from pathlib import Path

from ansible_collections.gpufleet.cluster.plugins.module_utils import mlnx_qos

HANDMADE = Path(__file__).resolve().parents[2] / "fixtures" / "hand_made" / "roce"


def test_spiderpool_fragment_trust_dscp_pfc5(corpus_file):
    got = mlnx_qos.parse(corpus_file("mlnx_qos/spiderpool-mlnx_qos-fragment-trust-dscp-pfc5.txt").read_text())
    assert got["trust"] == "dscp"
    assert got["pfc"] == [False, False, False, False, False, True, False, False]
    assert got["pfc_buffer"] == [0, 0, 0, 0, 0, 1, 0, 0]
    # A fragment: no dscp2prio / tc sections were recorded, so none are invented.
    assert "dscp2prio" not in got and "prio_tc" not in got


def test_every_mlnx_qos_recording_is_covered(corpus, corpus_full):
    if not corpus_full:
        pytest.skip('only meaningful on the full corpus')
    # Every recorded mlnx_qos output in the corpus has a test above (dcb ones: test_dcb.py).
    names = sorted(p.name for p in (corpus / "mlnx_qos").glob("*mlnx_qos*"))
    assert names == ["spiderpool-mlnx_qos-fragment-trust-dscp-pfc5.txt"]


def test_handmade_full_output():
    got = mlnx_qos.parse((HANDMADE / "mlnx_qos-i-cx6-default-HANDMADE.txt").read_text())
    assert got["dcbx_mode"] == "OS controlled"
    assert got["trust"] == "pcp"
    assert got["cable_len"] == 7
    assert got["pfc"] == [False] * 8
    assert got["tc_tsa"] == ["vendor"] * 8
    assert got["tc_bw"] == [None] * 8
    assert got["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]


def test_dscp2prio_and_ets_bw():
    text = """Priority trust state: dscp
dscp2prio mapping:
        prio:0 dscp:07,06,05,04,03,02,01,00,
        prio:3 dscp:31,30,29,28,27,26,25,24,
PFC configuration:
        priority    0   1   2   3   4   5   6   7
        enabled     0   0   0   1   0   0   0   0
tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
         priority:  0 1 2
tc: 1 ratelimit: unlimited, tsa: strict
         priority:  3
"""
    got = mlnx_qos.parse(text)
    assert got["dscp2prio"][26] == 3 and got["dscp2prio"][0] == 0 and len(got["dscp2prio"]) == 16
    assert got["pfc"][3] is True and sum(got["pfc"]) == 1
    assert got["tc_tsa"] == ["ets", "strict"] and got["tc_bw"] == [50, None]
    assert got["prio_tc"][:4] == [0, 0, 0, 1]


def test_set_argv():
    argv = mlnx_qos.set_argv("mlnx_qos", "eth0", {"trust": "dscp", "pfc": [False, False, False, True] + [False] * 4})
    assert argv == ["mlnx_qos", "-i", "eth0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"]
    assert mlnx_qos.set_argv("mlnx_qos", "eth0", {}) is None
    argv = mlnx_qos.set_argv("m", "e", {"tc_tsa": ["ets"] * 8, "tc_bw": [12] * 4 + [13] * 4, "prio_tc": list(range(8))})
    assert argv[3:] == ["--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "12,12,12,12,13,13,13,13",
                        "--prio_tc", "0,1,2,3,4,5,6,7"]


def test_empty():
    assert mlnx_qos.parse("") == {}


# HANDMADE, modeled on mlnx_qos outputs seen in public (not copied): the MLNX_OFED 4.x+ layout with
# tab indents, "tsa: ets, bw: N%", "default priority:" with "prio:N" lines and a "Receive buffer size
# (bytes): ...,total_size=N" line (print formats of Mellanox/mlnx-tools python/mlnx_qos and
# dcbnetlink.py; tables as in att/netarbiter
# nvmf/OUTPUTSAMPLE.setup-nic-lossless-layer3.sh.md shows the tab-indented tables; the
# community.mellanox.com mlnx_qos page (MLNX_OFED 4.2) shows the ets/bw lines), and the older
# MLNX_OFED 2.x/3.x layout whose traffic classes list "up:" priorities each followed by "skprio:" lines
# (user manuals of that era); values invented.
OFED5_HANDMADE = """DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
\tprio:0 dscp:07,06,05,04,03,02,01,00,
\tprio:3 dscp:31,30,29,28,27,26,25,24,
default priority:
\tprio:0
Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027584
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0
\tbuffer      0   0   0   1   0   0   0   0
tc: 0 ratelimit: unlimited, tsa: ets, bw: 40%
\t priority:  0
\t priority:  1
\t priority:  2
tc: 1 ratelimit: unlimited, tsa: ets, bw: 60%
\t priority:  3
\t priority:  4
\t priority:  5
\t priority:  6
tc: 2 ratelimit: 10.0 Gbps, tsa: strict
\t priority:  7
"""

OFED3_HANDMADE = """Priority trust mode: none
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0

tc: 0 ratelimit: unlimited, tsa: strict
\t up:  0
\t\t skprio:  0
\t\t skprio:  1
\t\t skprio:  2 (tos: 8)
\t up:  1
tc: 1 ratelimit: unlimited, tsa: strict
\t up:  2
\t up:  3
tc: 2 ratelimit: unlimited, tsa: strict
\t up:  4
\t up:  5
\t up:  6
\t up:  7
"""


def test_handmade_ofed5_buffers_ets_and_multiline_priorities():
    got = mlnx_qos.parse(OFED5_HANDMADE)
    assert got["trust"] == "dscp" and got["cable_len"] == 7
    assert got["receive_buffer_size"] == [130944, 130944, 0, 0, 0, 0, 0, 0] and got["total_size"] == 1027584
    assert got["default_prio"] == [0]
    assert got["pfc"] == [False, False, False, True, False, False, False, False]
    assert got["pfc_buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert got["tc_tsa"] == ["ets", "ets", "strict"] and got["tc_bw"] == [40, 60, None]
    assert got["tc_ratelimit"] == ["unlimited", "unlimited", "10.0 Gbps"]
    assert got["prio_tc"] == [0, 0, 0, 1, 1, 1, 1, 2]
    assert got["dscp2prio"][24] == 3 and got["dscp2prio"][7] == 0


def test_handmade_ofed3_up_and_skprio_lines():
    got = mlnx_qos.parse(OFED3_HANDMADE)
    assert got["trust"] == "none"
    assert got["pfc"][3] is True and sum(got["pfc"]) == 1
    assert "pfc_buffer" not in got  # that layout has no buffer row
    # skprio lines are socket priorities, not user priorities: they must not move priorities around
    assert got["prio_tc"] == [0, 0, 1, 1, 2, 2, 2, 2]
    assert got["tc_tsa"] == ["strict"] * 3


def test_pfc_row_not_matching_header_is_left_out():
    text = "PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   1\n"
    assert "pfc" not in mlnx_qos.parse(text)  # cut row: unknown, not priorities 3-7 "off"
    text = "PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0 0 x 1 0 0 0 0\n"
    assert "pfc" not in mlnx_qos.parse(text)


def test_damaged_recordings_never_crash(corpus, damaged):
    """Every mlnx_qos recording and HANDMADE layout cut and garbled: a dict back; pfc, when present,
    is 8 booleans and prio_tc 8 entries."""
    texts = [p.read_text() for p in sorted((corpus / "mlnx_qos").glob("*mlnx_qos*"))]
    texts += [(HANDMADE / "mlnx_qos-i-cx6-default-HANDMADE.txt").read_text(), OFED5_HANDMADE, OFED3_HANDMADE]
    for text in texts:
        for variant in damaged(text, none=True):
            got = mlnx_qos.parse(variant)
            if "pfc" in got:
                assert len(got["pfc"]) == 8 and all(isinstance(v, bool) for v in got["pfc"])
            if "prio_tc" in got:
                assert len(got["prio_tc"]) == 8
