# -*- coding: utf-8 -*-
"""mlx_fw parsers against recorded mstflint/flint/mlxup outputs of the corpus."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import mlx_fw

FLINT_EXPECTED = {
    'flint-q-cx6dx-22.27.txt': dict(
        fw_version='22.27.1016', psid='MT_0000000359', product_version='22.27.1016', fw_release_date='27.2.2020',
        base_guid='b8599f0300f08018', base_mac='b8599ff08018', uefi_version='14.20.19', pxe_version='3.5.901',
        image_type='FS4'),
    'ipa-mstflint-q-cx6-hdr-20.35.txt': dict(
        fw_version='20.35.1012', psid='MT_0000000228', base_guid='043f720300f04c46', base_mac='043f72f04c46',
        uefi_version='14.28.15', pxe_version='3.6.804'),
    'ipa-mstflint-image-query-bin.txt': dict(
        fw_version='20.36.1012', psid='MT_0000000228', product_version='rel-20_35_1012', base_guid=None,
        base_mac=None, security_version='0', uefi_version='14.29.15', pxe_version='3.6.904'),
    'mstflint-q-cx5-16.25.txt': dict(
        fw_version='16.25.1020', psid='MT_0000000248', fw_release_date='30.4.2019', base_guid='1c34da0300682e10',
        uefi_version='14.18.19', pxe_version='3.5.701'),
}


def test_every_flint_file_has_expectations(corpus, corpus_full):
    names = {p.name for p in (corpus / 'mlx_fw').glob('*flint*-q-*.txt')}
    names |= {p.name for p in (corpus / 'mlx_fw').glob('*flint*query*.txt')}
    assert names <= set(FLINT_EXPECTED)
    if corpus_full:
        assert names == set(FLINT_EXPECTED)


@pytest.mark.parametrize('name', sorted(FLINT_EXPECTED))
def test_flint_query(corpus_file, name):
    facts = mlx_fw.parse_flint_query(corpus_file('mlx_fw/' + name).read_text())
    for key, value in FLINT_EXPECTED[name].items():
        assert facts[key] == value, key
    assert 'fw_version_running' not in facts and facts['pending_reset'] is False
    assert 'description' not in facts  # 'Description: UID GuidsNumber' is a table header
    assert [r['type'] for r in facts['rom_info']] == ['UEFI', 'PXE']


def test_flint_rom_info_cpu(corpus):
    facts = mlx_fw.parse_flint_query((corpus / 'mlx_fw/ipa-mstflint-q-cx6-hdr-20.35.txt').read_text())
    assert facts['rom_info'] == [{'type': 'UEFI', 'version': '14.28.15', 'cpu': 'AMD64,AARCH64'},
                                 {'type': 'PXE', 'version': '3.6.804', 'cpu': 'AMD64'}]


def test_planted_running_differs_from_burned(corpus):
    """Recorded mstflint output with a planted 'FW Version(Running)' line (burned, not yet reset)."""
    text = (corpus / 'mlx_fw/ipa-mstflint-q-cx6-hdr-20.35.txt').read_text()
    planted = text.replace('FW Version:            20.35.1012\n',
                           'FW Version:            20.36.1012\nFW Version(Running):   20.35.1012\n')
    assert planted != text
    facts = mlx_fw.parse_flint_query(planted)
    assert facts['fw_version'] == '20.36.1012'
    assert facts['fw_version_running'] == '20.35.1012'
    assert facts['pending_reset'] is True


def test_mlxup_query_pending_reset(corpus_file):
    devices = mlx_fw.parse_mlxup_query(corpus_file('mlx_fw/cx7-mlxup-query.txt').read_text())
    assert len(devices) == 1
    dev = devices[0]
    assert dev['device_type'] == 'ConnectX7'
    assert dev['part_number'] == 'MCX75310AAS-NEA_Ax'
    assert dev['psid'] == 'MT_0000000838'
    assert dev['pci_device_name'] == '0000:8e:00.0'
    assert dev['base_guid'] == '9c63c00300abed5a'
    assert dev['fw_version'] == '28.47.1026' and dev['fw_version_available'] == '28.47.1026'
    assert dev['fw_version_running'] == '28.46.3048'
    assert dev['pending_reset'] is True
    assert dev['pxe_version'] == '3.8.0100' and dev['uefi_version'] == '14.39.0014'
    assert dev['status'] == 'Up to date'
    assert dev['description'].startswith('NVIDIA ConnectX-7 HHHL Adapter card; 400GbE / NDR IB')


def test_empty_inputs():
    assert mlx_fw.parse_mlxup_query('') == []
    assert mlx_fw.parse_flint_query('') == {'rom_info': [], 'pending_reset': False}


# HANDMADE (not recordings), modeled on public mlxfwmanager/mlxup query outputs seen through the
# search index: a BlueField-2 DPU with "UEFI Virtio blk"/"UEFI Virtio net" version rows and a burned
# FW waiting for a reset (index file ids 52866056169, 53494898244), and an HP ConnectX-3 Pro with
# "Port1 GUID"/"Port2 GUID" lines, a CLP row and an mst device name (index file id 20217185482).
# Serial-like values are invented.
MLXFWMANAGER_HANDMADE = """Querying Mellanox devices firmware ...

