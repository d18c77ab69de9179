# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""irq_affinity's engine (module_utils/irq_affinity.py) alone, on a copy of the HANDMADE 2-socket proc/sys tree
with a stand-in module object; the module end to end is in tests/unit/plugins/modules/test_irq_affinity.py."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import irq_affinity_engine as irq_affinity

from .stand_ins import Failed, StandInModule, script, unstartable

TREE = Path(__file__).resolve().parents[2] / "fixtures" / "hand_made" / "irq" / "two-socket-mlx5-numa1-HANDMADE"
MLX = "0000:81:00.0"


def stand_in(root, check_mode=False, diff=False, bin_paths=None, **params):
    defaults = dict(device=MLX, interface=None, policy="local-node", cpus=None, reserved_cpus=[], irq_name_regex=None,
                    irqbalance="report", irqbalance_config=str(root / "etc" / "irqb"), proc_root=str(root),
                    sysfs_root=str(root))
    return StandInModule(params, defaults, check_mode=check_mode, diff=diff, bin_paths=bin_paths)


@pytest.fixture
def root(tmp_path):
    """The HANDMADE tree with its PCI directories renamed from 0000_81_00.0 to 0000:81:00.0."""
    dst = tmp_path / "root"
    shutil.copytree(str(TREE), str(dst))
    devices = dst / "sys" / "bus" / "pci" / "devices"
    for entry in sorted(devices.iterdir()):
        if re.match(r"^[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}\.[0-7]$", entry.name):
            entry.rename(devices / entry.name.replace("_", ":"))
    return dst


def affinity(root, n):
    return (root / "proc" / "irq" / str(n) / "smp_affinity_list").read_text().strip()


def irqbalance_running(root):
    (root / "proc" / "777").mkdir()
    (root / "proc" / "777" / "comm").write_text("irqbalance\n")


def test_cpus_param_sets_and_errors():
    errors = []
    params = {"cpus": ["2", "4-5", 7], "reserved_cpus": ["x", "30-40"]}
    assert irq_affinity.cpus_param(params, "cpus", 31, "online", errors) == {2, 4, 5, 7} and errors == []
    assert irq_affinity.cpus_param(params, "reserved_cpus", 31, None, errors) == set()
    assert errors[0].startswith("reserved_cpus: 'x' is not a CPU number or cpulist")
    assert errors[1].startswith("reserved_cpus: '30-40' names CPU 40; allowed are CPU numbers 0-31 (no CPU list in "
                                "sysfs: 8192 is the largest")


def test_config_path_problem(tmp_path):
    assert irq_affinity.config_path_problem(str(tmp_path / "irqbalance")) is None
    assert irq_affinity.config_path_problem("etc/irqbalance").startswith("an absolute file path is needed")
    assert irq_affinity.config_path_problem(str(tmp_path)).endswith("/etc/sysconfig/irqbalance)")


def test_check_mode_plans_without_writing(root):
    module = stand_in(root, check_mode=True, reserved_cpus=["8", "9"])
    result = irq_affinity.pin(module)
    assert result["changed"] is True and affinity(root, 120) == "0-31"
    assert result["device"] == {"address": MLX, "numa_node": 1, "cpus": [10, 11, 12, 13, 14, 15] + list(range(24, 32))}
    assert [e["after"] for e in result["plan"][:3]] == ["10", "11", "12"] and result["diff"][0]["after"]["135"] == "11"
    assert result["irqbalance"] == {"running": False, "pids": [], "action": "none", "config_changed": False}


def test_affinity_plan_compares_cpu_sets(root):
    (root / "proc" / "irq" / "120" / "smp_affinity_list").write_text("13,12\n")
    plan, before, after, todo = irq_affinity.affinity_plan(str(root), [120, 121], {120: {"name": "a"}},
                                                           {120: [12, 13], 121: [1]})
    assert todo == [121] and before == {"120": "12-13", "121": "0-31"} and after == {"120": "12-13", "121": "1"}
    assert plan[0] == {"irq": 120, "name": "a", "before": "12-13", "after": "12-13", "changed": False}


def test_stop_runs_systemctl_through_the_runner(root, tmp_path):
    irqbalance_running(root)
    log = tmp_path / "systemctl.log"
    systemctl = script(tmp_path, "systemctl", 'echo "$LC_ALL $*" >> %s' % log)
    module = stand_in(root, irqbalance="stop", bin_paths={"systemctl": systemctl})
    result = irq_affinity.pin(module)
    assert result["changed"] is True and result["irqbalance"]["action"] == "stopped"
    assert log.read_text() == "C stop irqbalance\n" and affinity(root, 120) == "8"


def test_systemctl_missing_fails_before_any_change(root):
    irqbalance_running(root)
    with pytest.raises(Failed) as failed:
        irq_affinity.pin(stand_in(root, irqbalance="stop"))
    assert failed.value.args[0]["msg"] == 'Failed to find required executable "systemctl"'
    assert affinity(root, 120) == "0-31"


def test_systemctl_the_os_cannot_start_after_the_file_was_written(root, tmp_path):
    irqbalance_running(root)
    bad = unstartable(tmp_path, "systemctl")
    with pytest.raises(Failed) as failed:
        irq_affinity.pin(stand_in(root, irqbalance="ban", bin_paths={"systemctl": bad}))
    kw = failed.value.args[0]
    assert kw["changed"] is True and kw["irqbalance"]["action"] == "banned"
    assert kw["msg"].startswith("%s restart irqbalance failed (rc 127): " % bad)
    assert kw["msg"].endswith("; applied before this failure: %s written" % (root / "etc" / "irqb"))
    assert affinity(root, 120) == "0-31"


def test_device_problems_fail_unchanged(root):
    with pytest.raises(Failed) as failed:
        irq_affinity.pin(stand_in(root, device="0000:99:00.0"))
    assert failed.value.args[0]["changed"] is False and "not found" in failed.value.args[0]["msg"]
    with pytest.raises(Failed) as failed:
        irq_affinity.pin(stand_in(root, irq_name_regex="nothing-matches"))
    assert failed.value.args[0]["msg"] == "no IRQs of %s match irq_name_regex 'nothing-matches'" % MLX
