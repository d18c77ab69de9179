# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""p2pBandwidthLatencyTest and nvbandwidth parsers on the recorded outputs and a hand-made nvbandwidth run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import p2p_bandwidth as p2p

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'


def test_every_recorded_file_is_covered(corpus, corpus_full):
    files = sorted(p.name for p in (corpus / 'p2p_bandwidth').glob('*')) if (corpus / 'p2p_bandwidth').is_dir() else []
    known = ['kinghorn-2xRTX4090-p2p-disabled-525.txt', 'mleng-4xGB200-unidir-p2p-writes-matrix.txt',
             'mleng-8xA100-unidir-p2p-writes-matrix.txt']
    assert files == known if corpus_full else set(files) <= set(known)


def test_full_run_2x4090_without_peer_access(corpus_file):
    parsed = p2p.parse_p2p(corpus_file('p2p_bandwidth/kinghorn-2xRTX4090-p2p-disabled-525.txt').read_text())
    assert [d['name'] for d in parsed['devices']] == ['NVIDIA GeForce RTX 4090'] * 2
    assert parsed['devices'][1]['pci_bus_id'] == '61'
    assert parsed['peer_access'] == {'0': {'1': False}, '1': {'0': False}}
    assert sorted(parsed['matrices']) == [
        'bidirectional_p2p_disabled', 'bidirectional_p2p_enabled', 'connectivity', 'latency_p2p_disabled',
        'latency_p2p_disabled_cpu', 'latency_p2p_enabled', 'latency_p2p_enabled_cpu', 'unidirectional_p2p_disabled',
        'unidirectional_p2p_enabled']
    m = parsed['matrices']
    assert m['connectivity']['values'] == {'0': {'0': 1.0, '1': 0.0}, '1': {'0': 0.0, '1': 1.0}}
    assert m['unidirectional_p2p_disabled']['values']['1'] == {'0': 22.05, '1': 921.88}
    assert m['unidirectional_p2p_enabled']['values']['0']['1'] == 22.18
    assert m['bidirectional_p2p_enabled']['values']['1']['0'] == 30.84
    assert m['latency_p2p_disabled']['values']['0']['1'] == 10.83 and m['latency_p2p_disabled']['unit'] == 'us'
    assert m['latency_p2p_disabled_cpu']['values']['1']['0'] == 5.48
    assert m['latency_p2p_enabled']['values']['1']['0'] == 10.55 and m['latency_p2p_enabled_cpu']['values']['1']['1'] == 1.78
    assert parsed['problems'] == []
    assert p2p.below(m['unidirectional_p2p_enabled'], 100) == [('0', '1', 22.18), ('1', '0', 22.45)]


def test_gb200_nvl4_excerpt(corpus_file):
    parsed = p2p.parse_p2p(corpus_file('p2p_bandwidth/mleng-4xGB200-unidir-p2p-writes-matrix.txt').read_text())
    m = parsed['matrices']['unidirectional_p2p_enabled']
    assert m['rows'] == ['0', '1', '2', '3'] and m['values']['1']['0'] == 743.89 and m['values']['2']['1'] == 750.28
    assert p2p.missing_pairs(m) == [] and p2p.below(m, 744) == [('1', '0', 743.89)]


def test_8xA100_excerpt_has_missing_row(corpus_file):
    parsed = p2p.parse_p2p(corpus_file('p2p_bandwidth/mleng-8xA100-unidir-p2p-writes-matrix.txt').read_text())
    m = parsed['matrices']['unidirectional_p2p_enabled']
    assert len(m['columns']) == 8 and len(m['rows']) == 7  # the author elided GPU 7's row
    assert m['values']['5']['3'] == 270.84 and m['values']['3']['3'] == 1545.50
    assert p2p.missing_pairs(m) == [('7', str(d)) for d in range(7)]
    assert p2p.below(m, 271) == [('5', '3', 270.84)]


