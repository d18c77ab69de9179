# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read and write the RoCE kernel interfaces that are plain files.

- ECN / DCQCN (mlx5): ``<sysfs_root>/sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio>`` (0/1)
  and the parameter files beside ``enable/`` (``cnp_dscp``, ``cnp_802p_prio``, ``rpg_*``,
  ``min_time_between_cnps``, ...).
- RDMA-CM defaults (configfs): ``<configfs_root>/rdma_cm/<dev>/ports/<n>/default_roce_tos`` and
  ``default_roce_mode``; the ``<dev>`` directory exists only after ``mkdir`` (done by the writer).
- GID table: ``<sysfs_root>/sys/class/infiniband/<dev>/ports/<p>/gids/<i>``,
  ``gid_attrs/types/<i>`` and ``gid_attrs/ndevs/<i>``.

Reads are pure functions over root directories: a missing or unreadable file is an absent key. Files
are read through ``_sysfs`` (non-UTF-8 bytes are decoded as latin-1 instead of raising).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs

POINTS = ("np", "rp")
PARAM_RE = re.compile(r"^[a-z0-9_]+$")
# Longest names: a netdev name is below IFNAMSIZ (16), an RDMA device name below IB_DEVICE_NAME_MAX (64).
NETDEV_NAME_MAX = 15
RDMA_NAME_MAX = 63
# Known ranges of DCQCN parameter files (mlx5); other parameters must be non-negative integers.
PARAM_RANGES = {"cnp_dscp": (0, 63), "cnp_802p_prio": (0, 7)}


def name_problem(value, max_len):
    """Why ``value`` is not a plain file name that can be joined below a root, or None when it is one.

    A plain name is 1..max_len characters without ``/``, NUL or whitespace and without ``..``: the
    value becomes one path component under ``sysfs_root``/``configfs_root`` and must stay there."""
    if not isinstance(value, str) or not value:
        return "it is empty"
    if len(value) > max_len:
        return "it is %d characters long" % len(value)
    if "/" in value or "\0" in value or ".." in value or value == ".":
        return "it contains a path separator, NUL or '..'"
    if any(c.isspace() for c in value):
        return "it contains whitespace"
    return None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def ecn_dir(sysfs_root, interface, point):
    return os.path.join(sysfs_root, "sys", "class", "net", interface, "ecn", "roce_" + point)


def read_ecn(sysfs_root, interface):
    """{'np': {'enable': [8 bools or None], 'params': {name: int|str}}, 'rp': {...}}; {} when no ecn/."""
    out = {}
    for point in POINTS:
        base = ecn_dir(sysfs_root, interface, point)
        if not os.path.isdir(base):
            continue
        enable = [None] * 8
        for prio in range(8):
            value = _sysfs.read_text(os.path.join(base, "enable", str(prio)))
            if value is not None:
                enable[prio] = value == "1"
        params = {}
        for name in _sysfs.listdir(base):
            path = os.path.join(base, name)
            if name == "enable" or not os.path.isfile(path):
                continue
            value = _sysfs.read_text(path)
            if value is not None:
                params[name] = _int(value) if _int(value) is not None else value
        out[point] = {"enable": enable, "params": params}
    return out


def ecn_enable_path(sysfs_root, interface, point, prio):
    return os.path.join(ecn_dir(sysfs_root, interface, point), "enable", str(prio))


def ecn_param_path(sysfs_root, interface, point, name):
    if not PARAM_RE.match(name):
        raise ValueError("invalid ECN parameter name %r" % name)
    return os.path.join(ecn_dir(sysfs_root, interface, point), name)


def rdma_cm_port_dir(configfs_root, device, port):
    return os.path.join(configfs_root, "rdma_cm", device, "ports", str(port))


def read_rdma_cm(configfs_root, device, port):
    """{'default_roce_tos': int, 'default_roce_mode': str} (present keys only)."""
    base = rdma_cm_port_dir(configfs_root, device, port)
    out = {}
    tos = _int(_sysfs.read_text(os.path.join(base, "default_roce_tos")))
    if tos is not None:
        out["default_roce_tos"] = tos
    mode = _sysfs.read_text(os.path.join(base, "default_roce_mode"))
    if mode is not None:
        out["default_roce_mode"] = mode
    return out


def ensure_rdma_cm_dir(configfs_root, device):
    """``mkdir <configfs_root>/rdma_cm/<dev>`` (the kernel then creates ``ports/``)."""
    path = os.path.join(configfs_root, "rdma_cm", device)
    try:
        os.mkdir(path)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise


def rdma_device_for(sysfs_root, interface):
    """RDMA device names of a netdev (``/sys/class/net/<if>/device/infiniband/*``), sorted."""
    return _sysfs.listdir(os.path.join(sysfs_root, "sys", "class", "net", interface, "device", "infiniband"))


def ipv4_of_gid(gid):
    """'0000:0000:0000:0000:0000:ffff:0a00:0001' -> '10.0.0.1'; None for other GIDs."""
    parts = gid.lower().split(":")
    if len(parts) != 8 or parts[:5] != ["0000"] * 5 or parts[5] != "ffff":
        return None
    try:
        raw = int(parts[6], 16) << 16 | int(parts[7], 16)
    except ValueError:
        return None
    return ".".join(str((raw >> s) & 0xFF) for s in (24, 16, 8, 0))


def read_gids(sysfs_root, device, port):
    """GID table entries that are set: list of {index, gid, type, ndev, ipv4}."""
    base = os.path.join(sysfs_root, "sys", "class", "infiniband", device, "ports", str(port))
    out = []
    for name in sorted(_sysfs.listdir(os.path.join(base, "gids")), key=lambda n: int(n) if n.isdigit() else -1):
        if not name.isdigit():
            continue
        gid = _sysfs.read_text(os.path.join(base, "gids", name))
        if not gid or gid.replace(":", "").strip("0") == "":
            continue
        entry = {"index": int(name), "gid": gid,
                 "type": _sysfs.read_text(os.path.join(base, "gid_attrs", "types", name)),
                 "ndev": _sysfs.read_text(os.path.join(base, "gid_attrs", "ndevs", name)),
                 "ipv4": ipv4_of_gid(gid)}
        out.append(entry)
    return out


def roce_v2_ipv4_gid_index(gids, interface=None):
    """Lowest index of a ``RoCE v2`` GID that carries an IPv4 address (of ``interface`` when the
    ``ndevs`` attribute is known); None when there is none."""
    for entry in gids:
        if (entry.get("type") or "").lower() != "roce v2" or not entry.get("ipv4"):
            continue
        if interface and entry.get("ndev") and entry["ndev"] != interface:
            continue
        return entry["index"]
    return None


def write_value(path, value):
    """Write one sysfs/configfs attribute in place (these files cannot be replaced by rename)."""
    with open(path, "w") as handle:
        handle.write("%s\n" % value)
