# -*- coding: utf-8 -*-
"""sysfs_ib against the recorded sysfs trees of the corpus (prometheus/procfs and
node_exporter fixtures), plus planted faults and hand-made layouts built in tmp_path."""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import sysfs_ib

PROCFS = 'sysfs_infiniband/procfs/fixtures'
NODE_EXPORTER = 'sysfs_infiniband/node_exporter'


# --- pure helpers -------------------------------------------------------------------------------

@pytest.mark.parametrize('text, expected', [
    ('4: ACTIVE', (4, 'ACTIVE')),
    ('5: LinkUp', (5, 'LinkUp')),
    ('1: DOWN', (1, 'DOWN')),
    ('ACTIVE', (None, 'ACTIVE')),
    ('', (None, None)),
    (None, (None, None)),
])
def test_parse_state(text, expected):
    assert sysfs_ib.parse_state(text) == expected


@pytest.mark.parametrize('text, expected', [
    ('100 Gb/sec (4X EDR)', {'rate': '100 Gb/sec (4X EDR)', 'rate_gbps': 100, 'width': '4X', 'speed': 'EDR'}),
    ('25 Gb/sec (1X EDR)', {'rate': '25 Gb/sec (1X EDR)', 'rate_gbps': 25, 'width': '1X', 'speed': 'EDR'}),
    ('10 Gb/sec (4X)', {'rate': '10 Gb/sec (4X)', 'rate_gbps': 10, 'width': '4X'}),
    ('2.5 Gb/sec (1X SDR)', {'rate': '2.5 Gb/sec (1X SDR)', 'rate_gbps': 2.5, 'width': '1X', 'speed': 'SDR'}),
    ('Invalid argument', {'rate': 'Invalid argument'}),
    (None, {}),
])
def test_parse_rate(text, expected):
    assert sysfs_ib.parse_rate(text) == expected


def test_parse_int_hex_and_garbage():
    assert sysfs_ib.parse_int('0x1a', 16) == 26
    assert sysfs_ib.parse_int('N/A (no PMA)') is None
    assert sysfs_ib.parse_int(None) is None


# --- recorded trees -----------------------------------------------------------------------------

def test_procfs_tree_exact_values(corpus):
    facts = sysfs_ib.collect(str(corpus / PROCFS))
    assert sorted(facts) == ['hfi1_0', 'mlx4_0', 'mlx5_0']

    mlx5 = facts['mlx5_0']
    assert mlx5['fw_ver'] == '14.28.2006'
    assert mlx5['board_id'] == 'SM_2001000001034'
    assert mlx5['hca_type'] == 'MT4118'
    assert mlx5['node_guid'] == '0a7f:bc12:45ef:d23b'  # file has no trailing newline
    assert 'numa_node' not in mlx5 and 'pci_address' not in mlx5  # not in the recorded tree
    port = mlx5['ports']['1']
    assert port['state'] == 'ACTIVE' and port['state_num'] == 4
    # fixture quirk kept as recorded: phys_state file says "4: ACTIVE"
    assert port['phys_state'] == 'ACTIVE' and port['phys_state_num'] == 4
    assert port['rate'] == '25 Gb/sec (1X EDR)'
    assert port['rate_gbps'] == 25 and port['width'] == '1X' and port['speed'] == 'EDR'
    assert port['link_layer'] == 'InfiniBand'
    assert 'lid' not in port and 'sm_lid' not in port  # no lid/sm_lid files recorded
    assert port['netdevs'] == []
    assert port['counters']['port_xmit_data'] == 2880761508848
    assert port['counters']['port_rcv_packets'] == 541889824
    assert port['counters']['symbol_error'] == 0
    assert port['counters']['excessive_buffer_overrun_errors'] == 0
    assert port['hw_counters']['req_cqe_error'] == 3481
    assert port['hw_counters']['duplicate_request'] == 41
    assert port['hw_counters']['rx_read_requests'] == 175528982
    assert len(port['counters']) == 21 and len(port['hw_counters']) == 25

    mlx4 = facts['mlx4_0']
    assert mlx4['fw_ver'] == '2.31.5050' and mlx4['hca_type'] == 'MT4099'
    assert sorted(mlx4['ports']) == ['1', '2']
    assert mlx4['ports']['1']['rate_gbps'] == 40 and mlx4['ports']['1']['speed'] == 'QDR'
    assert mlx4['ports']['1']['counters']['port_xmit_wait'] == 3599
    assert mlx4['ports']['2']['counters']['port_xmit_wait'] == 3846
    # port 2 link_layer is "InfiniBand\n\n" in the recording
    assert mlx4['ports']['2']['link_layer'] == 'InfiniBand'

    hfi = facts['hfi1_0']
    assert hfi['fw_ver'] == '1.27.0'
    assert hfi['board_id'] == 'HPE 100Gb 1-port OP101 QSFP28 x16 PCIe Gen3 with Intel Omni-Path Adapter'
    assert 'hca_type' not in hfi
    assert hfi['ports']['1']['rate_gbps'] == 100 and hfi['ports']['1']['phys_state'] == 'LinkUp'
    assert hfi['ports']['1']['counters']['port_rcv_data'] == 345091702026


