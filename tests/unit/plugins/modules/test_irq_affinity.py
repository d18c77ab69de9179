# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""irq_affinity in-process on a copy of the HANDMADE 2-socket proc/sys tree (real file I/O)."""

from __future__ import annotations

import re
import shutil
import os
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import irq_affinity as mod

TREE = Path(__file__).resolve().parents[2] / "fixtures" / "hand_made" / "irq" / "two-socket-mlx5-numa1-HANDMADE"
MLX = "0000:81:00.0"


def materialize(src, dst):
    """Copy the HANDMADE tree; PCI directories are stored as 0000_81_00.0 (a colon is not a legal file
    name character in the repository) and get their real name 0000:81:00.0 here."""
    shutil.copytree(str(src), str(dst))
    devices = Path(dst) / "sys" / "bus" / "pci" / "devices"
    for entry in sorted(devices.iterdir()):
        if re.match(r"^[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}\.[0-7]$", entry.name):
            entry.rename(devices / entry.name.replace("_", ":"))
    return Path(dst)


@pytest.fixture
def root(tmp_path):
    return materialize(TREE, tmp_path / "root")


def affinity(root, n):
    return (root / "proc" / "irq" / str(n) / "smp_affinity_list").read_text().strip()


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def args(root, **kw):
    out = dict(device=MLX, proc_root=str(root), sysfs_root=str(root), irqbalance_config=str(root / "etc" / "irqb"))
    out.update(kw)
    return out


def test_local_node_reserved_four_steps(run_module, root):
    a = args(root, reserved_cpus=["8", "9"])
    before = snapshot(root)
    first = run_module(mod.main, dict(a, _ansible_check_mode=True, _ansible_diff=True))
    assert first["changed"] is True and snapshot(root) == before
    assert first["diff"][0]["before"]["120"] == "0-31" and first["diff"][0]["after"]["120"] == "10"
    # NUMA 1 minus reserved 8,9: cores 10-15 first, then the siblings 24-31, then round again.
    assert first["device"]["cpus"] == [10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
    second = run_module(mod.main, a)
    assert second["changed"] is True
    got = [affinity(root, n) for n in range(120, 136)]
    assert got == ["10", "11", "12", "13", "14", "15", "24", "25", "26", "27", "28", "29", "30", "31", "10", "11"]
    assert affinity(root, 0) == "0-31"  # other IRQs untouched
    third = run_module(mod.main, a)
    assert third["changed"] is False and not any(e["changed"] for e in third["plan"])
    fourth = run_module(mod.main, dict(a, _ansible_check_mode=True))
    assert fourth["changed"] is False


def test_cpu_sets_compared_not_text(run_module, root):
    run_module(mod.main, args(root, policy="explicit", cpus=["12-13"]))
    (root / "proc" / "irq" / "120" / "smp_affinity_list").write_text("12\n")
    res = run_module(mod.main, args(root, policy="explicit", cpus=["13", "12"]))
    assert res["changed"] is False


def test_explicit(run_module, root):
    res = run_module(mod.main, args(root, policy="explicit", cpus=["2", "4-5"], irq_name_regex="mlx5_comp"))
    assert res["changed"] is True and [e["irq"] for e in res["plan"]] == list(range(121, 136))
    assert affinity(root, 121) == "2" and affinity(root, 122) == "4" and affinity(root, 123) == "5"
    assert affinity(root, 120) == "0-31"  # async IRQ filtered out


def test_spread_local_node_first(run_module, root):
    res = run_module(mod.main, dict(args(root, policy="spread"), _ansible_check_mode=True))
    assert res["device"]["cpus"][:8] == list(range(8, 16)) and res["device"]["cpus"][16:24] == list(range(0, 8))


def test_interface_lookup(run_module, root):
    net = root / "sys" / "class" / "net" / "ens1f0np0"
    net.mkdir(parents=True)
    os.symlink(str(root / "sys" / "bus" / "pci" / "devices" / MLX), str(net / "device"))
    a = args(root, interface="ens1f0np0")
    del a["device"]
    res = run_module(mod.main, dict(a, _ansible_check_mode=True))
    assert res["device"]["address"] == MLX and len(res["plan"]) == 16


def test_errors(run_module, root):
    res = run_module(mod.main, args(root, device="0000:17:00.0"))
    assert res["failed"] and "no msi_irqs" in res["msg"]
    res = run_module(mod.main, args(root, device="0000:82:00.0"))
    assert res["failed"] and "IRQs 140" in res["msg"] and "/proc/irq" in res["msg"]
    res = run_module(mod.main, args(root, device="0000:99:00.0"))
    assert res["failed"] and "not found" in res["msg"]
    res = run_module(mod.main, args(root, reserved_cpus=["8-15", "24-31"]))
    assert res["failed"] and "no CPU left" in res["msg"]
    res = run_module(mod.main, args(root, policy="explicit", cpus=["40"]))
    assert res["failed"] and res["msg"].startswith("cpus: '40' names CPU 40; allowed are CPU numbers 0-31")
    (root / "sys" / "devices" / "system" / "cpu" / "possible").write_text("0-63\n")  # offline CPUs exist
    res = run_module(mod.main, args(root, policy="explicit", cpus=["40"]))
    assert res["failed"] and "cpus: 40 are not online" in res["msg"]


def test_irqbalance_report_and_ban(run_module, root):
    (root / "proc" / "777").mkdir()
    (root / "proc" / "777" / "comm").write_text("irqbalance\n")
    res = run_module(mod.main, dict(args(root), _ansible_check_mode=True))
    assert res["irqbalance"]["running"] is True and res["irqbalance"]["action"] == "report"
    assert "irqbalance is running (pid 777)" in str(res.get("warnings"))  # structured warnings in core 2.21
    (root / "proc" / "777" / "comm").unlink()  # not running: ban writes the config, no restart
    res = run_module(mod.main, args(root, irqbalance="ban"))
    assert res["changed"] is True and res["irqbalance"]["config_changed"] is True
    text = (root / "etc" / "irqb").read_text()
    assert "--banirq=120" in text and "--banirq=135" in text
    res = run_module(mod.main, args(root, irqbalance="ban"))
    assert res["changed"] is False


def test_irqbalance_stop_uses_systemctl(run_module, root, tmp_path, monkeypatch):
    (root / "proc" / "777").mkdir()
    (root / "proc" / "777" / "comm").write_text("irqbalance\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "systemctl.log"
    fake = bindir / "systemctl"
    fake.write_text('#!/bin/sh\necho "$@" >> %s\n' % log)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ["PATH"]))
    res = run_module(mod.main, dict(args(root, irqbalance="stop"), _ansible_check_mode=True))
    assert res["changed"] is True and not log.exists()
    res = run_module(mod.main, args(root, irqbalance="stop"))
    assert res["irqbalance"]["action"] == "stopped" and log.read_text() == "stop irqbalance\n"


