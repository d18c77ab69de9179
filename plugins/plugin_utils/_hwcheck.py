# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

Compare a node's hardware facts with its expected profile, and versions across a fleet.

Pure standard-library functions over the fact shapes of ``pci_facts`` (``pci``), ``ib_port_facts``
(``infiniband``), ``gpu_facts`` (``nvidia_gpu``) and ``fw_facts`` (``firmware``), importable and
testable without Ansible.  Used by the ``node_compare`` and ``fleet_compare`` action plugins.

Every deviation is a dict ``{device, item, expected, actual, message}``.  A figure that the facts
do not hold is a deviation (``actual`` is ``None``), never a pass.  Only the checks whose
expectation is set (not ``None``) run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils.ibv_devinfo import parse_ibv_devinfo
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import (
    fabricmanager_errors,
    package_deviations,
    package_errors,
)

# Expectation keys of check_node() and the type each must have (validate_expected()).
EXPECTED_KEYS = {
    'gpus': 'int',
    'gpu_model': 'str',
    'gpu_pcie': 'dict',
    'gpu_temp_max_c': 'num',
    'ecc_uncorrected_max': 'int',
    'gpu_memory_health': 'bool',
    'driver_branch': 'str',
    'driver_version': 'str',
    'vbios': 'str_or_dict',
    'fabricmanager_version': 'str',
    'hcas': 'int',
    'hca_match': 'str',
    'hca_ports': 'dict',
    'ib_mtu': 'int',
    'hca_firmware': 'str_or_dict',
    'ofed_version': 'str',
    'kernel': 'str',
    'packages': 'packages',
}
GPU_PCIE_KEYS = ('gen', 'width')
# Port keys hca_ports may name, with how they compare.
PORT_KEYS = {
    'state': 'text',
    'phys_state': 'text',
    'rate_gbps': 'num',
    'link_layer': 'text',
    'width': 'text',
    'speed': 'text',
}
IB_MTUS = (256, 512, 1024, 2048, 4096)

# fleet_compare() items.
FLEET_ITEMS = ('hca_firmware', 'vbios', 'driver', 'ofed', 'fabricmanager')
FLEET_DEFAULT_ITEMS = ('hca_firmware', 'vbios', 'driver', 'ofed')

NOT_REPORTED = 'not reported'


# --- helpers ------------------------------------------------------------------------------------

def fmt(value):
    """Render a value for a message: 400.0 -> '400', None -> 'nothing'."""
    if value is None:
        return 'nothing'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def deviation(device, item, expected, actual, message):
    return {'device': device, 'item': item, 'expected': expected, 'actual': actual, 'message': message}


def _mismatch(device, label, item, expected, actual, note=None):
    """'<label>: <item words> expected X, found Y' (or '..., not reported')."""
    words = item.replace('_', ' ') if item not in PORT_KEYS and item not in ('fw_ver',) else item
    if actual is None:
        msg = '%s: %s expected %s, %s' % (label, words, fmt(expected), note or NOT_REPORTED)
    else:
        msg = '%s: %s expected %s, found %s' % (label, words, fmt(expected), fmt(actual))
        if note:
            msg += ' (%s)' % note
    return deviation(device, item, expected, actual, msg)


def _num(value):
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _same_num(expected, actual):
    e, a = _num(expected), _num(actual)
    return e is not None and a is not None and e == a


def _same_text(expected, actual):
    if actual is None:
        return False
    return str(expected).strip().lower() == str(actual).strip().lower()


def norm_bdf(address):
    """'00000000:9A:00.0' (nvidia-smi) and '0000:9a:00.0' (sysfs) -> '0000:9a:00.0'."""
    if not address:
        return None
    address = str(address).strip().lower()
    m = re.match(r'^([0-9a-f]+):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$', address)
    if not m:
        return address
    return '%04x:%s:%s.%s' % (int(m.group(1), 16), m.group(2), m.group(3), m.group(4))


def driver_branch(version):
    """'550.127.08' -> '550'."""
    if not version:
        return None
    return str(version).split('.', 1)[0]


def _gpu_label(gpu, with_bus=False):
    label = 'GPU %s' % gpu.get('index')
    if with_bus and gpu.get('pci_bus_id'):
        label += ' (%s)' % gpu['pci_bus_id']
    return label


def _gpu_device(gpu):
    return 'GPU %s' % gpu.get('index')


