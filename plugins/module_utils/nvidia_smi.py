# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for ``nvidia-smi -q -x`` (XML), ``nvidia-smi --query-gpu`` (CSV), ``nvidia-smi -L`` (the GPU list)
and ``nvidia-smi topo -m`` (matrix text).

Pure standard-library functions, importable without Ansible.  The XML parser copes with the
schema changes between driver 418 and 595 (``power_readings`` vs ``gpu_power_readings``,
``single_bit/double_bit`` vs ``sram_*/dram_*`` ECC counters, retired pages vs remapped rows,
MIG devices); any value nvidia-smi prints as ``N/A``, ``[N/A]``, ``Not Supported`` and the like
becomes ``None``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import xml.etree.ElementTree as ET

# Values nvidia-smi prints when a field has no value.
_NO_VALUE = frozenset((
    '', 'n/a', '[n/a]', 'na', 'not supported', '[not supported]', 'unknown error', '[unknown error]',
    'requested functionality has been deprecated', '[requested functionality has been deprecated]',
    'insufficient permissions', '[insufficient permissions]', 'none', 'not available',
))
_NUMBER_RE = re.compile(r'^\s*(-?\d+(?:\.\d+)?)\s*[A-Za-z%/()]*\s*$')
_ANSI_RE = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
_DEVICE_LABEL_RE = re.compile(r'^(GPU\d+|NIC\d+|mlx\d+_\d+|[A-Za-z][\w.-]*_\d+)$')


class NvidiaSmiParseError(ValueError):
    """Raised when ``nvidia-smi -q -x`` output is not the expected XML (or ``--query-gpu`` CSV)."""


class NvidiaSmiNoDevices(NvidiaSmiParseError):
    """nvidia-smi ran but says ``No devices were found`` (driver loaded, no GPU visible)."""


# Messages nvidia-smi prints instead of a report (stdout or stderr, rc != 0 on most drivers).
_FAILURE_RE = re.compile(r'^(No devices were found|NVIDIA-SMI has failed\b.*|Failed to initialize NVML:.*|'
                         r'Unable to determine the device handle for GPU.*)$', re.IGNORECASE | re.MULTILINE)
_XML_START_RE = re.compile(r'<\?xml\b|<!DOCTYPE\s+nvidia_smi_log|<nvidia_smi_log\b')
_XML_END = '</nvidia_smi_log>'
_SUPPORTED_CLOCKS_RE = re.compile(r'<supported_clocks>.*?</supported_clocks>', re.DOTALL)


def _xml_document(text):
    """The ``nvidia_smi_log`` document in ``text``: drops what nvidia-smi (or a wrapper) prints around
    it, e.g. ``WARNING: infoROM is corrupted at gpu 0000:04:00.0`` before the XML or a second
    document from ``-l``.  Raises :class:`NvidiaSmiParseError` when there is none."""
    start = _XML_START_RE.search(text)
    if start is None:
        failure = _FAILURE_RE.search(text)
        if failure and failure.group(1).lower().startswith('no devices were found'):
            raise NvidiaSmiNoDevices('nvidia-smi: No devices were found')
        if failure:
            raise NvidiaSmiParseError('nvidia-smi failed: %s' % failure.group(1).strip())
        first = text.strip().splitlines()[0][:200] if text.strip() else 'empty output'
        raise NvidiaSmiParseError('nvidia-smi -q -x output is not XML: %s' % first)
    end = text.find(_XML_END, start.start())
    body = text[start.start():end + len(_XML_END)] if end >= 0 else text[start.start():]
    return body.strip()


def clean(text):
    """Strip ``text``; return None for nvidia-smi's 'no value' spellings."""
    if text is None:
        return None
    text = text.strip()
    if text.lower() in _NO_VALUE:
        return None
    return text


def number(text):
    """``'26.16 W'`` -> 26.16, ``'38 C'`` -> 38, ``'16x'`` -> 16, ``'N/A'`` -> None."""
    text = clean(text)
    if text is None:
        return None
    m = _NUMBER_RE.match(text)
    if not m:
        return None
    raw = m.group(1)
    if '.' in raw:
        return float(raw)
    return int(raw)