def test_interface_lookup_virtio_net(run_module, root):
    """virtio-net: /sys/class/net/eth0/device is the virtio device below the PCI function."""
    virtio = root / "sys" / "bus" / "pci" / "devices" / MLX / "virtio0"
    virtio.mkdir()
    net = root / "sys" / "class" / "net" / "eth0"
    net.mkdir(parents=True)
    os.symlink(str(virtio), str(net / "device"))
    a = args(root, interface="eth0")
    del a["device"]
    res = run_module(mod.main, dict(a, _ansible_check_mode=True))
    assert res["device"]["address"] == MLX and len(res["plan"]) == 16


def load_replay_program():
    """The irq_affinity role's boot program, with the module's irq.py as its gpufleet_irq (the role
    installs a copy of plugins/module_utils/irq.py under that name next to it)."""
    import importlib.machinery
    import importlib.util
    import sys

    from ansible_collections.gpufleet.cluster.plugins.module_utils import irq as irq_utils

    sys.modules.setdefault("gpufleet_irq", irq_utils)
    path = Path(__file__).resolve().parents[4] / "roles" / "irq_affinity" / "files" / "gpufleet_irq_affinity_replay.py"
    loader = importlib.machinery.SourceFileLoader("gpufleet_irq_affinity_replay", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    prog = importlib.util.module_from_spec(spec)
    loader.exec_module(prog)
    return prog


def test_boot_replay_program_repins_like_the_module(run_module, root, tmp_path, capsys):
    """What the role persists (device, filter, ordered CPUs) re-pins a reset tree exactly as the module
    did, twice without writing the second time; --check sees drift without changing anything."""
    import json

    prog = load_replay_program()
    res = run_module(mod.main, args(root, reserved_cpus=["8-9"], irq_name_regex="mlx5_comp"))
    assert res["changed"] is True and len(res["plan"]) == 15
    pinned = {n: affinity(root, n) for n in range(120, 136)}
    doc = {"format": "gpufleet.irq_affinity/1", "device": MLX, "interface": None, "irq_name_regex": "mlx5_comp",
           "cpus": res["device"]["cpus"], "irq_count": len(res["plan"]), "proc_root": str(root), "sysfs_root": str(root)}
    persist = tmp_path / "dev.json"
    persist.write_text(json.dumps(doc))
    for n in range(120, 136):
        (root / "proc" / "irq" / str(n) / "smp_affinity_list").write_text("0-31\n")
    assert prog.main(["--check", str(persist)]) == 1
    assert "15 of 15 IRQ(s) differ" in capsys.readouterr().out and affinity(root, 121) == "0-31"
    assert prog.main([str(persist)]) == 0
    assert "15 IRQ(s), 15 written, 0 error(s)" in capsys.readouterr().out
    assert {n: affinity(root, n) for n in range(121, 136)} == {n: pinned[n] for n in range(121, 136)}
    assert affinity(root, 120) == "0-31"  # mlx5_async0 is not matched by the filter
    assert prog.main([str(persist)]) == 0 and "15 written" not in capsys.readouterr().out
    assert run_module(mod.main, args(root, reserved_cpus=["8-9"], irq_name_regex="mlx5_comp"))["changed"] is False


def test_boot_replay_program_missing_device_and_bad_file(root, tmp_path, capsys):
    import json

    prog = load_replay_program()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "other"}))
    assert prog.main([str(bad)]) == 2
    gone = tmp_path / "gone.json"
    gone.write_text(json.dumps({"format": "gpufleet.irq_affinity/1", "interface": "nope0", "cpus": [1],
                                "proc_root": str(root), "sysfs_root": str(root)}))
    assert prog.main(["--wait", "0.2", str(gone)]) == 1 and "nope0: device not found" in capsys.readouterr().err


