# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roce_qos engine (module_utils/roce_qos_engine.py) piece by piece: input checks, the host checks, the
tool lookup and runner, the wanted sysfs/configfs map, the persistence file text, the diff, apply with
injected callbacks, on a copy of the HANDMADE sysfs/configfs tree and hand-made fake tools.
End-to-end runs through the module are in tests/unit/plugins/modules/test_roce_qos.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_qos_engine as engine
from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_sysfs
from ansible_collections.gpufleet.cluster.plugins.modules.roce_qos import ARGUMENT_SPEC

from .stand_ins import script, unstartable

TREE = Path(__file__).resolve().parents[2] / "fixtures" / "hand_made" / "roce" / "cx6-roce-HANDMADE"
NET = "sys/class/net/ens1f0np0"


@pytest.fixture
def tree(tmp_path):
    dst = tmp_path / "root"
    shutil.copytree(str(TREE), str(dst))
    return dst


def params(tree=None, **kw):
    """The params AnsibleModule would hand the engine: every option, defaults filled in."""
    p = {key: spec.get("default") for key, spec in ARGUMENT_SPEC.items()}
    p["interface"] = "ens1f0np0"
    if tree is not None:
        p.update(sysfs_root=str(tree), configfs_root=str(tree / "configfs"))
    p.update(kw)
    return p


def no_find(name):
    return None


def no_write(path, text):
    raise AssertionError("write called for %s" % path)


# ---------------------------------------------------------------- input
def test_normalize_pfc_forms_and_refusals():
    assert engine.normalize_pfc(None) is None
    assert engine.normalize_pfc([3, "5"]) == [False, False, False, True, False, True, False, False]
    assert engine.normalize_pfc(["off"] * 7 + ["on"]) == [False] * 7 + [True]
    assert engine.normalize_pfc([]) == [False] * 8
    with pytest.raises(ValueError, match=r"^pfc: 8 is not a priority 0-7"):
        engine.normalize_pfc([3, 8])
    with pytest.raises(ValueError, match=r"^pfc: True, 3.7 are not a priority"):
        engine.normalize_pfc([True, 3.7])
    with pytest.raises(ValueError, match=r"^pfc: .* is not 8 booleans"):
        engine.normalize_pfc(["maybe"] * 8)


def test_input_problems_name_every_option(tree):
    p = params(tree, port=0, pfc=[9], tc_bw=[1, 2], prio_tc=[0] * 7 + [8], tc_tsa=["x"] * 8, ecn_np=[8],
               dcqcn_np={"enable": 1, "cnp_dscp": 64}, dcqcn_rp={"rpg_time_reset": -1}, dscp=64,
               persist_path="rel.json")
    errors = engine.input_problems(p)
    keys = [e.split(":")[0] for e in errors]
    assert keys == ["port", "pfc", "tc_bw", "prio_tc", "tc_tsa", "ecn_np", "dcqcn_np.cnp_dscp", "dcqcn_np",
                    "dcqcn_rp.rpg_time_reset", "dscp", "persist_path"]
    assert p["pfc"] == [9]  # left as given when refused


def test_input_problems_normalize_pfc_in_place(tree):
    p = params(tree, pfc=[3], tc_tsa=["ets"] * 8, tc_bw=[10, 10, 10, 30, 10, 10, 10, 10])
    assert engine.input_problems(p) == []
    assert p["pfc"] == [False, False, False, True, False, False, False, False]


@pytest.mark.parametrize("kw, start", [({"interface": "../x"}, "interface: '../x' is not a plain netdev name"),
                                       ({"device": "a b"}, "device: 'a b' is not a plain RDMA device name"),
                                       ({"sysfs_root": "/nonexistent-HANDMADE"}, "sysfs_root: /nonexistent"),
                                       ({"configfs_root": "rel"}, "configfs_root: an absolute directory path")])
def test_input_problems_names_and_roots(tree, kw, start):
    assert engine.input_problems(params(tree, **kw))[0].startswith(start)