def test_node_exporter_tree_exact_values(corpus):
    facts = sysfs_ib.collect(str(corpus / NODE_EXPORTER))
    assert sorted(facts) == ['i40iw0', 'mlx4_0']
    iw = facts['i40iw0']
    assert iw['board_id'] == 'I40IW Board ID' and iw['fw_ver'] == '0.2' and iw['hca_type'] == 'I40IW'
    port = iw['ports']['1']
    assert port['rate'] == '10 Gb/sec (4X)' and port['rate_gbps'] == 10 and port['width'] == '4X'
    assert 'speed' not in port
    # every counter reads "N/A (no PMA)": no integers -> no keys, no crash
    assert port['counters'] == {}

    mlx4 = facts['mlx4_0']
    p1 = mlx4['ports']['1']
    assert p1['counters']['port_xmit_wait'] == 4294967295  # saturated 32-bit counter
    assert p1['counters']['port_xmit_discards'] == 5
    assert p1['counters']['port_rcv_packets'] == 6825908347
    assert p1['counters_ext']['port_unicast_xmit_packets'] == 61239
    assert 'symbol_error' not in p1['counters']  # not recorded for this device
    assert mlx4['ports']['2']['counters']['port_rcv_data'] == 0


def test_every_recorded_tree_parses(sysfs_ib_root):
    root = sysfs_ib_root.parents[2]  # .../sys/class/infiniband -> sysfs root
    facts = sysfs_ib.collect(str(root))
    names = sorted(p.name for p in sysfs_ib_root.iterdir())
    assert sorted(facts) == names
    for dev in facts.values():
        assert dev['ports']
        for port in dev['ports'].values():
            assert port['state'] == 'ACTIVE'
            assert port['link_layer'] == 'InfiniBand'
            assert isinstance(port['rate_gbps'], int)
            assert all(isinstance(v, int) for v in port.get('counters', {}).values())


def test_missing_root_is_empty(tmp_path):
    assert sysfs_ib.collect(str(tmp_path / 'nope')) == {}
    (tmp_path / 'sys' / 'class' / 'infiniband').mkdir(parents=True)
    assert sysfs_ib.collect(str(tmp_path)) == {}


# --- planted faults on a copy of the recorded tree ------------------------------------------------

@pytest.fixture
def procfs_copy(corpus, tmp_path):
    dst = tmp_path / 'root'
    shutil.copytree(corpus / PROCFS, dst, symlinks=True)
    return dst


def _port(root, dev='mlx5_0', port='1'):
    return root / 'sys' / 'class' / 'infiniband' / dev / 'ports' / port


def test_planted_port_down_and_rate_halved(procfs_copy):
    p = _port(procfs_copy)
    (p / 'state').write_text('1: DOWN\n')
    (p / 'phys_state').write_text('3: Disabled\n')
    (p / 'rate').write_text('12.5 Gb/sec (1X EDR)\n')
    (p / 'counters' / 'symbol_error').write_text('17\n')
    (p / 'counters' / 'link_downed').write_text('3\n')
    port = sysfs_ib.collect(str(procfs_copy))['mlx5_0']['ports']['1']
    assert (port['state'], port['state_num']) == ('DOWN', 1)
    assert (port['phys_state'], port['phys_state_num']) == ('Disabled', 3)
    assert port['rate_gbps'] == 12.5
    assert port['counters']['symbol_error'] == 17
    assert port['counters']['link_downed'] == 3
    # untouched recorded values survive
    assert port['counters']['port_xmit_data'] == 2880761508848


