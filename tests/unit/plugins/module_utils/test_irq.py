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


DEV = "0000:81:00.0"
REC = "# gpufleet.cluster.irq_affinity bans of 0000:81:00.0: "


def test_irqbalance_config():
    text = 'ENABLED="1"\nIRQBALANCE_ARGS="--policyscript=/x --banirq=7"\n'
    out = irq.irqbalance_config_with_bans(text, [121, 120], DEV)
    assert out == ('ENABLED="1"\n' + REC + '120-121\n'
                   'IRQBALANCE_ARGS="--policyscript=/x --banirq=7 --banirq=120 --banirq=121"\n')
    assert irq.irqbalance_config_with_bans(out, [120, 121], DEV) == out
    assert irq.irqbalance_config_with_bans("", [5], DEV) == REC + '5\nIRQBALANCE_ARGS="--banirq=5"\n'


def test_irqbalance_pids(tmp_path, tree):
    (tmp_path / "proc" / "42").mkdir(parents=True)
    (tmp_path / "proc" / "42" / "comm").write_text("irqbalance\n")
    (tmp_path / "proc" / "43").mkdir()
    (tmp_path / "proc" / "43" / "comm").write_text("sshd\n")
    assert irq.irqbalance_pids(str(tmp_path)) == [42]
    assert irq.irqbalance_pids(tree) == []


# Hand-made irqbalance environment files (Debian /etc/default/irqbalance, RHEL /etc/sysconfig/irqbalance style).


def edit_twice(text, irqs, owner=DEV):
    """The edit, and a check that a second edit with the same input changes nothing."""
    out = irq.irqbalance_config_with_bans(text, irqs, owner)
    assert irq.irqbalance_config_with_bans(out, irqs, owner) == out
    return out


def test_ban_edit_trailing_comment_stays_a_comment():
    text = 'IRQBALANCE_ARGS="--hintpolicy=exact"   # set by the site team\n'
    assert edit_twice(text, [120]) == (REC + '120\n'
                                       'IRQBALANCE_ARGS="--hintpolicy=exact --banirq=120"   # set by the site team\n')
    # an empty value followed by a comment
    assert edit_twice('IRQBALANCE_ARGS= # none yet\n', [5]) == REC + '5\nIRQBALANCE_ARGS="--banirq=5" # none yet\n'


def test_ban_edit_keeps_single_quotes_and_export():
    text = "export IRQBALANCE_ARGS='--policyscript=/usr/local/bin/pol'\n"
    assert edit_twice(text, [121, 120]) == (
        REC + "120-121\nexport IRQBALANCE_ARGS='--policyscript=/usr/local/bin/pol --banirq=120 --banirq=121'\n")
    # unquoted one word: a second word needs quotes, double ones
    assert edit_twice("IRQBALANCE_ARGS=--debug\n", [3]) == REC + '3\nIRQBALANCE_ARGS="--debug --banirq=3"\n'


def test_ban_edit_duplicates_last_one_counts_earlier_left_alone():
    text = ('IRQBALANCE_ARGS="--banirq=1"\n'
            'ENABLED=1\n'
            'IRQBALANCE_ARGS="--hintpolicy=ignore"\n')
    assert edit_twice(text, [120]) == ('IRQBALANCE_ARGS="--banirq=1"\n'
                                       'ENABLED=1\n' + REC + '120\n'
                                       'IRQBALANCE_ARGS="--hintpolicy=ignore --banirq=120"\n')
    assert [a["line"] for a in irq.parse_env_assignments(text) if a["name"] == "IRQBALANCE_ARGS"] == [1, 3]


def test_ban_edit_removes_stale_bans_of_this_device_only():
    text = (REC + '90-91\n'
            '# gpufleet.cluster.irq_affinity bans of 0000:82:00.0: 91-92\n'
            'IRQBALANCE_ARGS="--banirq=7 --banirq=90 --banirq=91 --banirq=92"\n')
    out = edit_twice(text, [120, 121])
    # 90: ours and stale -> gone; 91: stale for us but the other device's record holds it -> kept;
    # 92: the other device's; 7: no record, the operator's -> kept
    assert out == (REC + '120-121\n'
                   '# gpufleet.cluster.irq_affinity bans of 0000:82:00.0: 91-92\n'
                   'IRQBALANCE_ARGS="--banirq=7 --banirq=91 --banirq=92 --banirq=120 --banirq=121"\n')
    assert irq.ban_records(out) == {DEV: {120, 121}, "0000:82:00.0": {91, 92}}