# --- every option checked before the first change; partial failures reported; no stray temp files ---


@pytest.mark.parametrize("regex", ["mlx5_(", "[", "*x", "(?P<a>x)(?P<a>y)"])
def test_bad_irq_name_regex_refused(run_module, root, regex):
    before = snapshot(root)
    res = run_module(mod.main, args(root, irq_name_regex=regex))
    assert res["failed"] and res["changed"] is False
    assert res["msg"].startswith("irq_name_regex: %r is not a valid Python regular expression" % regex)
    assert snapshot(root) == before


@pytest.mark.parametrize("kind", ["directory", "relative", "under_a_file"])
def test_irqbalance_config_must_be_an_absolute_file(run_module, root, tmp_path, kind):
    (root / "etc").mkdir()
    (tmp_path / "afile").write_text("x\n")
    path = {"directory": str(root / "etc"), "relative": "etc/irqbalance",
            "under_a_file": str(tmp_path / "afile" / "irqbalance")}[kind]
    before = snapshot(root)
    res = run_module(mod.main, args(root, irqbalance="ban", irqbalance_config=path))
    assert res["failed"] and res["changed"] is False and res["msg"].startswith("irqbalance_config: ")
    assert {"directory": "is a directory", "relative": "an absolute file path is needed",
            "under_a_file": "is not a directory"}[kind] in res["msg"]
    assert snapshot(root) == before  # no IRQ pinned


@pytest.mark.parametrize("option", ["cpus", "reserved_cpus"])
def test_reversed_cpu_range_refused(run_module, root, option):
    before = snapshot(root)
    res = run_module(mod.main, args(root, policy="explicit", **{"cpus": ["10-11"], option: ["5-2"]}))
    assert res["failed"] and res["changed"] is False
    assert res["msg"].startswith("%s: '5-2' is not a CPU number or cpulist (the range 5-2 is reversed" % option)
    assert "allowed are CPU numbers 0-31" in res["msg"] and snapshot(root) == before


def test_huge_cpu_range_refused_without_building_it(run_module, root):
    import time

    start = time.monotonic()
    res = run_module(mod.main, args(root, reserved_cpus=["8", "0-999999999"]))
    assert time.monotonic() - start < 5  # the billion CPUs are never expanded
    assert res["failed"] and res["changed"] is False
    assert res["msg"] == ("reserved_cpus: '0-999999999' names CPU 999999999; allowed are CPU numbers 0-31 "
                          "(this host's CPUs, /sys/devices/system/cpu/online) or ranges of them like 8-15, "
                          "lowest first")
    (root / "sys" / "devices" / "system" / "cpu" / "online").unlink()  # sysfs says nothing: the sane maximum
    res = run_module(mod.main, args(root, policy="explicit", cpus=["0-999999999"]))
    assert res["failed"] and "allowed are CPU numbers 0-8191 (no CPU list in sysfs: 8192 is the largest" in res["msg"]


def test_bad_device_and_interface_names_refused(run_module, root):
    res = run_module(mod.main, args(root, device="../../../etc"))
    assert res["failed"] and res["msg"].startswith("device: '../../../etc' is not a PCI address")
    a = args(root, interface="../../x")
    del a["device"]
    res = run_module(mod.main, a)
    assert res["failed"] and res["msg"].startswith("interface: '../../x' is not a netdev name")


