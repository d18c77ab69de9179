# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""iproute2 dcb parsers on every recorded ``dcb`` output of the corpus, plus the JSON form."""

from __future__ import annotations

import pytest

import json

from ansible_collections.gpufleet.cluster.plugins.module_utils import dcb


def test_pfc_cx3pro_prio3_on(corpus_file):
    got = dcb.parse_pfc(corpus_file("mlnx_qos/dcb-pfc-show-cx3pro-prio3-on.txt").read_text())
    assert got == {"pfc_cap": 8, "macsec_bypass": False, "delay": 0,
                   "pfc": [False, False, False, True, False, False, False, False]}


def test_pfc_all_off(corpus_file):
    got = dcb.parse_pfc(corpus_file("mlnx_qos/dcb-pfc-show-all-off.txt").read_text())
    assert got["pfc"] == [False] * 8 and got["pfc_cap"] == 8


def test_app_show_recording_holds_only_the_prompt(corpus_file):
    # The corpus file is only '$ dcb app show dev ens6' (CRLF): the MANIFEST's 'dscp-prio AF31:3' is not
    # in it. The parser must skip the prompt and report an empty table (-> trust pcp on mlx5).
    text = corpus_file("mlnx_qos/dcb-app-show-dscp-prio.txt").read_text()
    assert "dscp-prio" not in text
    got = dcb.parse_app(text)
    assert got == {"dscp2prio": {}}
    assert dcb.trust_from_app(got) == "pcp"


def test_every_dcb_recording_is_covered(corpus, corpus_full):
    if not corpus_full:
        pytest.skip('only meaningful on the full corpus')
    names = sorted(p.name for p in (corpus / "mlnx_qos").glob("dcb-*"))
    assert names == ["dcb-app-show-dscp-prio.txt", "dcb-pfc-show-all-off.txt", "dcb-pfc-show-cx3pro-prio3-on.txt"]


def test_app_text_as_documented_in_the_manifest():
    # The line the MANIFEST describes for the recording (named DSCP) and the -N numeric form.
    assert dcb.parse_app("dscp-prio AF31:3\n")["dscp2prio"] == {26: 3}
    got = dcb.parse_app("default-prio 0 \ndscp-prio 0:0 26:3 46:5\n")
    assert got["dscp2prio"] == {0: 0, 26: 3, 46: 5}
    assert dcb.trust_from_app(got) == "dscp"


def test_pfc_json():
    text = json.dumps({"pfc_cap": 8, "macsec_bypass": False, "delay": 0,
                       "prio_pfc": [False, False, False, True, False, False, False, False]})
    assert dcb.parse_pfc(text)["pfc"][3] is True


def test_ets_json_and_text():
    doc = {"willing": False, "ets_cap": 8, "cbs": False, "tc_bw": [0, 0, 0, 50, 50, 0, 0, 0],
           "tc_tsa": ["strict"] * 3 + ["ets", "ets"] + ["strict"] * 3, "prio_tc": [0, 1, 2, 3, 4, 5, 6, 7]}
    got = dcb.parse_ets(json.dumps(doc))
    assert got["tc_bw"] == doc["tc_bw"] and got["tc_tsa"][3] == "ets" and got["prio_tc"][7] == 7
    text = ("willing off ets-cap 8 cbs off \ntc-bw 0:0 1:0 2:0 3:50 4:50 5:0 6:0 7:0 \n"
            "tc-tsa 0:strict 1:strict 2:strict 3:ets 4:ets 5:strict 6:strict 7:strict \n"
            "prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 \n")
    got2 = dcb.parse_ets(text)
    assert got2["tc_bw"] == got["tc_bw"] and got2["tc_tsa"] == got["tc_tsa"] and got2["ets_cap"] == 8


def test_set_argvs():
    argvs = dcb.set_argvs("dcb", "eth0", {"pfc": [False, False, False, True] + [False] * 4, "trust": "dscp"})
    assert argvs[0] == ["dcb", "pfc", "set", "dev", "eth0", "prio-pfc", "0:off", "1:off", "2:off", "3:on",
                        "4:off", "5:off", "6:off", "7:off"]
    assert argvs[1][:6] == ["dcb", "app", "add", "dev", "eth0", "dscp-prio"] and "26:3" in argvs[1]
    assert dcb.set_argvs("dcb", "e", {"trust": "pcp"}, {"dscp2prio": {26: 3}}) == [
        ["dcb", "app", "del", "dev", "e", "dscp-prio", "26:3"]]
    assert dcb.set_argvs("dcb", "e", {"trust": "pcp"}, {"dscp2prio": {}}) == []


