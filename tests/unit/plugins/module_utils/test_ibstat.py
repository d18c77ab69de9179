# -*- coding: utf-8 -*-
"""ibstat/ibstatus parsers against the recorded outputs of the corpus; their port keys and value
spellings must match the sysfs facts so checks can use either source."""

from __future__ import annotations


import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import ibstat, sysfs_ib

IBSTAT = {
    # file: (CA count, {ca: (fw_ver, hca_type, {port: (state, phys_state, rate_gbps, link_layer, lid, sm_lid)})})
    'gpud-a100-9xMT4126-8ib-1eth.txt': (9, {
        'mlx5_0': ('22.35.2302', 'MT4126', {'1': ('ACTIVE', 'LinkUp', 200, 'Ethernet', 0, 0)}),
        'mlx5_1': ('28.37.1014', 'MT4126', {'1': ('ACTIVE', 'LinkUp', 200, 'InfiniBand', 1369, 83)}),
    }),
    'gpud-h100-12ca-roce-all-eth.txt': (12, {
        'mlx5_0': ('28.39.1002', 'MT4129', {'1': ('ACTIVE', 'LinkUp', 400, 'Ethernet', 0, 0)}),
        'mlx5_1': ('22.39.1002', 'MT4125', {'1': ('ACTIVE', 'LinkUp', 100, 'Ethernet', 0, 0)}),
    }),
    'gpud-h100-8xCX7-ib400-plus-bf3-eth.txt': (9, {
        'mlx5_0': ('28.41.1000', 'MT4129', {'1': ('ACTIVE', 'LinkUp', 400, 'InfiniBand', 128, 1)}),
        'mlx5_1': ('28.41.1000', 'MT4129', {'1': ('ACTIVE', 'LinkUp', 400, 'InfiniBand', 534, 1)}),
    }),
    'heioy-ibstat-ca-port-form.txt': (1, {
        'mlx4_0': (None, None, {'2': ('ACTIVE', 'LinkUp', 56, 'InfiniBand', 12, 9)}),
    }),
}


@pytest.mark.parametrize('name', sorted(IBSTAT))
def test_ibstat(corpus_file, name):
    cas = ibstat.parse_ibstat(corpus_file('ibstat/' + name).read_text())
    count, expected = IBSTAT[name]
    assert len(cas) == count
    for ca, (fw, hca_type, ports) in expected.items():
        assert cas[ca].get('fw_ver') == fw and cas[ca].get('hca_type') == hca_type
        for num, (state, phys, rate, layer, lid, sm_lid) in ports.items():
            port = cas[ca]['ports'][num]
            assert (port['state'], port['phys_state'], port['rate_gbps'], port['link_layer']) == (state, phys, rate, layer)
            assert (port['lid'], port['sm_lid']) == (lid, sm_lid)


@pytest.mark.parametrize('name, phys', [
    ('gpud-h100-12ca-roce-2down.txt', {'mlx5_11': 'Disabled', 'mlx5_5': 'Disabled'}),
    ('gpud-h100-12ca-roce-down-polling.txt', {'mlx5_11': 'Polling', 'mlx5_5': 'Disabled'}),
])
def test_ibstat_down_ports(corpus_file, name, phys):
    cas = ibstat.parse_ibstat(corpus_file('ibstat/' + name).read_text())
    down = dict((ca, d['ports']['1']) for ca, d in cas.items() if d['ports']['1']['state'] != 'ACTIVE')
    assert dict((ca, p['phys_state']) for ca, p in down.items()) == phys
    assert all(p['state'] == 'DOWN' and p['rate_gbps'] == 40 for p in down.values())


def test_ibstat_short(corpus_file):
    cas = ibstat.parse_ibstat(corpus_file('ibstat/heioy-ibstat-s-short.txt').read_text())
    assert sorted(cas) == ['mlx4_0', 'mlx4_1']
    assert cas['mlx4_1'] == {'ports': {}, 'node_type': 'CA', 'hca_type': 'MT4099', 'num_ports': 2, 'fw_ver': '2.42.5000',
                             'hw_rev': '1', 'node_guid': '0xf45214030033b850',
                             'sys_image_guid': '0xf45214030033b853'}


