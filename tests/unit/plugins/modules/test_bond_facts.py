# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bond_facts on a proc tree holding every recorded bonding file as one bond."""

from __future__ import annotations

import shutil

from ansible_collections.gpufleet.cluster.plugins.modules import bond_facts as mod


def test_all_recordings_as_bonds(run_module, corpus, tmp_path):
    base = tmp_path / "proc" / "net" / "bonding"
    base.mkdir(parents=True)
    files = sorted((corpus / "bonding").iterdir())
    for i, path in enumerate(files):
        shutil.copy(str(path), str(base / ("bond%d" % i)))
    res = run_module(mod.main, {"proc_root": str(tmp_path), "_ansible_check_mode": True})
    assert res["changed"] is False
    bonds = res["ansible_facts"]["bonding"]
    assert sorted(bonds) == ["bond%d" % i for i in range(len(files))]
    by_file = {path.name: bonds["bond%d" % i] for i, path in enumerate(files)}
    for name, bond in by_file.items():
        assert bond["degraded"] is ("down" in name), name
    if "telegraf-802.3ad-one-slave-down.txt" in by_file:
        assert by_file["telegraf-802.3ad-one-slave-down.txt"]["degraded_reasons"] == ["slave eth1 MII status down"]


def test_no_bonding(run_module, tmp_path):
    res = run_module(mod.main, {"proc_root": str(tmp_path)})
    assert res["ansible_facts"]["bonding"] == {} and res["changed"] is False


def _bond_tree(tmp_path, corpus, recordings, mtus=None):
    """A proc tree with recorded bonding files as the named bonds, and a sys tree with their MTUs."""
    base = tmp_path / "proc" / "net" / "bonding"
    base.mkdir(parents=True)
    for bond, recording in recordings.items():
        shutil.copy(str(corpus / "bonding" / recording), str(base / bond))
    for bond, mtu in (mtus or {}).items():
        net = tmp_path / "sys" / "class" / "net" / bond
        net.mkdir(parents=True)
        (net / "mtu").write_text("%d\n" % mtu)
    return str(tmp_path)


def test_expected_as_wanted(run_module, corpus, tmp_path):
    root = _bond_tree(tmp_path, corpus, {"bond0": "telegraf-802.3ad-2x10G.txt"}, {"bond0": 9000})
    bond = mod.bonding.read_all(root)["bond0"]
    want = {"name": "bond0", "mode": "802.3ad", "members": [s["name"] for s in bond["slaves"]],
            "lacp_rate": bond["lacp"]["lacp_rate"], "xmit_hash_policy": bond["xmit_hash_policy"],
            "miimon": bond["miimon"], "mtu": 9000}
    res = run_module(mod.main, {"proc_root": root, "sysfs_root": root, "expected": [want]})
    assert res["changed"] is False
    assert res["bond_check"] == {"bond0": {"ok": True, "problems": []}}


def test_expected_every_difference_named(run_module, corpus, tmp_path):
    """The recorded active-backup bond (eth3 down, eth2 primary and active) against a hand-made wish that
    differs in every compared key."""
    root = _bond_tree(tmp_path, corpus, {"bond0": "telegraf-active-backup-eth3-down.txt"}, {"bond0": 1500})
    want = {"name": "bond0", "mode": "802.3ad", "members": ["eth2", "eth4"], "miimon": 50, "lacp_rate": "fast",
            "xmit_hash_policy": "layer3+4", "mtu": 9000}
    missing = {"name": "bond1", "mode": "active-backup", "members": ["eth5"]}
    res = run_module(mod.main, {"proc_root": root, "sysfs_root": root, "expected": [want, missing]})
    assert res["bond_check"]["bond0"] == {"ok": False, "problems": [
        "mode is active-backup, wanted 802.3ad", "member eth4 is not enslaved", "eth3 is enslaved but not in members",
        "slave eth3 MII status down", "miimon is 100, wanted 50", "lacp_rate is unset, wanted fast",
        "xmit_hash_policy is unset, wanted layer3+4", "MTU is 1500, wanted 9000"]}
    assert res["bond_check"]["bond1"] == {"ok": False, "problems": ["bond bond1 does not exist (no /proc/net/bonding/bond1)"]}


def test_expected_primary(corpus, tmp_path):
    root = _bond_tree(tmp_path, corpus, {"bond0": "telegraf-active-backup-eth3-down.txt"})
    seen = mod.bonding.read_all(root)
    base = {"name": "bond0", "mode": "active-backup", "members": ["eth2", "eth3"]}
    check = mod.bonding.expected_problems
    assert check(seen, [dict(base, primary="eth2")])["bond0"] == ["slave eth3 MII status down"]
    assert check(seen, [dict(base, primary="eth3")])["bond0"] == [
        "slave eth3 MII status down", "primary slave is eth2, wanted eth3"]
    # hand-made: the primary is up but another slave is active
    seen["bond0"]["active_slave"] = "eth3"
    assert check(seen, [dict(base, primary="eth2")])["bond0"] == [
        "slave eth3 MII status down", "active slave is eth3 while primary eth2 is up"]


def test_expected_mtu_unreadable_not_compared(run_module, corpus, tmp_path):
    root = _bond_tree(tmp_path, corpus, {"bond0": "insights-balance-rr-2x1G.txt"})
    bond = mod.bonding.read_all(root)["bond0"]
    want = {"name": "bond0", "mode": "balance-rr", "members": [s["name"] for s in bond["slaves"]], "mtu": 9000}
    res = run_module(mod.main, {"proc_root": root, "sysfs_root": root, "expected": [want]})
    assert res["bond_check"]["bond0"]["problems"] == bond["degraded_reasons"]


def test_expected_bad_values_refused(run_module, tmp_path):
    bad = [{"name": "../x", "mode": "802.3ad", "members": ["a"]},
           {"name": "bond1", "mode": "802.3ad", "members": []},
           {"name": "bond2", "mode": "active-backup", "members": ["a", "a"], "primary": "b", "mtu": 10, "miimon": -1},
           {"name": "bond1", "mode": "802.3ad", "members": ["c"]},
           {"name": "bond3", "mode": "802.3ad", "members": ["d"], "addresses": ["10.0.0.1/24"]}]
    res = run_module(mod.main, {"proc_root": str(tmp_path), "expected": bad})
    assert res.get("failed") is True
    for text in ("expected[0].name must be an interface name", "expected[1].members must be a non-empty list",
                 "expected[2].members", "expected[2].mtu must be 68..65535, got 10", "expected[2].miimon must be 0",
                 "expected[2].primary 'b' is not one of the members", "expected[3].name: bond bond1 is listed twice",
                 "expected[4]: addresses. Supported parameters include"):
        assert text in res["msg"], text
