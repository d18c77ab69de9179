# -*- coding: utf-8 -*-
"""ibdiagnet db_csv parser and the switch firmware consistency check, on the HAND-MADE db_csv (no recorded
ibdiagnet2.db_csv under a licence we may copy was found) and cut/garbled copies of it."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.gpufleet.cluster.plugins.module_utils import ibdiagnet

DB = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made' / 'fabric' / 'ibdiagnet2-db_csv-fw-mixed-HANDMADE.db_csv'


def test_tables_by_column_name():
    tables = ibdiagnet.parse_db_csv(DB.read_text())
    assert sorted(tables) == ['NODES', 'NODES_INFO']
    assert tables['NODES'][0]['NodeDesc'] == 'MF0;leaf01:MQM9700/U1' and tables['NODES'][0]['NodeType'] == '2'
    assert len(tables['NODES_INFO']) == 5 and tables['NODES_INFO'][2]['FWInfo_SubMinor'] == '0x03e8'


def test_switch_firmware_and_the_odd_one_out():
    sws = ibdiagnet.switches(ibdiagnet.parse_db_csv(DB.read_text()))
    assert [(s['desc'], s['psid'], s['fw']) for s in sws] == [
        ('MF0;leaf01:MQM9700/U1', 'MT_0000000838', '31.2012.1092'),
        ('MF0;leaf02:MQM9700/U1', 'MT_0000000838', '31.2012.1092'),
        ('MF0;leaf03:MQM9700/U1', 'MT_0000000838', '31.2012.1000'),
        ('MF0;spine01:MQM9790/U1', 'MT_0000000839', '31.2012.1092')]
    assert sws[0]['guid'] == '0xfc6a1c0300a1b200' and sws[0]['device_id'] == 0xd2f2
    fw = ibdiagnet.firmware_consistency(sws)
    assert fw['problems'] == ['switch firmware differs within MT_0000000838: 31.2012.1092 on 2 switch(es), '
                              '31.2012.1000 on 1 switch(es) (MF0;leaf03:MQM9700/U1)']
    assert fw['groups']['MT_0000000839'] == {'31.2012.1092': ['MF0;spine01:MQM9790/U1']}
    fw = ibdiagnet.firmware_consistency(sws, expect='31.2012.1092')
    assert fw['problems'][1] == 'MT_0000000838: firmware 31.2012.1000 on 1 switch(es) (MF0;leaf03:MQM9700/U1), ' \
                                'expected 31.2012.1092'


def test_consistent_when_one_version_per_model():
    sws = [s for s in ibdiagnet.switches(ibdiagnet.parse_db_csv(DB.read_text())) if 'leaf03' not in s['desc']]
    assert ibdiagnet.firmware_consistency(sws)['problems'] == []


def test_missing_info_row_is_named_not_passed():
    text = DB.read_text()
    cut = text[:text.index('0xfc6a1c0300c1d000,0xd2f2')]  # NODES_INFO cut before the spine's row, no END line
    tables = ibdiagnet.parse_db_csv(cut)
    assert tables['_unterminated'] == ['NODES_INFO']
    fw = ibdiagnet.firmware_consistency(ibdiagnet.switches(tables))
    assert fw['unknown'] == ['MF0;spine01:MQM9790/U1']
    assert fw['problems'][-1] == ('no firmware version for 1 switch(es) (MF0;spine01:MQM9790/U1): ibdiagnet NODES_INFO '
                                  'has none')


def test_garbage_never_raises():
    for text in ('', None, 'START_NODES\n', 'START_NODES\n\x00\xff,,,\nEND_NODES\n', DB.read_text()[:200],
                 'START_NODES_INFO\nNodeGUID,FWInfo_Major\nnot-a-guid,zz\nEND_NODES_INFO\n'):
        tables = ibdiagnet.parse_db_csv(text)
        ibdiagnet.firmware_consistency(ibdiagnet.switches(tables))