Device #1:
----------

  Device Type:      BlueField2
  Part Number:      MBF2H332A-AEEO_Ax_Bx
  Description:      BlueField-2 DPU, 2x 25GbE (HANDMADE text)
  PSID:             MT_0000000539
  PCI Device Name:  /dev/mst/mt41686_pciconf0
  Base GUID:        0c42a10300000000
  Base MAC:         0c42a1000000
  Versions:         Current        Available
     FW             24.47.1026     N/A
     FW (Running)   24.42.1000     N/A
     PXE            3.7.0500       N/A
     UEFI           14.35.0015     N/A
     UEFI Virtio blk   22.4.0013      N/A
     UEFI Virtio net   21.4.0013      N/A

  Status:           No matching image found

Device #2:
----------

  Device Type:      ConnectX3Pro
  Part Number:      764285-B21_Ax
  Description:      HP 2-port FDR IB / 40GbE adapter (HANDMADE text)
  PSID:             HP_1380110017
  PCI Device Name:  mt4103_pci_cr0
  Port1 GUID:       24be05ffff000001
  Port2 GUID:       24be05ffff000002
  Versions:         Current        Available
     FW             2.42.5700      2.42.5700
     CLP            8025           8025
     PXE            3.4.0754       3.4.0754
     UEFI           14.11.0049     14.11.0049

  Status:           Up to date
"""


def test_mlxfwmanager_dpu_virtio_rows_and_port_guids():
    bf2, cx3 = mlx_fw.parse_mlxup_query(MLXFWMANAGER_HANDMADE)
    assert (bf2['fw_version'], bf2['fw_version_running'], bf2['pending_reset']) == ('24.47.1026', '24.42.1000', True)
    # rows after the multi-word "UEFI Virtio ..." names are still read, and those rows are kept whole
    assert bf2['versions']['UEFI Virtio net'] == {'current': '21.4.0013', 'available': None}
    assert (bf2['pxe_version'], bf2['uefi_version'], bf2['status']) == ('3.7.0500', '14.35.0015', 'No matching image found')
    assert (cx3['fw_version'], cx3['fw_version_available'], cx3['pending_reset']) == ('2.42.5700', '2.42.5700', False)
    assert cx3['versions']['CLP'] == {'current': '8025', 'available': '8025'}
    assert (cx3['port1_guid'], cx3['psid'], cx3['status']) == ('24be05ffff000001', 'HP_1380110017', 'Up to date')


# HANDMADE: flint/mstflint "q" of a DPU lists multi-word ROM types ("UEFI Virtio net"), the same
# names mlxfwmanager shows above; and the "-E-" line flint prints when it cannot open the device.
FLINT_DPU_HANDMADE = """Image type:            FS4
FW Version:            24.47.1026
FW Version(Running):   24.42.1000
FW Release Date:       1.4.2025
Product Version:       24.47.1026
Rom Info:              type=UEFI Virtio net version=21.4.13 cpu=AMD64,AARCH64
                       type=UEFI Virtio blk version=22.4.13 cpu=AMD64,AARCH64
                       type=UEFI version=14.35.15 cpu=AMD64,AARCH64
                       type=PXE version=3.7.500 cpu=AMD64