def test_real_dcb_accepts_app_argvs():
    # iproute2's dcb parses 'app add/del' arguments before talking to the kernel: on 'lo' a well-formed
    # command fails only with 'Operation not supported'. (pfc/ets set read the device first, so their
    # syntax cannot be checked this way.)
    import shutil
    import subprocess
    binary = shutil.which("dcb")
    if binary is None:
        pytest.skip("iproute2 dcb not installed")
    argvs = dcb.set_argvs(binary, "lo", {"trust": "dscp"})
    argvs += dcb.set_argvs(binary, "lo", {"trust": "pcp"}, {"dscp2prio": {26: 3}})
    for argv in argvs:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert "Operation not supported" in proc.stderr, (argv, proc.stderr)
    bad = subprocess.run([binary, "app", "add", "dev", "lo", "dscp-prio", "99:3"], capture_output=True, text=True,
                         check=False)
    assert "Operation not supported" not in bad.stderr


# HANDMADE JSON/text in the layouts iproute2's dcb/dcb_app.c prints (read through the search index,
# iproute2/iproute2 at 00d59f40): each APP entry is a [key, prio] array, DSCP keys are numbers in JSON
# and rt_dsfield names in text, default-prio lists bare priorities, pcp-prio keys are names ("3nd").
APP_JSON_HANDMADE = {"default_prio": [0], "dscp_prio": [[0, 0], [26, 3], [46, 5]], "pcp_prio": [["3nd", 3]]}


def test_app_json_layout():
    got = dcb.parse_app(json.dumps(APP_JSON_HANDMADE))
    assert got == {"dscp2prio": {0: 0, 26: 3, 46: 5}, "default_prio": [0], "pcp2prio": {"3nd": 3}}


def test_app_text_default_and_pcp():
    got = dcb.parse_app("default-prio 0 1 \ndscp-prio CS0:0 AF31:3 EF:5 \npcp-prio 3nd:3 \n")
    assert got == {"dscp2prio": {0: 0, 26: 3, 46: 5}, "default_prio": [0, 1], "pcp2prio": {"3nd": 3}}
    # a DSCP name this parser does not know (a custom rt_dsfield) is left out, not guessed
    assert dcb.parse_app("dscp-prio mycustom:3 26:3\n")["dscp2prio"] == {26: 3}


def test_ets_text_with_recommendation_rows():
    # HANDMADE: dcb ets show also prints pg-bw and the reco-* rows; they must not override tc-bw etc.
    text = ("willing off ets-cap 8 cbs off \ntc-bw 0:0 1:0 2:0 3:50 4:50 5:0 6:0 7:0 \n"
            "pg-bw 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 \n"
            "tc-tsa 0:strict 1:strict 2:strict 3:ets 4:ets 5:strict 6:strict 7:strict \n"
            "prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 \n"
            "reco-tc-bw 0:10 1:10 2:10 3:10 4:10 5:10 6:20 7:20 \n"
            "reco-tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:ets 7:ets \n"
            "reco-prio-tc 0:7 1:7 2:7 3:7 4:7 5:7 6:7 7:7 \n")
    got = dcb.parse_ets(text)
    assert got["tc_bw"] == [0, 0, 0, 50, 50, 0, 0, 0] and got["prio_tc"] == list(range(8))
    assert got["tc_tsa"][3] == "ets" and got["tc_tsa"][0] == "strict" and got["willing"] is False


def test_cut_pfc_row_is_unknown():
    assert "pfc" not in dcb.parse_pfc("prio-pfc 0:off 1:off 2:off 3:o")
    assert "pfc" not in dcb.parse_pfc(json.dumps({"prio_pfc": [False, True]}))


def test_damaged_outputs_never_crash(corpus, damaged):
    """Every dcb recording, and JSON documents cut and with wrong value types: dicts back, never an
    exception; pfc/tc lists have their full length or are absent."""
    texts = [p.read_text() for p in sorted((corpus / "mlnx_qos").glob("dcb-*.txt"))]
    docs = [APP_JSON_HANDMADE,
            {"pfc_cap": 8, "macsec_bypass": False, "delay": 0, "prio_pfc": [False] * 3 + [True] + [False] * 4},
            {"willing": False, "ets_cap": 8, "cbs": False, "tc_bw": [12] * 4 + [13] * 4, "tc_tsa": ["ets"] * 8,
             "prio_tc": list(range(8))}]
    for doc in docs:
        body = json.dumps(doc, indent=1)
        texts.append(body)
        texts += [body[:i] for i in range(0, len(body), max(1, len(body) // 20))]
        for key in doc:
            for wrong in (None, "x", {"a": 1}, [None], [["x"]], 1.5, True):
                texts.append(json.dumps(dict(doc, **{key: wrong})))
    for text in texts:
        for variant in damaged(text, none=True) if not text.startswith("{") else [text]:
            pfc = dcb.parse_pfc(variant)
            assert "pfc" not in pfc or len(pfc["pfc"]) == 8
            ets = dcb.parse_ets(variant)
            assert all(isinstance(v, int) for v in ets.get("tc_bw", []))
            assert isinstance(dcb.parse_app(variant)["dscp2prio"], dict)


def test_json_pfc_with_non_boolean_entries_is_unknown():
    assert "pfc" not in dcb.parse_pfc(json.dumps({"prio_pfc": [None] * 8}))
    assert dcb.parse_pfc(json.dumps({"prio_pfc": ["off"] * 3 + ["on"] + ["off"] * 4}))["pfc"][3] is True
