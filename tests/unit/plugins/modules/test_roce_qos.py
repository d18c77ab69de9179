# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roce_qos end to end on a copy of the HANDMADE sysfs/configfs tree (real file I/O), with

- replayed recordings (``replay.py``) as ``dcb``/``mlnx_qos`` for ``--check --diff`` through
  ``ansible localhost -m gpufleet.cluster.roce_qos``;
- the HANDMADE stateful fake ``dcb``/``mlnx_qos`` of tests/fixtures/hand_made/roce_qos (state in a JSON file; ``show`` prints it in the tools'
  formats, ``set`` changes it) for check -> apply -> apply -> check.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import roce_qos as mod
from ansible_collections.gpufleet.cluster.plugins.module_utils.roce_qos_engine import normalize_pfc

REPO_ROOT = Path(__file__).resolve().parents[4]
REPLAY_PROG = REPO_ROOT / "roles" / "roce_qos" / "files" / "gpufleet_roce_qos_replay.py"
TREE = REPO_ROOT / "tests" / "unit" / "fixtures" / "hand_made" / "roce" / "cx6-roce-HANDMADE"
sys.path.insert(0, str(REPO_ROOT / "tests" / "unit" / "fixtures" / "replay"))
import replay  # noqa: E402  pylint: disable=wrong-import-position

# The same HANDMADE stateful fake the roce_qos molecule scenario installs (state in a JSON file).
FAKE_TOOL = REPO_ROOT / "tests" / "fixtures" / "hand_made" / "roce_qos" / "fake_qos_tool_HANDMADE.py"
_spec = importlib.util.spec_from_file_location("fake_qos_tool_HANDMADE", str(FAKE_TOOL))
_fake = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fake)
INITIAL = _fake.INITIAL


def make_fake(directory, tool, state=None):
    state_path = os.path.join(str(directory), tool + ".state.json")
    with open(state_path, "w") as handle:
        json.dump(state or INITIAL, handle)
    script = os.path.join(str(directory), "fake_qos.py")  # a copy: a test may break it on purpose
    shutil.copyfile(str(FAKE_TOOL), script)
    path = os.path.join(str(directory), tool)
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\nexec %s %s %s %s \"$@\"\n" % (sys.executable, script, state_path, tool))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path, state_path


@pytest.fixture
def tree(tmp_path):
    dst = tmp_path / "root"
    shutil.copytree(str(TREE), str(dst))
    return dst


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def base_args(tree, **kw):
    args = dict(interface="ens1f0np0", sysfs_root=str(tree), configfs_root=str(tree / "configfs"))
    args.update(kw)
    return args


WANT = dict(trust="dscp", pfc=[3], ecn_np=[3], ecn_rp=[3], dcqcn_np={"cnp_dscp": 46}, dscp=26,
            roce_mode="RoCE v2")


