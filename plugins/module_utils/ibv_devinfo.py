# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ibv_devinfo`` text: per port state, link layer and the active/max IB MTU,
which sysfs does not show. Pure standard library, importable without Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_MTU_RE = re.compile(r'^\s*(\d+)')


def parse_ibv_devinfo(text):
    """Ports of ``ibv_devinfo`` output: ``{hca: {port: {state, max_mtu, active_mtu, link_layer}}}``.

    MTUs are ints (``4096 (5)`` -> 4096); the IB MTU is only shown by verbs, not by sysfs.
    """
    result = {}
    hca = port = None
    for raw in (text or '').splitlines():
        line = raw.strip()
        if not line or ':' not in line:
            continue
        key, dummy, value = line.partition(':')
        key, value = key.strip(), value.strip()
        if key == 'hca_id':
            hca = value
            port = None
            result.setdefault(hca, {})
        elif key == 'port' and hca is not None:
            port = value
            result[hca].setdefault(port, {})
        elif hca is not None and port is not None:
            if key in ('max_mtu', 'active_mtu'):
                m = _MTU_RE.match(value)
                result[hca][port][key] = int(m.group(1)) if m else None
            elif key == 'state':
                result[hca][port]['state'] = value.split()[0] if value else None
            elif key == 'link_layer':
                result[hca][port]['link_layer'] = value
    return result
