# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ibdiagnet2.db_csv`` (ibdiagnet of NVIDIA's MFT/UFM tools) and the switch firmware consistency check
built on it.

The file is a set of tables, each ``START_<NAME>``, a header line of column names, data lines, ``END_<NAME>``.
Columns are read by name, never by position (the column set grows between ibdiagnet releases). Pure functions over
text; nothing here runs ibdiagnet.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import re

_START_RE = re.compile(r'^START_([A-Z0-9_]+)\s*$')

# NodeType of the NODES table (IBTA NodeInfo): 1 CA, 2 switch, 3 router.
NODE_TYPES = {'1': 'CA', '2': 'Switch', '3': 'Router'}


def parse_db_csv(text):
    """``{table: [row dicts]}`` of every ``START_X`` ... ``END_X`` table; a table cut short (no ``END_X``) is kept
    with the rows read and listed in ``'_unterminated'``."""
    tables, unterminated = {}, []
    name, header = None, None
    for raw in (text or '').splitlines():
        line = raw.strip()
        if name is None:
            m = _START_RE.match(line)
            if m:
                name, header = m.group(1), None
                tables[name] = []
            continue
        if line == 'END_' + name:
            name = None
            continue
        if not line:
            continue
        cells = next(csv.reader([line], skipinitialspace=True))
        if header is None:
            header = [c.strip() for c in cells]
            continue
        tables[name].append(dict(zip(header, [c.strip() for c in cells])))
    if name is not None:
        unterminated.append(name)
    if unterminated:
        tables['_unterminated'] = unterminated
    return tables


def _int(text):
    try:
        return int(str(text).strip(), 0)
    except (TypeError, ValueError):
        return None


def _guid(text):
    value = _int(text)
    return '0x%016x' % value if value is not None else (text or '').strip().lower()


def switches(tables):
    """Switches of the NODES table joined with their NODES_INFO firmware: ``[{guid, desc, device_id, psid, fw}]``,
    ``fw`` ``'major.minor.subminor'`` in decimal (None when NODES_INFO has no row or no version for the switch)."""
    info = {}
    for row in tables.get('NODES_INFO', []):
        info[_guid(row.get('NodeGUID') or row.get('NodeGuid'))] = row
    out = []
    for row in tables.get('NODES', []):
        if NODE_TYPES.get((row.get('NodeType') or '').strip()) != 'Switch':
            continue
        guid = _guid(row.get('NodeGUID') or row.get('NodeGuid'))
        fw_row = info.get(guid, {})
        parts = [_int(fw_row.get(k)) for k in ('FWInfo_Major', 'FWInfo_Minor', 'FWInfo_SubMinor')]
        fw = '.'.join(str(p) for p in parts) if all(p is not None for p in parts) else None
        out.append(dict(guid=guid, desc=(row.get('NodeDesc') or '').strip(),
                        device_id=_int(fw_row.get('HWInfo_DeviceID')) if fw_row.get('HWInfo_DeviceID') else None,
                        psid=(fw_row.get('FWInfo_PSID') or '').strip() or None, fw=fw))
    return out


def firmware_consistency(switch_list, expect=None):
    """Switch firmware per model: switches are grouped by PSID (one board/model; different models rightly run
    different firmware) and each group must run one version, ``expect`` when given. Returns ``{'groups': {psid:
    {fw: [switch desc or guid, ...]}}, 'problems': [messages], 'unknown': [switches without a version]}``."""
    groups, problems, unknown = {}, [], []
    for sw in switch_list:
        name = sw['desc'] or sw['guid']
        if not sw['fw']:
            unknown.append(name)
            continue
        groups.setdefault(sw['psid'] or 'unknown PSID', {}).setdefault(sw['fw'], []).append(name)
    for psid in sorted(groups):
        versions = groups[psid]
        if len(versions) > 1:
            ranked = sorted(versions.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            problems.append('switch firmware differs within %s: %s' % (psid, ', '.join(
                '%s on %d switch(es)%s' % (fw, len(names), '' if i == 0 else ' (%s)' % ', '.join(sorted(names)))
                for i, (fw, names) in enumerate(ranked))))
        if expect:
            for fw, names in sorted(versions.items()):
                if fw != expect:
                    problems.append('%s: firmware %s on %d switch(es) (%s), expected %s'
                                    % (psid, fw, len(names), ', '.join(sorted(names)), expect))
    if unknown:
        problems.append('no firmware version for %d switch(es) (%s): ibdiagnet NODES_INFO has none'
                        % (len(unknown), ', '.join(sorted(unknown))))
    return dict(groups=groups, problems=problems, unknown=unknown)