# --- validation ---------------------------------------------------------------------------------

def validate_expected(expected):
    """Errors (list of str) in an expectation dict; empty when it is usable."""
    errors = []
    if not isinstance(expected, dict):
        return ['expected must be a dict, got %s' % type(expected).__name__]
    for key in sorted(expected):
        value = expected[key]
        if key not in EXPECTED_KEYS:
            errors.append('expected.%s is not a known check (known: %s)' % (key, ', '.join(sorted(EXPECTED_KEYS))))
            continue
        if value is None:
            continue
        kind = EXPECTED_KEYS[key]
        if kind == 'int':
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                errors.append('expected.%s must be an integer >= 0, got %r' % (key, value))
        elif kind == 'num':
            if _num(value) is None:
                errors.append('expected.%s must be a number, got %r' % (key, value))
        elif kind == 'bool':
            if not isinstance(value, bool):
                errors.append('expected.%s must be true or false, got %r' % (key, value))
        elif kind == 'str':
            if not isinstance(value, (str, int, float)) or isinstance(value, bool) or str(value) == '':
                errors.append('expected.%s must be a non-empty string, got %r' % (key, value))
        elif kind == 'str_or_dict':
            if isinstance(value, dict):
                if not value or not all(isinstance(v, (str, int, float)) for v in value.values()):
                    errors.append('expected.%s must be a version string or a non-empty dict of versions' % key)
            elif not isinstance(value, (str, int, float)) or isinstance(value, bool) or str(value) == '':
                errors.append('expected.%s must be a version string or a dict of versions, got %r' % (key, value))
        elif kind == 'packages':
            errors.extend(package_errors(value, 'expected.packages'))
        elif kind == 'dict':
            if not isinstance(value, dict):
                errors.append('expected.%s must be a dict, got %r' % (key, value))
            elif key == 'gpu_pcie':
                for sub in sorted(value):
                    if sub not in GPU_PCIE_KEYS:
                        errors.append('expected.gpu_pcie.%s is not known (gen, width)' % sub)
                    elif value[sub] is not None and (isinstance(value[sub], bool) or not isinstance(value[sub], int)):
                        errors.append('expected.gpu_pcie.%s must be an integer, got %r' % (sub, value[sub]))
            elif key == 'hca_ports':
                for sub in sorted(value):
                    if sub not in PORT_KEYS:
                        errors.append('expected.hca_ports.%s is not known (%s)' % (sub, ', '.join(sorted(PORT_KEYS))))
                    elif value[sub] is not None and PORT_KEYS[sub] == 'num' and _num(value[sub]) is None:
                        errors.append('expected.hca_ports.%s must be a number, got %r' % (sub, value[sub]))
    if expected.get('hca_match') is not None:
        try:
            re.compile(str(expected['hca_match']))
        except re.error as exc:
            errors.append('expected.hca_match is not a regular expression: %s' % exc)
    if expected.get('ib_mtu') is not None and expected['ib_mtu'] not in IB_MTUS:
        errors.append('expected.ib_mtu must be one of %s, got %r' % (', '.join(str(m) for m in IB_MTUS), expected['ib_mtu']))
    return errors


# The shape of the facts check_node() and node_versions() read (as the facts modules return them):
# a dict names the keys read below it (each value a dict or null), '*' every value of a dict; a
# one-element list a list (or null) whose items have that shape; 'text' a string or a number (or null).
_ANY = None
_VERSIONS_SHAPE = {'driver': 'text', 'ofed': 'text', 'fabricmanager': 'text', 'vbios': ['text'],
                   'hca_firmware': {'*': ['text']}}
FACTS_SHAPE = {
    'nvidia_gpu': {'driver_version': 'text', 'executable': 'text',
                   'gpus': [{'name': 'text', 'pci_bus_id': 'text', 'vbios_version': 'text',
                             'remapped_rows': {'failure': _ANY, 'pending': _ANY},
                             'retired_pages': {'pending': _ANY, 'pending_blacklist': _ANY},
                             'ecc_errors': {'volatile': {'uncorrected': _ANY}}, 'ecc_mode': {'current': _ANY}}]},
    'infiniband': {'*': {'board_id': 'text', 'fw_ver': 'text', 'ports': {'*': {}}}},
    'firmware': {'hca': {'*': {'board_id': 'text', 'fw_ver': 'text', 'flash': {}}}, 'ofed': {'version': 'text'},
                 'fabricmanager': {'version': 'text'}},
    'pci': {'summary': {'nvidia_gpus': ['text']}},
    'ibv_devinfo': 'text',
    'kernel': 'text',
    'packages': {'*': [{}]},
    'versions': _VERSIONS_SHAPE,
}