def yes_no(text):
    """``Yes``/``No`` (also Enabled/Disabled, Active/Not Active) -> bool; else None."""
    text = clean(text)
    if text is None:
        return None
    low = text.lower()
    if low in ('yes', 'enabled', 'active', 'true'):
        return True
    if low in ('no', 'disabled', 'not active', 'false'):
        return False
    return None


def _text(elem, path):
    if elem is None:
        return None
    found = elem.find(path)
    if found is None:
        return None
    return found.text


def _val(elem, path):
    return clean(_text(elem, path))


def _num(elem, *paths):
    """First numeric value among ``paths``."""
    for path in paths:
        value = number(_text(elem, path))
        if value is not None:
            return value
    return None


def _sum_ints(values):
    nums = [v for v in values if isinstance(v, (int, float))]
    if not nums:
        return None
    return sum(nums)


def _ecc_block(block):
    """Corrected/uncorrected totals for one ``volatile`` or ``aggregate`` element."""
    if block is None:
        return {'corrected': None, 'uncorrected': None}
    if block.find('single_bit') is not None or block.find('double_bit') is not None:
        # driver <= 510 (Pascal/Volta/early Ampere schema)
        return {
            'corrected': number(_text(block, 'single_bit/total')),
            'uncorrected': number(_text(block, 'double_bit/total')),
        }
    corrected = _sum_ints([number(_text(block, 'sram_correctable')), number(_text(block, 'dram_correctable'))])
    unc_parts = [number(_text(block, 'dram_uncorrectable'))]
    if block.find('sram_uncorrectable') is not None:
        unc_parts.append(number(_text(block, 'sram_uncorrectable')))
    else:
        unc_parts.append(number(_text(block, 'sram_uncorrectable_parity')))
        unc_parts.append(number(_text(block, 'sram_uncorrectable_secded')))
    return {'corrected': corrected, 'uncorrected': _sum_ints(unc_parts)}


# Sections read field by field: (result key, path below the section, parser). A section absent (old drivers), empty
# or all "N/A" (GPUs without page retirement or row remapping) reads as None.
_RETIRED_PAGES = (
    ('single_bit', 'multiple_single_bit_retirement/retired_count', number),
    ('double_bit', 'double_bit_retirement/retired_count', number),
    ('pending', 'pending_retirement', yes_no),
    ('pending_blacklist', 'pending_blacklist', yes_no),
)
_REMAPPED_ROWS = (
    ('correctable', 'remapped_row_corr', number),
    ('uncorrectable', 'remapped_row_unc', number),
    ('pending', 'remapped_row_pending', yes_no),
    ('failure', 'remapped_row_failure', yes_no),
)


def _section(gpu, tag, fields):
    elem = gpu.find(tag)
    if elem is None or len(elem) == 0:
        return None
    result = dict((name, parse(_text(elem, path))) for name, path, parse in fields)
    if all(v is None for v in result.values()):
        return None
    return result


def _mig_devices(gpu):
    devices = []
    container = gpu.find('mig_devices')
    if container is None:
        return devices
    for dev in container.findall('mig_device'):
        devices.append({
            'index': number(_text(dev, 'index')),
            'gpu_instance_id': number(_text(dev, 'gpu_instance_id')),
            'compute_instance_id': number(_text(dev, 'compute_instance_id')),
            'multiprocessor_count': number(_text(dev, 'device_attributes/shared/multiprocessor_count')),
            'memory_total_mib': number(_text(dev, 'fb_memory_usage/total')),
            'memory_used_mib': number(_text(dev, 'fb_memory_usage/used')),
        })
    return devices


def _clock_pair(gpu, path):
    """``{graphics_mhz, memory_mhz}`` of a clocks element (None where nvidia-smi prints no value, e.g.
    ``Requested functionality has been deprecated`` for application clocks on newer drivers)."""
    return {'graphics_mhz': _num(gpu, path + '/graphics_clock'), 'memory_mhz': _num(gpu, path + '/mem_clock')}