def test_nvbandwidth_hand_made():
    parsed = p2p.parse_nvbandwidth((HAND / 'nvbandwidth-4xH100-d2d-HANDMADE.txt').read_text())
    assert parsed['version'] == 'v0.5' and len(parsed['devices']) == 4
    assert parsed['sums'] == {'host_to_device_memcpy_ce': 220.88, 'device_to_device_memcpy_write_ce': 4075.16,
                              'device_to_device_bidirectional_memcpy_write_ce': 8188.58}
    d2d = parsed['matrices']['device_to_device_memcpy_write_ce']
    assert (d2d['engine'], d2d['direction'], d2d['row_kind'], d2d['column_kind']) == ('CE', '<-', 'GPU', 'GPU')
    assert d2d['values']['0']['0'] is None and d2d['values']['3']['1'] == 389.31
    assert p2p.below(d2d, 300) == [('2', '3', 52.10)]
    h2d = parsed['matrices']['host_to_device_memcpy_ce']
    assert h2d['row_kind'] == 'CPU' and h2d['rows'] == ['0'] and h2d['values']['0']['2'] == 55.30


def test_readme_example_and_problems():
    text = 'Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n          0         1\n0      6.20     12.36\n'
    parsed = p2p.parse_nvbandwidth(text)
    assert parsed['matrices']['host_to_device_memcpy_ce']['values'] == {'0': {'0': 6.20, '1': 12.36}}
    bad = p2p.parse_p2p('[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\ncudaGetDeviceCount returned 100\n'
                        '-> no CUDA-capable device is detected\n')
    assert bad['matrices'] == {} and bad['problems'] == ['-> no CUDA-capable device is detected']


# ---- --p2p_read and tool failures (see tests/fixtures/hand_made/p2p_bandwidth/README.md) ----

TOOLS_HAND = Path(__file__).resolve().parents[3] / 'fixtures' / 'hand_made' / 'p2p_bandwidth'


def test_p2p_read_matrices_do_not_replace_the_writes_hand_made():
    parsed = p2p.parse_p2p((TOOLS_HAND / 'p2pBandwidthLatencyTest-2xH100-p2p_read-HANDMADE.txt').read_text())
    m = parsed['matrices']
    assert sorted(m) == [
        'bidirectional_p2p_disabled', 'bidirectional_p2p_enabled', 'connectivity', 'latency_p2p_disabled',
        'latency_p2p_disabled_cpu', 'latency_p2p_enabled', 'latency_p2p_enabled_cpu', 'latency_p2p_enabled_reads',
        'latency_p2p_enabled_reads_cpu', 'unidirectional_p2p_disabled', 'unidirectional_p2p_enabled',
        'unidirectional_p2p_enabled_reads']
    assert m['unidirectional_p2p_enabled']['values']['1']['0'] == 377.10  # writes, not the reads' 51.30
    assert p2p.below(m['unidirectional_p2p_enabled_reads'], 100) == [('1', '0', 51.30)]
    assert m['latency_p2p_enabled']['values']['0']['1'] == 2.95 and m['latency_p2p_enabled_cpu']['values']['1']['0'] == 1.98
    assert m['latency_p2p_enabled_reads']['values']['1']['0'] == 3.06
    assert m['latency_p2p_enabled_reads_cpu']['values']['0']['1'] == 2.01
    assert parsed['peer_access'] == {'0': {'1': True}, '1': {'0': True}}
    assert parsed['problems'] == [] and parsed['malformed'] == []
    assert [d['pci_bus_id'] for d in parsed['devices']] == ['18', '2a']


def test_cuda_failure_mid_run_leaves_missing_pairs():
    """cudaCheckError() prints "Cuda failure <file>:<line>: '<error>'" and exits: the matrix stays incomplete."""
    text = ('Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1 \n'
            "     0 1587.60 376.40 \nCuda failure p2pBandwidthLatencyTest.cu:180: 'an illegal memory access was encountered'\n")
    parsed = p2p.parse_p2p(text)
    matrix = parsed['matrices']['unidirectional_p2p_enabled']
    assert p2p.missing_pairs(matrix) == [('1', '0')]
    assert parsed['problems'] == ["Cuda failure p2pBandwidthLatencyTest.cu:180: 'an illegal memory access was encountered'"]
    died = p2p.parse_p2p('Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n'
                         "Cuda failure p2pBandwidthLatencyTest.cu:240: 'out of memory'\n")
    assert p2p.missing_pairs(died['matrices']['bidirectional_p2p_enabled']) == [('*', '*')]  # title only: all missing


