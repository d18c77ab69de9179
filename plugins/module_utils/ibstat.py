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

_CA_RE = re.compile(r"^\s*CA:?\s+'([^']+)'\s*$")
_PORT_RE = re.compile(r'^\s*Port (\d+):\s*$')
_KV_RE = re.compile(r'^\s*([A-Za-z][A-Za-z _]*?):\s*(.*?)\s*$')
_IBSTATUS_HDR_RE = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:\s*$")

# ibstat port state names -> sysfs spelling
_STATE_NAMES = {'active': 'ACTIVE', 'down': 'DOWN', 'initializing': 'INIT', 'init': 'INIT', 'armed': 'ARMED'}

_CA_KEYS = {
    'ca type': 'hca_type',
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
    if key == 'state':
        port['state'] = _STATE_NAMES.get(value.lower(), value.upper())
    elif key == 'physical state':
        port['phys_state'] = value
    elif key == 'rate':
        port['rate'] = value
        rate = to_number(value)
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
    ``{ca: {hca_type, fw_ver, hw_rev, node_guid, sys_image_guid, num_ports, ports: {n: {...}}}}``."""
    cas = {}
    ca = None
    port = None
    for line in (text or '').splitlines():
        m = _CA_RE.match(line)
        if m:
            ca = cas.setdefault(m.group(1), {'ports': {}})
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
            ca[_CA_KEYS[key]] = value
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
