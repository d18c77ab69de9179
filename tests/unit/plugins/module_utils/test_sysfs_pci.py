# -*- coding: utf-8 -*-
"""sysfs_pci on the HAND-MADE HGX tree (tests/fixtures/hand_made) and on this machine's real /sys."""
from __future__ import absolute_import, division, print_function

import os
import sys

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import sysfs_pci

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "hand_made"))
import sysfs_pci_tree  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def hgx(tmp_path):
    return str(sysfs_pci_tree.build(str(tmp_path)))


def test_gpu_node_summary(hgx):
    devices, summary = sysfs_pci.read_pci(hgx)
    assert len(devices) == 22  # 8 GPUs + 4 NVSwitches + 10 CX-7; the virtio device is filtered
    assert summary["nvidia_gpu_count"] == 8
    assert summary["nvidia_gpus"][0] == "0000:18:00.0" and summary["nvidia_gpus"][-1] == "0000:88:00.0"
    assert summary["nvswitch_count"] == 4
    assert summary["mellanox_function_count"] == 10


def test_link_degradation_visible(hgx):
    devices, _summary = sysfs_pci.read_pci(hgx)
    ok, slow = devices["0000:18:00.0"], devices["0000:88:00.0"]
    assert (ok["current_link_gen"], ok["current_link_width"]) == (5, 16)
    assert (slow["current_link_gen"], slow["current_link_width"]) == (4, 8)
    assert (slow["max_link_gen"], slow["max_link_width"]) == (5, 16)
    assert (ok["numa_node"], slow["numa_node"]) == (0, 1)
    assert ok["driver"] == "nvidia" and devices["0000:1a:00.0"]["driver"] == "mlx5_core"
    assert "driver" not in devices["0000:05:00.0"]


def test_all_vendors_and_missing_tree(hgx, tmp_path):
    devices, _summary = sysfs_pci.read_pci(hgx, vendors=[])
    assert len(devices) == 23
    assert devices["0000:00:02.0"]["vendor"] == "other"
    assert devices["0000:00:02.0"]["driver"] == "virtio-pci"
    empty, summary = sysfs_pci.read_pci(str(tmp_path / "nowhere"))
    assert empty == {} and summary["nvidia_gpu_count"] == 0


@pytest.mark.parametrize("text,gen", [
    ("2.5 GT/s PCIe", 1), ("5.0 GT/s PCIe", 2), ("8 GT/s", 3), ("8.0 GT/s PCIe", 3),
    ("16.0 GT/s PCIe", 4), ("32.0 GT/s PCIe", 5), ("64.0 GT/s PCIe", 6), ("Unknown", None), (None, None),
])
def test_link_gen(text, gen):
    assert sysfs_pci.link_gen(text) == gen


@pytest.mark.skipif(not os.path.isdir("/sys/bus/pci/devices"), reason="no real PCI sysfs here")
def test_real_sysfs_of_this_machine():
    """The machine the tests run on is a real source: every device listed, ids as the files hold."""
    names = sorted(os.listdir("/sys/bus/pci/devices"))
    devices, _summary = sysfs_pci.read_pci("/", vendors=[])
    assert sorted(devices) == names
    for name in names:
        with open(os.path.join("/sys/bus/pci/devices", name, "vendor")) as f:
            assert devices[name]["vendor_id"] == f.read().strip()


@pytest.mark.parametrize("text,gen", [
    # spellings of drivers/pci/pci-sysfs.c over kernel versions: "8 GT/s" (<= 4.x), "8.0 GT/s PCIe"
    # (>= 5.x), "Unknown" / "Unknown speed" when the link is down or the speed is not known
    ("2.5 GT/s PCIe", 1), ("5.0 GT/s PCIe", 2), ("5 GT/s", 2), ("64.0 GT/s PCIe", 6),
    ("Unknown speed", None), ("Unknown", None), ("", None), (None, None), ("garbage GT/s", None),
])
def test_link_gen_kernel_spellings(text, gen):
    assert sysfs_pci.link_gen(text) == gen


def test_damaged_tree_never_crashes_and_marks_unknown(tmp_path):
    """The HGX tree with files cut, garbled, binary, emptied or removed: read_pci still answers, a value
    it cannot read is absent, a vendor/class it cannot parse is 'unknown' (never 'other' or a guess)."""
    import random
    root = sysfs_pci_tree.build(str(tmp_path / "hgx"))
    base = os.path.join(str(root), "sys", "bus", "pci", "devices")
    files = []
    for dirpath, dummy, names in os.walk(base, followlinks=False):
        files += [os.path.join(dirpath, n) for n in names if not os.path.islink(os.path.join(dirpath, n))]
    rnd = random.Random(3)
    for path in rnd.sample(sorted(files), len(files) // 2):
        op = rnd.randrange(4)
        with open(path, "rb") as f:
            data = f.read()
        if op == 3:
            os.unlink(path)
            continue
        with open(path, "wb") as f:
            f.write([data[:len(data) // 2], b"\xff\xfe\x00zz", b""][op])
    devices, summary = sysfs_pci.read_pci(str(root), vendors=[])
    assert devices and isinstance(summary["nvidia_gpu_count"], int)
    for dev in devices.values():
        assert dev.get("vendor", "unknown") in ("nvidia", "mellanox", "other", "unknown")
        for key in ("numa_node", "current_link_width", "max_link_width", "current_link_gen", "max_link_gen"):
            assert dev.get(key) is None or isinstance(dev[key], int)
    garbled = os.path.join(base, "0000:18:00.0", "vendor")
    if os.path.exists(garbled):
        os.unlink(garbled)
    with open(garbled, "wb") as f:
        f.write(b"\xff\xfe\x00zz")
    assert sysfs_pci.read_device(os.path.join(base, "0000:18:00.0"))["vendor"] == "unknown"