def test_ibstatus_azure(corpus_file):
    cas = ibstat.parse_ibstatus(corpus_file('ibstat/gpud-ibstatus-8xCX6-azure-hdr200.txt').read_text())
    assert len(cas) == 9
    port = cas['mlx5_0']['ports']['1']
    assert port == {'gid0': 'fe80:0000:0000:0000:0015:5dff:fd34:11eb', 'lid': 0x33bf, 'sm_lid': 1,
                    'state': 'ACTIVE', 'state_num': 4, 'phys_state': 'LinkUp', 'phys_state_num': 5,
                    'rate': '200 Gb/sec (4X HDR)', 'rate_gbps': 200, 'width': '4X', 'speed': 'HDR',
                    'link_layer': 'InfiniBand'}
    assert cas['mlx5_1']['ports']['1']['lid'] == 0x33be


def test_ibstatus_mlx4_fdr_tabs(corpus_file):
    cas = ibstat.parse_ibstatus(corpus_file('ibstat/heioy-ibstatus-mlx4-fdr.txt').read_text())
    ports = cas['mlx4_0']['ports']
    assert sorted(ports) == ['1', '2']
    assert ports['1']['rate_gbps'] == 56 and ports['1']['speed'] == 'FDR'
    assert (ports['1']['lid'], ports['2']['lid'], ports['2']['sm_lid']) == (3, 2, 2)


def test_same_keys_as_sysfs(corpus, corpus_file):
    """ibstatus port keys are a subset of what sysfs_ib reports for a recorded port (same naming)."""
    sysfs_port = sysfs_ib.collect(str(corpus / 'sysfs_infiniband/procfs/fixtures'))['mlx4_0']['ports']['1']
    status_port = ibstat.parse_ibstatus(
        corpus_file('ibstat/heioy-ibstatus-mlx4-fdr.txt').read_text())['mlx4_0']['ports']['1']
    shared = set(status_port) & set(sysfs_port)
    assert {'state', 'state_num', 'phys_state', 'phys_state_num', 'rate', 'rate_gbps', 'width', 'speed',
            'link_layer'} <= shared
    for key in ('state', 'phys_state', 'link_layer', 'width'):
        assert status_port[key] == sysfs_port[key]


@pytest.mark.parametrize('text, expected', [
    ('0x58a2e10300a7820e', '58a2e10300a7820e'), ('0a7f:bc12:45ef:d23b', '0a7fbc1245efd23b'), ('', None),
])
def test_normalize_guid(text, expected):
    assert ibstat.normalize_guid(text) == expected