def test_planted_missing_and_unreadable_files(procfs_copy):
    p = _port(procfs_copy, 'mlx4_0', '2')
    (p / 'rate').unlink()
    (p / 'counters' / 'symbol_error').unlink()
    # a directory where a file should be: open() fails -> key absent
    (p / 'state').unlink()
    (p / 'state').mkdir()
    # a dangling symlink
    (p / 'link_layer').unlink()
    os.symlink('/nonexistent/gpufleet', str(p / 'link_layer'))
    shutil.rmtree(str(_port(procfs_copy, 'mlx5_0') / 'hw_counters'))
    facts = sysfs_ib.collect(str(procfs_copy))
    port = facts['mlx4_0']['ports']['2']
    for key in ('rate', 'rate_gbps', 'width', 'speed', 'state', 'state_num', 'link_layer'):
        assert key not in port
    assert 'symbol_error' not in port['counters']
    assert port['phys_state'] == 'LinkUp'
    assert 'hw_counters' not in facts['mlx5_0']['ports']['1']
    assert facts['mlx4_0']['ports']['1']['state'] == 'ACTIVE'


# --- hand-made layouts (real kernel layout, values chosen by hand) ---------------------------------

def _build_pci_layout(corpus, tmp_path):
    """Recorded mlx5_0 tree placed where the kernel puts it, with hand-made PCI/netdev files."""
    root = tmp_path / 'root'
    pci = root / 'sys' / 'devices' / 'pci0000:3a' / '0000:3a:00.0' / '0000:3b:00.0'
    ibdev = pci / 'infiniband' / 'mlx5_0'
    shutil.copytree(corpus / PROCFS / 'sys' / 'class' / 'infiniband' / 'mlx5_0', ibdev)
    (pci / 'numa_node').write_text('1\n')
    (pci / 'net' / 'ib0').mkdir(parents=True)
    (pci / 'net' / 'ib0' / 'dev_port').write_text('0\n')
    (pci / 'net' / 'ib0' / 'dev_id').write_text('0x0\n')
    drivers = root / 'sys' / 'bus' / 'pci' / 'drivers' / 'mlx5_core'
    drivers.mkdir(parents=True)
    os.symlink(os.path.relpath(str(drivers), str(pci)), str(pci / 'driver'))
    os.symlink('../../../0000:3b:00.0', str(ibdev / 'device'))
    (ibdev / 'ports' / '1' / 'lid').write_text('0x1a\n')
    (ibdev / 'ports' / '1' / 'sm_lid').write_text('0x1\n')
    (ibdev / 'node_desc').write_text('gpu-node-01 mlx5_0\n')
    cls = root / 'sys' / 'class' / 'infiniband'
    cls.mkdir(parents=True)
    os.symlink(os.path.relpath(str(ibdev), str(cls)), str(cls / 'mlx5_0'))
    return root


def test_hand_made_pci_numa_netdev_lids(corpus, tmp_path):
    root = _build_pci_layout(corpus, tmp_path)
    dev = sysfs_ib.collect(str(root))['mlx5_0']
    assert dev['pci_address'] == '0000:3b:00.0'
    assert dev['numa_node'] == 1
    assert dev['driver'] == 'mlx5_core'
    assert dev['virtual_function'] is False
    assert dev['node_desc'] == 'gpu-node-01 mlx5_0'
    port = dev['ports']['1']
    assert port['netdevs'] == ['ib0']
    assert port['lid'] == 26 and port['sm_lid'] == 1
    assert dev['fw_ver'] == '14.28.2006'


def test_hand_made_two_port_netdevs_by_dev_port_and_dev_id(corpus, tmp_path):
    root = _build_pci_layout(corpus, tmp_path)
    pci = root / 'sys' / 'devices' / 'pci0000:3a' / '0000:3a:00.0' / '0000:3b:00.0'
    ibdev = pci / 'infiniband' / 'mlx5_0'
    shutil.copytree(str(ibdev / 'ports' / '1'), str(ibdev / 'ports' / '2'))
    # new kernels: dev_port 1; old kernels (IPoIB): dev_id 0x1, dev_port 0
    (pci / 'net' / 'ib1').mkdir()
    (pci / 'net' / 'ib1' / 'dev_port').write_text('1\n')
    (pci / 'net' / 'ib1old').mkdir()
    (pci / 'net' / 'ib1old' / 'dev_port').write_text('0\n')
    (pci / 'net' / 'ib1old' / 'dev_id').write_text('0x1\n')
    ports = sysfs_ib.collect(str(root))['mlx5_0']['ports']
    assert ports['1']['netdevs'] == ['ib0']
    assert ports['2']['netdevs'] == ['ib1', 'ib1old']