def _shape_errors(value, shape, where, out, limit=10):
    if value is None or shape is _ANY or len(out) >= limit:
        return
    if shape == 'text':
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            out.append('%s must be a string, got %s' % (where, type(value).__name__))
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            out.append('%s must be a list, got %s' % (where, type(value).__name__))
            return
        for i, item in enumerate(value):
            _shape_errors(item, shape[0], '%s[%d]' % (where, i), out, limit)
        return
    if not isinstance(value, dict):
        out.append('%s must be a dict, got %s' % (where, type(value).__name__))
        return
    for key, sub in shape.items():
        if key == '*':
            for k in sorted(value, key=str):
                _shape_errors(value[k], sub, '%s.%s' % (where, k), out, limit)
        elif key in value:
            _shape_errors(value[key], sub, '%s.%s' % (where, key), out, limit)


def facts_errors(facts, where='facts'):
    """Errors (list of str, at most 10) where ``facts`` does not have the shape of the facts modules' output
    (for example ``facts.nvidia_gpu.gpus[0] must be a dict, got str``); empty when the comparison can read it."""
    out = []
    _shape_errors(facts, FACTS_SHAPE, where, out)
    return out


def versions_errors(versions, where='versions'):
    """Errors in a ``versions`` dict as node_versions() returns it."""
    out = []
    _shape_errors(versions, _VERSIONS_SHAPE, where, out)
    return out


def _set(expected, key):
    value = expected.get(key)
    if value is None:
        return False
    if isinstance(value, dict):
        return any(v is not None for v in value.values())
    return True


# --- node checks --------------------------------------------------------------------------------

def _link_layers(dev):
    return sorted(set(str((p or {}).get('link_layer')) for p in ((dev or {}).get('ports') or {}).values()))


def select_hcas(infiniband, match=None, link_layer=None):
    """RDMA device names that count as the profile's HCAs: not SR-IOV virtual functions, and matching
    ``match`` (a regular expression) when given, else, when ``link_layer`` is given, having a port on that
    link layer or one that does not report it (so an HGX node's Ethernet storage NICs are not counted
    against an InfiniBand profile)."""
    names = []
    rx = re.compile(match) if match else None
    for name in sorted(infiniband or {}):
        dev = infiniband[name] or {}
        if dev.get('virtual_function'):
            continue
        if rx is not None:
            if not rx.search(name):
                continue
        elif link_layer:
            layers = [(p or {}).get('link_layer') for p in (dev.get('ports') or {}).values()]
            if layers and not any(layer is None or _same_text(link_layer, layer) for layer in layers):
                continue
        names.append(name)
    return names


def _port_sort(name):
    return (0, int(name)) if str(name).isdigit() else (1, str(name))


