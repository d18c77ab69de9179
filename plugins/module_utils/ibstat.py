# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for ``ibstat`` and ``ibstatus`` text (infiniband-diags), for cross-checks against the
sysfs facts of :mod:`sysfs_ib`.  Output uses the same key names and value spellings as sysfs_ib
(``state`` ``ACTIVE``, ``phys_state`` ``LinkUp``, ``rate_gbps``, ``lid``/``sm_lid`` as ints, ports
keyed by number as a string).  Pure standard-library functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_ib import parse_rate, parse_state, to_number

# infiniband-diags names the node type first: "CA 'mlx5_0'", "iWARP RNIC 'i40iw0'", "Switch 'x'"; the one
# port form (``ibstat <ca> <port>``) puts a colon after it ("CA: 'mlx4_0'").
_CA_RE = re.compile(r"^\s*(CA|iWARP RNIC|Switch|Router|\?\?\?):?\s+'([^']+)'\s*$")
_RATE_NUM_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)\b')
_PORT_RE = re.compile(r'^\s*Port (\d+):\s*$')
_KV_RE = re.compile(r'^\s*([A-Za-z][A-Za-z _]*?):\s*(.*?)\s*$')
_IBSTATUS_HDR_RE = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:\s*$")

# ibstat port state names -> sysfs spelling
_STATE_NAMES = {'active': 'ACTIVE', 'down': 'DOWN', 'initializing': 'INIT', 'init': 'INIT', 'armed': 'ARMED'}

# ibstat phys state spelling -> sysfs spelling where they differ
_PHYS_NAMES = {'PhyTest': 'Phy Test'}

_CA_KEYS = {
    'ca type': 'hca_type',
    'iwarp rnic type': 'hca_type',
    'switch type': 'hca_type',
    'router type': 'hca_type',
    'firmware version': 'fw_ver',
    'hardware version': 'hw_rev',
    'node guid': 'node_guid',
    'system image guid': 'sys_image_guid',
}


def normalize_guid(text):
    """``0x58a2e10300a7820e`` or ``58a2:e103:00a7:820e`` -> ``58a2e10300a7820e`` (None if empty)."""
    if not text:
        return None
    value = text.strip().lower()
    if value.startswith('0x'):
        value = value[2:]
    value = value.replace(':', '')
    return value.zfill(16) if value else None


def _int(text, base=10):
    try:
        return int(text.strip(), base)
    except (AttributeError, ValueError):
        return None


def _port_value(port, key, value):
    value = value.strip()
    if not value:
        return  # an empty field (cut output) stays absent
    if key == 'state':
        # "???" is what ibstat prints for a state number it does not know
        port['state'] = None if value == '???' else _STATE_NAMES.get(value.lower(), value.upper())
    elif key == 'physical state':
        port['phys_state'] = None if value == '???' else _PHYS_NAMES.get(value, value)
    elif key == 'rate':
        port['rate'] = value
        m = _RATE_NUM_RE.match(value)  # "100", "2.5", "40 (FDR10)"
        rate = to_number(m.group(1)) if m else None
        if rate is not None:
            port['rate_gbps'] = rate
    elif key == 'base lid':
        port['lid'] = _int(value, 0)
    elif key == 'sm lid':
        port['sm_lid'] = _int(value, 0)
    elif key == 'lmc':
        port['lmc'] = _int(value)
    elif key == 'capability mask':
        port['cap_mask'] = value
    elif key == 'port guid':
        port['port_guid'] = value
    elif key == 'link layer':
        port['link_layer'] = value


def parse_ibstat(text):
    """Parse ``ibstat`` (all CAs, one CA, ``ibstat -s`` or ``ibstat <ca> <port>``) into
    ``{ca: {hca_type, fw_ver, hw_rev, node_guid, sys_image_guid, num_ports, ports: {n: {...}}}}``.

    Ports carry ``state`` (``ACTIVE``, ``DOWN``, ``INIT``, ``ARMED``), ``phys_state`` (``LinkUp``,
    ``Polling``, ``Disabled``...), ``rate``/``rate_gbps``, ``lid``, ``sm_lid``, ``lmc``, ``cap_mask``,
    ``port_guid`` and ``link_layer`` when printed (RoCE ports have no ``Port GUID`` on some
    versions, old infiniband-diags print no ``Link layer``).  Empty or unparsable values are left
    out or None (``CA type:`` is empty on Omni-Path hfi1).  Error text (``ibpanic:``, ``No IB
    devices found``) yields ``{}``."""
    cas = {}
    ca = None
    port = None
    for line in (text or '').splitlines():
        m = _CA_RE.match(line)
        if m:
            ca = cas.setdefault(m.group(2), {'ports': {}})
            ca['node_type'] = None if m.group(1) == '???' else m.group(1)
            port = None
            continue
        m = _PORT_RE.match(line)
        if m and ca is not None:
            port = ca['ports'].setdefault(m.group(1), {})
            continue
        m = _KV_RE.match(line)
        if not m or ca is None:
            continue
        key, value = m.group(1).strip().lower(), m.group(2)
        if port is not None:
            _port_value(port, key, value)
        elif key == 'number of ports':
            ca['num_ports'] = _int(value)
        elif key in _CA_KEYS:
            # hfi1 (Omni-Path) prints an empty "CA type:"; empty means unknown, not ''
            ca[_CA_KEYS[key]] = value.strip() or None
    return cas


def parse_ibstatus(text):
    """Parse ``ibstatus`` into ``{ca: {'ports': {n: {state, state_num, phys_state, phys_state_num,
    rate, rate_gbps, width, speed, lid, sm_lid, gid0, link_layer}}}}``."""
    cas = {}
    port = None
    for line in (text or '').splitlines():
        m = _IBSTATUS_HDR_RE.match(line.strip())
        if m:
            port = cas.setdefault(m.group(1), {'ports': {}})['ports'].setdefault(m.group(2), {})
            continue
        if port is None or ':' not in line:
            continue
        key, value = line.split(':', 1)
        key, value = key.strip().lower(), value.strip()
        if key == 'state':
            num, name = parse_state(value)
            port['state'], port['state_num'] = name, num
        elif key == 'phys state':
            num, name = parse_state(value)
            port['phys_state'], port['phys_state_num'] = name, num
        elif key == 'rate':
            port.update(parse_rate(value))
        elif key == 'base lid':
            port['lid'] = _int(value, 16)
        elif key == 'sm lid':
            port['sm_lid'] = _int(value, 16)
        elif key == 'default gid':
            port['gid0'] = value
        elif key == 'link_layer':
            port['link_layer'] = value
    return cas
