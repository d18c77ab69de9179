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