def test_persist_path_problem(tmp_path):
    (tmp_path / "afile").write_text("x")
    assert "an absolute file path" in engine.persist_path_problem("etc/x.json")
    assert "is a directory" in engine.persist_path_problem(str(tmp_path))
    assert "is not a directory" in engine.persist_path_problem(str(tmp_path / "afile" / "x.json"))
    assert engine.persist_path_problem(str(tmp_path / "new" / "x.json")) is None


# ---------------------------------------------------------------- the host
def test_check_host_defaults_the_device(tree):
    assert engine.check_host(params(tree, dscp=26)) == "mlx5_0"
    assert engine.check_host(params(tree, device="mlx5_0", ecn_np=[3])) == "mlx5_0"


def test_check_host_refusals(tree):
    with pytest.raises(engine.Failure) as exc:
        engine.check_host(params(tree, interface="nope0"))
    assert exc.value.msg == "interface: netdev nope0 not found under %s/sys/class/net" % tree
    assert exc.value.result == {"changed": False}
    with pytest.raises(engine.Failure) as exc:
        engine.check_host(params(tree, port=2, dscp=26, dcqcn_rp={"rpg_nonsense": 1}))
    assert exc.value.msg.startswith("dcqcn_rp: 'rpg_nonsense' is not a parameter of ens1f0np0; allowed are "
                                    "the files of ecn/roce_rp: clamp_tgt_rate, dce_tcp_g,")
    assert exc.value.msg.endswith("; port: 2 is not a port of mlx5_0; allowed are 1")
    shutil.rmtree(str(tree / NET / "device"))
    with pytest.raises(engine.Failure, match="^device: no RDMA device found for ens1f0np0"):
        engine.check_host(params(tree, roce_mode="RoCE v2"))


def test_host_problems_unreadable_ports_dir_is_none(tree):
    shutil.rmtree(str(tree / "sys/class/infiniband/mlx5_0/ports"))
    errors = engine.host_problems(params(tree, dscp=26), "ens1f0np0", "mlx5_0", True)
    assert errors == ["port: 1 is not a port of mlx5_0; allowed are none"]


# ---------------------------------------------------------------- the tool
def test_find_tool_order_and_explicit_paths():
    seen = []

    def find(name):
        seen.append(name)
        return {"dcb": "/usr/sbin/dcb"}.get(name)

    tool = engine.find_tool(params(), find)
    assert (tool.kind, tool.binary, seen) == ("dcb", "/usr/sbin/dcb", ["mlnx_qos", "dcb"])
    # an explicit path that is not there is not replaced by a PATH lookup
    seen[:] = []
    assert engine.find_tool(params(tool="dcb", dcb_path="/opt/x/dcb"), find) is None and seen == ["/opt/x/dcb"]
    with pytest.raises(engine.Failure) as exc:
        engine.find_tool(params(tool="dcb", dcb_path="/opt/x/dcb", trust="dscp"), find)
    assert exc.value.msg.startswith("no QoS tool found (tool=dcb; tried dcb)")


def test_tool_run_through_the_runner(tmp_path):
    ok = engine.Tool("dcb", script(tmp_path, "ok", 'echo "$LC_ALL $*"'))
    assert ok.run([ok.binary, "a b"]) == "C a b\n"
    bad = script(tmp_path, "bad", "echo out; echo 'Error: hand-made' >&2; exit 2")
    with pytest.raises(engine.ToolError) as exc:
        engine.Tool("dcb", bad).run([bad, "pfc", "show"])
    assert str(exc.value) == "%s pfc show failed (rc 2): Error: hand-made" % bad
    assert (exc.value.rc, exc.value.out, exc.value.argv) == (2, "out\n", [bad, "pfc", "show"])
    garbage = unstartable(tmp_path, "garbage")
    with pytest.raises(engine.ToolError) as exc:
        engine.Tool("dcb", garbage).run([garbage])
    assert exc.value.rc == 127 and "failed (rc 127): " in str(exc.value)