@pytest.mark.parametrize("tool", ["mlnx_qos", "dcb"])
def test_four_steps_in_process(run_module, tree, tmp_path, tool):
    binary, state = make_fake(tmp_path, tool)
    args = base_args(tree, tool=tool, persist_path=str(tmp_path / "etc" / "ens1f0np0.json"),
                     **{tool + "_path": binary})
    args.update(WANT)
    if tool == "mlnx_qos":
        args.update(tc_tsa=["ets"] * 8, tc_bw=[10, 10, 10, 30, 10, 10, 10, 10], prio_tc=list(range(8)))
    fs_before, state_before = snapshot(tree), Path(state).read_text()

    first = run_module(mod.main, dict(args, _ansible_check_mode=True, _ansible_diff=True))
    assert first["changed"] is True and "failed" not in first
    assert snapshot(tree) == fs_before and Path(state).read_text() == state_before
    assert not (tmp_path / "etc").exists()
    assert first["diff"]["before"]["pfc"] == [False] * 8 and first["diff"]["after"]["pfc"][3] is True
    assert first["diff"]["before"]["ecn_np[3]"] == "0" and first["diff"]["after"]["ecn_np[3]"] == "1"
    assert first["diff"]["after"]["roce_tos"] == "104"

    second = run_module(mod.main, args)
    assert second["changed"] is True, second
    facts = second["state"]
    assert second["ansible_facts"]["roce_qos"] == facts  # the deprecated fact, same state
    assert facts["trust"] == "dscp" and facts["pfc_enabled"] == [3]
    assert facts["ecn"]["np"]["enable"][3] is True and facts["ecn"]["np"]["params"]["cnp_dscp"] == 46
    assert facts["rdma_cm"] == {"default_roce_tos": 104, "default_roce_mode": "RoCE v2"}
    assert second["nccl_env"] == {"NCCL_IB_TC": 104, "NCCL_IB_GID_INDEX": 3}
    persisted = json.loads((tmp_path / "etc" / "ens1f0np0.json").read_text())
    assert persisted["format"] == "gpufleet.roce_qos/2" and persisted["settings"]["pfc"][3] is True
    replay_plan = persisted["replay"]
    assert replay_plan["mkdir"] == [str(tree / "configfs" / "rdma_cm" / "mlx5_0")]
    assert {w["path"].replace(str(tree), ""): w["value"] for w in replay_plan["writes"]}[
        "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3"] == "1"
    assert len(replay_plan["writes"]) == 8 + 8 + 1 + 2  # ecn np/rp enables, cnp_dscp, tos, mode
    if tool == "dcb":
        assert [c[1:3] for c in replay_plan["commands"]] == [["pfc", "set"], ["app", "replace"]]
        assert "26:3" in replay_plan["commands"][1]
    else:
        assert replay_plan["commands"] == [[binary, "-i", "ens1f0np0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0",
                                            "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets",
                                            "--tcbw", "10,10,10,30,10,10,10,10", "--prio_tc", "0,1,2,3,4,5,6,7"]]
    if tool == "dcb":
        assert facts["dscp2prio"]["26"] == 3  # JSON object keys are strings

    third = run_module(mod.main, args)
    assert third["changed"] is False and third["commands"] == [] and third["writes"] == []
    fourth = run_module(mod.main, dict(args, _ansible_check_mode=True))
    assert fourth["changed"] is False


def load_replay_program():
    """The role's boot program (a script without .py) as a module."""
    loader = importlib.machinery.SourceFileLoader("gpufleet_roce_qos_replay", str(REPLAY_PROG))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    prog = importlib.util.module_from_spec(spec)
    loader.exec_module(prog)
    return prog


@pytest.mark.parametrize("tool", ["mlnx_qos", "dcb"])
def test_persisted_replay_plan_restores_state_twice(run_module, tree, tmp_path, tool, capsys):
    """The plan in the persist file, run by the role's boot program without Ansible, brings a reset
    tree and a reset tool back to the wanted state, and a second run changes nothing."""
    prog = load_replay_program()
    binary, state = make_fake(tmp_path, tool)
    persist = tmp_path / "etc" / "ens1f0np0.json"
    args = dict(base_args(tree, tool=tool, persist_path=str(persist), **{tool + "_path": binary}), **WANT)
    fs_initial, state_initial = snapshot(tree), Path(state).read_text()
    assert run_module(mod.main, args)["changed"] is True
    fs_wanted, state_wanted = snapshot(tree), json.loads(Path(state).read_text())
    # "reboot": hardware state back to the defaults
    for rel, data in fs_initial.items():
        (tree / rel).write_bytes(data)
    Path(state).write_text(state_initial)
    assert prog.main([str(persist)]) == 0
    assert snapshot(tree) == fs_wanted
    assert json.loads(Path(state).read_text()) == state_wanted
    assert prog.main([str(persist)]) == 0 and snapshot(tree) == fs_wanted
    assert json.loads(Path(state).read_text()) == state_wanted
    assert prog.main(["--check", str(persist)]) == 0
    assert "0 of 19 value(s) differ" in capsys.readouterr().out
    assert run_module(mod.main, args)["changed"] is False
    (tree / "sys/class/net/ens1f0np0/ecn/roce_np/enable/3").write_text("0\n")
    assert prog.main(["--check", str(persist)]) == 1
    assert (tree / "sys/class/net/ens1f0np0/ecn/roce_np/enable/3").read_text() == "0\n"