def test_hand_made_rxe_gid_ndevs(corpus, tmp_path):
    """Soft-RoCE style device: no PCI parent, netdev only visible via gid_attrs/ndevs."""
    root = tmp_path / 'root'
    rxe = root / 'sys' / 'class' / 'infiniband' / 'rxe0'
    port = rxe / 'ports' / '1'
    (port / 'gid_attrs' / 'ndevs').mkdir(parents=True)
    for idx, name in (('0', 'eth0'), ('1', 'eth0'), ('2', '')):
        (port / 'gid_attrs' / 'ndevs' / idx).write_text(name + '\n')
    (port / 'state').write_text('4: ACTIVE\n')
    (port / 'phys_state').write_text('5: LinkUp\n')
    (port / 'link_layer').write_text('Ethernet\n')
    dev = sysfs_ib.collect(str(root))['rxe0']
    assert 'pci_address' not in dev and 'numa_node' not in dev
    assert dev['ports']['1']['netdevs'] == ['eth0']
    assert dev['ports']['1']['link_layer'] == 'Ethernet'


# --- damaged copies of every recorded tree --------------------------------------------------------

def test_damaged_trees_never_crash(sysfs_ib_root, tmp_path):
    """Every recorded tree with files cut, garbled, made binary, emptied, removed or turned into
    dangling links: collect() still returns facts, and what it cannot read is absent or None, never a
    wrong type."""
    src_root = sysfs_ib_root.parents[2]
    for seed in range(6):
        dst = tmp_path / ('root%d' % seed)
        shutil.copytree(src_root, dst, symlinks=True)
        rnd = random.Random(seed)
        files = sorted(p for p in dst.rglob('*') if p.is_file() and not p.is_symlink())
        for path in rnd.sample(files, max(1, len(files) // 3)):
            op = rnd.randrange(6)
            data = path.read_bytes()
            if op == 0:
                path.write_bytes(data[:rnd.randrange(len(data) + 1)])
            elif op == 1:
                path.write_bytes(b'\xff\xfe\x00garbage\x80')
            elif op == 2:
                path.write_bytes(b'')
            elif op == 3:
                path.unlink()
            elif op == 4:
                path.unlink()
                path.symlink_to(dst / 'does-not-exist')
            else:
                path.write_bytes(data.replace(b'4', b'x').replace(b':', b''))
        facts = sysfs_ib.collect(str(dst))
        assert isinstance(facts, dict)
        for dev in facts.values():
            for port in dev['ports'].values():
                for key in ('state_num', 'phys_state_num', 'lid', 'sm_lid', 'lmc'):
                    assert port.get(key) is None or isinstance(port[key], int)
                assert port.get('rate_gbps') is None or isinstance(port['rate_gbps'], (int, float))
                for sub in sysfs_ib.COUNTER_DIRS:
                    assert all(isinstance(v, int) for v in port.get(sub, {}).values())


# --- ibdev2netdev / rdma link: the same port -> netdev map from the tools -------------------------

def test_ibdev2netdev_plain_and_verbose(corpus_file):
    plain = sysfs_ib.parse_ibdev2netdev(
        corpus_file('ibdev2netdev_rdma_link/ibsriov-ibdev2netdev-cx4-ib-up-down.txt').read_text())
    assert plain == {'mlx5_0': {'ports': {'1': {'netdevs': ['ib0'], 'netdev_state': 'Up'}}},
                     'mlx5_1': {'ports': {'1': {'netdevs': ['ib1'], 'netdev_state': 'Down'}}}}
    verbose = sysfs_ib.parse_ibdev2netdev(
        corpus_file('ibdev2netdev_rdma_link/dss-ibdev2netdev-v-4xCX6-HDR.txt').read_text())
    assert sorted(verbose) == ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']
    assert verbose['mlx5_0'] == {'pci_address': '0000:01:00.0', 'hca_type': 'MT4123', 'part': 'MCX653105A-HDAT',
                                 'fw_ver': '20.28.1002',
                                 'ports': {'1': {'netdevs': ['p5p1'], 'netdev_state': 'Up', 'state': 'ACTIVE'}}}


def test_ibdev2netdev_vfs_na_psid_and_padded_state(corpus_file):
    devs = sysfs_ib.parse_ibdev2netdev(
        corpus_file('ibdev2netdev_rdma_link/ibsriov-ibdev2netdev-v-cx4-pf-plus-4vf.txt').read_text())
    assert sorted(devs) == ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'mlx5_4']  # the "# ibdev2netdev -v" line is no device
    vf = devs['mlx5_2']
    assert (vf['hca_type'], vf['part'], vf['pci_address']) == ('MT4116', None, '0000:02:00.5')
    assert vf['ports']['1'] == {'netdevs': ['ib2'], 'netdev_state': 'Down', 'state': 'DOWN'}  # "(DOWN  )"
    assert devs['mlx5_1']['ports']['1']['state'] == 'ACTIVE' and devs['mlx5_1']['ports']['1']['netdev_state'] == 'Down'


@pytest.mark.parametrize('name, expected', [
    ('rdma-link-ib-down-polling.txt',
     {'mlx5_7': {'1': {'state': 'DOWN', 'phys_state': 'Polling', 'netdevs': [], 'lid': 3403, 'sm_lid': 1,
                       'lmc': 0, 'subnet_prefix': 'fe80:0000:0000:0000'}}}),
    ('rdma-link-mixed-roce-up-ib-disabled.txt',
     {'mlx5_0': {'1': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'netdevs': ['ens3f0np0']}},
      'mlx5_1': {'1': {'state': 'DOWN', 'phys_state': 'Disabled', 'netdevs': [], 'lid': 65535, 'sm_lid': 0,
                       'lmc': 0, 'subnet_prefix': 'fe80:0000:0000:0000'}}}),
    # early iproute2 "0/1: dev/1:" layout; UNKNOWN state means unknown (None), not a state name
    ('rdma-link-old-iproute2-index-prefix-format.txt',
     {'ibp0s9': {'1': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'netdevs': [], 'lid': 13397, 'sm_lid': 49151,
                       'lmc': 0, 'subnet_prefix': 'fe80:0000:0000:0000'},
                 '2': {'state': None, 'phys_state': None, 'netdevs': [], 'lid': 13397, 'sm_lid': 49151,
                       'lmc': 0, 'subnet_prefix': 'fe80:0000:0000:0000'}}}),
    ('spiderpool-rdma-link-host-cx-roce.txt',
     {'mlx5_0': {'1': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'netdevs': ['ens6f0np0']}},
      'mlx5_1': {'1': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'netdevs': ['ens6f1np1']}}}),
    ('spiderpool-rdma-link-ib-cx5-subnet-prefix.txt',
     {'mlx5_0': {'1': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'netdevs': [], 'lid': 2, 'sm_lid': 2, 'lmc': 0,
                       'subnet_prefix': 'fe80:0000:0000:0000'}}}),
    ('spiderpool-rdma-system-shared.txt', {}),  # "rdma system" output: no link
])
def test_rdma_link_recordings(corpus_file, name, expected):
    got = sysfs_ib.parse_rdma_link(corpus_file('ibdev2netdev_rdma_link/' + name).read_text())
    assert dict((dev, d['ports']) for dev, d in got.items()) == expected