def check_hcas(facts, expected):
    devs = []
    infiniband = facts.get('infiniband')
    if infiniband is None:
        infiniband = {}
        if any(_set(expected, k) for k in ('hcas', 'hca_ports', 'ib_mtu', 'hca_firmware')):
            devs.append(deviation('node', 'hca_facts', 'ib_port_facts', None,
                                  'node: InfiniBand/RoCE facts (ib_port_facts) missing'))
    link_layer = (expected.get('hca_ports') or {}).get('link_layer')
    names = select_hcas(infiniband, expected.get('hca_match'), link_layer)

    if _set(expected, 'hcas') and int(expected['hcas']) != len(names):
        found = '%d (%s)' % (len(names), ', '.join(names)) if names else '0'
        if expected.get('hca_match'):
            found += ' matching %s' % expected['hca_match']
        elif link_layer:
            found += ' on %s' % link_layer
        others = [n for n in select_hcas(infiniband) if n not in names]
        if others:
            left_out = ['%s (%s)' % (n, '/'.join(_link_layers(infiniband[n]))) for n in others]
            found += '; not counted: %s' % ', '.join(left_out)
        devs.append(deviation('node', 'hca_count', expected['hcas'], len(names),
                              'node: HCAs expected %s, found %s' % (expected['hcas'], found)))

    ports_exp = dict((k, v) for k, v in (expected.get('hca_ports') or {}).items() if v is not None)
    mtu_exp = expected.get('ib_mtu')
    mtus = None
    if mtu_exp is not None:
        text = facts.get('ibv_devinfo')
        mtus = parse_ibv_devinfo(text) if text else None
    fw_exp = expected.get('hca_firmware')
    firmware_hca = (facts.get('firmware') or {}).get('hca') or {}

    for name in names:
        dev = infiniband[name] or {}
        ports = dev.get('ports') or {}
        if (ports_exp or mtu_exp is not None) and not ports:
            devs.append(deviation(name, 'ports', 'ports', None, '%s: no ports reported' % name))
        for pnum in sorted(ports, key=_port_sort):
            port = ports[pnum] or {}
            label = '%s port %s' % (name, pnum)
            device = label
            for key in sorted(ports_exp):
                want, have = ports_exp[key], port.get(key)
                same = _same_num(want, have) if PORT_KEYS[key] == 'num' else _same_text(want, have)
                if not same:
                    devs.append(_mismatch(device, label, key, want, have))
            if mtu_exp is not None:
                if mtus is None:
                    have = None
                    note = 'not reported (ibv_devinfo not found or failed)'
                else:
                    have = (mtus.get(name, {}).get(str(pnum)) or {}).get('active_mtu')
                    note = None
                if not _same_num(mtu_exp, have):
                    devs.append(_mismatch(device, label, 'active_mtu', mtu_exp, have, note))
        if fw_exp is not None:
            fw = dev.get('fw_ver') or (firmware_hca.get(name) or {}).get('fw_ver')
            board = dev.get('board_id') or (firmware_hca.get(name) or {}).get('board_id')
            if isinstance(fw_exp, dict):
                want = fw_exp.get(board) if board else None
                if want is None:
                    devs.append(deviation(name, 'fw_ver', None, fw,
                                          '%s: board_id %s has no entry in the firmware lock (locked: %s), found %s'
                                          % (name, board or '(not reported)', ', '.join(sorted(fw_exp)), fmt(fw))))
                    want = None
            else:
                want = fw_exp
            if want is not None and not _same_text(want, fw):
                devs.append(_mismatch(name, name, 'fw_ver', str(want), fw))
            flash = (firmware_hca.get(name) or {}).get('flash') or {}
            if flash.get('pending_reset'):
                devs.append(deviation(name, 'fw_pending_reset', False, True,
                                      '%s: firmware %s burned but %s running (reset pending)'
                                      % (name, fmt(flash.get('fw_version')), fmt(flash.get('fw_version_running')))))
    return devs


def _gpu_facts_present(nvidia_gpu):
    return bool(nvidia_gpu) and nvidia_gpu.get('executable') is not None or bool((nvidia_gpu or {}).get('gpus'))