def test_garbled_row_is_malformed_not_read():
    text = ('Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1 \n     0 1603.90 745.80 \n'
            '     1 746.30 ?? 1605.20 \n     \u00b2 1.0 2.0 \n')
    parsed = p2p.parse_p2p(text)
    assert parsed['matrices']['bidirectional_p2p_enabled']['rows'] == ['0']
    assert parsed['malformed'] == ['1 746.30 ?? 1605.20', '\u00b2 1.0 2.0']


# ---- robustness: every recorded output cut, shuffled and garbled ----


def cells(parsed):
    return {(name, src, dst): value for name, matrix in parsed['matrices'].items()
            for src, row in matrix['values'].items() for dst, value in row.items() if value is not None}


@pytest.mark.parametrize('name', ['kinghorn-2xRTX4090-p2p-disabled-525.txt', 'mleng-4xGB200-unidir-p2p-writes-matrix.txt',
                                  'mleng-8xA100-unidir-p2p-writes-matrix.txt'])
def test_cut_shuffled_garbled_never_invent_or_pass_silently(name, corpus_file, damaged_tokens):
    text = corpus_file('p2p_bandwidth/' + name).read_text()
    orig = p2p.parse_p2p(text)
    known = cells(orig)
    for kind, bad in damaged_tokens(text):
        parsed = p2p.parse_p2p(bad)  # never raises
        p2p.parse_nvbandwidth(bad)
        for matrix in parsed['matrices'].values():
            p2p.missing_pairs(matrix)
            p2p.below(matrix, 1.0)
            p2p.above(matrix, 1.0)
        if kind == 'garbled':  # a garbled header may rename a column: then its figures are missing, not moved
            for key, value in cells(parsed).items():
                assert key not in known or known[key] == value or key[0] == 'connectivity', (key, value)
        if kind == 'cut' and parsed['matrices'] != orig['matrices']:
            # cut short: a matrix of the full run is missing or lacks figures
            assert any(n not in parsed['matrices'] or p2p.missing_pairs(parsed['matrices'][n]) for n in orig['matrices']) \
                or p2p.missing_pairs(list(parsed['matrices'].values())[-1]), bad


# ---- nvbandwidth bidirectional parts and N/A pairs (see tests/unit/fixtures/hand_made/README.md) ----

NVB_PCIE = HAND / 'nvbandwidth-4xL40S-no-p2p-pairs-bidir-read-HANDMADE.txt'
BIDIR = 'device_to_device_bidirectional_memcpy_read_ce'


def test_nvbandwidth_bidirectional_read1_read2_total_hand_made():
    """The three matrices of a bidirectional test case ('Read1'/'Read2'/'Total' between GPU(column) and bandwidth)
    are all read, under the keys the tool's SUM lines use."""
    parsed = p2p.parse_nvbandwidth(NVB_PCIE.read_text())
    assert sorted(parsed['matrices']) == [BIDIR + '_read1', BIDIR + '_read2', BIDIR + '_total',
                                          'device_to_device_memcpy_read_ce']
    assert parsed['sums'] == {'device_to_device_memcpy_read_ce': 105.24, BIDIR + '_read1': 83.38,
                              BIDIR + '_read2': 83.39, BIDIR + '_total': 166.77}
    total = parsed['matrices'][BIDIR + '_total']
    assert (total['part'], total['testcase'], total['direction'], total['row_kind'], total['column_kind']) == (
        'total', BIDIR, '<->', 'GPU', 'GPU')
    assert total['values']['3']['2'] == 22.07 and parsed['matrices'][BIDIR + '_read2']['values']['3']['2'] == 11.05
    assert p2p.below(total, 40) == [('3', '2', 22.07)]
    assert parsed['matrices']['device_to_device_memcpy_read_ce']['part'] is None and parsed['problems'] == []


