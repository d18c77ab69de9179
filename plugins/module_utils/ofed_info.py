# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ofed_info -s`` (MLNX_OFED and DOCA-OFED).  Pure standard-library functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# "MLNX_OFED_LINUX-5.8-1.0.1.1:"  /  "OFED-internal-24.10-1.1.4:" (DOCA)
_OFED_RE = re.compile(r'^(?P<name>[A-Za-z][A-Za-z_-]*?)-(?P<version>\d+\.\d+[-.0-9A-Za-z]*?):?\s*$')


def parse_ofed_info_short(text):
    """Parse ``ofed_info -s``; returns ``{'raw', 'distribution', 'version', 'flavor'}`` or None.

    ``flavor`` is ``MLNX_OFED`` for MLNX_OFED_LINUX, ``DOCA`` for the DOCA-OFED ``OFED-internal``
    name, otherwise the distribution name.
    """
    for line in (text or '').splitlines():
        line = line.strip()
        if not line:
            continue
        m = _OFED_RE.match(line)
        if not m:
            continue
        name = m.group('name')
        if name.upper().startswith('MLNX_OFED'):
            flavor = 'MLNX_OFED'
        elif name.lower() == 'ofed-internal' or name.upper().startswith('DOCA'):
            flavor = 'DOCA'
        else:
            flavor = name
        return {'raw': line.rstrip(':'), 'distribution': name, 'version': m.group('version'), 'flavor': flavor}
    return None
