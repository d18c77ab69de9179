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
# "type=UEFI version=14.28.15 cpu=AMD64,AARCH64"; the type may have words ("type=UEFI Virtio net"); FS2
# images (ConnectX-3) print "type=PXE  version=3.4.151 devid=4099 proto=VPI".
_ROM_TYPE_RE = re.compile(r'type=(.*?)(?=\s+\w+=|\s*$)')
_ROM_KV_RE = re.compile(r'(\w+)=(\S+)')
# mlxup/mlxfwmanager "Versions:" rows: name, current, available, columns 2+ spaces apart
# ("FW (Running)   28.46.3048     N/A", "UEFI Virtio net   21.4.0010   N/A").
_VERSION_ROW_RE = re.compile(r'^\s+([A-Za-z][\w.-]*(?: [\w.-]+)*(?: \([^)]*\))?)\s{2,}(\S+)(?:\s+(\S+))?\s*$')
_ERROR_RE = re.compile(r'^\s*-E-\s*(.*?)\s*$')


def has_flash(name, dev):
    """The one rule of which RDMA device (``name`` and its sysfs_ib ``collect`` entry ``dev``) is an adapter whose flash
    mstflint/flint query and burn: a Mellanox/NVIDIA device (name or driver mlx*) with a PCI function that is not a
    virtual function. fw_facts queries and hca_firmware burns by it."""
    return (bool(dev.get('pci_address')) and not dev.get('virtual_function')
            and (name.startswith('mlx') or (dev.get('driver') or '').startswith('mlx')))


def adapter_key(dev):
    """One adapter however many PCI functions and RDMA devices it has: its sys_image_guid, else its PCI address."""
    return dev.get('sys_image_guid') or dev.get('pci_address')


def _rom_entry(text):
    """One ROM of a ``Rom Info`` line -> ``{type, version, cpu}``; None when there is no ``type=``."""
    m = _ROM_TYPE_RE.search(text)
    if not m or not m.group(1).strip():
        return None
    fields = dict(_ROM_KV_RE.findall(text[m.end():]))
    return {'type': m.group(1).strip(), 'version': fields.get('version'), 'cpu': fields.get('cpu')}


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
    'device id': 'device_id',
    'vsd': 'image_vsd',
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
    (list of ``{type, version, cpu}``), ``pxe_version``, ``uefi_version``, ``guids``/``macs`` (lists, FS2
    images of ConnectX-3, which have no base GUID) and the other fields found;
    ``errors`` (the ``-E-`` lines) when the tool printed any.  ``N/A`` values are None; a field the
    output lacks (cut output) is absent, so ``fw_version`` missing means unknown.
    """
    facts = {}
    rom = []
    errors = []
    in_rom = False
    for line in (text or '').splitlines():
        err = _ERROR_RE.match(line)
        if err:
            errors.append(err.group(1))
            continue
        if not line.strip():
            in_rom = False
            continue
        if in_rom and line[:1].isspace() and 'type=' in line:
            entry = _rom_entry(line)
            if entry:
                rom.append(entry)
            continue
        in_rom = False
        m = _KV_RE.match(line)
        if not m:
            continue
        name, value = m.group(1).strip().lower(), m.group(2)
        if name == 'rom info':
            in_rom = True
            entry = _rom_entry(value)
            if entry:
                rom.append(entry)
            continue
        if name in ('base guid', 'base mac'):
            facts[name.replace(' ', '_')] = _first_token(value)
            continue
        if name in ('guids', 'macs'):
            # FS2 images (ConnectX-3): "GUIDs: node port1 port2 sysimage", "MACs: port1 port2"
            facts[name] = [v for v in value.split() if _clean(v)]
            continue
        key = _FLINT_KEYS.get(name)
        if key == 'description' and (value.strip().startswith('UID') or value.strip().startswith('Node ')):
            continue  # column header of the GUID/MAC table, not a description
        if key:
            facts[key] = _clean(value)
    facts['rom_info'] = rom
    if errors:
        facts['errors'] = errors
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
    for raw in (text or '').splitlines():
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
            m = _VERSION_ROW_RE.match(line)
            if m and ':' not in m.group(1):
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