@pytest.mark.parametrize("how", ["raises", "fail_json"])
def test_irqbalance_temp_file_removed_when_atomic_move_fails(run_module, root, monkeypatch, how):
    """atomic_move raises (ansible-core 2.17+) or ends the module through fail_json (older cores)."""
    from ansible.module_utils.basic import AnsibleModule

    def broken(self, src, dest, unsafe_writes=False, keep_dest_attrs=True):
        if how == "raises":
            raise Exception("hand-made atomic_move failure")  # pylint: disable=broad-exception-raised
        self.fail_json(msg="hand-made atomic_move failure")

    monkeypatch.setattr(AnsibleModule, "atomic_move", broken)
    (root / "etc").mkdir()
    (root / "etc" / "irqb").write_text('IRQBALANCE_ARGS="--foo"\n')  # hand-made
    before = snapshot(root)
    res = run_module(mod.main, args(root, irqbalance="ban"))
    assert res["failed"] and "hand-made atomic_move failure" in res["msg"]
    assert sorted(p.name for p in (root / "etc").iterdir()) == ["irqb"]  # no stray .irqbalance.* temp file
    assert snapshot(root) == before and res.get("changed", False) is False  # the file goes first: no IRQ pinned
    res = run_module(mod.main, args(root, irqbalance="ban", irqbalance_config=str(root / "new" / "dir" / "irqb")))
    assert res["failed"] and not (root / "new").exists()  # directories made for the file are gone again


def test_restart_failure_after_config_write_reports_changed(run_module, root, tmp_path, monkeypatch):
    (root / "proc" / "777").mkdir()
    (root / "proc" / "777" / "comm").write_text("irqbalance\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "systemctl"
    fake.write_text('#!/bin/sh\necho "hand-made: unit irqbalance.service is masked" >&2\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ["PATH"]))
    res = run_module(mod.main, args(root, irqbalance="ban"))
    assert res["failed"] and res["changed"] is True, res
    assert "restart irqbalance failed (rc 1)" in res["msg"] and "masked" in res["msg"]
    assert "applied before this failure: %s written" % (root / "etc" / "irqb") in res["msg"]
    assert "--banirq=120" in (root / "etc" / "irqb").read_text()
    assert affinity(root, 120) == "0-31"  # the IRQs come after irqbalance: not pinned


def test_ban_keeps_operator_file_and_replaces_stale_bans(run_module, root):
    """Hand-made /etc/default/irqbalance in the Debian style, with the operator's own ban and a record of
    bans this module added for the device in an earlier boot (IRQ numbers 90-91 then)."""
    (root / "etc").mkdir()
    (root / "etc" / "irqb").write_text(
        "# irqbalance options (hand-made)\n"
        "#IRQBALANCE_ONESHOT=\n"
        "# gpufleet.cluster.irq_affinity bans of 0000:81:00.0: 90-91\n"
        "IRQBALANCE_ARGS='--hintpolicy=subset --banirq=7 --banirq=90 --banirq=91'  # site policy\n")
    res = run_module(mod.main, dict(args(root, irqbalance="ban", irq_name_regex="mlx5_comp0@"), _ansible_diff=True))
    assert res["changed"] is True and res["irqbalance"]["config_changed"] is True
    text = (root / "etc" / "irqb").read_text()
    assert text == ("# irqbalance options (hand-made)\n"
                    "#IRQBALANCE_ONESHOT=\n"
                    "# gpufleet.cluster.irq_affinity bans of 0000:81:00.0: 121\n"
                    "IRQBALANCE_ARGS='--hintpolicy=subset --banirq=7 --banirq=121'  # site policy\n")
    assert res["diff"][1]["after"] == text and "--banirq=90" in res["diff"][1]["before"]
    again = run_module(mod.main, args(root, irqbalance="ban", irq_name_regex="mlx5_comp0@"))
    assert again["changed"] is False and (root / "etc" / "irqb").read_text() == text


def test_roots_and_unreadable_interrupts_refused(run_module, root, tmp_path):
    (tmp_path / "afile").write_text("x\n")
    res = run_module(mod.main, args(root, proc_root=str(tmp_path / "afile")))
    assert res["failed"] and res["msg"].startswith("proc_root: ") and "has no proc/ directory" in res["msg"]
    res = run_module(mod.main, args(root, sysfs_root=""))
    assert res["failed"] and res["msg"].startswith("sysfs_root: an absolute directory path is needed")
    (root / "proc" / "interrupts").write_bytes(b"\xff\xfe hand-made garbage\n")
    before = snapshot(root)
    res = run_module(mod.main, args(root))
    assert res["failed"] and res["changed"] is False and res["msg"].startswith("proc_root: ")
    assert "/proc/interrupts is missing or does not read" in res["msg"] and snapshot(root) == before
