# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for NVIDIA/Mellanox firmware tools: ``mstflint -d <bdf> q`` / ``flint -d <bdf> q`` and
``mlxup --query``.  Pure standard-library functions, importable without Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NO_VALUE = frozenset(('', 'n/a', 'na', '-'))
_KV_RE = re.compile(r'^([A-Za-z][A-Za-z0-9 ./()_-]*?):\s*(.*?)\s*$')
_ROM_RE = re.compile(r'type=(\S+)(?:\s+version=(\S+))?(?:\s+cpu=(\S+))?')

# flint/mstflint "q" field name -> fact key
_FLINT_KEYS = {
    'image type': 'image_type',
    'fw version': 'fw_version',
    'fw version(running)': 'fw_version_running',
    'fw version (running)': 'fw_version_running',
    'fw release date': 'fw_release_date',
    'product version': 'product_version',
    'part number': 'part_number',
    'description': 'description',
    'image vsd': 'image_vsd',
    'device vsd': 'device_vsd',
    'psid': 'psid',
    'orig psid': 'orig_psid',
    'security attributes': 'security_attributes',
    'security ver': 'security_version',
    'default update method': 'default_update_method',
}


def _clean(value):
    if value is None:
        return None
    value = value.strip()
    if value.lower() in _NO_VALUE:
        return None
    return value


def _first_token(value):
    value = _clean(value)
    if value is None:
        return None
    token = value.split()[0]
    return _clean(token)


def parse_flint_query(text):
    """Parse ``mstflint``/``flint`` ``q`` output.

    Returns a dict with ``fw_version``, ``fw_version_running`` (only when the tool prints a
    ``FW Version(Running)`` line, i.e. a burned image waits for a reset), ``pending_reset``,
    ``psid``, ``product_version``, ``fw_release_date``, ``base_guid``, ``base_mac``, ``rom_info``
    (list of ``{type, version, cpu}``), ``pxe_version``, ``uefi_version`` and the other fields found.
    """
    facts = {}
    rom = []
    in_rom = False
    for line in text.splitlines():
        if not line.strip():
            in_rom = False
            continue
        if in_rom and line[:1].isspace() and 'type=' in line:
            m = _ROM_RE.search(line)
            if m:
                rom.append({'type': m.group(1), 'version': m.group(2), 'cpu': m.group(3)})
            continue
        in_rom = False
        m = _KV_RE.match(line)
        if not m:
            continue
        name, value = m.group(1).strip().lower(), m.group(2)
        if name == 'rom info':
            in_rom = True
            r = _ROM_RE.search(value)
            if r:
                rom.append({'type': r.group(1), 'version': r.group(2), 'cpu': r.group(3)})
            continue
        if name in ('base guid', 'base mac'):
            facts[name.replace(' ', '_')] = _first_token(value)
            continue
        key = _FLINT_KEYS.get(name)
        if key == 'description' and value.strip().startswith('UID'):
            continue  # column header of the GUID/MAC table, not a description
        if key:
            facts[key] = _clean(value)
    facts['rom_info'] = rom
    for entry in rom:
        kind = (entry['type'] or '').lower()
        if kind in ('pxe', 'uefi') and entry['version']:
            facts.setdefault('%s_version' % kind, entry['version'])
    running = facts.get('fw_version_running')
    facts['pending_reset'] = bool(running and facts.get('fw_version') and running != facts['fw_version'])
    return facts


def parse_mlxup_query(text):
    """Parse ``mlxup --query`` (or ``mlxup -d <dev>`` query) output into a list of devices.

    Each device has ``device_type``, ``part_number``, ``description``, ``psid``, ``pci_device_name``,
    ``base_guid``, ``base_mac``, ``versions`` (``{'FW': {'current': .., 'available': ..}, ...}``),
    ``fw_version``, ``fw_version_running``, ``fw_version_available``, ``pxe_version``, ``uefi_version``,
    ``pending_reset`` and ``status``.
    """
    devices = []
    dev = None
    in_versions = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if re.match(r'^\s*Device #\d+:\s*$', line):
            dev = {'versions': {}}
            devices.append(dev)
            in_versions = False
            continue
        if dev is None or not line.strip() or set(line.strip()) == {'-'}:
            in_versions = False if not line.strip() else in_versions
            continue
        if re.match(r'^\s*Versions:\s', line):
            in_versions = True
            continue
        if in_versions:
            # "     FW (Running)   28.46.3048     N/A"
            m = re.match(r'^\s+(\S+(?: \([^)]*\))?)\s+(\S+)(?:\s+(\S+))?\s*$', line)
            if m:
                dev['versions'][m.group(1)] = {'current': _clean(m.group(2)), 'available': _clean(m.group(3))}
                continue
            in_versions = False
        m = _KV_RE.match(line.strip())
        if not m:
            continue
        key = m.group(1).strip().lower().replace(' ', '_')
        dev[key] = _clean(m.group(2))
    for dev in devices:
        versions = dev['versions']
        fw = versions.get('FW', {})
        dev['fw_version'] = fw.get('current')
        dev['fw_version_available'] = fw.get('available')
        dev['fw_version_running'] = versions.get('FW (Running)', {}).get('current')
        dev['pxe_version'] = versions.get('PXE', {}).get('current')
        dev['uefi_version'] = versions.get('UEFI', {}).get('current')
        running = dev['fw_version_running']
        dev['pending_reset'] = bool(running and dev['fw_version'] and running != dev['fw_version'])
    return devices