def test_nvbandwidth_na_pairs_are_not_applicable_not_missing_hand_made():
    """N/A is what nvbandwidth prints for a pair without peer access (and the diagonal): not applicable, not a
    missing figure. A cell that cannot be read is still missing."""
    text = NVB_PCIE.read_text()
    parsed = p2p.parse_nvbandwidth(text)
    no_p2p = [('0', '2'), ('0', '3'), ('1', '2'), ('1', '3'), ('2', '0'), ('2', '1'), ('3', '0'), ('3', '1')]
    for matrix in parsed['matrices'].values():
        assert p2p.missing_pairs(matrix) == []
        assert p2p.not_applicable_pairs(matrix) == no_p2p
        assert ['0', '0'] in matrix['not_applicable'] and matrix['values']['0']['2'] is None
    garbled = p2p.parse_nvbandwidth(text.replace(' 1     26.28       N/A       N/A       N/A',
                                                 ' 1     26.28       N/?       N/A       N/A'))
    assert p2p.missing_pairs(garbled['matrices']['device_to_device_memcpy_read_ce']) == []  # 1 -> 1: the diagonal
    garbled = p2p.parse_nvbandwidth(text.replace(' 1     26.28       N/A       N/A       N/A',
                                                 ' 1     26.28       N/A       N/?       N/A'))
    assert p2p.missing_pairs(garbled['matrices']['device_to_device_memcpy_read_ce']) == [('1', '2')]


def test_nvbandwidth_device_to_device_parts_titled_cpu_row():
    """Some nvbandwidth versions title the device-to-device bidirectional parts 'CPU(row) <-> GPU(column)'
    (NVIDIA/nvbandwidth testcases_ce.cpp); the test case says the rows are GPUs."""
    text = NVB_PCIE.read_text().replace('memcpy CE GPU(row) <-> GPU(column)', 'memcpy CE CPU(row) <-> GPU(column)')
    parsed = p2p.parse_nvbandwidth(text)
    assert len(parsed['matrices']) == 4 and {m['row_kind'] for m in parsed['matrices'].values()} == {'GPU'}
    assert parsed['matrices'][BIDIR + '_total']['title'].startswith('memcpy CE CPU(row) <-> GPU(column) Total')
    host = p2p.parse_nvbandwidth('Running host_to_device_bidirectional_memcpy_ce.\n'
                                 'memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)\n          0\n 0     41.20\n')
    assert host['matrices']['host_to_device_bidirectional_memcpy_ce']['row_kind'] == 'CPU'


def test_nvbandwidth_single_row_matrices_are_not_square():
    """nvbandwidth's CPU(row) matrices and its all_to_one/one_to_all cases print one row (the host, or all the other
    GPUs at once; a 1 x N PeerValueMatrix in NVIDIA/nvbandwidth testcases_ce.cpp): their missing figures are the cells
    of that row, not the rows 1..N-1 of a square GPU matrix."""
    h2d = p2p.parse_nvbandwidth((HAND / 'nvbandwidth-4xH100-d2d-HANDMADE.txt').read_text())['matrices']['host_to_device_memcpy_ce']
    assert p2p.missing_pairs(h2d) == []
    parsed = p2p.parse_nvbandwidth('Running all_to_one_write_ce.\nmemcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n'
                                   '           0         1\n 0    120.50    ???\n')
    matrix = parsed['matrices']['all_to_one_write_ce']
    assert matrix['row_kind'] == 'ALL' and p2p.missing_pairs(matrix) == [('0', '1')]
    header_cut = p2p.parse_nvbandwidth('Running device_to_device_memcpy_read_ce.\n'
                                       'memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n           0')
    assert p2p.missing_pairs(header_cut['matrices']['device_to_device_memcpy_read_ce']) == [('*', '*')]


def test_nvbandwidth_garbled_sum_line_does_not_raise():
    """Found by the property tests: a SUM figure garbled to '.20.88' raised ValueError."""
    text = (HAND / 'nvbandwidth-4xH100-d2d-HANDMADE.txt').read_text().replace('220.88', '.20.88')
    parsed = p2p.parse_nvbandwidth(text)
    assert 'host_to_device_memcpy_ce' not in parsed['sums'] and parsed['sums']['device_to_device_memcpy_write_ce'] == 4075.16
