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