def test_ban_edit_operator_ban_is_not_claimed():
    text = 'IRQBALANCE_ARGS="--banirq 120 -i121"\n'
    out = edit_twice(text, [120, 121, 122])
    assert out == REC + '122\nIRQBALANCE_ARGS="--banirq 120 -i121 --banirq=122"\n'
    # 120/121 are no longer wanted: still the operator's, kept; 122 is ours and stale: removed
    assert edit_twice(out, [130]) == REC + '130\nIRQBALANCE_ARGS="--banirq 120 -i121 --banirq=130"\n'


def test_ban_edit_file_without_the_variable():
    text = '# hand-made\nIRQBALANCE_ONESHOT=auto\n#IRQBALANCE_ARGS="--commented-out"'
    assert edit_twice(text, [120, 121, 122]) == (
        text + '\n' + REC + '120-122\nIRQBALANCE_ARGS="--banirq=120 --banirq=121 --banirq=122"\n')
    assert edit_twice("", [7]) == REC + '7\nIRQBALANCE_ARGS="--banirq=7"\n'


def test_ban_edit_idempotent_and_keeps_everything_else():
    text = ('# hand-made, CRLF line ends\r\n'
            'IRQBALANCE_ARGS="--a\r\n  --b"  # two lines\r\n'
            'OTHER=x\r\n')
    out = edit_twice(text, [9])
    assert out == ('# hand-made, CRLF line ends\r\n' + REC + '9\r\n'
                   'IRQBALANCE_ARGS="--a\r\n  --b --banirq=9"  # two lines\r\nOTHER=x\r\n')
    assert irq.irqbalance_config_with_bans(out, [9], DEV) == out


@pytest.mark.parametrize("text, why", [
    ('IRQBALANCE_ARGS="--a"\'--b\'\n', "glued from several"),
    ('IRQBALANCE_ARGS="--a\n', "double quote is not closed"),
    ("IRQBALANCE_ARGS='--a\n", "single quote is not closed"),
    ('IRQBALANCE_ARGS=--a --b\n', "'--b' follows the value"),
    ('IRQBALANCE_ARGS=--a\\ --b\n', "unquoted and holds a backslash"),
])
def test_ban_edit_refuses_what_it_cannot_edit_safely(text, why):
    with pytest.raises(ValueError, match="IRQBALANCE_ARGS on line 1") as info:
        irq.irqbalance_config_with_bans(text, [1], DEV)
    assert why in str(info.value)


def test_cpulist_reversed_and_bounded_without_expanding():
    with pytest.raises(ValueError, match="reversed"):
        irq.parse_cpulist("5-2")
    with pytest.raises(ValueError, match="CPU 999999999 is above CPU 31"):
        irq.parse_cpulist("0-999999999", 31)  # refused before a billion-entry list exists
    assert irq.cpulist_ranges("0-999999999,4") == [(0, 999999999), (4, 4)]
    assert irq.parse_cpulist(" 8 - 10 ,12") == [8, 9, 10, 12]


def test_kernel_files_that_do_not_parse_are_empty_not_tracebacks(tmp_path):
    cpu = tmp_path / "sys" / "devices" / "system" / "cpu"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text("garbage\n")
    (tmp_path / "proc" / "irq" / "5").mkdir(parents=True)
    (tmp_path / "proc" / "irq" / "5" / "smp_affinity_list").write_text("0-999999999\n")
    assert irq.online_cpus(str(tmp_path)) == [] and irq.read_affinity(str(tmp_path), 5) is None
    assert irq.host_max_cpu(str(tmp_path)) == (irq.MAX_CPUS - 1, None)
    (cpu / "possible").write_text("0-255\n")
    assert irq.host_max_cpu(str(tmp_path)) == (255, "/sys/devices/system/cpu/possible")


def test_copy_for_boot_replay_stays_standalone(tmp_path):
    """roles/irq_affinity copies irq.py to the node as gpufleet_irq.py: it must import with the standard
    library alone."""
    import subprocess
    import sys

    src = Path(irq.__file__).read_text()
    (tmp_path / "gpufleet_irq.py").write_text(src)
    code = ("import sys; sys.path.insert(0, %r); import gpufleet_irq as m; "
            "print(m.irqbalance_config_with_bans('', [5], 'd').splitlines()[-1])" % str(tmp_path))
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=str(tmp_path), capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == 'IRQBALANCE_ARGS="--banirq=5"'
