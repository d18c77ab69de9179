# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""irq module_utils on the HANDMADE 2-socket proc/sys tree (real IRQs exist only in VMs)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import irq

SRC = Path(__file__).resolve().parents[2] / "fixtures" / "hand_made" / "irq" / "two-socket-mlx5-numa1-HANDMADE"


def materialize(src, dst):
    """Copy the HANDMADE tree; PCI directories are stored as 0000_81_00.0 (a colon is not a legal file
    name character in the repository) and get their real name 0000:81:00.0 here."""
    shutil.copytree(str(src), str(dst))
    devices = Path(dst) / "sys" / "bus" / "pci" / "devices"
    for entry in sorted(devices.iterdir()):
        if re.match(r"^[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}\.[0-7]$", entry.name):
            entry.rename(devices / entry.name.replace("_", ":"))
    return Path(dst)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return str(materialize(SRC, tmp_path_factory.mktemp("irq") / "root"))


def test_cpulist_round_trip():
    assert irq.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert irq.format_cpulist([11, 10, 8, 3, 2, 1, 0]) == "0-3,8,10-11"
    assert irq.parse_cpulist("") == [] and irq.format_cpulist([]) == ""
    with pytest.raises(ValueError):
        irq.parse_cpulist("a-b")


def test_interrupts(tree):
    got = irq.read_interrupts(tree)
    assert sorted(got)[:3] == [0, 8, 120] and len(got) == 18  # NMI/ERR rows skipped
    assert got[120]["name"] == "mlx5_async0@pci:0000:81:00.0"
    assert got[135]["name"] == "mlx5_comp14@pci:0000:81:00.0"


def test_device_and_topology(tree):
    dev = irq.read_device(tree, "0000:81:00.0")
    assert dev["numa_node"] == 1 and dev["local_cpus"] == list(range(8, 16)) + list(range(24, 32))
    assert dev["msi_irqs"] == list(range(120, 136))
    assert irq.read_device(tree, "0000:17:00.0")["msi_irqs"] is None
    assert irq.online_cpus(tree) == list(range(32))
    assert irq.node_cpus(tree, 0) == list(range(0, 8)) + list(range(16, 24))
    assert irq.core_order(tree, [8, 24, 9, 25]) == [8, 9, 24, 25]


def test_device_irqs_and_filter(tree):
    ints = irq.read_interrupts(tree)
    assert irq.device_irqs(ints, [120], "0000:81:00.0") == list(range(120, 136))
    assert irq.device_irqs(ints, None, "0000:81:00.0", "mlx5_comp") == list(range(121, 136))


def test_plan_one_per_core_then_siblings():
    cands = [10, 11, 24, 25]
    assert irq.plan([5, 3, 4, 6, 7], cands) == {3: [10], 4: [11], 5: [24], 6: [25], 7: [10]}
    assert irq.plan([1], []) == {}


def test_irqbalance_config():
    text = 'ENABLED="1"\nIRQBALANCE_ARGS="--policyscript=/x --banirq=7"\n'
    out = irq.irqbalance_config_with_bans(text, [121, 120])
    assert out == 'ENABLED="1"\nIRQBALANCE_ARGS="--policyscript=/x --banirq=7 --banirq=120 --banirq=121"\n'
    assert irq.irqbalance_config_with_bans(out, [120, 121]) == out
    assert irq.irqbalance_config_with_bans("", [5]) == 'IRQBALANCE_ARGS="--banirq=5"\n'


def test_irqbalance_pids(tmp_path, tree):
    (tmp_path / "proc" / "42").mkdir(parents=True)
    (tmp_path / "proc" / "42" / "comm").write_text("irqbalance\n")
    (tmp_path / "proc" / "43").mkdir()
    (tmp_path / "proc" / "43" / "comm").write_text("sshd\n")
    assert irq.irqbalance_pids(str(tmp_path)) == [42]
    assert irq.irqbalance_pids(tree) == []
