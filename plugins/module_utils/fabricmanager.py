# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for NVIDIA Fabric Manager: ``nv-fabricmanager --version`` output, lines of
``/var/log/fabricmanager.log`` and journal messages.  Pure standard-library functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_VERSION_RE = re.compile(r'Fabric Manager version(?: is)?\s*:?\s*(\d+(?:\.\d+)+)', re.IGNORECASE)
_LOG_LINE_RE = re.compile(r'^\[(?P<time>[^\]]+)\]\s+\[(?P<level>[A-Z]+)\]\s+(?:\[tid (?P<tid>\d+)\]\s+)?(?P<message>.*)$')
_RUNNING_RE = re.compile(r'Fabric Manager version (\d+(?:\.\d+)+) is running')
_NVSWITCH_ERR_RE = re.compile(
    r'detected NVSwitch (?P<kind>non-fatal|fatal) error (?P<code>\d+) on fid \d+ on NVSwitch pci bus id '
    r'(?P<pci>\S+) physical id (?P<physical_id>\d+) port (?P<port>\d+)')
_CONFIGURED_RE = re.compile(r'Successfully configured all the available GPUs and NVSwitches', re.IGNORECASE)
# systemd's unit start line: "Starting NVIDIA fabric manager service..." (older systemd) or
# "Starting nvidia-fabricmanager.service - NVIDIA fabric manager service..." (systemd >= 249)
_JOURNAL_START_RE = re.compile(r'Starting (?:NVIDIA fabric manager|nvidia-fabricmanager)', re.IGNORECASE)
_CONFIGURE_FAILED_RE = re.compile(r'Failed to configure all the available GPUs', re.IGNORECASE)
_MISMATCH_RE = re.compile(
    r'fabric manager NVIDIA GPU driver interface version (?P<fm>\d+(?:\.\d+)+) don\'t match with driver '
    r'version (?P<driver>\d+(?:\.\d+)+)')


def parse_version(text):
    """``'Fabric Manager version is : 580.159.03'`` -> ``'580.159.03'``; None when absent."""
    m = _VERSION_RE.search(text or '')
    return m.group(1) if m else None


def parse_log_line(line):
    """``[Dec 19 2024 19:17:49] [ERROR] [tid 1374] msg`` -> dict(time, level, tid, message) or None."""
    m = _LOG_LINE_RE.match(line.strip())
    if not m:
        return None
    return {
        'time': m.group('time'),
        'level': m.group('level'),
        'tid': int(m.group('tid')) if m.group('tid') else None,
        'message': m.group('message'),
    }


def parse_log(text):
    """Summarise a fabricmanager.log (or a tail of it).

    Returns ``version`` (of the last ``Fabric Manager version X is running`` line), ``starts``
    (number of such lines), ``levels`` (count per level), ``nvswitch_errors`` (list of
    ``{kind, code, pci_bus_id, physical_id, port, time}``, de-duplicated), ``last_error``,
    ``configured`` (True when the last start logged ``Successfully configured all the available
    GPUs and NVSwitches``, False when it did not (yet), None when the text shows no start) and
    ``driver_mismatch`` (``{fm_version, driver_version}`` or None).  Lines that are not log lines
    (continuations of multi-line messages, a cut first line) are skipped.
    """
    summary = {'version': None, 'starts': 0, 'levels': {}, 'nvswitch_errors': [], 'last_error': None,
               'configured': None, 'driver_mismatch': None}
    seen = set()
    for line in (text or '').splitlines():
        entry = parse_log_line(line)
        if entry is None:
            continue
        level = entry['level']
        summary['levels'][level] = summary['levels'].get(level, 0) + 1
        msg = entry['message']
        m = _RUNNING_RE.search(msg)
        if m:
            summary['version'] = m.group(1)
            summary['starts'] += 1
            summary['configured'] = False  # until this start logs its success line
        if _CONFIGURED_RE.search(msg):
            summary['configured'] = True
        elif _CONFIGURE_FAILED_RE.search(msg):
            summary['configured'] = False
        m = _MISMATCH_RE.search(msg)
        if m:
            summary['driver_mismatch'] = {'fm_version': m.group('fm'), 'driver_version': m.group('driver')}
        m = _NVSWITCH_ERR_RE.search(msg)
        if m:
            key = (entry['time'], m.group('code'), m.group('pci'), m.group('port'))
            if key not in seen:
                seen.add(key)
                summary['nvswitch_errors'].append({
                    'time': entry['time'], 'kind': m.group('kind'), 'code': int(m.group('code')),
                    'pci_bus_id': m.group('pci'), 'physical_id': int(m.group('physical_id')),
                    'port': int(m.group('port')),
                })
        if level in ('ERROR', 'FATAL'):
            summary['last_error'] = '[%s] %s' % (entry['time'], msg)
    return summary


def parse_journal(text):
    """Known fabric manager start-up failures in journal/syslog lines.

    Returns ``{'nothing_to_do': bool, 'failed': bool, 'driver_mismatch': None | {fm_version,
    driver_version}, 'pre_nvl5': bool, 'configured': bool}``; ``configured`` is True when the lines
    hold ``Successfully configured all the available GPUs and NVSwitches`` after the last start
    attempt.  Timestamps are ignored (they may be localised).
    """
    text = text or ''
    mismatch = _MISMATCH_RE.search(text)
    starts = [m.start() for m in _JOURNAL_START_RE.finditer(text)]
    last_start = starts[-1] if starts else 0
    return {
        'configured': bool(_CONFIGURED_RE.search(text[last_start:])),
        'nothing_to_do': 'NV_WARN_NOTHING_TO_DO' in text,
        'failed': bool(re.search(r'status=\d+/FAILURE|failed! Exit code|Failed with result|'
                                 r'Failed to start NVIDIA fabric manager|Failed to configure all the available GPUs',
                                 text)),
        'pre_nvl5': 'Detected Pre-NVL5 system' in text,
        'driver_mismatch': {'fm_version': mismatch.group('fm'), 'driver_version': mismatch.group('driver')}
        if mismatch else None,
    }