def test_read_tool_refuses_what_it_cannot_read(tmp_path):
    dcb = script(tmp_path, "dcb", "echo 'hand-made garbage ### | ?'")
    tool = engine.Tool("dcb", dcb)
    assert engine.read_tool(params(), None) == {}
    with pytest.raises(engine.Failure) as exc:
        engine.read_tool(params(trust="dscp", pfc=[True] * 8), tool)
    assert exc.value.msg.startswith("trust, pfc: the current value cannot be read from the dcb output")
    failing = engine.Tool("dcb", script(tmp_path, "dcb2", "echo boom >&2; exit 3"))
    with pytest.raises(engine.Failure) as exc:
        engine.read_tool(params(pfc=[True] * 8), failing)
    assert exc.value.result["rc"] == 3 and exc.value.result["stderr"] == "boom\n"
    assert exc.value.result["changed"] is False and exc.value.result["cmd"][1:3] == ["-j", "pfc"]


# ---------------------------------------------------------------- wanted state, persistence, diff
def test_sysfs_wanted_paths_and_values():
    p = params(ecn_rp=[1], dcqcn_np={"cnp_dscp": "46"}, dscp=26, roce_mode="RoCE v2")
    got = engine.sysfs_wanted(p, "/r", "eth0", "/c", "mlx5_0")
    assert got["/r/sys/class/net/eth0/ecn/roce_rp/enable/1"] == ("ecn_rp[1]", "1")
    assert got["/r/sys/class/net/eth0/ecn/roce_rp/enable/0"] == ("ecn_rp[0]", "0")
    assert got["/r/sys/class/net/eth0/ecn/roce_np/cnp_dscp"] == ("dcqcn_np.cnp_dscp", "46")
    assert got["/c/rdma_cm/mlx5_0/ports/1/default_roce_tos"] == ("roce_tos", "104")
    assert got["/c/rdma_cm/mlx5_0/ports/1/default_roce_mode"] == ("roce_mode", "RoCE v2")
    assert len(got) == 8 + 1 + 2
    got = engine.sysfs_wanted(params(roce_tos=7), "/r", "eth0", "/c", "mlx5_0")
    assert got == {"/c/rdma_cm/mlx5_0/ports/1/default_roce_tos": ("roce_tos", "7")}


def test_replay_commands():
    settings = {"trust": "dscp", "pfc": [False, False, False, True] + [False] * 4}
    mlnx = engine.replay_commands(engine.Tool("mlnx_qos", "/usr/bin/mlnx_qos"), "eth0", settings)
    assert mlnx == [["/usr/bin/mlnx_qos", "-i", "eth0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"]]
    dcb = engine.replay_commands(engine.Tool("dcb", "/usr/sbin/dcb"), "eth0", settings)
    assert [argv[1:3] for argv in dcb] == [["pfc", "set"], ["app", "replace"]]  # trust last, as replace
    assert engine.replay_commands(None, "eth0", settings) == []
    assert engine.replay_commands(engine.Tool("dcb", "/usr/sbin/dcb"), "eth0", {"ecn_np": [3]}) == []