Description:           UID                GuidsNumber
Base GUID:             0c42a10300000000        16
Base MAC:              0c42a1000000            16
Image VSD:             N/A
Device VSD:            N/A
PSID:                  MT_0000000539
Security Attributes:   secure-fw
"""


def test_flint_dpu_multiword_rom_types_and_pending():
    facts = mlx_fw.parse_flint_query(FLINT_DPU_HANDMADE)
    assert [r['type'] for r in facts['rom_info']] == ['UEFI Virtio net', 'UEFI Virtio blk', 'UEFI', 'PXE']
    assert (facts['uefi_version'], facts['pxe_version']) == ('14.35.15', '3.7.500')
    assert (facts['fw_version'], facts['fw_version_running'], facts['pending_reset']) == \
        ('24.47.1026', '24.42.1000', True)
    assert 'errors' not in facts
    err = mlx_fw.parse_flint_query('-E- Cannot open Device: 0000:3b:00.0. No such file or directory. '
                                   'MFE_UNSUPPORTED_DEVICE\n')
    assert err['errors'] == ['Cannot open Device: 0000:3b:00.0. No such file or directory. MFE_UNSUPPORTED_DEVICE']
    assert 'fw_version' not in err and err['pending_reset'] is False


def test_damaged_recordings_never_crash(corpus, damaged):
    """Every mlx_fw recording (and the HANDMADE layouts) cut and garbled: both parsers answer, a
    pending reset is only claimed when both versions were read."""
    texts = [p.read_text() for p in sorted((corpus / 'mlx_fw').glob('*.txt'))]
    for text in texts + [MLXFWMANAGER_HANDMADE, FLINT_DPU_HANDMADE]:
        for variant in damaged(text, none=True):
            facts = mlx_fw.parse_flint_query(variant)
            if facts['pending_reset']:
                assert facts.get('fw_version') and facts.get('fw_version_running')
            for dev in mlx_fw.parse_mlxup_query(variant):
                if dev['pending_reset']:
                    assert dev['fw_version'] and dev['fw_version_running']


def test_flint_fs2_connectx3_layout():
    # HANDMADE, modeled on an mstflint query of a ConnectX-3 (FS2 image) seen in a public firmware
    # upgrade guide (index file id 37517468776): "Rom Info" with devid/proto fields, a "Device ID" line,
    # a "Node Port1 Port2 Sys image" column header and GUIDs/MACs lists instead of base GUID/MAC.
    text = ("Image type:      FS2\n"
            "FW Version:      2.30.8000\n"
            "Rom Info:        type=PXE  version=3.4.151 devid=4099 proto=VPI\n"
            "Device ID:       4099\n"
            "Description:     Node             Port1            Port2            Sys image\n"
            "GUIDs:           0002c90300000010 0002c90300000011 0002c90300000012 0002c90300000013\n"
            "MACs:                                 0002c9000011     0002c9000012\n"
            "VSD:\n"
            "PSID:            MT_1090120019\n")
    facts = mlx_fw.parse_flint_query(text)
    assert (facts['image_type'], facts['fw_version'], facts['psid'], facts['device_id']) == \
        ('FS2', '2.30.8000', 'MT_1090120019', '4099')
    assert facts['rom_info'] == [{'type': 'PXE', 'version': '3.4.151', 'cpu': None}]
    assert facts['pxe_version'] == '3.4.151'
    assert facts['guids'] == ['0002c90300000010', '0002c90300000011', '0002c90300000012', '0002c90300000013']
    assert facts['macs'] == ['0002c9000011', '0002c9000012']
    assert 'description' not in facts and 'base_guid' not in facts and facts['image_vsd'] is None


@pytest.mark.parametrize('name, dev, want', [
    ('mlx5_0', {'pci_address': '0000:3b:00.0'}, True),
    ('ibp59s0', {'pci_address': '0000:3b:00.0', 'driver': 'mlx5_core'}, True),   # renamed device, mlx driver
    ('mlx5_2', {'pci_address': '0000:3b:00.2', 'virtual_function': True}, False),
    ('mlx5_0', {}, False),                                                       # no PCI function
    ('rxe0', {'pci_address': '0000:00:03.0', 'driver': 'virtio-pci'}, False),    # Soft-RoCE, not an adapter flash
    ('bnxt_re0', {'pci_address': '0000:41:00.0', 'driver': 'bnxt_en'}, False),
])
def test_has_flash_is_the_one_card_rule(name, dev, want):
    # hand-made sysfs_ib entries: the rule fw_facts queries by and hca_firmware burns by
    assert mlx_fw.has_flash(name, dev) is want


def test_adapter_key_prefers_the_adapter_guid():
    assert mlx_fw.adapter_key({'pci_address': '0000:3b:00.1', 'sys_image_guid': '043f:7203:00f0:4c46'}) == \
        '043f:7203:00f0:4c46'
    assert mlx_fw.adapter_key({'pci_address': '0000:3b:00.1'}) == '0000:3b:00.1'