def _processes(gpu):
    """The ``<processes>`` list: pid, type (C/G/C+G), name, used memory, MIG instance ids."""
    out = []
    container = gpu.find('processes')
    if container is None:
        return out
    for proc in container.findall('process_info'):
        out.append({
            'pid': _num(proc, 'pid'),
            'type': _val(proc, 'type'),
            'name': _val(proc, 'process_name'),
            'used_memory_mib': _num(proc, 'used_memory'),
            'gpu_instance_id': _num(proc, 'gpu_instance_id'),
            'compute_instance_id': _num(proc, 'compute_instance_id'),
        })
    return out


def parse_gpu(gpu, index):
    """Facts of one ``<gpu>`` element."""
    link = 'pci/pci_gpu_link_info/'
    ecc = gpu.find('ecc_errors')
    return {
        'index': index,
        'name': _val(gpu, 'product_name'),
        'brand': _val(gpu, 'product_brand'),
        'architecture': _val(gpu, 'product_architecture'),
        'uuid': _val(gpu, 'uuid'),
        'pci_bus_id': _val(gpu, 'pci/pci_bus_id') or clean(gpu.get('id')),
        'pci_device_id': _val(gpu, 'pci/pci_device_id'),
        'serial': _val(gpu, 'serial'),
        'minor_number': _num(gpu, 'minor_number'),
        'vbios_version': _val(gpu, 'vbios_version'),
        'inforom_image_version': _val(gpu, 'inforom_version/img_version'),
        'gsp_firmware_version': _val(gpu, 'gsp_firmware_version'),
        'persistence_mode': _val(gpu, 'persistence_mode'),
        'compute_mode': _val(gpu, 'compute_mode'),
        'performance_state': _val(gpu, 'performance_state'),
        'mig_mode': {
            'current': _val(gpu, 'mig_mode/current_mig'),
            'pending': _val(gpu, 'mig_mode/pending_mig'),
        },
        'mig_devices': _mig_devices(gpu),
        'pcie_link_gen_current': _num(gpu, link + 'pcie_gen/current_link_gen'),
        'pcie_link_gen_max': _num(gpu, link + 'pcie_gen/max_link_gen'),
        'pcie_link_gen_device_max': _num(gpu, link + 'pcie_gen/max_device_link_gen'),
        'pcie_link_gen_host_max': _num(gpu, link + 'pcie_gen/max_host_link_gen'),
        'pcie_link_width_current': _num(gpu, link + 'link_widths/current_link_width'),
        'pcie_link_width_max': _num(gpu, link + 'link_widths/max_link_width'),
        'pcie_replay_counter': _num(gpu, 'pci/replay_counter'),
        'memory_total_mib': _num(gpu, 'fb_memory_usage/total'),
        'memory_used_mib': _num(gpu, 'fb_memory_usage/used'),
        'temperature_gpu': _num(gpu, 'temperature/gpu_temp'),
        'temperature_memory': _num(gpu, 'temperature/memory_temp'),
        'temperature_slowdown': _num(gpu, 'temperature/gpu_temp_slow_threshold'),
        'temperature_shutdown': _num(gpu, 'temperature/gpu_temp_max_threshold'),
        'power_draw': _num(gpu, 'gpu_power_readings/power_draw', 'gpu_power_readings/instant_power_draw',
                           'gpu_power_readings/average_power_draw', 'power_readings/power_draw'),
        'power_limit': _num(gpu, 'gpu_power_readings/current_power_limit', 'power_readings/power_limit',
                            'power_readings/enforced_power_limit'),
        'power_limit_default': _num(gpu, 'gpu_power_readings/default_power_limit', 'power_readings/default_power_limit'),
        'power_limit_min': _num(gpu, 'gpu_power_readings/min_power_limit', 'power_readings/min_power_limit'),
        'power_limit_max': _num(gpu, 'gpu_power_readings/max_power_limit', 'power_readings/max_power_limit'),
        'ecc_mode': {
            'current': _val(gpu, 'ecc_mode/current_ecc'),
            'pending': _val(gpu, 'ecc_mode/pending_ecc'),
        },
        'ecc_errors': {
            'volatile': _ecc_block(ecc.find('volatile') if ecc is not None else None),
            'aggregate': _ecc_block(ecc.find('aggregate') if ecc is not None else None),
        },
        'retired_pages': _section(gpu, 'retired_pages', _RETIRED_PAGES),
        'remapped_rows': _section(gpu, 'remapped_rows', _REMAPPED_ROWS),
        'fabric_state': _val(gpu, 'fabric/state'),
        'fabric_status': _val(gpu, 'fabric/status'),
        'power_limit_enforced': _num(gpu, 'gpu_power_readings/current_power_limit',
                                     'power_readings/enforced_power_limit'),
        'power_limit_requested': _num(gpu, 'gpu_power_readings/requested_power_limit',
                                      'power_readings/power_limit'),
        'applications_clocks': _clock_pair(gpu, 'applications_clocks'),
        'default_applications_clocks': _clock_pair(gpu, 'default_applications_clocks'),
        'max_clocks': _clock_pair(gpu, 'max_clocks'),
        'processes': _processes(gpu),
    }