def check_gpus(facts, expected):
    devs = []
    nvidia_gpu = facts.get('nvidia_gpu')
    smi = _gpu_facts_present(nvidia_gpu)
    gpus = list((nvidia_gpu or {}).get('gpus') or [])
    want_count = expected.get('gpus')

    if want_count is not None:
        if not smi:
            if int(want_count) > 0:
                why = 'nvidia-smi not found' if nvidia_gpu is not None else 'GPU facts (gpu_facts) missing'
                devs.append(deviation('node', 'gpu_count', want_count, None,
                                      '%s; expected %s GPUs' % (why, want_count)))
        elif int(want_count) != len(gpus):
            devs.append(deviation('node', 'gpu_count', want_count, len(gpus),
                                  'node: GPUs expected %s, found %d' % (want_count, len(gpus))))
    # GPUs on the PCI bus that nvidia-smi does not show (fallen off the bus, driver not bound).
    pci = facts.get('pci')
    if pci and smi and (want_count is None or int(want_count) > 0):
        seen = set(norm_bdf(g.get('pci_bus_id')) for g in gpus)
        for addr in (pci.get('summary') or {}).get('nvidia_gpus') or []:
            if norm_bdf(addr) not in seen:
                devs.append(deviation('GPU at %s' % addr, 'gpu_visible', True, False,
                                      'GPU at %s: on the PCI bus but not shown by nvidia-smi' % addr))

    version = (nvidia_gpu or {}).get('driver_version')
    note = None if smi else 'not reported (nvidia-smi not found)'
    if _set(expected, 'driver_branch') and driver_branch(version) != str(expected['driver_branch']):
        devs.append(_mismatch('node', 'node', 'driver_branch', str(expected['driver_branch']),
                              driver_branch(version), note))
    if _set(expected, 'driver_version') and not _same_text(expected['driver_version'], version):
        devs.append(_mismatch('node', 'node', 'driver_version', str(expected['driver_version']), version, note))

    fm_exp = expected.get('fabricmanager_version')
    if fm_exp is not None:
        fm = ((facts.get('firmware') or {}).get('fabricmanager') or {}).get('version')
        fm_note = None if fm is not None else 'not reported (nv-fabricmanager not found)'
        if not _same_text(fm_exp, fm):
            devs.append(_mismatch('node', 'node', 'fabricmanager_version', str(fm_exp), fm, fm_note))
        elif version:
            # the rule (fabric manager is exactly the driver's version) is the version lock's
            for problem in fabricmanager_errors(str(fm).strip(), str(version).strip(), 'fabric manager', 'driver'):
                devs.append(deviation('node', 'fabricmanager_version', version, fm, 'node: %s' % problem))

    pcie = dict((k, v) for k, v in (expected.get('gpu_pcie') or {}).items() if v is not None)
    vbios = expected.get('vbios')
    temp_max = expected.get('gpu_temp_max_c')
    ecc_max = expected.get('ecc_uncorrected_max')
    for gpu in gpus:
        device = _gpu_device(gpu)
        label = _gpu_label(gpu)
        if _set(expected, 'gpu_model') and not _same_text(expected['gpu_model'], gpu.get('name')):
            devs.append(_mismatch(device, label, 'model', str(expected['gpu_model']), gpu.get('name')))
        if 'gen' in pcie:
            # the generation the link can run at (current drops to Gen1 when the GPU idles)
            have = gpu.get('pcie_link_gen_max')
            if have is None:
                have = gpu.get('pcie_link_gen_current')
            if not _same_num(pcie['gen'], have):
                devs.append(_mismatch(device, _gpu_label(gpu, True), 'pcie_gen', pcie['gen'], have))
        if 'width' in pcie:
            have = gpu.get('pcie_link_width_current')
            if not _same_num(pcie['width'], have):
                devs.append(_mismatch(device, _gpu_label(gpu, True), 'pcie_width', pcie['width'], have))
        if vbios is not None:
            want = vbios.get(gpu.get('name')) if isinstance(vbios, dict) else vbios
            if want is None:
                devs.append(deviation(device, 'vbios', None, gpu.get('vbios_version'),
                                      '%s: model %s has no VBIOS in the lock (locked: %s)'
                                      % (label, fmt(gpu.get('name')), ', '.join(sorted(vbios)))))
            elif not _same_text(want, gpu.get('vbios_version')):
                devs.append(_mismatch(device, label, 'vbios', str(want), gpu.get('vbios_version')))
        if temp_max is not None:
            have = gpu.get('temperature_gpu')
            if _num(have) is None or _num(have) > _num(temp_max):
                devs.append(deviation(device, 'temperature_c', '<= %s' % fmt(temp_max), have,
                                      '%s: temperature expected <= %s C, %s'
                                      % (label, fmt(temp_max), ('found %s C' % fmt(have)) if have is not None else NOT_REPORTED)))
        if ecc_max is not None:
            have = ((gpu.get('ecc_errors') or {}).get('volatile') or {}).get('uncorrected')
            if _num(have) is None or _num(have) > _num(ecc_max):
                if have is None:
                    mode = (gpu.get('ecc_mode') or {}).get('current')
                    tail = '%s (ECC mode %s)' % (NOT_REPORTED, mode) if mode else NOT_REPORTED
                else:
                    tail = 'found %s' % fmt(have)
                devs.append(deviation(device, 'ecc_volatile_uncorrected', '<= %s' % fmt(ecc_max), have,
                                      '%s: ECC volatile uncorrected expected <= %s, %s' % (label, fmt(ecc_max), tail)))
        if expected.get('gpu_memory_health'):
            rows = gpu.get('remapped_rows')
            if rows:
                if rows.get('failure'):
                    devs.append(deviation(device, 'remapped_rows', 'no failure', 'failure',
                                          '%s: remapped rows failure' % label))
                if rows.get('pending'):
                    devs.append(deviation(device, 'remapped_rows', 'none pending', 'pending',
                                          '%s: remapped rows pending (GPU reset needed)' % label))
            pages = gpu.get('retired_pages')
            if pages and (pages.get('pending') or pages.get('pending_blacklist')):
                devs.append(deviation(device, 'retired_pages', 'none pending', 'pending',
                                      '%s: retired pages pending (GPU reset needed)' % label))
    return devs