# HANDMADE (not recordings): layouts that infiniband-diags' ibstat.c (linux-rdma/rdma-core,
# infiniband-diags/ibstat.c at 1d07d99b) prints but the corpus has no recording of.
# - iWARP devices are headed "iWARP RNIC '<name>'" / "iWARP RNIC type:" (node_type_str), e.g. the
#   i40iw0 device of the corpus' node_exporter sysfs tree; states/rates below follow that tree.
# - Omni-Path hfi1 leaves "CA type:" empty (umad ca_type from an absent hca_type file, as in the
#   corpus' procfs hfi1_0 sysfs tree, fw 1.27.0).
# - FDR10 ports print "Rate: 40 (FDR10)"; unknown states print "???"; phys state 7 is "PhyTest".
HANDMADE_IWARP_HFI1 = """iWARP RNIC 'i40iw0'
\tiWARP RNIC type:\x20
\tNumber of ports: 1
\tFirmware version: 0.2
\tHardware version: 0
\tNode GUID: 0x3cfdfe0000000000
\tSystem image GUID: 0x3cfdfe0000000000
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 10
\t\tBase lid: 0
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0x00000000
\t\tPort GUID: 0x3cfdfe0000000000
\t\tLink layer: Ethernet
CA 'hfi1_0'
\tCA type:\x20
\tNumber of ports: 1
\tFirmware version: 1.27.0
\tHardware version: 10
\tNode GUID: 0x0011750101000001
\tSystem image GUID: 0x0011750101000001
\tPort 1:
\t\tState: Armed
\t\tPhysical state: LinkUp
\t\tRate: 100
\t\tBase lid: 1
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0x00410022
\t\tPort GUID: 0x0011750101000001
\t\tLink layer: InfiniBand
CA 'mlx4_0'
\tCA type: MT4099
\tNumber of ports: 2
\tFirmware version: 2.42.5000
\tHardware version: 1
\tNode GUID: 0xf452140300000000
\tSystem image GUID: 0xf452140300000003
\tPort 1:
\t\tState: Initializing
\t\tPhysical state: LinkUp
\t\tRate: 40 (FDR10)
\t\tBase lid: 0
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0x02514868
\t\tPort GUID: 0xf452140300000001
\t\tLink layer: InfiniBand
\tPort 2:
\t\tState: ???
\t\tPhysical state: PhyTest
\t\tRate: 2.5
\t\tBase lid: 0
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0x02514868
\t\tPort GUID: 0xf452140300000002
\t\tLink layer: InfiniBand
"""


def test_handmade_iwarp_hfi1_fdr10():
    cas = ibstat.parse_ibstat(HANDMADE_IWARP_HFI1)
    assert sorted(cas) == ['hfi1_0', 'i40iw0', 'mlx4_0']
    iw = cas['i40iw0']
    assert (iw['node_type'], iw['hca_type'], iw['fw_ver']) == ('iWARP RNIC', None, '0.2')
    assert iw['ports']['1']['link_layer'] == 'Ethernet' and iw['ports']['1']['rate_gbps'] == 10
    hfi = cas['hfi1_0']
    assert hfi['hca_type'] is None and hfi['fw_ver'] == '1.27.0'
    assert hfi['ports']['1']['state'] == 'ARMED' and hfi['ports']['1']['rate_gbps'] == 100
    mlx = cas['mlx4_0']['ports']
    assert mlx['1']['state'] == 'INIT' and mlx['1']['rate_gbps'] == 40 and mlx['1']['rate'] == '40 (FDR10)'
    assert mlx['2']['state'] is None and mlx['2']['phys_state'] == 'Phy Test' and mlx['2']['rate_gbps'] == 2.5


@pytest.mark.parametrize('text', [
    # what ibstat prints instead of a report (IBPANIC in ibstat.c); HANDMADE from the format string
    "ibpanic: [12345] main: can't list IB device names: No such file or directory\n",
    "ibpanic: [12345] main: 'mlx5_9' IB device can't be found\n",
    '', None,
])
def test_no_report_gives_no_ca(text):
    assert ibstat.parse_ibstat(text) == {}
    assert ibstat.parse_ibstatus(text) == {}


STATES = (None, 'ACTIVE', 'DOWN', 'INIT', 'ARMED')


def test_damaged_recordings_never_crash(corpus, damaged):
    """Every ibstat/ibstatus recording cut at many points and garbled: a dict back, never an exception;
    what is missing is absent and what is present has a known spelling or is None."""
    files = sorted((corpus / 'ibstat').glob('*.txt')) + [None]
    for path in files:
        text = path.read_text() if path else HANDMADE_IWARP_HFI1
        for variant in damaged(text):
            for parse in (ibstat.parse_ibstat, ibstat.parse_ibstatus):
                cas = parse(variant)
                assert isinstance(cas, dict)
                for ca in cas.values():
                    for port in ca['ports'].values():
                        assert port.get('rate_gbps') is None or isinstance(port['rate_gbps'], (int, float))
                        assert port.get('lid') is None or isinstance(port['lid'], int)
                        if parse is ibstat.parse_ibstat and port.get('state') in STATES[1:]:
                            assert port['state'] in STATES
