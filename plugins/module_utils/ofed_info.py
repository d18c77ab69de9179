# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ofed_info -s`` (MLNX_OFED and DOCA-OFED).  Pure standard-library functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# "MLNX_OFED_LINUX-5.8-1.0.1.1:"  /  "OFED-internal-24.10-1.1.4:" (DOCA).  roles/rdma_stack reads ofed_info
# through the gpufleet.cluster.ofed_info_version filter, which calls this parser.
_OFED_RE = re.compile(r'^(?P<name>[A-Za-z][A-Za-z_-]*?)-(?P<version>\d+\.\d+[-.0-9A-Za-z]*?):?\s*$')
# The first line of a plain ``ofed_info``: "MLNX_OFED_LINUX-23.04-1.1.3.0 (OFED-23.04-1.1.3):".
_LONG_RE = re.compile(r'^(?P<name>[A-Za-z][A-Za-z_-]*?)-(?P<version>\d+\.\d+[-.0-9A-Za-z]*?)'
                      r'\s+\((?P<base>OFED-[^)\s]+)\):\s*$')
# Distribution names ofed_info prints.  Anything else matching NAME-VERSION (the package lines further
# down a full ofed_info, "mlnx-ofa_kernel-5.8-OFED.5.8.1.0.1.1...") is not the OFED version.
_KNOWN_NAME_RE = re.compile(r'^(?:MLNX_OFED_LINUX|MLNX_OFED|MLNX_EN_LINUX|MLNX_EN|OFED-internal|OFED|DOCA[-_A-Za-z]*)$')
_BARE_VERSION_RE = re.compile(r'^\d+\.\d+-\d+(?:\.[0-9A-Za-z]+)+$')


def parse_ofed_info_short(text):
    """Parse ``ofed_info -s`` (or the first line of plain ``ofed_info``); returns ``{'raw',
    'distribution', 'version', 'flavor'}`` (plus ``base``, the upstream OFED release, when the line
    names it) or None when no OFED version line is found.

    ``flavor`` is ``MLNX_OFED`` for MLNX_OFED_LINUX, ``DOCA`` for the DOCA-OFED ``OFED-internal``
    name, ``MLNX_EN`` for mlnx-en, otherwise the distribution name.  ``ofed_info -n`` (a bare
    ``5.8-1.0.1.1``) gives distribution and flavor None.
    """
    lines = [line.strip() for line in (text or '').splitlines() if line.strip()]
    for line in lines:
        m = _OFED_RE.match(line) or _LONG_RE.match(line)
        # every name line ends with ':'; a line without it may be cut inside the version
        if not m or not line.endswith(':') or not _KNOWN_NAME_RE.match(m.group('name')):
            continue
        name = m.group('name')
        if name.upper().startswith('MLNX_OFED'):
            flavor = 'MLNX_OFED'
        elif name.upper().startswith('MLNX_EN'):
            flavor = 'MLNX_EN'
        elif name.lower() == 'ofed-internal' or name.upper().startswith('DOCA'):
            flavor = 'DOCA'
        else:
            flavor = name
        raw = line.rstrip(':').strip()
        result = {'raw': raw, 'distribution': name, 'version': m.group('version'), 'flavor': flavor}
        if 'base' in m.groupdict() and m.group('base'):
            result['base'] = m.group('base')
        return result
    if len(lines) == 1 and _BARE_VERSION_RE.match(lines[0]):
        return {'raw': lines[0], 'distribution': None, 'version': lines[0], 'flavor': None}
    return None