def check_stack(facts, expected):
    devs = []
    if _set(expected, 'kernel'):
        have = facts.get('kernel')
        want = str(expected['kernel'])
        if have != want:
            devs.append(_mismatch('node', 'node', 'kernel', want, have,
                                  None if have else 'not reported (no kernel fact)'))
    if _set(expected, 'packages'):
        installed = facts.get('packages')
        if installed is None:
            devs.append(deviation('node', 'packages', ', '.join('%s %s' % kv for kv in sorted(expected['packages'].items())),
                                  None, 'node: installed packages not reported (package_facts did not run)'))
        else:
            for pkg, want, have in package_deviations(expected['packages'], installed):
                devs.append(deviation('package %s' % pkg, 'package_version', want, have,
                                      'package %s: version expected %s, found %s' % (
                                          pkg, want, have if have is not None else 'not installed')))
    if _set(expected, 'ofed_version'):
        ofed = (facts.get('firmware') or {}).get('ofed') or {}
        have = ofed.get('version')
        want = str(expected['ofed_version'])
        if not (_same_text(want, have) or _same_text(want, ofed.get('raw'))):
            devs.append(_mismatch('node', 'node', 'ofed_version', want, have,
                                  None if have else 'not reported (ofed_info not found)'))
    return devs


def check_node(facts, expected):
    """All deviations of ``facts`` (``{pci, infiniband, nvidia_gpu, firmware, ibv_devinfo}``, any may be
    missing) from ``expected`` (keys of ``EXPECTED_KEYS``; ``None`` values are not checked)."""
    facts = facts or {}
    expected = dict((k, v) for k, v in (expected or {}).items() if v is not None)
    return check_gpus(facts, expected) + check_hcas(facts, expected) + check_stack(facts, expected)


def summarize_node(facts, expected=None):
    """Short, deterministic summary of what a node is (for reports)."""
    facts = facts or {}
    expected = expected or {}
    nvidia_gpu = facts.get('nvidia_gpu') or {}
    gpus = nvidia_gpu.get('gpus') or []
    infiniband = facts.get('infiniband') or {}
    return {
        'gpu_count': len(gpus),
        'gpu_models': sorted(set(g.get('name') for g in gpus if g.get('name'))),
        'driver_version': nvidia_gpu.get('driver_version'),
        'nvidia_smi': bool(_gpu_facts_present(nvidia_gpu)),
        'hcas': select_hcas(infiniband, expected.get('hca_match'), (expected.get('hca_ports') or {}).get('link_layer')),
    }


# --- fleet ----------------------------------------------------------------------------------------

def node_versions(facts, hca_match=None):
    """Versions a fleet must agree on, from one host's facts:
    ``{driver, ofed, fabricmanager, vbios: [..], hca_firmware: {board_id: [..]}}``."""
    facts = facts or {}
    if 'versions' in facts and isinstance(facts['versions'], dict):
        return facts['versions']
    nvidia_gpu = facts.get('nvidia_gpu') or {}
    firmware = facts.get('firmware') or {}
    infiniband = facts.get('infiniband')
    if infiniband is None:
        infiniband = firmware.get('hca') or {}
    boards = {}
    for name in select_hcas(infiniband, hca_match):
        dev = infiniband[name] or {}
        board = dev.get('board_id') or '(no board_id)'
        if dev.get('fw_ver'):
            boards.setdefault(board, set()).add(dev['fw_ver'])
    return {
        'driver': nvidia_gpu.get('driver_version'),
        'ofed': (firmware.get('ofed') or {}).get('version'),
        'fabricmanager': (firmware.get('fabricmanager') or {}).get('version'),
        'vbios': sorted(set(g.get('vbios_version') for g in nvidia_gpu.get('gpus') or [] if g.get('vbios_version'))),
        'hca_firmware': dict((b, sorted(v)) for b, v in boards.items()),
    }