def test_replay_program_refuses_bad_files(tree, tmp_path, capsys):
    prog = load_replay_program()
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "gpufleet.roce_qos/1", "interface": "x", "settings": {}}))
    assert prog.main([str(old)]) == 2 and "gpufleet.roce_qos/1" in capsys.readouterr().err
    gone = tmp_path / "gone.json"
    gone.write_text(json.dumps({"format": "gpufleet.roce_qos/2", "interface": "nope0", "sysfs_root": str(tree),
                                "replay": {"mkdir": [], "commands": [], "writes": []}}))
    assert prog.main([str(gone)]) == 1 and "nope0" in capsys.readouterr().err
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps({"format": "gpufleet.roce_qos/2", "interface": "ens1f0np0", "sysfs_root": str(tree),
                                   "replay": {"mkdir": [], "commands": [["/bin/false"]], "writes": []}}))
    assert prog.main([str(failing)]) == 1 and "/bin/false" in capsys.readouterr().err


def test_kernel_refusal_fails(run_module, tree, tmp_path):
    binary, state = make_fake(tmp_path, "mlnx_qos")
    # A fake that ignores --pfc: the read-back must catch it.
    Path(binary).write_text(Path(binary).read_text().replace('"$@"', '"$@" | sed s/x/x/'))
    script = tmp_path / "fake_qos.py"
    script.write_text(script.read_text().replace('st["pfc"] = [x == "1"', 'dummy = [x == "1"'))
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, pfc=[3]))
    assert res["failed"] and "did not take: pfc" in res["msg"]


def test_bad_input(run_module, tree):
    res = run_module(mod.main, base_args(tree, pfc=[9], tc_bw=[1, 2]))
    assert res["failed"] and "pfc" in res["msg"] and "tc_bw" in res["msg"]
    res = run_module(mod.main, base_args(tree, interface="nope0"))
    assert res["failed"] and "nope0" in res["msg"]
    res = run_module(mod.main, base_args(tree, tool="dcb", dcb_path="/nonexistent/dcb", trust="dscp"))
    assert res["failed"] and "no QoS tool" in res["msg"]


def test_facts_only_without_tool(run_module, tree):
    res = run_module(mod.main, base_args(tree, tool="dcb", dcb_path="/nonexistent/dcb"))
    assert res["changed"] is False and res["state"]["tool"] is None
    assert res["nccl_env"]["NCCL_IB_GID_INDEX"] == 3


def test_pfc_forms():
    assert normalize_pfc([3, 5]) == [False, False, False, True, False, True, False, False]
    assert normalize_pfc([False, False, False, True, False, False, False, False])[3] is True
    assert normalize_pfc(["off"] * 7 + ["on"])[7] is True
    assert normalize_pfc([]) == [False] * 8


def adhoc(args, check=True, diff=True):
    ansible = Path(sys.executable).parent / "ansible"
    if not ansible.is_file():
        pytest.skip("venv ansible missing (run scripts/setup)")
    cmd = [str(ansible), "localhost", "-i", "localhost,", "-c", "local", "-e",
           "ansible_python_interpreter=%s" % sys.executable, "-m", "gpufleet.cluster.roce_qos", "-a", json.dumps(args)]
    cmd += ["--check"] if check else []
    cmd += ["--diff"] if diff else []
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
    proc = subprocess.run(cmd, cwd=str(REPO_ROOT), env=env, capture_output=True, text=True, timeout=180, check=False)
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    return proc.returncode, out["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_adhoc_check_diff_replaying_mlnx_qos_recording(corpus_file, tree, tmp_path):
    rec = corpus_file("mlnx_qos/spiderpool-mlnx_qos-fragment-trust-dscp-pfc5.txt")
    binary, log = replay.make_replay(tmp_path, "mlnx_qos", {"stdout": str(rec)})
    before = snapshot(tree)
    rc, res = adhoc(base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, trust="dscp", pfc=[3], ecn_np=[3]))
    assert rc == 0 and res["changed"] is True
    assert res["diff"]["before"]["trust"] == "dscp" and res["diff"]["before"]["pfc"][5] is True
    assert res["diff"]["after"]["pfc"] == [False, False, False, True, False, False, False, False]
    assert res["commands"] == [[binary, "-i", "ens1f0np0", "--pfc", "0,0,0,1,0,0,0,0"]]
    assert "trust" not in res["commands"][0] and snapshot(tree) == before
    assert all(c["argv"][:2] == ["-i", "ens1f0np0"] and len(c["argv"]) == 2 for c in replay.calls(log))