def test_persist_text_is_pinned_byte_for_byte():
    """The boot replay (roles/roce_qos/files/gpufleet_roce_qos_replay.py) reads this text: format
    gpufleet.roce_qos/2, sorted keys, 2-space indent, one trailing newline."""
    p = params(sysfs_root="/r", configfs_root="/c", interface="eth0", trust="pcp", ecn_np=[3, 3, 1],
               dcqcn_np={"cnp_dscp": "46"}, roce_mode="RoCE v2")
    tool = engine.Tool("mlnx_qos", "/usr/bin/mlnx_qos")
    sysfs_map = engine.sysfs_wanted(p, "/r", "eth0", "/c", "mlx5_0")
    text = engine.persist_text(p, tool, "mlx5_0", sysfs_map)
    writes = [{"path": "/c/rdma_cm/mlx5_0/ports/1/default_roce_mode", "value": "RoCE v2"},
              {"path": "/r/sys/class/net/eth0/ecn/roce_np/cnp_dscp", "value": "46"}]
    writes += [{"path": "/r/sys/class/net/eth0/ecn/roce_np/enable/%d" % i, "value": "1" if i in (1, 3) else "0"}
               for i in range(8)]
    expected = {"format": "gpufleet.roce_qos/2", "interface": "eth0", "device": "mlx5_0", "port": 1,
                "tool": "mlnx_qos", "sysfs_root": "/r", "configfs_root": "/c",
                "settings": {"trust": "pcp", "ecn_np": [1, 3], "dcqcn_np": {"cnp_dscp": 46}, "roce_mode": "RoCE v2"},
                "replay": {"mkdir": ["/c/rdma_cm/mlx5_0"],
                           "commands": [["/usr/bin/mlnx_qos", "-i", "eth0", "--trust", "pcp"]],
                           "writes": writes}}
    assert text == json.dumps(expected, indent=2, sort_keys=True) + "\n"
    assert text.startswith('{\n  "configfs_root": "/c",\n  "device": "mlx5_0",\n  "format": "gpufleet.roce_qos/2",\n')


def test_compare_reads_the_files(tree):
    p = params(tree, pfc=[False] * 3 + [True] + [False] * 4, trust="dscp", ecn_np=[3])
    sysfs_map = engine.sysfs_wanted(p, str(tree), "ens1f0np0", str(tree / "configfs"), "mlx5_0")
    current = {"pfc": [False] * 8, "trust": "dscp"}
    before, after, changes, writes = engine.compare(p, current, sysfs_map)
    assert changes == {"pfc": p["pfc"]} and before["trust"] == after["trust"] == "dscp"
    assert before["ecn_np[3]"] == "0" and after["ecn_np[3]"] == "1"
    assert writes == [{"path": str(tree / NET / "ecn/roce_np/enable/3"), "value": "1"}]
    (tree / NET / "ecn/roce_np/enable/3").write_bytes(b"\xff\n")  # not UTF-8: read, not an exception
    before, dummy, dummy2, writes = engine.compare(p, current, sysfs_map)
    assert before["ecn_np[3]"] == "\xff" and len(writes) == 1


def test_make_plan_persist_unchanged_when_same_text(tree, tmp_path):
    persist = tmp_path / "etc" / "x.json"
    p = params(tree, ecn_np=[3], persist_path=str(persist))
    plan = engine.make_plan(p, None, "mlx5_0", {})
    assert plan["changed"] and plan["persist_changed"] and plan["before"]["persist_path"] is None
    persist.parent.mkdir()
    persist.write_text(plan["persist_text"])
    plan = engine.make_plan(p, None, "mlx5_0", {})
    assert plan["persist_changed"] is False and plan["before"]["persist_path"] == str(persist)
    assert plan["commands"] == [] and len(plan["writes"]) == 1


# ---------------------------------------------------------------- act and run
def test_describe_applied():
    applied = {"persist_path": "/etc/x.json", "commands": [["dcb", "pfc", "set"]], "mkdir": ["/c/rdma_cm/m"],
               "writes": [{"path": "/s/e", "value": "1"}]}
    assert engine.describe_applied(applied) == ("persist_path /etc/x.json written; ran dcb pfc set; "
                                                "made /c/rdma_cm/m; wrote 1 to /s/e")


def test_apply_persist_failure_changes_nothing_else(tree, tmp_path):
    p = params(tree, ecn_np=[3], persist_path=str(tmp_path / "x.json"))
    plan = engine.make_plan(p, None, "mlx5_0", {})
    with pytest.raises(engine.Failure) as exc:
        engine.apply_changes(p, None, "mlx5_0", plan, lambda path, text: "hand-made refusal")
    assert exc.value.msg == "persist_path: cannot write %s: hand-made refusal" % p["persist_path"]
    assert exc.value.result["changed"] is False and exc.value.result["applied"]["writes"] == []
    assert (tree / NET / "ecn/roce_np/enable/3").read_text() == "0\n"