def _vote_value(value):
    """One host's vote: a version, or several joined when the host itself is mixed; None if absent."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, set)):
        values = sorted(set(str(v) for v in value if v is not None))
        return ' + '.join(values) if values else None
    return str(value)


def _hosts_text(hosts):
    return ', '.join(hosts)


def compare_values(profile, item, label, votes):
    """``votes``: host -> value (None = not reported). Returns (summary, deviations)."""
    groups = {}
    missing = []
    for host in sorted(votes):
        value = votes[host]
        if value is None:
            missing.append(host)
        else:
            groups.setdefault(value, []).append(host)
    summary = {'profile': profile, 'item': item, 'label': label,
               'values': dict((v, h) for v, h in groups.items()), 'missing': missing,
               'majority': None, 'tie': False}
    devs = []
    if not groups:
        return summary, devs
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    top = len(ranked[0][1])
    leaders = [v for v, h in ranked if len(h) == top]
    what = '%s %s' % (item.replace('_', ' '), label) if label else item.replace('_', ' ')
    if len(leaders) == 1:
        majority = leaders[0]
        summary['majority'] = majority
        total = sum(len(h) for h in groups.values())
        for value, hosts in ranked[1:]:
            for host in hosts:
                devs.append({'device': host, 'host': host, 'profile': profile, 'item': item, 'label': label,
                             'expected': majority, 'actual': value,
                             'message': '%s: %s expected %s (majority, %d of %d hosts of profile %s), found %s'
                                        % (host, what, majority, top, total, profile, value)})
    elif len(groups) > 1:
        summary['tie'] = True
        spread = '; '.join('%s on %s' % (v, _hosts_text(h)) for v, h in ranked)
        for value, hosts in ranked:
            for host in hosts:
                devs.append({'device': host, 'host': host, 'profile': profile, 'item': item, 'label': label,
                             'expected': None, 'actual': value,
                             'message': '%s: %s %s, no majority in profile %s (tie: %s)'
                                        % (host, what, value, profile, spread)})
    if len(groups) >= 1 and missing:
        expect = summary['majority']
        for host in missing:
            devs.append({'device': host, 'host': host, 'profile': profile, 'item': item, 'label': label,
                         'expected': expect, 'actual': None,
                         'message': '%s: %s %s, not reported (other hosts of profile %s report it)'
                                    % (host, what, ('expected %s' % expect) if expect else 'no majority', profile)})
    return summary, devs


def fleet_compare(hosts, profiles=None, items=FLEET_DEFAULT_ITEMS, hca_match=None):
    """Compare versions across the hosts of each profile.

    ``hosts``: host -> facts (as for :func:`check_node`, or ``{'versions': node_versions(...)}``);
    ``profiles``: host -> profile name (hosts without one are in profile ``none``).
    Returns ``(summary, deviations)``: summary is a list of ``{profile, item, label, values, missing,
    majority, tie}``; each deviation names the host, the value and the majority value (or the tie).
    """
    profiles = profiles or {}
    versions = dict((h, node_versions(f, hca_match)) for h, f in (hosts or {}).items())
    by_profile = {}
    for host in sorted(versions):
        by_profile.setdefault(str(profiles.get(host) or 'none'), []).append(host)
    summary = []
    devs = []
    for profile in sorted(by_profile):
        members = by_profile[profile]
        for item in items:
            if item == 'hca_firmware':
                boards = sorted(set(b for h in members for b in (versions[h].get('hca_firmware') or {})))
                for board in boards:
                    # hosts without this board are not asked (the node check counts HCAs)
                    votes = dict((h, _vote_value(versions[h]['hca_firmware'][board])) for h in members
                                 if board in (versions[h].get('hca_firmware') or {}))
                    s, d = compare_values(profile, item, 'board_id %s' % board, votes)
                    summary.append(s)
                    devs.extend(d)
            else:
                votes = dict((h, _vote_value(versions[h].get(item))) for h in members)
                s, d = compare_values(profile, item, None, votes)
                if s['values']:
                    summary.append(s)
                devs.extend(d)
    return summary, devs


def format_deviations(devs, header=None):
    lines = [d['message'] for d in devs]
    if header:
        return '%s: %s' % (header, '; '.join(lines))
    return '; '.join(lines)
