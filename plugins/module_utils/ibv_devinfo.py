# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ibv_devinfo`` text (rdma-core / libibverbs examples): per port state, link layer and
the active/max IB MTU, which sysfs does not show. Pure standard library, importable without Ansible.

Layouts handled: plain and ``-v`` output, one or many devices, the ``Device ports:`` line of older
libibverbs, ``transport: iWARP (1)`` devices, ``Failed to open device`` / ``No IB devices found``
lines (no device is reported for them), and ``ibv_devinfo -l`` (:func:`parse_ibv_devinfo_list`).
A value that does not parse is ``None``, never a guess.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_MTU_RE = re.compile(r'^\s*(\d+)')
_ENUM_RE = re.compile(r'^\s*(\S.*?)\s*\((\d+)\)\s*$')
_HCAS_FOUND_RE = re.compile(r'^\s*(\d+)\s+HCAs?\s+found:?\s*$')

# ibv_port_phys_state numbers -> the sysfs / ibstat spelling (sysfs_ib ``phys_state``).
PHYS_STATE_NAMES = {
    1: 'Sleep', 2: 'Polling', 3: 'Disabled', 4: 'PortConfigurationTraining', 5: 'LinkUp',
    6: 'LinkErrorRecovery', 7: 'Phy Test',
}

_DEVICE_TEXT = ('fw_ver', 'node_guid', 'sys_image_guid', 'vendor_id', 'hw_ver', 'board_id')
_DEVICE_INTS = ('vendor_part_id', 'phys_port_cnt')
_PORT_INTS = {'sm_lid': 10, 'port_lid': 10, 'port_lmc': 16, 'sm_sl': 10, 'max_vl_num': 10}


def _enum(value):
    """``'PORT_ACTIVE (4)'`` -> ``('PORT_ACTIVE', 4)``; ``('invalid state', None)`` when unnumbered."""
    m = _ENUM_RE.match(value or '')
    if m:
        return m.group(1), int(m.group(2))
    return (value.strip() or None) if value else None, None


def _int(value, base=10):
    try:
        return int(value.strip(), base)
    except (AttributeError, ValueError):
        return None


def _mtu(value):
    m = _MTU_RE.match(value or '')
    return int(m.group(1)) if m else None


def _port_value(port, key, value):
    if key in ('max_mtu', 'active_mtu'):
        port[key] = _mtu(value)
    elif key == 'state':
        name, num = _enum(value)
        port['state'] = name.split()[0] if name else None
        port['state_num'] = num
        port['state_text'] = port['state']
    elif key == 'phys_state':
        name, num = _enum(value)
        port['phys_state'] = PHYS_STATE_NAMES.get(num, name)
        port['phys_state_num'] = num
    elif key == 'link_layer':
        port['link_layer'] = value or None
    elif key in _PORT_INTS:
        port[key] = _int(value, 0 if value.strip().lower().startswith('0x') else _PORT_INTS[key])
    elif key in ('active_width', 'active_speed'):
        port[key] = _enum(value)[0]
    elif key.startswith('gid[') and 'gid0' not in port and key.replace(' ', '') == 'gid[0]':
        port['gid0'] = value or None


def parse_ibv_devinfo_devices(text):
    """Devices of ``ibv_devinfo [-v]`` output.

    Returns ``{hca: {transport, transport_num, fw_ver, node_guid, sys_image_guid, vendor_id,
    vendor_part_id, hw_ver, board_id, phys_port_cnt, ports: {port: {...}}}}``; each port has
    ``state`` (sysfs spelling: ``ACTIVE``, ``DOWN``, ``INIT``...), ``state_num``, ``state_text``
    (verbs spelling, ``PORT_ACTIVE``), ``max_mtu``,
    ``active_mtu`` (ints), ``sm_lid``, ``port_lid``, ``port_lmc``, ``link_layer`` and with ``-v``
    ``phys_state`` (``LinkUp``, ``Polling``... as in sysfs), ``phys_state_num``, ``active_width``,
    ``active_speed`` and ``gid0``.  Only the keys the output shows are present.
    """
    result = {}
    dev = port = None
    for raw in (text or '').splitlines():
        line = raw.strip()
        if not line or ':' not in line:
            continue
        key, dummy, value = line.partition(':')
        key, value = key.strip().lower(), value.strip()
        if key == 'hca_id':
            port = None
            dev = result.setdefault(value, {'ports': {}}) if value else None
            continue
        if dev is None:
            continue
        if key == 'port':
            port = dev['ports'].setdefault(value, {}) if value.isdigit() else None
            continue
        if port is not None:
            _port_value(port, key, value)
        elif key == 'transport':
            dev['transport'], dev['transport_num'] = _enum(value)
        elif key in _DEVICE_TEXT:
            dev[key] = value or None
        elif key in _DEVICE_INTS:
            dev[key] = _int(value)
    for dev in result.values():
        for port in dev['ports'].values():
            if port.get('state') and port['state'].startswith('PORT_'):
                port['state'] = port['state'][len('PORT_'):]
    return result


def parse_ibv_devinfo(text):
    """Ports of ``ibv_devinfo`` output: ``{hca: {port: {state, max_mtu, active_mtu, link_layer}}}``.

    ``state`` keeps ibv_devinfo's spelling (``PORT_ACTIVE``); MTUs are ints (``4096 (5)`` -> 4096);
    the IB MTU is only shown by verbs, not by sysfs.  A key the output lacks is absent.
    """
    result = {}
    for hca, dev in parse_ibv_devinfo_devices(text).items():
        ports = result.setdefault(hca, {})
        for num, port in dev['ports'].items():
            entry = ports.setdefault(num, {})
            if 'state_text' in port:
                entry['state'] = port['state_text']
            for key in ('max_mtu', 'active_mtu', 'link_layer'):
                if key in port:
                    entry[key] = port[key]
    return result


def parse_ibv_devinfo_list(text):
    """``ibv_devinfo -l`` (``2 HCAs found:`` then one name a line) -> list of device names.

    Raises ValueError when the count line disagrees with the names listed (a cut output).
    """
    names = []
    count = None
    for raw in (text or '').splitlines():
        m = _HCAS_FOUND_RE.match(raw)
        if m:
            count = int(m.group(1))
            continue
        if count is not None and raw.strip() and ' ' not in raw.strip():
            names.append(raw.strip())
    if count is not None and count != len(names):
        raise ValueError('ibv_devinfo -l says %d HCAs found but lists %d' % (count, len(names)))
    return names