def parse_query_xml(text):
    """Parse ``nvidia-smi -q -x`` output into ``{driver_version, cuda_version, attached_gpus, count, gpus}``.

    Raises :class:`NvidiaSmiParseError` when ``text`` holds no complete ``nvidia_smi_log`` document
    (cut or garbled output, an NVML failure message), :class:`NvidiaSmiNoDevices` (a subclass) for
    ``No devices were found``.  Text printed around the document (``WARNING: infoROM is corrupted``)
    is ignored.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    body = _xml_document(text or '')
    try:
        root = ET.fromstring(body)
    except (ET.ParseError, ValueError) as exc:
        # Some drivers print a <supported_clocks> block with mismatched tags (seen with 5xx drivers,
        # lollipopkit/flutter_server_box#286); nothing here reads it, so drop it and try once more.
        stripped = _SUPPORTED_CLOCKS_RE.sub('', body)
        try:
            if stripped == body:
                raise exc
            root = ET.fromstring(stripped)
        except (ET.ParseError, ValueError) as exc2:
            raise NvidiaSmiParseError('nvidia-smi -q -x output is not XML (cut or garbled?): %s' % exc2)
    if root.tag != 'nvidia_smi_log':
        raise NvidiaSmiParseError('unexpected XML root <%s>, expected <nvidia_smi_log>' % root.tag)
    gpus = [parse_gpu(gpu, i) for i, gpu in enumerate(root.findall('gpu'))]
    return {
        'driver_version': _val(root, 'driver_version'),
        'cuda_version': _val(root, 'cuda_version'),
        'attached_gpus': _num(root, 'attached_gpus'),
        'count': len(gpus),
        'gpus': gpus,
    }


def parse_supported_clocks(text):
    """Supported clock pairs per GPU of ``nvidia-smi -q -x`` output: a list (one item per ``<gpu>``, in
    order) of ``[{memory_mhz, graphics_mhz: [..]}]``, or None for a GPU whose block is absent or empty.

    Kept out of :func:`parse_query_xml` on purpose: some drivers print this block with mismatched tags
    (then the whole document is re-read without it there); here such a document gives None for every GPU,
    so a caller never takes a clock as supported that was not read. Raises like :func:`parse_query_xml`
    when ``text`` is not a document."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    body = _xml_document(text or '')
    try:
        root = ET.fromstring(body)
    except (ET.ParseError, ValueError):
        return [None] * len(parse_query_xml(text)['gpus'])
    out = []
    for gpu in root.findall('gpu'):
        pairs = []
        for mem in gpu.findall('supported_clocks/supported_mem_clock'):
            memory = number(_text(mem, 'value'))
            graphics = [number(g.text) for g in mem.findall('supported_graphics_clock')]
            graphics = [g for g in graphics if isinstance(g, int)]
            if isinstance(memory, int) and graphics:
                pairs.append({'memory_mhz': memory, 'graphics_mhz': graphics})
        out.append(pairs or None)
    return out


