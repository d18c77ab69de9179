# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read RDMA device facts from ``/sys/class/infiniband`` (no infiniband-diags needed).

Pure standard-library code: importable and testable without Ansible.  Every reader
tolerates missing or unreadable files by leaving the key out; nothing here raises
on odd sysfs content.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

IB_CLASS_DIR = os.path.join('sys', 'class', 'infiniband')

# Device-level attribute files copied verbatim (stripped) when present.
DEVICE_TEXT_ATTRS = ('fw_ver', 'board_id', 'node_guid', 'sys_image_guid', 'hca_type', 'node_desc', 'hw_rev')

COUNTER_DIRS = ('counters', 'hw_counters', 'counters_ext')

_STATE_RE = re.compile(r'^\s*(\d+)\s*:\s*(.*?)\s*$')
_RATE_RE = re.compile(r'^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec\s*(?:\((.*)\))?\s*$')
_PCI_RE = re.compile(r'^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')


def read_text(path):
    """Return the stripped content of a sysfs file, or None if missing/unreadable."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except (IOError, OSError):
        return None
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError:
        text = data.decode('latin-1')
    return text.strip()


def to_number(text):
    """Return an int for integral numbers, float otherwise, None if not numeric."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    if value.is_integer():
        return int(value)
    return value


def parse_int(text, base=10):
    """Parse an integer (``base=0`` accepts ``0x`` prefixes); None when not an integer."""
    if text is None:
        return None
    try:
        return int(text.strip(), base)
    except ValueError:
        return None


def parse_state(text):
    """Split ``'4: ACTIVE'`` into ``(4, 'ACTIVE')``; ``(None, text)`` if no number prefix."""
    if text is None:
        return None, None
    m = _STATE_RE.match(text)
    if not m:
        return None, text.strip() or None
    return int(m.group(1)), m.group(2) or None


def parse_rate(text):
    """Parse ``'100 Gb/sec (4X EDR)'`` into rate_gbps/width/speed (keys only when found)."""
    result = {}
    if text is None:
        return result
    result['rate'] = text
    m = _RATE_RE.match(text)
    if not m:
        return result
    result['rate_gbps'] = to_number(m.group(1))
    inner = (m.group(2) or '').split()
    if inner:
        result['width'] = inner[0]
    if len(inner) > 1:
        result['speed'] = ' '.join(inner[1:])
    return result


def read_counters(path):
    """Read every integer counter file in ``path`` into a dict (non-integers skipped)."""
    counters = {}
    try:
        names = sorted(os.listdir(path))
    except (IOError, OSError):
        return counters
    for name in names:
        value = parse_int(read_text(os.path.join(path, name)))
        if value is not None:
            counters[name] = value
    return counters


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def _port_sort_key(name):
    return (0, int(name)) if name.isdigit() else (1, name)


def netdevs_by_port(device_dir):
    """Map port number (str) -> list of net devices from ``device/net/*/dev_port|dev_id``.

    Same rule as ``ibdev2netdev``: port = max(dev_id (hex), dev_port) + 1.
    """
    result = {}
    net_dir = os.path.join(device_dir, 'device', 'net')
    for ndev in _listdir(net_dir):
        ndev_dir = os.path.join(net_dir, ndev)
        dev_port = parse_int(read_text(os.path.join(ndev_dir, 'dev_port')))
        dev_id = parse_int(read_text(os.path.join(ndev_dir, 'dev_id')), 16)
        candidates = [v for v in (dev_port, dev_id) if v is not None]
        index = max(candidates) if candidates else 0
        result.setdefault(str(index + 1), []).append(ndev)
    return result


def gid_netdevs(port_dir):
    """Net devices named in ``ports/N/gid_attrs/ndevs/*`` (RoCE), unique, in GID order."""
    names = []
    ndevs_dir = os.path.join(port_dir, 'gid_attrs', 'ndevs')
    for entry in sorted(_listdir(ndevs_dir), key=_port_sort_key):
        name = read_text(os.path.join(ndevs_dir, entry))
        if name and name not in names:
            names.append(name)
    return names


