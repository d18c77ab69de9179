# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for the text the ``infiniband-diags`` tools print: ``sminfo``, ``ibswitches`` and ``iblinkinfo``
(one line per port, ``-l``), plus the fabric-wide checks built on them (links below the speed or width both
ends could run, a port that is down).

Pure functions over text: no process is started here (the modules run the tools through ``_runner``).
Lines that do not match the layout (``ibwarn:`` noise, prompts, cut lines) are returned in ``unparsed`` and
never guessed at.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

SM_STATES = {0: 'NOTACTIVE', 1: 'DISCOVERING', 2: 'STANDBY', 3: 'MASTER'}

# sminfo.c: "sminfo: sm lid %d sm guid 0x%llx, activity count %u priority %d state %d %s"
_SMINFO_RE = re.compile(
    r'sminfo:\s+sm\s+lid\s+(?P<lid>\d+)\s+sm\s+guid\s+(?P<guid>0x[0-9a-fA-F]+),?\s+activity\s+count\s+(?P<act>\d+)'
    r'\s+priority\s+(?P<prio>\d+)\s+state\s+(?P<state>\d+)(?:\s+(?P<name>\S+))?')


def parse_sminfo(text):
    """``sminfo`` output -> ``{'sm_lid', 'sm_guid', 'activity_count', 'priority', 'state_num', 'state'}`` or None
    when no SMInfo line is found. A line wrapped after ``priority N`` (as mail archives show it) is joined first;
    ``state`` is the number's name (``MASTER``, ``STANDBY``, ...), not the tool's spelling (``SMINFO_MASTER``)."""
    flat = ' '.join((text or '').split())
    m = _SMINFO_RE.search(flat)
    if not m:
        return None
    state = int(m.group('state'))
    return dict(sm_lid=int(m.group('lid')), sm_guid=m.group('guid').lower(), activity_count=int(m.group('act')),
                priority=int(m.group('prio')), state_num=state, state=SM_STATES.get(state, 'UNKNOWN(%d)' % state))


# ibswitches: 'Switch\t: 0x0002c90200482d08 ports 36 "desc" base port 0 lid 3 lmc 0'
# (older releases: 'enhanced port 0 lid ...'; a switch without an SM-assigned LID has no 'lid' words).
_SWITCH_RE = re.compile(
    r'^\s*Switch\s*:\s*(?P<guid>0x[0-9a-fA-F]+)\s+ports\s+(?P<ports>\d+)\s+"(?P<desc>.*)"'
    r'\s+(?P<kind>base|enhanced)\s+port\s+0(?:\s+lid\s+(?P<lid>\d+))?(?:\s+lmc\s+(?P<lmc>\d+))?\s*$')


def parse_ibswitches(text):
    """``ibswitches`` -> ``{'switches': [{guid, ports, desc, enhanced, lid, lmc}], 'unparsed': [lines]}``."""
    switches, unparsed = [], []
    for raw in (text or '').splitlines():
        if not raw.strip():
            continue
        m = _SWITCH_RE.match(raw)
        if not m:
            unparsed.append(raw)
            continue
        switches.append(dict(guid=m.group('guid').lower(), ports=int(m.group('ports')), desc=m.group('desc').strip(),
                             enhanced=m.group('kind') == 'enhanced',
                             lid=int(m.group('lid')) if m.group('lid') is not None else None,
                             lmc=int(m.group('lmc')) if m.group('lmc') is not None else None))
    return dict(switches=switches, unparsed=unparsed)


# iblinkinfo -l, one line per port (iblinkinfo.c print_port, with -l the node GUID and description first):
#   0x... "   desc"      4    1[  ] ==( 4X   2.5 Gbps Active/  LinkUp)==>  0x...  5    1[  ] "peer" ( )
#   0x... "   desc"      4    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )
_LINK_RE = re.compile(
    r'^\s*(?P<guid>0x[0-9a-fA-F]+)\s+"(?P<desc>[^"]*)"\s+(?P<lid>\d+)\s+(?P<port>\d+)\[(?P<ext>[^\]]*)\]\s+'
    r'==\(\s*(?P<inner>.*?)\s*\)==>\s*(?P<rest>.*)$')
_INNER_RE = re.compile(
    r'^(?:(?P<width>\d+X)\s+(?P<speed>[0-9.]+)\s+Gbps(?:\s+\S+)?\s+)?(?P<state>[A-Za-z]+)/\s*(?P<phys>[A-Za-z ]+?)$')