def test_rdma_link_vfs_in_pod(corpus_file):
    got = sysfs_ib.parse_rdma_link(
        corpus_file('ibdev2netdev_rdma_link/spiderpool-rdma-link-sriov-vf-in-pod.txt').read_text())
    assert dict((dev, d['ports']['1']['netdevs']) for dev, d in got.items()) == \
        {'mlx5_27': ['net2'], 'mlx5_54': ['net1'], 'mlx5_67': ['net4'], 'mlx5_98': ['net3']}


def test_rdma_link_json_handmade():
    # HANDMADE: `rdma -j link` as iproute2's rdma/link.c prints it (ifname/port/state/physical_state/
    # netdev keys), for the Soft-RoCE device of the lab notes (rxe0 over eth0).
    text = json.dumps([{"ifindex": 0, "ifname": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                        "netdev": "eth0", "netdev_index": 2}])
    want = {'rxe0': {'ports': {'1': {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'netdevs': ['eth0']}}}}
    assert sysfs_ib.parse_rdma_link(text) == want
    assert sysfs_ib.parse_rdma_link('[{"ifname": "rxe0"') == {}  # cut JSON: nothing, not a guess


def test_tool_maps_damaged_never_crash(corpus):
    for path in sorted((corpus / 'ibdev2netdev_rdma_link').glob('*.txt')):
        text = path.read_text()
        lines = text.splitlines(True)
        variants = [text[:i] for i in range(0, len(text), max(1, len(text) // 25))]
        variants += [''.join(lines[:i] + [l.replace(' ', '', 3)] + lines[i + 1:]) for i, l in enumerate(lines)]
        variants += ['', None, '\x00\xff', '[', '{}', '[1, 2]']
        for variant in variants:
            for parse in (sysfs_ib.parse_ibdev2netdev, sysfs_ib.parse_rdma_link):
                for dev in parse(variant).values():
                    for port in dev['ports'].values():
                        assert isinstance(port['netdevs'], list)
