# -*- coding: utf-8 -*-
"""nvidia_smi parsers against every recorded ``nvidia-smi -q -x`` XML and ``topo -m`` matrix of the
corpus, plus the hand-made MIG/NIC-legend cases in tests/unit/fixtures/hand_made."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi

HAND_MADE = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'

# file -> values visible in the recorded XML
XML_EXPECTED = {
    'xml-telegraf-gtx1660ti-418.xml': dict(
        driver='418.43', cuda='10.1', count=1, uuids=['GPU-304a277d-3545-63b8-3a36-dfde3c992989'],
        gpu0=dict(name='Graphics Device', pci_bus_id='00000000:43:00.0', vbios_version='90.16.25.00.4C',
                  serial=None, persistence_mode='Disabled', pcie_link_gen_current=1, pcie_link_gen_max=3,
                  pcie_link_width_current=16, pcie_link_width_max=16, temperature_gpu=40,
                  power_draw=8.93, power_limit=130.0, retired_pages=None, remapped_rows=None)),
    'xml-telegraf-gtx1070ti-v10-partial.xml': dict(
        driver=None, cuda=None, count=1, uuids=['GPU-f9ba66fc-a7f5-94c5-da19-019ef2f9c665'],
        gpu0=dict(name='GeForce GTX 1070 Ti', pci_bus_id='00000000:01:00.0', pcie_link_gen_current=1,
                  pcie_link_width_current=16, temperature_gpu=39, power_draw=None)),
    'xml-netdata-TeslaP100-v11.xml': dict(
        driver='510.47.03', cuda='11.6', count=1, uuids=['GPU-d3da8716-eaab-75db-efc1-60e88e1cd55e'],
        gpu0=dict(name='Tesla P100-PCIE-16GB', serial='0324217145110', vbios_version='86.00.52.00.02',
                  pci_bus_id='00000000:00:04.0', temperature_gpu=38, power_draw=26.16, power_limit=250.0,
                  ecc_errors={'volatile': {'corrected': 0, 'uncorrected': 0},
                              'aggregate': {'corrected': 3, 'uncorrected': 0}},
                  retired_pages={'single_bit': 0, 'double_bit': 0, 'pending': False, 'pending_blacklist': False},
                  remapped_rows=None)),
    'xml-telegraf-A10G-515.xml': dict(
        driver='515.105.01', cuda='11.7', count=1, uuids=['GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94'],
        gpu0=dict(name='NVIDIA A10G', pci_bus_id='00000000:00:1E.0', pcie_link_gen_max=4,
                  pcie_link_width_current=8, pcie_link_width_max=16, temperature_gpu=17, power_draw=25.58,
                  power_limit=300.0, ecc_mode={'current': 'Enabled', 'pending': 'Enabled'},
                  ecc_errors={'volatile': {'corrected': 0, 'uncorrected': 0},
                              'aggregate': {'corrected': 0, 'uncorrected': 0}},
                  remapped_rows={'correctable': 0, 'uncorrectable': 0, 'pending': False, 'failure': False})),
    'xml-telegraf-T4-515.xml': dict(
        driver='515.105.01', cuda='11.7', count=1, uuids=['GPU-d37e67a5-91dd-3774-a5cb-99096249601a'],
        gpu0=dict(name='Tesla T4', vbios_version='90.04.84.00.06', temperature_gpu=40, power_draw=26.78,
                  power_limit=70.0, pcie_link_gen_current=3,
                  retired_pages={'single_bit': 0, 'double_bit': 0, 'pending': False, 'pending_blacklist': False},
                  remapped_rows=None)),
    'xml-netdata-rtx4090-535.xml': dict(
        driver='535.86.05', cuda='12.2', count=1, uuids=['GPU-71d1acc2-662d-2166-bf9f-65272d2fc437'],
        gpu0=dict(name='NVIDIA GeForce RTX 4090', pci_bus_id='00000000:84:00.0', persistence_mode='Enabled',
                  power_draw=26.84, power_limit=450.0, power_limit_max=600.0, temperature_gpu=40,
                  pcie_link_gen_current=1, pcie_link_gen_max=3, pcie_link_gen_device_max=4,
                  ecc_errors={'volatile': {'corrected': None, 'uncorrected': None},
                              'aggregate': {'corrected': None, 'uncorrected': None}},
                  remapped_rows={'correctable': 0, 'uncorrectable': 0, 'pending': False, 'failure': False})),
    'xml-netdata-rtxpro6000-580-short.xml': dict(
        driver=None, cuda=None, count=1, uuids=['GPU-11111111-2222-3333-4444-555555555555'],
        # values padded with spaces; power_draw N/A but instant_power_draw 66.84 W
        gpu0=dict(name='NVIDIA RTX PRO 6000 Blackwell', temperature_gpu=37, power_draw=66.84)),
    'xml-telegraf-2xA5000-590-v13.xml': dict(
        driver='590.44.01', cuda='13.1', count=2,
        uuids=['GPU-12345678-aaaa-bbbb-cccc-0123456789ab', 'GPU-12345678-aaaa-bbbb-cccc-0123456789cd'],
        gpu0=dict(name='NVIDIA RTX A5000', pci_bus_id='00000000:81:00.0', serial='0123456789012',
                  gsp_firmware_version='590.44.01', temperature_gpu=13, power_draw=6.52, power_limit=230.0,
                  mig_mode={'current': None, 'pending': None}, mig_devices=[],
                  remapped_rows={'correctable': 0, 'uncorrectable': 0, 'pending': False, 'failure': False},
                  retired_pages=None)),
    'xml-telegraf-rtx4000ada-595-v13.xml': dict(
        driver='595.84', cuda='13.2', count=1, uuids=['GPU-37037c3f-65c8-ec4d-24a9-420204ad8026'],
        gpu0=dict(name='NVIDIA RTX 4000 SFF Ada Generation', vbios_version='95.04.53.00.01',
                  pci_bus_id='00000000:06:00.0', temperature_gpu=38, power_draw=8.44, power_limit=70.0,
                  architecture='Ada Lovelace')),
}


def test_every_corpus_xml_has_expectations(corpus, corpus_full):
    names = {p.name for p in (corpus / 'nvidia_smi').glob('*.xml')}
    assert names <= set(XML_EXPECTED), 'add expected values for new corpus XML files'
    if corpus_full:
        assert names == set(XML_EXPECTED)


def test_every_corpus_xml_parses(nvsmi_xml_file):
    facts = nvidia_smi.parse_query_xml(nvsmi_xml_file.read_bytes())
    exp = XML_EXPECTED[nvsmi_xml_file.name]
    assert facts['driver_version'] == exp['driver']
    assert facts['cuda_version'] == exp['cuda']
    assert facts['count'] == exp['count'] == len(facts['gpus'])
    if facts['attached_gpus'] is not None:
        assert facts['attached_gpus'] == exp['count']
    assert [g['uuid'] for g in facts['gpus']] == exp['uuids']
    assert [g['index'] for g in facts['gpus']] == list(range(exp['count']))
    gpu0 = facts['gpus'][0]
    for key, value in exp['gpu0'].items():
        assert gpu0[key] == value, key
    for gpu in facts['gpus']:
        assert re.match(r'^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]$', gpu['pci_bus_id'])
        for key in ('temperature_gpu', 'power_draw', 'power_limit', 'pcie_link_width_current'):
            assert gpu[key] is None or isinstance(gpu[key], (int, float))


def test_second_gpu_of_dual_a5000(corpus):
    facts = nvidia_smi.parse_query_xml((corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text())
    gpu1 = facts['gpus'][1]
    assert gpu1['pci_bus_id'] == '00000000:C1:00.0'
    assert gpu1['serial'] == '1234567890123'
    assert gpu1['temperature_gpu'] == 15
    assert gpu1['minor_number'] == 0


@pytest.mark.parametrize('text, expected', [
    ('26.16 W', 26.16), ('38 C', 38), ('16x', 16), ('40448 MiB', 40448), (' 37 C ', 37),
    ('N/A', None), ('[N/A]', None), ('Not Supported', None), ('Requested functionality has been deprecated', None),
    ('-8 C', -8), ('192 bank(s)', 192), (None, None),
])
def test_number(text, expected):
    assert nvidia_smi.number(text) == expected


@pytest.mark.parametrize('bad', [
    'NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.',
    '<html/>',
    '',
])
def test_not_xml_raises(bad):
    with pytest.raises(nvidia_smi.NvidiaSmiParseError):
        nvidia_smi.parse_query_xml(bad)


def test_planted_ecc_and_remap_faults(corpus):
    """Recorded A10G XML with planted uncorrectable ECC errors and a pending row remap."""
    text = (corpus / 'nvidia_smi/xml-telegraf-A10G-515.xml').read_text()
    text = text.replace('<remapped_row_pending>No</remapped_row_pending>',
                        '<remapped_row_pending>Yes</remapped_row_pending>')
    text = text.replace('<remapped_row_unc>0</remapped_row_unc>', '<remapped_row_unc>2</remapped_row_unc>')
    vol = text.index('<volatile>')
    text = text[:vol] + text[vol:].replace('<dram_uncorrectable>0</dram_uncorrectable>',
                                           '<dram_uncorrectable>5</dram_uncorrectable>', 1)
    gpu = nvidia_smi.parse_query_xml(text)['gpus'][0]
    assert gpu['remapped_rows'] == {'correctable': 0, 'uncorrectable': 2, 'pending': True, 'failure': False}
    assert gpu['ecc_errors']['volatile'] == {'corrected': 0, 'uncorrected': 5}
    assert gpu['ecc_errors']['aggregate'] == {'corrected': 0, 'uncorrected': 0}


def test_hand_made_mig_xml():
    facts = nvidia_smi.parse_query_xml((HAND_MADE / 'nvidia-smi-q-x-h100-mig-HANDMADE.xml').read_text())
    gpu = facts['gpus'][0]
    assert facts['driver_version'] == '590.48.01' and facts['count'] == 1
    assert gpu['mig_mode'] == {'current': 'Enabled', 'pending': 'Enabled'}
    assert [d['gpu_instance_id'] for d in gpu['mig_devices']] == [2, 3, 9, 10]
    assert [d['multiprocessor_count'] for d in gpu['mig_devices']] == [60, 32, 16, 16]
    assert gpu['mig_devices'][0]['memory_total_mib'] == 40448
    assert gpu['remapped_rows'] is None and gpu['retired_pages'] is None
    assert gpu['pcie_link_gen_host_max'] is None and gpu['pcie_link_gen_current'] == 5
    assert gpu['power_draw'] == 72.63 and gpu['power_limit'] == 700.0
    assert gpu['temperature_memory'] == 48
    assert gpu['ecc_errors']['volatile'] == {'corrected': 0, 'uncorrected': 0}
    assert (gpu['fabric_state'], gpu['fabric_status']) == ('Completed', 'Success')


# --- topo -m ------------------------------------------------------------------------------------------

TOPO_EXPECTED = {
    'topo-m-2gpu-NV1-mlx5-PHB-old-legend.txt': dict(
        devices=['GPU0', 'GPU1', 'mlx5_0'], cells={('GPU0', 'GPU1'): 'NV1', ('GPU1', 'mlx5_0'): 'PHB',
                                                   ('mlx5_0', 'GPU0'): 'PHB'},
        affinity={'GPU0': {'cpu_affinity': '0-7'}, 'mlx5_0': {'cpu_affinity': None}}),
    'topo-m-4gpu-NV3-4xmlx5-PIX-matrix-only.txt': dict(
        devices=['GPU0', 'GPU1', 'GPU2', 'GPU3', 'mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3'],
        cells={('GPU0', 'GPU1'): 'NV3', ('GPU0', 'GPU2'): 'SYS', ('GPU2', 'mlx5_2'): 'NODE',
               ('mlx5_0', 'mlx5_1'): 'PIX', ('mlx5_3', 'GPU0'): 'SYS'},
        affinity={'GPU2': {'cpu_affinity': '64-127'}, 'mlx5_1': {'cpu_affinity': None}}),
    'topo-m-8xA100-NV12-mleng.txt': dict(
        devices=['GPU%d' % i for i in range(8)], cells={('GPU0', 'GPU7'): 'NV12', ('GPU5', 'GPU2'): 'NV12'},
        affinity={'GPU0': {'cpu_affinity': '0-23', 'numa_affinity': '0'},
                  'GPU7': {'cpu_affinity': '24-47', 'numa_affinity': '1'}}),
    'topo-m-8xH100-NV18-mleng.txt': dict(
        devices=['GPU%d' % i for i in range(8)], cells={('GPU3', 'GPU4'): 'NV18'},
        affinity={'GPU4': {'cpu_affinity': '52-103', 'numa_affinity': '1'}}),
    'topo-m-h100-single-ansi.txt': dict(
        devices=['GPU0'], cells={},
        affinity={'GPU0': {'cpu_affinity': '0-19', 'numa_affinity': '0', 'gpu_numa_id': None}}),
    'topo-m-legend-only.txt': None,
    'topo-m-windows-error.txt': None,
}


def test_every_topo_file_has_expectations(corpus, corpus_full):
    names = {p.name for p in (corpus / 'nvidia_smi').glob('topo-m-*.txt')}
    assert names <= set(TOPO_EXPECTED)
    if corpus_full:
        assert names == set(TOPO_EXPECTED)


def test_every_corpus_topo_parses(topo_m_file):
    topo = nvidia_smi.parse_topo_matrix(topo_m_file.read_text())
    exp = TOPO_EXPECTED[topo_m_file.name]
    if exp is None:
        assert topo == {}
        return
    assert topo['devices'] == exp['devices']
    assert sorted(topo['matrix']) == sorted(exp['devices'])
    for (row, col), value in exp['cells'].items():
        assert topo['matrix'][row][col] == value
    for row, aff in exp['affinity'].items():
        assert topo['affinity'][row] == aff
    for row, cols in topo['matrix'].items():
        assert row not in cols  # self cell dropped
        assert len(cols) == len(exp['devices']) - 1


def test_dgx1_hybrid_cube_mesh(corpus):
    topo = nvidia_smi.parse_topo_matrix(
        (corpus / 'nvidia_smi/issue37-topo-m-DGX1-V100-hybrid-cube-mesh.txt').read_text())
    assert topo['matrix']['GPU0'] == {'GPU1': 'NV1', 'GPU2': 'NV1', 'GPU3': 'NV2', 'GPU4': 'SYS',
                                      'GPU5': 'SYS', 'GPU6': 'NV2', 'GPU7': 'SYS'}
    assert topo['affinity']['GPU7'] == {'cpu_affinity': '0-95'}
    assert nvidia_smi.gpu_topology(topo, 7)['links']['GPU6'] == 'NV1'
    assert nvidia_smi.gpu_topology(topo, 8) is None


def test_topo_sections_of_full_captures(corpus_file):
    """The ``topo -m`` section of every multi-command capture (raw ANSI escapes included)."""
    captures = sorted(corpus_file('nvidia_smi/captures').glob('linux-*.txt'))
    assert captures
    expected_cpu = {'h100-80gb-hbm3': '0-19', 'h100-mig': '0-19', 'h200': '0-23', 'l40s': '0-7'}
    for cap in captures:
        text = cap.read_text()
        start = text.index('# $ nvidia-smi topo -m')
        section = text[start:text.index('# capabilities :: nvlink -s', start)]
        topo = nvidia_smi.parse_topo_matrix(section)
        key = next(k for k in expected_cpu if '__nvidia-%s__' % k in cap.name)
        assert topo['devices'] == ['GPU0']
        assert topo['affinity']['GPU0'] == {'cpu_affinity': expected_cpu[key], 'numa_affinity': '0',
                                            'gpu_numa_id': None}


def test_hand_made_nic_legend():
    topo = nvidia_smi.parse_topo_matrix((HAND_MADE / 'nvidia-smi-topo-m-nic-legend-HANDMADE.txt').read_text())
    assert topo['nic_names'] == {'NIC%d' % i: 'mlx5_%d' % i for i in range(4)}
    assert topo['devices'] == ['GPU0', 'GPU1', 'GPU2', 'GPU3', 'mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']
    assert topo['matrix']['GPU0']['mlx5_0'] == 'PIX'
    assert topo['matrix']['mlx5_2']['mlx5_3'] == 'NODE'
    assert topo['affinity']['mlx5_1'] == {'cpu_affinity': None, 'numa_affinity': None, 'gpu_numa_id': None}
    gpu2 = nvidia_smi.gpu_topology(topo, 2)
    assert gpu2 == {'links': {'GPU0': 'NV18', 'GPU1': 'NV18', 'GPU3': 'NV18', 'mlx5_0': 'SYS', 'mlx5_1': 'SYS',
                              'mlx5_2': 'PIX', 'mlx5_3': 'NODE'},
                    'cpu_affinity': '48-95', 'numa_affinity': '1', 'gpu_numa_id': None}


# --- text around the XML, failure messages, broken <supported_clocks>, cut/garbled documents -----------

def _a10g(corpus):
    return (corpus / 'nvidia_smi/xml-telegraf-A10G-515.xml').read_text()


def test_warning_before_xml_and_second_document(corpus):
    # nvidia-smi prints "WARNING: infoROM is corrupted at gpu ..." on stdout before the report and still
    # exits 0 for -q -x (microsoft/pai#3756, NVIDIA/gpu-operator#20); -l repeats the document.
    text = _a10g(corpus)
    plain = nvidia_smi.parse_query_xml(text)
    warned = nvidia_smi.parse_query_xml('WARNING: infoROM is corrupted at gpu 0000:00:1E.0\n' + text)
    assert warned == plain
    assert nvidia_smi.parse_query_xml(text + '\n' + text) == plain


@pytest.mark.parametrize('text, exc, words', [
    ('No devices were found\n', nvidia_smi.NvidiaSmiNoDevices, 'No devices were found'),
    ('Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183\n',
     nvidia_smi.NvidiaSmiParseError, 'Driver/library version mismatch'),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n", nvidia_smi.NvidiaSmiParseError, "couldn't communicate"),
])
def test_failure_messages_are_named(text, exc, words):
    for parse in (nvidia_smi.parse_query_xml, nvidia_smi.parse_query_gpu_csv):
        with pytest.raises(exc) as info:
            parse(text)
        assert words in str(info.value)


def test_broken_supported_clocks_block_is_skipped(corpus):
    # Mismatched tags inside <supported_clocks> as reported in lollipopkit/flutter_server_box#286
    # (HANDMADE damage of a recorded document; the block is not used by the parser).
    text = _a10g(corpus)
    broken = text.replace('<supported_mem_clock>', '</supported_mem_clock>\n<supported_mem_clock>', 1)
    with pytest.raises(Exception):
        import xml.etree.ElementTree as ET
        ET.fromstring(broken[broken.index('<nvidia_smi_log'):])
    assert nvidia_smi.parse_query_xml(broken) == nvidia_smi.parse_query_xml(text)


def test_cut_xml_always_raises_and_garbled_never_leaks(corpus):
    """Every corpus XML cut before its end raises NvidiaSmiParseError (never half a result); garbled
    copies raise it or parse, never another exception."""
    import random
    for path in sorted((corpus / 'nvidia_smi').glob('*.xml')):
        text = path.read_text()
        end = text.rindex('</nvidia_smi_log>')
        for cut in range(0, end, max(1, end // 40)):
            with pytest.raises(nvidia_smi.NvidiaSmiParseError):
                nvidia_smi.parse_query_xml(text[:cut])
        rnd = random.Random(7)
        lines = text.splitlines(True)
        for dummy in range(40):
            ls = list(lines)
            i = rnd.randrange(len(ls))
            ls[i] = rnd.choice(['', '<', '&', ls[i].replace('>', '', 1), ls[i].replace('N/A', '12 W'),
                                ls[i].replace('0', 'x')])
            try:
                facts = nvidia_smi.parse_query_xml(''.join(ls))
            except nvidia_smi.NvidiaSmiParseError:
                continue
            for gpu in facts['gpus']:
                for key in ('memory_total_mib', 'power_draw', 'temperature_gpu', 'pcie_link_gen_current'):
                    assert gpu[key] is None or isinstance(gpu[key], (int, float))


# --- --query-gpu CSV ------------------------------------------------------------------------------------

def test_query_gpu_csv_with_units(corpus_file):
    rows = nvidia_smi.parse_query_gpu_csv(corpus_file('nvidia_smi/query-gpu-csv-1xH100-535-vc.csv').read_text())
    assert len(rows) == 1
    row = rows[0]
    assert (row['index'], row['name'], row['pci.bus_id'], row['driver_version']) == \
        (0, 'NVIDIA H100 80GB HBM3', '00000000:0A:00.0', '535.161.07')
    assert (row['memory.total'], row['power.draw.average'], row['utilization.gpu']) == (81559, 70.89, 1)
    assert row['ecc.errors.uncorrected.aggregate.total'] == 20


def test_query_gpu_csv_na_values(corpus_file):
    row = nvidia_smi.parse_query_gpu_csv(corpus_file('nvidia_smi/query-gpu-csv-1xT4-NA-550-vc.csv').read_text())[0]
    # "N/A" and "[N/A]" are unknown (None), never 0; a version stays text
    assert row['temperature.memory'] is None and row['power.draw.average'] is None
    assert row['driver_version'] == '550.54.15' and row['memory.total'] == 15360


def test_query_gpu_csv_full_field_captures(corpus):
    for path in sorted((corpus / 'nvidia_smi').glob('query-gpu-csv-*-590-*.txt')) + \
            sorted((corpus / 'nvidia_smi').glob('query-gpu-csv-*-595-*.txt')):
        rows = nvidia_smi.parse_query_gpu_csv(path.read_text())
        assert len(rows) == 1
        assert rows[0]['serial'] == '0000000000000'  # an id keeps its zeros
        assert isinstance(rows[0]['memory.total'], int) and isinstance(rows[0]['power.limit'], float)


def test_query_gpu_csv_noheader_nounits_handmade():
    # HANDMADE: the same fields asked with --format=csv,noheader,nounits (values as nvidia-smi prints
    # them without units) and with the header but nounits.
    fields = ['index', 'name', 'memory.total', 'power.draw', 'temperature.memory', 'pci.bus_id']
    text = '0, NVIDIA A100-SXM4-80GB, 81920, 61.32, [N/A], 00000000:07:00.0\n' \
           '1, NVIDIA A100-SXM4-80GB, 81920, 59.10, [N/A], 00000000:0F:00.0\n'
    rows = nvidia_smi.parse_query_gpu_csv(text, fields)
    assert [r['index'] for r in rows] == [0, 1] and rows[1]['power.draw'] == 59.1
    assert rows[0]['temperature.memory'] is None
    with_header = ', '.join(fields) + '\n' + text
    assert nvidia_smi.parse_query_gpu_csv(with_header) == rows
    assert nvidia_smi.parse_query_gpu_csv(with_header, fields) == rows
    with pytest.raises(nvidia_smi.NvidiaSmiParseError):
        nvidia_smi.parse_query_gpu_csv(text)  # noheader output without the field list
    with pytest.raises(nvidia_smi.NvidiaSmiParseError):
        nvidia_smi.parse_query_gpu_csv(text[:40], fields)  # cut row


def test_query_gpu_csv_cut_recordings(corpus):
    for path in sorted((corpus / 'nvidia_smi').glob('query-gpu-csv-*')):
        text = path.read_text()
        header, dummy, body = text.partition('\n')
        for cut in range(len(header) + 1, len(text.rstrip('\n')), max(1, len(body) // 25)):
            try:
                rows = nvidia_smi.parse_query_gpu_csv(text[:cut])
            except nvidia_smi.NvidiaSmiParseError:
                continue
            # a cut inside the last value keeps the cell count (indistinguishable from stripped
            # output, see the docstring); any row returned has every field, none missing
            assert all(sorted(r) == sorted(rows[0]) for r in rows)
            assert all(len(r) == header.count(',') + 1 for r in rows)


def test_damaged_topo_never_crashes(corpus):
    import random
    paths = sorted((corpus / 'nvidia_smi').glob('topo-*.txt')) + [HAND_MADE / 'nvidia-smi-topo-m-nic-legend-HANDMADE.txt']
    for path in paths:
        text = path.read_text()
        lines = text.splitlines(True)
        variants = [text[:i] for i in range(0, len(text), max(1, len(text) // 25))]
        rnd = random.Random(11)
        for dummy in range(30):
            ls = list(lines)
            i = rnd.randrange(len(ls)) if ls else 0
            if ls:
                ls[i] = rnd.choice(['', '\t\n', ls[i].replace('\t', ' '), ls[i][:len(ls[i]) // 2] + '\n', 'X\tX\n'])
            variants.append(''.join(ls))
        for variant in variants + [b'\xff\xfe', '']:
            topo = nvidia_smi.parse_topo_matrix(variant)
            assert isinstance(topo, dict)
            for row in topo.get('matrix', {}).values():
                assert all(isinstance(v, str) for v in row.values())


# --- topo -m: empty cells are read by the header's column positions, never shifted -------------------------------


def test_topo_space_aligned_empty_cpu_affinity_hand_made():
    """An empty CPU Affinity cell in a space-aligned copy: splitting on blanks reported CPU '0' and NUMA None."""
    topo = nvidia_smi.parse_topo_matrix(
        (HAND_MADE / 'nvidia-smi-topo-m-space-aligned-empty-cpu-affinity-HANDMADE.txt').read_text())
    assert topo['devices'] == ['GPU0', 'GPU1', 'mlx5_0', 'mlx5_1']
    assert topo['affinity']['GPU0'] == {'cpu_affinity': None, 'numa_affinity': '0', 'gpu_numa_id': None}
    assert topo['affinity']['GPU1'] == {'cpu_affinity': '48-95', 'numa_affinity': '1', 'gpu_numa_id': None}
    assert topo['affinity']['mlx5_0'] == {'cpu_affinity': None, 'numa_affinity': None, 'gpu_numa_id': None}
    assert topo['matrix']['GPU0'] == {'GPU1': 'NV18', 'mlx5_0': 'PIX', 'mlx5_1': 'SYS'}
    assert topo['matrix']['mlx5_1'] == {'GPU0': 'SYS', 'GPU1': 'PIX', 'mlx5_0': 'SYS'}


def test_topo_recorded_tabbed_row_with_empty_cpu_affinity(corpus_file):
    """The recorded H100 row with its CPU Affinity cell emptied: the extra tab nvidia-smi prints before 'GPU NUMA ID'
    is dropped where it stands, not the first empty cell (which gave CPU '0' and NUMA None)."""
    text = corpus_file('nvidia_smi/topo-m-h100-single-ansi.txt').read_text()
    assert 'GPU0\t X \t0-19\t0\t\tN/A' in text
    topo = nvidia_smi.parse_topo_matrix(text.replace('GPU0\t X \t0-19\t0\t\tN/A', 'GPU0\t X \t\t0\t\tN/A'))
    assert topo['affinity']['GPU0'] == {'cpu_affinity': None, 'numa_affinity': '0', 'gpu_numa_id': None}


@pytest.mark.parametrize('name', ['topo-m-8xA100-NV12-mleng.txt', 'topo-m-8xH100-NV18-mleng.txt'])
def test_topo_recorded_space_aligned_row_with_empty_cell(name, corpus_file):
    """The recorded space-aligned matrices with the GPU0 CPU Affinity blanked (same width): read by position."""
    text = corpus_file('nvidia_smi/' + name).read_text()
    orig = nvidia_smi.parse_topo_matrix(text)
    row = next(line for line in text.splitlines() if line.startswith('GPU0 '))
    cpu = orig['affinity']['GPU0']['cpu_affinity']
    blanked = nvidia_smi.parse_topo_matrix(text.replace(row, row.replace(cpu, ' ' * len(cpu))))
    assert blanked['affinity']['GPU0'] == {'cpu_affinity': None, 'numa_affinity': '0'}
    assert blanked['matrix'] == orig['matrix'] and blanked['affinity']['GPU7'] == orig['affinity']['GPU7']


def test_topo_row_not_aligned_with_its_header_guesses_no_affinity():
    """Blanks collapsed to one (cells no longer under their labels) and a cell missing: the links are read in
    order, the affinity cells are not guessed."""
    text = ('      GPU0  GPU1  CPU Affinity  NUMA Affinity\n'
            'GPU0 X NV12 0\n'
            'GPU1  NV12   X    24-47         1\n')
    topo = nvidia_smi.parse_topo_matrix(text)
    assert topo['matrix']['GPU0'] == {'GPU1': 'NV12'}
    assert topo['affinity']['GPU0'] == {'cpu_affinity': None, 'numa_affinity': None}
    assert topo['affinity']['GPU1'] == {'cpu_affinity': '24-47', 'numa_affinity': '1'}


def test_topo_garbled_labels_are_not_merged():
    """Found by the property tests: a header naming one device twice, or a NIC legend naming two NICs alike, mapped
    a cell of one device onto another (a row listing itself as a peer)."""
    text = (HAND_MADE / 'nvidia-smi-topo-m-nic-legend-HANDMADE.txt').read_text()
    header = next(line for line in text.splitlines() if line.startswith('\tGPU0'))
    assert nvidia_smi.parse_topo_matrix(text.replace(header, header.replace('NIC1', 'NIC0'))) == {}
    topo = nvidia_smi.parse_topo_matrix(text.replace('NIC1: mlx5_1', 'NIC1: mlx5_0'))
    assert topo['devices'][4:] == ['NIC0', 'NIC1', 'NIC2', 'NIC3'] and topo['matrix']['NIC0']['NIC1'] == 'NODE'
    assert all(row not in links for row, links in topo['matrix'].items())


# --- the fields gpu_settings reads: power limits, clocks, processes, supported clocks, mig -lgi -----------
SETTINGS_EXPECTED = {
    # file -> (persistence, compute mode, ECC current/pending, power limit, min, max, app clocks, supported mem clocks, PIDs)
    'xml-telegraf-A10G-515.xml': ('Disabled', 'Default', ('Enabled', 'Enabled'), 300, 100, 300,
                                  {'graphics_mhz': 1710, 'memory_mhz': 6251}, [6251, 405], [725]),
    'xml-telegraf-2xA5000-590-v13.xml': ('Enabled', 'Default', ('Disabled', 'Disabled'), 230, 100, 230, None,
                                         [8001, 7601, 5001, 810, 405], [100477]),
}


def test_settings_fields_on_every_recording(nvsmi_xml_file):
    text = nvsmi_xml_file.read_text(errors='replace')
    facts = nvidia_smi.parse_query_xml(text)
    supported = nvidia_smi.parse_supported_clocks(text)
    assert len(supported) == facts['count']
    for gpu, clocks in zip(facts['gpus'], supported):
        low, high, limit = gpu['power_limit_min'], gpu['power_limit_max'], gpu['power_limit_enforced']
        if None not in (low, high, limit):
            assert low <= limit <= high
        for key in ('applications_clocks', 'default_applications_clocks', 'max_clocks'):
            assert set(gpu[key]) == {'graphics_mhz', 'memory_mhz'}
            assert all(v is None or isinstance(v, int) for v in gpu[key].values())
        assert all(isinstance(p['pid'], int) for p in gpu['processes'])
        assert gpu['compute_mode'] in (None, 'Default', 'Exclusive_Process', 'Prohibited', 'Exclusive_Thread')
        assert clocks is None or all(c['graphics_mhz'] and isinstance(c['memory_mhz'], int) for c in clocks)
    exp = SETTINGS_EXPECTED.get(nvsmi_xml_file.name)
    if exp:
        gpu = facts['gpus'][0]
        assert gpu['persistence_mode'] == exp[0] and gpu['compute_mode'] == exp[1]
        assert (gpu['ecc_mode']['current'], gpu['ecc_mode']['pending']) == exp[2]
        assert (gpu['power_limit_enforced'], gpu['power_limit_min'], gpu['power_limit_max']) == exp[3:6]
        app = gpu['applications_clocks']
        assert (app if app['graphics_mhz'] is not None else None) == exp[6]
        assert [c['memory_mhz'] for c in supported[0]] == exp[7]
        assert [p['pid'] for p in gpu['processes']] == exp[8]


def test_supported_clocks_unreadable_block_gives_none(corpus):
    text = _a10g(corpus)
    broken = text.replace('<supported_mem_clock>', '</supported_mem_clock>\n<supported_mem_clock>', 1)
    assert nvidia_smi.parse_supported_clocks(broken) == [None]
    assert nvidia_smi.parse_supported_clocks(text)[0][0]['graphics_mhz'][0] == 1710


# HANDMADE: the GPU instance table in the layout of NVIDIA's MIG user guide (no recording in the corpus).
LGI_HANDMADE = """+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 3g.40gb          9        2          0:4     |
+-------------------------------------------------------+
|   0  MIG 1g.10gb+me      20        9          6:1     |
+-------------------------------------------------------+
"""


def test_mig_gpu_instances_hand_made():
    rows = nvidia_smi.parse_mig_gpu_instances(LGI_HANDMADE)
    assert [(r['gpu'], r['profile_name'], r['profile_id'], r['instance_id'], r['placement_start'], r['placement_size'])
            for r in rows] == [(0, '3g.40gb', 9, 2, 0, 4), (0, '1g.10gb+me', 20, 9, 6, 1)]
    assert nvidia_smi.parse_mig_gpu_instances('No GPU instances found: Not Found\n') == []
    for bad in ('', 'Failed to initialize NVML: Driver/library version mismatch', LGI_HANDMADE[:40]):
        with pytest.raises(nvidia_smi.NvidiaSmiParseError):
            nvidia_smi.parse_mig_gpu_instances(bad)