_PEER_RE = re.compile(
    r'^(?:(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?(?P<lid>\d+)\s+(?P<port>\d+))?\s*\[(?P<ext>[^\]]*)\]\s+"(?P<desc>[^"]*)"'
    r'\s*(?:\((?P<note>.*)\))?\s*$|^"Port not available"\s*$')
_COULD_BE_RE = re.compile(r'Could be\s+(.+?)(?=\s+Could be\s|\s*$)')


def _num(text):
    value = float(text)
    return int(value) if value.is_integer() else value


def parse_iblinkinfo(text):
    """``iblinkinfo -l`` (one line per port) -> ``{'links': [...], 'unparsed': [lines]}``.

    Each link: ``node_guid``, ``node_desc``, ``lid``, ``port``, ``width`` (``4X``), ``speed_gbps`` (per lane, as
    printed), ``state`` (``Active``/``Down``/...), ``phys_state`` (``LinkUp``/``Polling``/...), ``peer`` (dict with
    ``guid``, ``lid``, ``port``, ``desc``; None for an unconnected port) and ``could_be`` (the list of what iblinkinfo
    says both ends could run: ``['12X', '10.0 Gbps']``; empty when the link runs at what both ends enable)."""
    links, unparsed = [], []
    for raw in (text or '').splitlines():
        if not raw.strip():
            continue
        m = _LINK_RE.match(raw)
        inner = _INNER_RE.match(m.group('inner')) if m else None
        peer = _PEER_RE.match(m.group('rest')) if m else None
        if not (m and inner and peer):
            unparsed.append(raw)
            continue
        note = peer.group('note') or ''
        link = dict(node_guid=m.group('guid').lower(), node_desc=m.group('desc').strip(), lid=int(m.group('lid')),
                    port=int(m.group('port')), width=inner.group('width'),
                    speed_gbps=_num(inner.group('speed')) if inner.group('speed') else None,
                    state=inner.group('state'), phys_state=inner.group('phys').strip(),
                    could_be=[' '.join(c.split()) for c in _COULD_BE_RE.findall(note)], note=note.strip() or None,
                    peer=None)
        if peer.group('port'):
            link['peer'] = dict(guid=(peer.group('guid') or '').lower() or None, lid=int(peer.group('lid')),
                                port=int(peer.group('port')), desc=peer.group('desc').strip())
        links.append(link)
    return dict(links=links, unparsed=unparsed)


def _width_num(width):
    try:
        return int(str(width).upper().rstrip('X'))
    except (TypeError, ValueError):
        return None


def links_below(links, min_width=None, min_lane_gbps=None):
    """Active links running below what they should: iblinkinfo's own ``Could be ...`` (both ends enable more), a
    width below ``min_width`` (``4X``) or a per-lane speed below ``min_lane_gbps``. One entry per link (the two ends
    of a cable count once, keyed by the lower GUID/port), each ``{'node_desc', 'node_guid', 'port', 'peer_desc',
    'peer_port', 'width', 'speed_gbps', 'reasons': [...]}``."""
    seen, out = set(), []
    want_width = _width_num(min_width) if min_width else None
    for link in links:
        if link['state'] != 'Active':
            continue
        peer = link['peer'] or {}
        key = tuple(sorted([(link['node_guid'], link['port']), (peer.get('guid', ''), peer.get('port', 0))]))
        if key in seen:
            continue
        reasons = ['could be %s' % c for c in link['could_be']]
        width = _width_num(link['width'])
        if want_width and width is not None and width < want_width:
            reasons.append('width %s below %s' % (link['width'], min_width))
        if min_lane_gbps is not None and link['speed_gbps'] is not None and link['speed_gbps'] < min_lane_gbps:
            reasons.append('lane speed %s Gbps below %s Gbps' % (link['speed_gbps'], min_lane_gbps))
        if reasons:
            seen.add(key)
            out.append(dict(node_desc=link['node_desc'], node_guid=link['node_guid'], port=link['port'],
                            peer_desc=peer.get('desc'), peer_port=peer.get('port'), width=link['width'],
                            speed_gbps=link['speed_gbps'], reasons=reasons))
    return out


def ports_down(links):
    """Ports of ``links`` that are connected (a peer is known) but not Active: ``[{node_desc, port, state,
    phys_state, peer_desc}]``. An unconnected port (no peer) is not listed: iblinkinfo shows every switch port."""
    return [dict(node_desc=l['node_desc'], node_guid=l['node_guid'], port=l['port'], state=l['state'],
                 phys_state=l['phys_state'], peer_desc=l['peer']['desc'])
            for l in links if l['peer'] and l['state'] != 'Active']
