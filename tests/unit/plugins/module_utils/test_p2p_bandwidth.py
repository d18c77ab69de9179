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