_LGI_ROW_RE = re.compile(r'^\|\s*(?P<gpu>\d+)\s+MIG\s+(?P<name>\S+)\s+(?P<profile>\d+)\s+(?P<gi>\d+)\s+'
                         r'(?P<start>\d+):(?P<size>\d+)\s*\|\s*$')
_LGI_NONE_RE = re.compile(r'No GPU instances found', re.IGNORECASE)


def parse_mig_gpu_instances(text):
    """Rows of ``nvidia-smi mig -lgi`` (the GPU instances table): a list of ``{gpu, profile_name (e.g.
    1g.10gb), profile_id, instance_id, placement_start, placement_size}``; [] for ``No GPU instances
    found``. Raises :class:`NvidiaSmiParseError` when the text is neither (a MIG-less GPU, an NVML
    failure, garbage), so an unread layout is never taken for an empty one."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    text = text or ''
    rows = []
    for line in text.splitlines():
        m = _LGI_ROW_RE.match(line.strip())
        if m:
            rows.append({'gpu': int(m.group('gpu')), 'profile_name': m.group('name'),
                         'profile_id': int(m.group('profile')), 'instance_id': int(m.group('gi')),
                         'placement_start': int(m.group('start')), 'placement_size': int(m.group('size'))})
    if rows:
        return rows
    if _LGI_NONE_RE.search(text):
        return []
    if re.search(r'GPU instances:', text) and not re.search(r'^\|\s*\d+\s', text, re.MULTILINE):
        return []
    first = text.strip().splitlines()[0][:200] if text.strip() else 'empty output'
    raise NvidiaSmiParseError('nvidia-smi mig -lgi output is not a GPU instance table: %s' % first)


# --- nvidia-smi --query-gpu=... --format=csv -----------------------------------------------------------

_CSV_HEADER_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_.]*(?:\s*\[[^\]]*\])?$')
_CSV_UNIT_RE = re.compile(r'^(?P<name>[^\[]+?)\s*\[(?P<unit>[^\]]*)\]\s*$')
_CSV_NUMBER_RE = re.compile(r'^-?\d+(?:\.\d+)?(?:\s+(?:%|W|mW|MiB|KiB|GiB|MHz|C|us|ms|s|J|mJ|V|mV|RPM|x))?$')
# Fields whose values look numeric but are identifiers or versions, never numbers.
_CSV_TEXT_PREFIXES = ('timestamp', 'driver_version', 'kmd_version', 'name', 'gpu_name', 'serial', 'gpu_serial',
                      'uuid', 'gpu_uuid', 'pci.', 'vbios_version', 'inforom.', 'pstate', 'gpu_bus_id',
                      'clocks_event_reasons.supported', 'clocks_event_reasons.active',
                      'clocks_throttle_reasons.supported', 'clocks_throttle_reasons.active')


def _csv_cells(line):
    return [c.strip() for c in line.split(',')]


def _csv_field(header_cell):
    m = _CSV_UNIT_RE.match(header_cell)
    return m.group('name').strip() if m else header_cell.strip()


def _csv_value(field, raw):
    value = clean(raw)
    if value is None:
        return None
    if field.startswith(_CSV_TEXT_PREFIXES) or not _CSV_NUMBER_RE.match(value):
        return value
    return number(value.split()[0])


def parse_query_gpu_csv(text, fields=None):
    """Parse ``nvidia-smi --query-gpu=F1,F2 --format=csv[,noheader][,nounits]`` into a list of dicts.

    Keys are the field names without their unit (``memory.total [MiB]`` -> ``memory.total``).  With
    ``noheader`` pass ``fields`` (the names asked for, in order); a header line, when present, must
    match them.  Values: None for ``N/A``, ``[N/A]``, ``[Not Supported]``...; numbers (with or without
    their unit) become int/float except for identifier fields (name, serial, uuid, pci.*, versions);
    anything else stays text.

    Raises :class:`NvidiaSmiParseError` for a row whose cell count differs from the header (cut or
    garbled output), a missing header without ``fields``, or an NVML failure message;
    (a last row cut inside its last value cannot be told from a complete one: pass the output as
    nvidia-smi printed it, with its final newline, and check ``len(rows)`` against ``count``);
    :class:`NvidiaSmiNoDevices` for ``No devices were found``.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    lines = [line.strip() for line in (text or '').splitlines() if line.strip()]
    failure = _FAILURE_RE.search('\n'.join(lines))
    if failure:
        if failure.group(1).lower().startswith('no devices were found'):
            raise NvidiaSmiNoDevices('nvidia-smi: No devices were found')
        raise NvidiaSmiParseError('nvidia-smi failed: %s' % failure.group(1).strip())
    names = [f.strip() for f in fields] if fields else None
    if lines:
        cells = _csv_cells(lines[0])
        first = [_csv_field(c) for c in cells]
        if all(_CSV_HEADER_RE.match(c) for c in cells) and (names is None or first == names):
            names = first
            lines = lines[1:]
    if not names:
        raise NvidiaSmiParseError('nvidia-smi --query-gpu output has no header and no field list was given')
    rows = []
    for number_, line in enumerate(lines, 1):
        cells = _csv_cells(line)
        if len(cells) != len(names):
            raise NvidiaSmiParseError('nvidia-smi --query-gpu row %d has %d values for %d fields (cut or garbled?): %s'
                                      % (number_, len(cells), len(names), line[:200]))
        rows.append(dict((name, _csv_value(name, cell)) for name, cell in zip(names, cells)))
    return rows


