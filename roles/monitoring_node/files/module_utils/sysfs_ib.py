# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read RDMA device facts from ``/sys/class/infiniband`` (no infiniband-diags needed).

Pure standard-library code: importable and testable without Ansible.  Every reader
tolerates missing or unreadable files by leaving the key out; nothing here raises
on odd sysfs content (kernel files are read through module_utils/_sysfs.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs

IB_CLASS_DIR = os.path.join('sys', 'class', 'infiniband')

# Device-level attribute files copied verbatim (stripped) when present.
DEVICE_TEXT_ATTRS = ('fw_ver', 'board_id', 'node_guid', 'sys_image_guid', 'hca_type', 'node_desc', 'hw_rev')

COUNTER_DIRS = ('counters', 'hw_counters', 'counters_ext')

_STATE_RE = re.compile(r'^\s*(\d+)\s*:\s*(.*?)\s*$')
_RATE_RE = re.compile(r'^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec\s*(?:\((.*)\))?\s*$')
_PCI_RE = re.compile(r'^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')


def read_text(path):
    """Return the stripped content of a sysfs file ('' when empty), or None if missing/unreadable."""
    return _sysfs.read_text(path)


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
    for name in _sysfs.listdir(path):
        value = parse_int(read_text(os.path.join(path, name)))
        if value is not None:
            counters[name] = value
    return counters


def _port_sort_key(name):
    return (0, int(name)) if name.isdigit() else (1, name)


def netdevs_by_port(device_dir):
    """Map port number (str) -> list of net devices from ``device/net/*/dev_port|dev_id``.

    Same rule as ``ibdev2netdev``: port = max(dev_id (hex), dev_port) + 1.
    """
    result = {}
    net_dir = os.path.join(device_dir, 'device', 'net')
    for ndev in _sysfs.listdir(net_dir):
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
    for entry in sorted(_sysfs.listdir(ndevs_dir), key=_port_sort_key):
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
    for name in sorted(_sysfs.listdir(ports_dir), key=_port_sort_key):
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
    for name in _sysfs.listdir(base):
        path = os.path.join(base, name)
        if os.path.isdir(path):
            devices[name] = device_facts(path)
    return devices


# --- ibdev2netdev and `rdma link` text, to cross-check the port -> netdev map built from sysfs ----------

# rdma link physical_state spelling -> sysfs/ibstat spelling (phys_state of port_facts).
RDMA_PHYS_STATES = {
    'SLEEP': 'Sleep', 'POLLING': 'Polling', 'DISABLED': 'Disabled',
    'PORT_CONFIGURATION_TRAINING': 'PortConfigurationTraining', 'LINK_UP': 'LinkUp',
    'LINK_ERROR_RECOVERY': 'LinkErrorRecovery', 'PHY_TEST': 'Phy Test',
}

# "[0000:01:00.0 ]mlx5_0 [(MT4123 - PSID) desc fw X.Y.Z ]port 1 [(ACTIVE) ]==> p5p1 (Up)"
_IBDEV2NETDEV_RE = re.compile(
    r'^(?:(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+)?(?P<dev>\S+)'
    r'(?:\s+\((?P<hca_type>[^\s)]+)\s+-\s+(?P<part>[^)]*?)\s*\)(?P<desc>.*?)\s+fw\s+(?P<fw>\S+))?'
    r'\s+port\s+(?P<port>\d+)(?:\s+\(\s*(?P<state>[A-Za-z_]+)\s*\))?'
    r'\s+==>\s*(?P<netdev>[^\s(]+)?\s*(?:\(\s*(?P<link>[^)]*?)\s*\))?\s*$')
# "link mlx5_0/1 state ACTIVE ..." (iproute2 >= 5.x) or "0/1: ibp0s9/1: subnet_prefix ..." (early 4.x)
_RDMA_LINK_RE = re.compile(r'^\s*(?:link\s+|\d+/\d+:\s+)(?P<dev>[^\s/]+)/(?P<port>\d+):?(?P<rest>(?:\s.*)?)$')


def _unknown_to_none(value):
    if value is None or value.upper() in ('UNKNOWN', 'NA', 'N/A', ''):
        return None
    return value


def parse_ibdev2netdev(text):
    """Parse ``ibdev2netdev`` / ``ibdev2netdev -v`` (mlnx-tools) into
    ``{dev: {'ports': {port: {'netdevs': [..], 'netdev_state': 'Up'|'Down'|None, 'state'}}, 'pci_address',
    'hca_type', 'part', 'fw_ver'}}``.

    ``state`` (port state, sysfs spelling ``ACTIVE``/``DOWN``) and the device keys come only with
    ``-v``; ``NA`` (a VF's missing PSID) becomes None.  Lines that are not mapping lines (a shell
    prompt, a cut line without ``==>``) are ignored."""
    devices = {}
    for raw in (text or '').splitlines():
        m = _IBDEV2NETDEV_RE.match(raw.strip())
        if not m:
            continue
        dev = devices.setdefault(m.group('dev'), {'ports': {}})
        if m.group('pci'):
            dev['pci_address'] = m.group('pci')
        if m.group('hca_type'):
            dev['hca_type'] = m.group('hca_type')
            dev['part'] = _unknown_to_none(m.group('part').strip())
            dev['fw_ver'] = m.group('fw')
        port = dev['ports'].setdefault(m.group('port'), {'netdevs': []})
        netdev = m.group('netdev')
        if netdev and netdev not in port['netdevs']:
            port['netdevs'].append(netdev)
        port['netdev_state'] = m.group('link') or None
        if m.group('state'):
            port['state'] = _unknown_to_none(m.group('state').upper())
    return devices


def _rdma_port(entry):
    port = {}
    state = _unknown_to_none(entry.get('state'))
    phys = _unknown_to_none(entry.get('physical_state'))
    port['state'] = state
    port['phys_state'] = RDMA_PHYS_STATES.get(phys, phys) if phys else None
    netdev = entry.get('netdev')
    port['netdevs'] = [netdev] if netdev else []
    for key, name in (('lid', 'lid'), ('sm_lid', 'sm_lid'), ('lmc', 'lmc')):
        value = entry.get(key)
        if isinstance(value, bool) or value is None:
            continue
        num = value if isinstance(value, int) else parse_int(str(value))
        if num is not None:
            port[name] = num
    if entry.get('subnet_prefix'):
        port['subnet_prefix'] = entry['subnet_prefix']
    return port


def parse_rdma_link(text):
    """Parse ``rdma link [show]`` text (iproute2, both the ``link dev/port ...`` layout and the early
    ``0/1: dev/1: ...`` one) or ``rdma -j link`` JSON into ``{dev: {'ports': {port: {state,
    phys_state, netdevs, lid, sm_lid, lmc, subnet_prefix}}}}`` with sysfs spellings (``ACTIVE``,
    ``LinkUp``, ``Polling``, ``Disabled``); ``UNKNOWN`` becomes None.  Non-link lines (``rdma
    system`` output, prompts) are ignored."""
    devices = {}
    body = (text or '').strip()
    entries = []
    if body.startswith('['):
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        for item in data if isinstance(data, list) else []:
            if isinstance(item, dict) and item.get('ifname') and item.get('port') is not None:
                entries.append(dict(item, dev=item['ifname'], port=str(item['port'])))
    else:
        for raw in body.splitlines():
            m = _RDMA_LINK_RE.match(raw)
            if not m:
                continue
            words = m.group('rest').split()
            entry = {'dev': m.group('dev'), 'port': m.group('port')}
            for key, value in zip(words[0::2], words[1::2]):
                entry[key] = value
            entries.append(entry)
    for entry in entries:
        dev = devices.setdefault(entry['dev'], {'ports': {}})
        dev['ports'][entry['port']] = _rdma_port(entry)
    return devices