def test_adhoc_check_diff_replaying_dcb_recordings(corpus_file, tree, tmp_path):
    pfc = corpus_file("mlnx_qos/dcb-pfc-show-cx3pro-prio3-on.txt")
    app = corpus_file("mlnx_qos/dcb-app-show-dscp-prio.txt")
    binary, log = replay.make_replay(tmp_path, "dcb", [{"if_arg": "pfc", "stdout": str(pfc)},
                                                       {"if_arg": "app", "stdout": str(app)},
                                                       {"if_arg": "ets", "stdout_text": ""}])
    rc, res = adhoc(base_args(tree, tool="dcb", dcb_path=binary, pfc=[3], trust="pcp"))
    assert rc == 0 and res["changed"] is False and res["commands"] == []
    expected = {"pfc": [False, False, False, True, False, False, False, False], "trust": "pcp"}
    assert res["diff"]["before"] == res["diff"]["after"] == expected
    shown = [c["argv"][:3] for c in replay.calls(log)][:3]
    assert shown == [["-j", "pfc", "show"], ["-j", "ets", "show"], ["app", "show", "dev"]]


def test_adhoc_four_steps_stateful_dcb(tree, tmp_path):
    binary, state = make_fake(tmp_path, "dcb")
    args = base_args(tree, tool="dcb", dcb_path=binary, **WANT)
    before = snapshot(tree)
    results = []
    for check in (True, False, False, True):
        rc, res = adhoc(args, check=check)
        assert rc == 0, res
        results.append(res["changed"])
        if len(results) == 1:
            assert snapshot(tree) == before
    assert results == [True, True, False, False]


# --- input refused before any change; partial failures reported; no stray temp files ---------------

def outside_netdev(tmp_path):
    """A hand-made netdev-like tree OUTSIDE sysfs_root (tmp_path/x) that a traversing name would reach."""
    enable = tmp_path / "x" / "ecn" / "roce_np" / "enable"
    enable.mkdir(parents=True)
    for prio in range(8):
        (enable / str(prio)).write_text("0\n")
    return tmp_path / "x"


@pytest.mark.parametrize("name", ["../../../../x", "", "a/b", "..", "ens 1", "x" * 16])
def test_interface_must_be_a_plain_name(run_module, tree, tmp_path, name):
    outside = outside_netdev(tmp_path)
    before, outside_before = snapshot(tree), snapshot(outside)
    res = run_module(mod.main, base_args(tree, interface=name, tool="dcb", dcb_path="/nonexistent/dcb", ecn_np=[3]))
    assert res["failed"] and res["changed"] is False
    assert res["msg"].startswith("interface: ") and "allowed are 1-15 characters without '/'" in res["msg"]
    assert snapshot(tree) == before and snapshot(outside) == outside_before


@pytest.mark.parametrize("name", ["../../x", "", "mlx5_0/..", "mlx5 0"])
def test_device_must_be_a_plain_name(run_module, tree, name):
    dirs = sorted(str(p) for p in tree.parent.rglob("*") if p.is_dir())
    res = run_module(mod.main, base_args(tree, device=name, tool="dcb", dcb_path="/nonexistent/dcb", dscp=26))
    assert res["failed"] and res["changed"] is False
    assert res["msg"].startswith("device: ") and "allowed are 1-63 characters" in res["msg"]
    assert sorted(str(p) for p in tree.parent.rglob("*") if p.is_dir()) == dirs  # no mkdir anywhere


def test_name_rule_refuses_nul():
    """A NUL never reaches main() through AnsibleModule (its syslog call refuses it first); the rule has it."""
    from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_sysfs

    assert roce_sysfs.name_problem("ens1f0np0\0", 15) and roce_sysfs.name_problem("mlx5\0", 63)
    assert roce_sysfs.name_problem("ens1f0np0", 15) is None and roce_sysfs.name_problem("mlx5_0", 63) is None