# --- nvidia-smi -L (--list-gpus) and --query-gpu=uuid --format=csv,noheader -------------------------------

_LIST_GPU_RE = re.compile(r'^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9A-Za-z-]+)\)$')
# MIG devices under their GPU: 'MIG 3g.40gb     Device  0: (UUID: MIG-...)' (R470+), and the older
# 'MIG 3g.20gb Device 0: (UUID: MIG-GPU-<gpu uuid>/1/0)' (R450-R460).
_LIST_MIG_RE = re.compile(r'^MIG (?P<profile>\S+)\s+Device\s+(?P<device>\d+): \(UUID: (?P<uuid>MIG-[0-9A-Za-z/-]+)\)$')
_UUID_RE = re.compile(r'^GPU-[0-9A-Za-z-]+$')
_WARNING_RE = re.compile(r'^WARNING: ')


def _list_failure(lines):
    failure = _FAILURE_RE.search('\n'.join(lines))
    if failure and failure.group(1).lower().startswith('no devices were found'):
        raise NvidiaSmiNoDevices('nvidia-smi: No devices were found')
    if failure:
        raise NvidiaSmiParseError('nvidia-smi failed: %s' % failure.group(1).strip())


def parse_gpu_list(text):
    """Parse ``nvidia-smi -L`` into ``{gpus, malformed, warnings}``.

    ``gpus``: one ``{index, name, uuid, mig_devices}`` per ``GPU N: NAME (UUID: GPU-...)`` line, in the
    order printed; ``mig_devices`` lists the ``{profile, device, uuid}`` of the MIG lines under it.
    ``malformed``: every other non-empty line (a line cut inside its UUID, noise, a MIG line before any
    GPU) - a caller must not take a list with malformed lines as complete. ``warnings``: ``WARNING: ...``
    lines nvidia-smi prints before the list (``infoROM is corrupted``).

    Raises :class:`NvidiaSmiNoDevices` for ``No devices were found`` and :class:`NvidiaSmiParseError`
    for an NVML failure message (``Failed to initialize NVML: ...``, ``NVIDIA-SMI has failed ...``).
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    lines = [_ANSI_RE.sub('', line).rstrip() for line in (text or '').splitlines()]
    lines = [line for line in lines if line.strip()]
    _list_failure(lines)
    gpus, malformed, warnings = [], [], []
    for line in lines:
        if _WARNING_RE.match(line):
            warnings.append(line)
            continue
        gpu = _LIST_GPU_RE.match(line)
        if gpu:
            gpus.append({'index': int(gpu.group('index')), 'name': gpu.group('name').strip(),
                         'uuid': gpu.group('uuid'), 'mig_devices': []})
            continue
        mig = _LIST_MIG_RE.match(line.strip())
        if mig and line[:1].isspace() and gpus:
            gpus[-1]['mig_devices'].append({'profile': mig.group('profile'), 'device': int(mig.group('device')),
                                            'uuid': mig.group('uuid')})
            continue
        malformed.append(line)
    return {'gpus': gpus, 'malformed': malformed, 'warnings': warnings}


def parse_uuid_list(text):
    """Parse ``nvidia-smi --query-gpu=uuid --format=csv,noheader`` (a ``uuid`` header line, when printed,
    is skipped) into the shape of :func:`parse_gpu_list`: ``gpus`` with ``index`` (the line's position),
    ``name`` None, ``uuid`` and no ``mig_devices``; a line that is not one GPU UUID is ``malformed``.
    Raises like :func:`parse_gpu_list`."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    lines = [line.strip() for line in (text or '').splitlines() if line.strip()]
    _list_failure(lines)
    if lines and lines[0].lower() == 'uuid':
        lines = lines[1:]
    gpus, malformed, warnings = [], [], []
    for line in lines:
        if _WARNING_RE.match(line):
            warnings.append(line)
        elif _UUID_RE.match(line):
            gpus.append({'index': len(gpus), 'name': None, 'uuid': line, 'mig_devices': []})
        else:
            malformed.append(line)
    return {'gpus': gpus, 'malformed': malformed, 'warnings': warnings}


# --- nvidia-smi topo -m -----------------------------------------------------------------------------

_AFFINITY_KEYS = {
    'cpu affinity': 'cpu_affinity',
    'numa affinity': 'numa_affinity',
    'gpu numa id': 'gpu_numa_id',
}
_NIC_LEGEND_RE = re.compile(r'^\s*(NIC\d+)\s*:\s*(\S+)\s*$')


def _split_header(line):
    if '\t' in line:
        cells = [c.strip() for c in line.split('\t')]
    else:
        cells = [c.strip() for c in re.split(r'\s{2,}', line)]
    return [c for c in cells if c]


_HEADER_CELL_RE = re.compile(r'\S+(?: \S+)*')  # a header label may hold single spaces ('CPU Affinity')
_ROW_CELL_RE = re.compile(r'\S+')


def _split_row(line):
    if '\t' in line:
        return [c.strip() for c in line.split('\t')]
    return line.split()


def _tab_rest(rest, extra):
    """The affinity cells of a tab-separated row, one per ``extra`` title. nvidia-smi prints one tab more before
    ``GPU NUMA ID`` in the rows than in the header; that empty cell is dropped where it stands, so an empty
    ``CPU Affinity`` cell (NIC rows, or a GPU whose affinity is unknown) keeps its place."""
    rest = list(rest)
    if len(rest) > len(extra) and 'gpu_numa_id' in extra:
        idx = extra.index('gpu_numa_id')
        if idx < len(rest) and rest[idx] == '':
            del rest[idx]
    while len(rest) > len(extra) and rest and rest[-1] == '':
        del rest[-1]
    return rest


def _space_cells(line, starts):
    """Cells of a space-aligned row (copied from a terminal, or space-normalized) read by the header's column
    positions: ``starts`` holds the start offset of each header label (the row label's column first, at 0).
    Returns one cell per column ('' where the row has none), or None when a cell cannot be placed (two cells
    under one label, or a cell under none): the row is not aligned with its header."""
    cells = [''] * len(starts)
    bounds = list(starts[1:]) + [None]
    for match in _ROW_CELL_RE.finditer(line):
        lo, hi = match.start(), match.end()
        best, best_overlap = None, 0
        for col, start in enumerate(starts):
            end = bounds[col] if bounds[col] is not None else max(hi, start + 1)
            left = start if col else 0
            overlap = min(hi, end) - max(lo, left)
            if overlap > best_overlap:
                best, best_overlap = col, overlap
        if best is None or cells[best]:
            return None
        cells[best] = match.group()
    return cells


def parse_topo_matrix(text):
    """Parse ``nvidia-smi topo -m``.

    Returns ``{'devices': [...], 'matrix': {row: {col: 'NV12'|'SYS'|...}}, 'affinity': {row: {...}},
    'nic_names': {'NIC0': 'mlx5_0'}}``; ``matrix`` leaves out the ``X`` self cells.  NIC labels
    (``NIC0``) are replaced by device names when the output has a ``NIC Legend``.  Empty dict when
    no matrix header is found.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    lines = [_ANSI_RE.sub('', line).rstrip('\r\n') for line in text.splitlines()]
    header_idx = None
    for i, line in enumerate(lines):
        cells = _split_header(line)
        if cells and cells[0].startswith('GPU') and _is_header(cells):
            header_idx = i
            break
    if header_idx is None:
        return {}
    header = _split_header(lines[header_idx])
    devices = [c for c in header if c.lower() not in _AFFINITY_KEYS]
    extra = [_AFFINITY_KEYS[c.lower()] for c in header if c.lower() in _AFFINITY_KEYS]
    tabbed = '\t' in lines[header_idx]
    starts = None
    if not tabbed:
        labels = [(m.group(), m.start()) for m in _HEADER_CELL_RE.finditer(lines[header_idx])]
        if [label for label, dummy in labels] == header:
            starts = [0] + [start for dummy, start in labels]

    if len(set(devices)) != len(devices):
        return {}  # a label twice: the header is garbled, its columns cannot be told apart
    nic_names = {}
    for line in lines[header_idx + 1:]:
        m = _NIC_LEGEND_RE.match(line)
        if m:
            nic_names[m.group(1)] = m.group(2)
    names = [nic_names.get(d, d) for d in devices]
    if len(set(names)) != len(names):  # a legend naming two NICs alike (garbled): keep the NICn labels
        nic_names = {}

    def rename(name):
        return nic_names.get(name, name)

    matrix = {}
    affinity = {}
    for line in lines[header_idx + 1:]:
        if not line.strip():
            break
        cells = _split_row(line)
        label = cells[0].strip()
        if label not in devices:
            break
        if not tabbed and len(cells) != 1 + len(devices) + len(extra):
            # a cell is empty (e.g. CPU Affinity): splitting on blanks would shift the cells after it
            placed = _space_cells(line, starts) if starts else None
            if placed is not None and placed[0] == label:
                cells = placed
            else:  # not aligned with the header: the link cells in order, no affinity guessed
                cells = cells[:1 + len(devices)]
        values = cells[1:1 + len(devices)]
        rest = cells[1 + len(devices):]
        if tabbed:
            rest = _tab_rest(rest, extra)
        row = {}
        for col, value in zip(devices, values):
            value = value.strip()
            if col == label or value in ('X', ''):
                continue
            row[rename(col)] = value
        matrix[rename(label)] = row
        aff = {}
        for i, key in enumerate(extra):
            aff[key] = clean(rest[i]) if i < len(rest) else None
        if extra:
            affinity[rename(label)] = aff
    return {
        'devices': [rename(d) for d in devices],
        'matrix': matrix,
        'affinity': affinity,
        'nic_names': nic_names,
    }


def _is_header(cells):
    """A header row lists device labels (and affinity titles) only; a data row has link cells."""
    for cell in cells:
        if cell.lower() in _AFFINITY_KEYS:
            continue
        if not _DEVICE_LABEL_RE.match(cell):
            return False
    return True


def gpu_topology(topo, index):
    """Per-GPU view of :func:`parse_topo_matrix` output for GPU ``index``."""
    label = 'GPU%d' % index
    if not topo or label not in topo.get('matrix', {}):
        return None
    result = {'links': dict(topo['matrix'][label])}
    result.update(topo.get('affinity', {}).get(label, {}))
    return result
