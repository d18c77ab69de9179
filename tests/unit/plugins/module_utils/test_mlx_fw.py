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