def port_facts(port_dir):
    """Facts of one ``ports/N`` directory (netdevs filled in by :func:`device_facts`)."""
    port = {}
    state_num, state = parse_state(read_text(os.path.join(port_dir, 'state')))
    if state is not None:
        port['state'] = state
    if state_num is not None:
        port['state_num'] = state_num
    phys_num, phys = parse_state(read_text(os.path.join(port_dir, 'phys_state')))
    if phys is not None:
        port['phys_state'] = phys
    if phys_num is not None:
        port['phys_state_num'] = phys_num
    port.update(parse_rate(read_text(os.path.join(port_dir, 'rate'))))
    link_layer = read_text(os.path.join(port_dir, 'link_layer'))
    if link_layer:
        port['link_layer'] = link_layer
    for name in ('lid', 'sm_lid'):
        value = parse_int(read_text(os.path.join(port_dir, name)), 16)
        if value is not None:
            port[name] = value
    for name in ('lmc', 'sm_sl'):
        value = parse_int(read_text(os.path.join(port_dir, name)))
        if value is not None:
            port[name] = value
    cap_mask = read_text(os.path.join(port_dir, 'cap_mask'))
    if cap_mask:
        port['cap_mask'] = cap_mask
    gid0 = read_text(os.path.join(port_dir, 'gids', '0'))
    if gid0:
        port['gid0'] = gid0
    for sub in COUNTER_DIRS:
        path = os.path.join(port_dir, sub)
        if os.path.isdir(path):
            port[sub] = read_counters(path)
    return port


def device_facts(device_dir):
    """Facts of one ``/sys/class/infiniband/<dev>`` directory."""
    dev = {}
    for attr in DEVICE_TEXT_ATTRS:
        value = read_text(os.path.join(device_dir, attr))
        if value:
            dev[attr] = value
    dummy, node_type = parse_state(read_text(os.path.join(device_dir, 'node_type')))
    if node_type:
        dev['node_type'] = node_type
    numa = parse_int(read_text(os.path.join(device_dir, 'device', 'numa_node')))
    if numa is not None:
        dev['numa_node'] = numa
    link = os.path.join(device_dir, 'device')
    if os.path.lexists(link):
        base = os.path.basename(os.path.realpath(link))
        if _PCI_RE.match(base):
            dev['pci_address'] = base
            dev['virtual_function'] = os.path.lexists(os.path.join(link, 'physfn'))
    drv = os.path.join(device_dir, 'device', 'driver')
    if os.path.islink(drv):
        dev['driver'] = os.path.basename(os.path.realpath(drv))

    by_port = netdevs_by_port(device_dir)
    ports = {}
    ports_dir = os.path.join(device_dir, 'ports')
    for name in sorted(_listdir(ports_dir), key=_port_sort_key):
        port_dir = os.path.join(ports_dir, name)
        if not os.path.isdir(port_dir):
            continue
        port = port_facts(port_dir)
        netdevs = list(by_port.get(name, []))
        for ndev in gid_netdevs(port_dir):
            if ndev not in netdevs:
                netdevs.append(ndev)
        port['netdevs'] = netdevs
        ports[name] = port
    dev['ports'] = ports
    return dev


def class_dir(sysfs_root='/'):
    return os.path.join(sysfs_root or '/', IB_CLASS_DIR)


def collect(sysfs_root='/'):
    """Return ``{device_name: facts}`` for every entry under ``<sysfs_root>/sys/class/infiniband``.

    An absent class directory (no RDMA stack loaded) yields an empty dict.
    """
    base = class_dir(sysfs_root)
    devices = {}
    for name in _listdir(base):
        path = os.path.join(base, name)
        if os.path.isdir(path):
            devices[name] = device_facts(path)
    return devices