def test_unknown_device_and_port_refused(run_module, tree):
    res = run_module(mod.main, base_args(tree, device="mlx5_9", tool="dcb", dcb_path="/nonexistent/dcb", dscp=26))
    assert res["failed"] and "device: mlx5_9 is not an RDMA device" in res["msg"]
    assert not (tree / "configfs" / "rdma_cm" / "mlx5_9").exists()
    res = run_module(mod.main, base_args(tree, port=2, tool="dcb", dcb_path="/nonexistent/dcb", dscp=26))
    assert res["failed"] and "port: 2 is not a port of mlx5_0; allowed are 1" in res["msg"]
    res = run_module(mod.main, base_args(tree, port=0))
    assert res["failed"] and "port: an RDMA port number >= 1" in res["msg"]


@pytest.mark.parametrize("pfc", [[3.7], ["3.7"], [8], [-1], [True, 3], [3, None]])
def test_pfc_needs_whole_priorities(run_module, tree, tmp_path, pfc):
    binary, state = make_fake(tmp_path, "mlnx_qos")
    state_before = Path(state).read_text()
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, pfc=pfc))
    assert res["failed"] and res["changed"] is False
    assert res["msg"].startswith("pfc: ") and "integers 0-7" in res["msg"]
    assert Path(state).read_text() == state_before


def test_dcqcn_values_and_names_checked_first(run_module, tree, tmp_path):
    binary, state = make_fake(tmp_path, "mlnx_qos")
    before, state_before = snapshot(tree), Path(state).read_text()
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, pfc=[3],
                                         dcqcn_np={"cnp_dscp": 46.5, "cnp_802p_prio": 9}))
    assert res["failed"] and "dcqcn_np.cnp_dscp: an integer 0-63 is needed" in res["msg"]
    assert "dcqcn_np.cnp_802p_prio: an integer 0-7 is needed" in res["msg"]
    # a parameter file the netdev does not have: refused before the tool ran
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, pfc=[3],
                                         dcqcn_rp={"rpg_nonsense": 1}))
    assert res["failed"] and "dcqcn_rp: 'rpg_nonsense' is not a parameter of ens1f0np0" in res["msg"]
    assert "rpg_time_reset" in res["msg"]
    assert snapshot(tree) == before and Path(state).read_text() == state_before


def test_ets_shares_must_add_up(run_module, tree, tmp_path):
    binary, state = make_fake(tmp_path, "dcb")
    state_before = Path(state).read_text()
    res = run_module(mod.main, base_args(tree, tool="dcb", dcb_path=binary, pfc=[3], tc_tsa=["ets"] * 8,
                                         tc_bw=[10] * 8))
    assert res["failed"] and res["msg"].startswith("tc_bw: the shares of the ets traffic classes must add up to 100")
    assert Path(state).read_text() == state_before


@pytest.mark.parametrize("kind", ["directory", "relative", "under_a_file"])
def test_persist_path_checked_before_any_change(run_module, tree, tmp_path, kind):
    binary, state = make_fake(tmp_path, "mlnx_qos")
    (tmp_path / "etc").mkdir()
    (tmp_path / "afile").write_text("x")
    path = {"directory": str(tmp_path / "etc"), "relative": "etc/ens1f0np0.json",
            "under_a_file": str(tmp_path / "afile" / "ens1f0np0.json")}[kind]
    before, state_before = snapshot(tree), Path(state).read_text()
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, persist_path=path, **WANT))
    assert res["failed"] and res["changed"] is False and res["msg"].startswith("persist_path: ")
    assert {"directory": "is a directory", "relative": "an absolute file path is needed",
            "under_a_file": "is not a directory"}[kind] in res["msg"]
    assert snapshot(tree) == before and Path(state).read_text() == state_before
    assert list((tmp_path / "etc").iterdir()) == []


def failing_wrapper(tmp_path, binary, obj, cmd):
    """A wrapper around the HANDMADE fake that fails ``dcb OBJ CMD ...`` (hand-made failure)."""
    path = tmp_path / "dcb-failing"
    path.write_text('#!/bin/sh\nif [ "$1" = %s ] && [ "$2" = %s ]; then echo "Error: hand-made failure" >&2; '
                    'exit 2; fi\nexec %s "$@"\n' % (obj, cmd, binary))
    path.chmod(0o755)
    return str(path)


