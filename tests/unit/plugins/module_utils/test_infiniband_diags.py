# -*- coding: utf-8 -*-
"""infiniband_diags parsers on output RECORDED HERE from Debian's infiniband-diags and opensm on an ibsim-simulated
fabric (tests/unit/fixtures/ibsim, README there), plus hand-made edge cases named as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import infiniband_diags as diags

IBSIM = Path(__file__).resolve().parents[2] / 'fixtures' / 'ibsim'


def rec(name):
    return (IBSIM / name).read_text()


# --- sminfo ------------------------------------------------------------------------------------------

def test_sminfo_master_recorded():
    assert diags.parse_sminfo(rec('sminfo-master.txt')) == dict(
        sm_lid=3, sm_guid='0x100001', activity_count=157, priority=14, state_num=3, state='MASTER')


def test_sminfo_without_sm_recorded():
    assert (IBSIM / 'sminfo-no-sm.rc').read_text().strip() == 'rc=255'
    assert diags.parse_sminfo(rec('sminfo-no-sm.txt')) is None


@pytest.mark.parametrize('text, state', [
    # HAND-MADE: the line wrapped after "priority N" as mail archives show it, and a standby SM
    ('sminfo: sm lid 2 sm guid 0x2c90200259201, activity count 6881 priority 0\nstate 3 SMINFO_MASTER\n', 'MASTER'),
    ('sminfo: sm lid 9 sm guid 0x248a0703009c0196, activity count 12 priority 1 state 2 SMINFO_STANDBY', 'STANDBY'),
    ('sminfo: sm lid 9 sm guid 0x1, activity count 12 priority 1 state 7 SMINFO_UNKNOWN', 'UNKNOWN(7)'),
])
def test_sminfo_hand_made_layouts(text, state):
    assert diags.parse_sminfo(text)['state'] == state


# --- ibswitches --------------------------------------------------------------------------------------

def test_ibswitches_recorded():
    parsed = diags.parse_ibswitches(rec('ibswitches.txt'))
    assert parsed['unparsed'] == []
    assert parsed['switches'] == [
        dict(guid='0x0000000000200001', ports=36, desc='spine01', enhanced=False, lid=2, lmc=0),
        dict(guid='0x0000000000200000', ports=36, desc='leaf01', enhanced=False, lid=1, lmc=0)]
    assert [s['lid'] for s in diags.parse_ibswitches(rec('ibswitches-no-sm.txt'))['switches']] == [0, 0]


def test_ibswitches_older_enhanced_layout_hand_made():
    # HAND-MADE: the older 'enhanced port 0' wording and a switch the SM gave no LID yet
    text = ('Switch\t: 0x0002c90200482d08 ports 24 "SW-1 ISR9024" enhanced port 0 lid 3 lmc 0\n'
            'Switch\t: 0x0002c90200482d09 ports 36 "MF0;sw:MQM8700/U1" base port 0\nibwarn: noise\n')
    parsed = diags.parse_ibswitches(text)
    assert [(s['desc'], s['enhanced'], s['lid']) for s in parsed['switches']] == [
        ('SW-1 ISR9024', True, 3), ('MF0;sw:MQM8700/U1', False, None)]
    assert parsed['unparsed'] == ['ibwarn: noise']


# --- iblinkinfo -l -----------------------------------------------------------------------------------

def test_iblinkinfo_recorded_every_port_line():
    parsed = diags.parse_iblinkinfo(rec('iblinkinfo-l.txt'))
    assert parsed['unparsed'] == []
    assert len(parsed['links']) == 36 + 36 + 3  # every switch port and the three HCAs
    active = [l for l in parsed['links'] if l['state'] == 'Active']
    assert len(active) == 10
    gpu02 = [l for l in active if l['node_desc'] == 'gpu02 mlx5_0'][0]
    assert gpu02 == dict(node_guid='0x0000000000100003', node_desc='gpu02 mlx5_0', lid=4, port=1, width='1X',
                         speed_gbps=10, state='Active', phys_state='LinkUp', could_be=['12X'], note='Could be 12X',
                         peer=dict(guid='0x0000000000200000', lid=1, port=2, desc='leaf01'))
    down = [l for l in parsed['links'] if l['state'] == 'Down']
    assert down[0]['phys_state'] == 'Polling' and down[0]['peer'] is None and down[0]['width'] is None


def test_links_below_the_profile_width_recorded():
    links = diags.parse_iblinkinfo(rec('iblinkinfo-l.txt'))['links']
    below = diags.links_below(links, min_width='4X')
    # ibsim gives every port 12X support, so every link "could be 12X" (iblinkinfo's own verdict); each cable once
    assert len(below) == 5
    by_end = dict(((b['node_desc'], b['port']), b['reasons']) for b in below)
    assert by_end[('gpu02 mlx5_0', 1)] == ['could be 12X', 'width 1X below 4X']
    assert by_end[('spine01', 1)] == ['could be 12X']
    assert diags.links_below(links, min_lane_gbps=25.78125)[0]['reasons'][-1] == 'lane speed 10 Gbps below 25.78125 Gbps'


def test_no_sm_ports_are_initialize_and_listed_down():
    links = diags.parse_iblinkinfo(rec('iblinkinfo-l-no-sm.txt'))['links']
    down = diags.ports_down(links)
    assert len(down) == 10 and set(d['state'] for d in down) == {'Initialize'}
    assert diags.links_below(links) == []  # only Active links are judged for speed


def test_pulled_cable_recorded():
    links = diags.parse_iblinkinfo(rec('iblinkinfo-l-gpu03-unlinked.txt'))['links']
    assert 'gpu03 mlx5_0' not in [l['node_desc'] for l in links]
    leaf3 = [l for l in links if l['node_desc'] == 'leaf01' and l['port'] == 3][0]
    # a pulled cable looks like an unused port: Down/Polling, no peer - so ports_down cannot name it
    assert (leaf3['state'], leaf3['phys_state'], leaf3['peer']) == ('Down', 'Polling', None)


def test_iblinkinfo_hand_made_variants():
    # HAND-MADE lines in iblinkinfo.c's layout: an NDR HCA with an extended speed, FDR10, "Port not available" and a
    # remote port with both messages
    text = (
        '0x0000000000100001 "                 gpu01 mlx5_0"      3    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>  '
        '0x0000000000200000      1    1[  ] "leaf01" ( )\n'
        '0x0000000000200000 "                        leaf01"      1    7[  ] ==( 4X  10.0 Gbps (FDR10) Active/  LinkUp)==>  '
        '0x0000000000100009      9    1[  ] "old mlx4_0" (Could be 4X Could be 14.0625 Gbps)\n'
        '0x0000000000200000 "                        leaf01"      1    8[  ] ==( 4X          53.125 Gbps Armed/  LinkUp)==>'
        '    "Port not available"\n')
    links = diags.parse_iblinkinfo(text)['links']
    assert [l['speed_gbps'] for l in links] == [106.25, 10, 53.125]
    assert links[1]['could_be'] == ['4X', '14.0625 Gbps']
    assert links[2]['peer'] is None and links[2]['state'] == 'Armed'
    assert diags.links_below(links, min_lane_gbps=106.25)[0]['node_desc'] == 'leaf01'


def test_garbage_is_unparsed_never_raises():
    for text in ('', None, '\x00\xff garbage ==( )==>', rec('iblinkinfo.txt'), rec('ibswitches.txt'),
                 rec('iblinkinfo-l.txt')[:333]):
        diags.parse_iblinkinfo(text)
        diags.parse_ibswitches(text)
        diags.parse_sminfo(text)
    assert diags.parse_iblinkinfo(rec('iblinkinfo.txt'))['links'] == []  # the non-line layout is not guessed at
