# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read PCI devices from sysfs (``/sys/bus/pci/devices``).

Works before any vendor driver or tool is installed, so provision can tell a GPU node from a
CPU node and verify can catch a GPU or HCA trained at a lower PCIe generation or width.
Pure functions over a ``sysfs_root``; a missing or unreadable file is an absent key.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs

VENDORS = {
    "0x10de": "nvidia",
    "0x15b3": "mellanox",
}

# PCI class codes (class file: 0xCCSSPP): base class + subclass.
CLASSES = {
    "0x0300": "display_vga",
    "0x0302": "display_3d",
    "0x0680": "bridge_other",  # NVSwitch
    "0x0200": "network_ethernet",
    "0x0207": "network_infiniband",
    "0x0108": "storage_nvme",
}

# Transfer rate per lane -> PCIe generation.
GT_TO_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}


def _read(path):
    """Stripped text of a sysfs file; None when missing, unreadable (EIO/EINVAL on some attributes)
    or empty. Bytes that are not UTF-8 are kept as latin-1 rather than raising."""
    return _sysfs.read_text(path, empty=None)


def link_gen(speed):
    """'16.0 GT/s PCIe' or '8 GT/s' -> 4 / 3; None when unknown ('Unknown', absent)."""
    if not speed:
        return None
    m = re.match(r"\s*([0-9.]+)\s*GT/s", speed)
    if not m:
        return None
    value = m.group(1)
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return GT_TO_GEN.get(value)


def _hex_id(text):
    """Normalise an id file (``0x10de``); None when it is not hex (a garbled or cut file)."""
    if text is None:
        return None
    value = text.strip().lower()
    if not value.startswith("0x"):
        value = "0x" + value
    try:
        int(value, 16)
    except ValueError:
        return None
    return value


def read_device(path):
    """Return a dict for one PCI device directory."""
    dev = {"address": os.path.basename(path)}
    vendor = _read(os.path.join(path, "vendor"))
    klass = _read(os.path.join(path, "class"))
    for key, value in (("vendor_id", vendor), ("device_id", _read(os.path.join(path, "device"))),
                       ("class_id", klass),
                       ("subsystem_vendor_id", _read(os.path.join(path, "subsystem_vendor"))),
                       ("subsystem_device_id", _read(os.path.join(path, "subsystem_device")))):
        if value is not None:
            dev[key] = value
    if vendor is not None:
        vendor_id = _hex_id(vendor)
        dev["vendor"] = VENDORS.get(vendor_id, "other") if vendor_id else "unknown"
    if klass is not None:
        class_id = _hex_id(klass)
        dev["class"] = CLASSES.get(class_id[:6], "other") if class_id and len(class_id) == 8 else "unknown"
    numa = _sysfs.read_int(os.path.join(path, "numa_node"))
    if numa is not None:
        dev["numa_node"] = numa
    cpus = _read(os.path.join(path, "local_cpulist"))
    if cpus is not None:
        dev["local_cpulist"] = cpus
    driver = os.path.join(path, "driver")
    if os.path.islink(driver):
        dev["driver"] = os.path.basename(os.readlink(driver))
    for which in ("current", "max"):
        speed = _read(os.path.join(path, "%s_link_speed" % which))
        width = _sysfs.read_int(os.path.join(path, "%s_link_width" % which))
        if speed is not None:
            dev["%s_link_speed" % which] = speed
            gen = link_gen(speed)
            if gen is not None:
                dev["%s_link_gen" % which] = gen
        if width is not None and width > 0:
            dev["%s_link_width" % which] = width
    return dev


_VENDOR_OPTION_RE = re.compile(r"^(0x)?[0-9a-fA-F]{4}$")


def vendor_errors(vendors, name="vendors"):
    """Messages for the items of a ``vendors`` option that are not a 4-digit hexadecimal PCI vendor id."""
    return ["%s[%d] must be a 4-digit hexadecimal PCI vendor id such as 0x10de, got %r" % (name, i, v)
            for i, v in enumerate(vendors or []) if not isinstance(v, str) or not _VENDOR_OPTION_RE.match(v)]


def normalize_vendors(vendors):
    """``vendors`` as the ``vendor`` file spells them (``0x`` and lower case), for ``read_pci``."""
    return ["0x" + v.lower()[-4:] for v in vendors or []]


def read_pci(sysfs_root="/", vendors=tuple(VENDORS)):
    """PCI devices under ``sysfs_root`` of the given vendor ids (NVIDIA and Mellanox by default;
    an empty list or None gives every device).

    Returns ``(devices, summary)``: devices keyed by PCI address, and counts of the devices a GPU
    node is made of (NVIDIA GPUs and NVSwitches, Mellanox/NVIDIA HCA functions).
    """
    base = os.path.join(sysfs_root, "sys", "bus", "pci", "devices")
    devices = {}
    names = _sysfs.listdir(base)
    wanted = set(v.lower() for v in vendors) if vendors else None
    for name in names:
        dev = read_device(os.path.join(base, name))
        if wanted is not None and (_hex_id(dev.get("vendor_id")) or "") not in wanted:
            continue
        devices[name] = dev
    summary = summarize(devices)
    return devices, summary


def summarize(devices):
    gpus = [a for a, d in devices.items()
            if d.get("vendor") == "nvidia" and d.get("class") in ("display_3d", "display_vga")]
    nvswitches = [a for a, d in devices.items() if d.get("vendor") == "nvidia" and d.get("class") == "bridge_other"]
    hcas = [a for a, d in devices.items()
            if d.get("vendor") == "mellanox" and d.get("class") in ("network_ethernet", "network_infiniband")]
    return {
        "nvidia_gpus": sorted(gpus),
        "nvidia_gpu_count": len(gpus),
        "nvswitches": sorted(nvswitches),
        "nvswitch_count": len(nvswitches),
        "mellanox_functions": sorted(hcas),
        "mellanox_function_count": len(hcas),
    }