def test_tool_failure_after_pfc_reports_changed(run_module, tree, tmp_path):
    binary, state = make_fake(tmp_path, "dcb")
    failing = failing_wrapper(tmp_path, binary, "ets", "set")
    res = run_module(mod.main, base_args(tree, tool="dcb", dcb_path=failing, pfc=[3], tc_tsa=["ets"] * 8,
                                         tc_bw=[10, 10, 10, 30, 10, 10, 10, 10]))
    assert res["failed"] and res["changed"] is True, res
    assert "ets set" in res["msg"] and "hand-made failure" in res["msg"]
    assert "applied before this failure: ran %s pfc set dev ens1f0np0" % failing in res["msg"]
    assert [argv[1:3] for argv in res["applied"]["commands"]] == [["pfc", "set"]]
    assert json.loads(Path(state).read_text())["pfc"][3] is True  # the PFC change did happen


def test_configfs_failure_after_tool_and_persist_reports_changed(run_module, tree, tmp_path):
    binary, state = make_fake(tmp_path, "mlnx_qos")
    shutil.rmtree(str(tree / "configfs" / "rdma_cm" / "mlx5_0"))  # mkdir makes a plain directory: no ports/
    persist = tmp_path / "etc" / "ens1f0np0.json"
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, pfc=[3], dscp=26,
                                         persist_path=str(persist)))
    assert res["failed"] and res["changed"] is True, res
    assert res["msg"].startswith("cannot write 104 to ")
    applied = res["applied"]
    assert applied["persist_path"] == str(persist) and persist.is_file()
    assert len(applied["commands"]) == 1 and applied["mkdir"] == [str(tree / "configfs" / "rdma_cm" / "mlx5_0")]
    assert applied["writes"] == []


@pytest.mark.parametrize("how", ["raises", "fail_json"])
def test_persist_temp_file_removed_when_atomic_move_fails(run_module, tree, tmp_path, monkeypatch, how):
    """atomic_move raises (ansible-core 2.17+) or ends the module through fail_json (older cores)."""
    from ansible.module_utils.basic import AnsibleModule

    def broken(self, src, dest, unsafe_writes=False, keep_dest_attrs=True):
        if how == "raises":
            raise Exception("hand-made atomic_move failure")  # pylint: disable=broad-exception-raised
        self.fail_json(msg="hand-made atomic_move failure")

    monkeypatch.setattr(AnsibleModule, "atomic_move", broken)
    binary, state = make_fake(tmp_path, "mlnx_qos")
    (tmp_path / "etc").mkdir()
    persist = tmp_path / "etc" / "roce" / "ens1f0np0.json"
    before, state_before = snapshot(tree), Path(state).read_text()
    res = run_module(mod.main, base_args(tree, tool="mlnx_qos", mlnx_qos_path=binary, persist_path=str(persist),
                                         **WANT))
    assert res["failed"] and "hand-made atomic_move failure" in res["msg"]
    assert list((tmp_path / "etc").rglob("*")) == []  # no temp file, no directory left behind
    # the persistence file goes first: nothing else was changed
    assert res.get("changed", False) is False
    assert snapshot(tree) == before and Path(state).read_text() == state_before


def test_unreadable_tool_output_refused_before_any_change(run_module, tree, tmp_path):
    """A dcb that prints hand-made garbage: the current trust/PFC cannot be known, so nothing is computed
    or applied (before: trust taken for pcp, the persistence file written, then a failure)."""
    binary = tmp_path / "dcb"
    binary.write_text("#!/bin/sh\necho 'hand-made garbage ### | ?'\n")
    binary.chmod(0o755)
    persist = tmp_path / "etc" / "roce.json"
    before = snapshot(tree)
    res = run_module(mod.main, base_args(tree, tool="dcb", dcb_path=str(binary), trust="dscp", pfc=[3],
                                         persist_path=str(persist)))
    assert res["failed"] and res["changed"] is False
    assert res["msg"].startswith("trust, pfc: the current value cannot be read from the dcb output")
    assert snapshot(tree) == before and not persist.exists()


@pytest.mark.parametrize("key, value, why", [("sysfs_root", "", "an absolute directory path is needed"),
                                             ("sysfs_root", "/nonexistent-HANDMADE", "has no sys/ directory"),
                                             ("configfs_root", "rel/configfs", "an absolute directory path")])
def test_roots_checked(run_module, tree, key, value, why):
    res = run_module(mod.main, base_args(tree, dscp=26, **{key: value}))
    assert res["failed"] and res["changed"] is False and res["msg"].startswith(key + ": ") and why in res["msg"]