def test_apply_write_failure_after_a_write_reports_changed(tree):
    p = params(tree, ecn_np=[3], ecn_rp=[3])
    plan = engine.make_plan(p, None, "mlx5_0", {})
    (tree / NET / "ecn/roce_rp/enable/3").unlink()
    (tree / NET / "ecn/roce_rp/enable/3").mkdir()  # hand-made: a write there fails
    with pytest.raises(engine.Failure) as exc:
        engine.apply_changes(p, None, "mlx5_0", plan, no_write)
    assert exc.value.msg.startswith("cannot write 1 to %s: " % (tree / NET / "ecn/roce_rp/enable/3"))
    assert "; applied before this failure: wrote 1 to %s" % (tree / NET / "ecn/roce_np/enable/3") in exc.value.msg
    assert exc.value.result["changed"] is True and len(exc.value.result["applied"]["writes"]) == 1


def test_run_check_mode_then_apply_then_idempotent(tree, tmp_path):
    persist = tmp_path / "etc" / "x.json"
    written = []

    def write(path, text):
        written.append(path)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)

    kw = dict(ecn_np=[3], dcqcn_np={"cnp_dscp": 46}, dscp=26, persist_path=str(persist))
    check = engine.run(params(tree, **kw), True, False, no_find, no_write)
    assert check["changed"] is True and check["diff"]["before"]["roce_tos"] == "0"
    assert (tree / NET / "ecn/roce_np/enable/3").read_text() == "0\n" and not persist.exists()
    assert check["state"]["tool"] is None and check["nccl_env"]["NCCL_IB_GID_INDEX"] == 3
    assert check["ansible_facts"]["roce_qos"] == check["state"]  # the deprecated fact: the same state

    applied = engine.run(params(tree, **kw), False, False, no_find, write)
    assert applied["changed"] is True and written == [str(persist)]
    facts = applied["state"]
    assert applied["ansible_facts"]["roce_qos"] == facts and facts["interface"] == applied["state"]["interface"]
    assert facts["ecn"]["np"]["enable"][3] is True and facts["rdma_cm"]["default_roce_tos"] == 104
    assert applied["nccl_env"] == {"NCCL_IB_TC": 104, "NCCL_IB_GID_INDEX": 3}

    again = engine.run(params(tree, **kw), False, True, no_find, no_write)
    assert again["changed"] is False and again["commands"] == [] and again["writes"] == []
    assert again["diff"]["before"] == again["diff"]["after"]


def test_run_refuses_bad_input_before_the_host(tree):
    with pytest.raises(engine.Failure) as exc:
        engine.run(params(tree, interface="nope0", dscp=64), False, False, no_find, no_write)
    assert exc.value.msg == "dscp: 0-63 is allowed, got 64" and exc.value.result == {"changed": False}


# ---------------------------------------------------------------- roce_sysfs through _sysfs
def test_roce_sysfs_reads_non_utf8_without_raising(tree):
    """roce_sysfs used to raise UnicodeDecodeError here; _sysfs decodes latin-1."""
    (tree / NET / "ecn/roce_np/min_time_between_cnps").write_bytes(b"\xe9t\xe9\n")
    (tree / "configfs/rdma_cm/mlx5_0/ports/1/default_roce_mode").write_bytes(b"RoCE \xff\n")
    assert roce_sysfs.read_ecn(str(tree), "ens1f0np0")["np"]["params"]["min_time_between_cnps"] == "\xe9t\xe9"
    assert roce_sysfs.read_rdma_cm(str(tree / "configfs"), "mlx5_0", 1)["default_roce_mode"] == "RoCE \xff"


def test_roce_sysfs_empty_attribute_stays_empty(tree):
    """An empty file reads '' (not absent), as before the move to _sysfs."""
    (tree / NET / "ecn/roce_np/enable/2").write_text("\n")
    (tree / NET / "ecn/roce_np/cnp_dscp").write_text("")
    got = roce_sysfs.read_ecn(str(tree), "ens1f0np0")["np"]
    assert got["enable"][2] is False and got["params"]["cnp_dscp"] == ""
