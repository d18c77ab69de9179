# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""p2p_bandwidth end to end with the replay program standing in for p2pBandwidthLatencyTest / nvbandwidth."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import p2p_bandwidth

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
HAND = FIXTURES / 'hand_made'
REPO = FIXTURES.parents[2]
sys.path.insert(0, str(FIXTURES / 'replay'))
from replay import calls, make_replay, run_playbook  # noqa: E402  pylint: disable=wrong-import-position

NVB = HAND / 'nvbandwidth-4xH100-d2d-HANDMADE.txt'
P2P_READ = FIXTURES.parents[1] / 'fixtures' / 'hand_made' / 'p2p_bandwidth' / 'p2pBandwidthLatencyTest-2xH100-p2p_read-HANDMADE.txt'
KINGHORN = 'p2p_bandwidth/kinghorn-2xRTX4090-p2p-disabled-525.txt'


@pytest.fixture
def own_deprecations(monkeypatch):
    """The deprecations of this test's module runs, returned in the result as on a target: ansible-core collects
    them in a process-wide list, and once controller code was imported in this worker they would go to its display."""
    from ansible.module_utils import _internal
    from ansible.module_utils.common import warnings
    monkeypatch.setattr(_internal, 'is_controller', False)
    monkeypatch.setattr(warnings, '_global_deprecations', type(warnings._global_deprecations)())


def test_gb200_excerpt_is_read_but_not_accepted(corpus_file, tmp_path, run_module):
    """The GB200 recording is an excerpt (one matrix of a published run): every pair reads and meets the
    threshold, but the matrices every run prints after it are absent, so the run is not accepted."""
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest',
                             {'stdout': str(corpus_file('p2p_bandwidth/mleng-4xGB200-unidir-p2p-writes-matrix.txt'))})
    result = run_module(p2p_bandwidth.main, {'executable': exe, 'min_gbytes_per_s': 700, 'expected_gpus': 4})
    assert result['worst_pairs'] == {'unidirectional_p2p_enabled': {'pair': 'GPU 1 -> GPU 0', 'value': 743.89}}
    assert result['checked'] == {'unidirectional_p2p_enabled': 'uni'}
    assert result['failed'] is True and result['failures'] == [
        'p2p (p2pBandwidthLatencyTest): output is incomplete: unidirectional_p2p_disabled, bidirectional_p2p_disabled, '
        'bidirectional_p2p_enabled, latency_p2p_disabled, latency_p2p_enabled not printed (cut off or garbled output '
        'is not accepted); cmd: %s' % exe]


def test_slow_pair_is_named(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest',
                             {'stdout': str(corpus_file('p2p_bandwidth/mleng-4xGB200-unidir-p2p-writes-matrix.txt'))})
    result = run_module(p2p_bandwidth.main, {'executable': exe, 'min_gbytes_per_s': 745, 'rung': 'p2p-node'})
    assert result['failed'] is True
    assert result['failures'][0] == (
        'p2p-node (p2pBandwidthLatencyTest): Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s): '
        'GPU 1 -> GPU 0 = 743.89 GB/s, GPU 3 -> GPU 0 = 744.82 GB/s < threshold 745.00 GB/s; cmd: %s' % exe)
    assert 'output is incomplete' in result['failures'][1] and len(result['failures']) == 2  # an excerpt


def test_missing_row_fails(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest',
                             {'stdout': str(corpus_file('p2p_bandwidth/mleng-8xA100-unidir-p2p-writes-matrix.txt'))})
    result = run_module(p2p_bandwidth.main, {'executable': exe, 'min_gbytes_per_s': 250})
    assert result['failed'] is True
    assert 'is missing figures for 7 pair(s): GPU 7 -> GPU 0, GPU 7 -> GPU 1' in result['msg']


def test_no_peer_access_and_bidir_and_latency(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest',
                             {'stdout': str(corpus_file('p2p_bandwidth/kinghorn-2xRTX4090-p2p-disabled-525.txt'))})
    result = run_module(p2p_bandwidth.main, {'executable': exe, 'min_gbytes_per_s': 20, 'min_bidir_gbytes_per_s': 40,
                                             'max_latency_us': 5})
    assert result['failed'] is True
    msg = result['msg']
    assert 'Bidirectional P2P=Enabled Bandwidth Matrix (GB/s): GPU 0 -> GPU 1 = 31.06 GB/s, GPU 1 -> GPU 0 = 30.84 GB/s < threshold 40.00 GB/s' in msg
    assert 'P2P=Enabled Latency (P2P Writes) Matrix (us): GPU 0 -> GPU 1 = 10.49 us, GPU 1 -> GPU 0 = 10.55 us > threshold 5.00 us' in msg
    assert 'peer access not available (CANNOT Access Peer) for GPU 0 -> GPU 1, GPU 1 -> GPU 0' in msg
    assert 'Unidirectional' not in msg  # 22.18 >= 20
    ok = run_module(p2p_bandwidth.main, {'executable': exe, 'min_gbytes_per_s': 20, 'require_p2p': False})
    assert 'failed' not in ok and ok['matrices']['connectivity']['values']['0']['1'] == 0.0


def test_nvbandwidth(tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'nvbandwidth', {'stdout': str(NVB)})
    result = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe, 'min_gbytes_per_s': 300,
                                             'min_bidir_gbytes_per_s': 600, 'testcases': ['device_to_device_memcpy_write_ce']})
    assert result['failed'] is True
    assert calls(log)[0]['argv'] == ['-t', 'device_to_device_memcpy_write_ce']
    assert 'memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s): GPU 2 <- GPU 3 = 52.10 GB/s < threshold 300.00 GB/s' in result['msg']
    assert 'GPU 2 <-> GPU 3 = 103.95 GB/s < threshold 600.00 GB/s' in result['msg']
    assert result['sums']['device_to_device_memcpy_write_ce'] == 4075.16
    assert result['checked'] == {'device_to_device_memcpy_write_ce': 'uni',
                                 'device_to_device_bidirectional_memcpy_write_ce': 'bidir'}
    ok = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe, 'min_gbytes_per_s': 50})
    assert 'failed' not in ok and ok['worst_pairs']['device_to_device_memcpy_write_ce']['value'] == 52.10


def test_threshold_without_matrix_fails(tmp_path, run_module):
    text = 'Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n          0\n0      6.20\n'
    exe, dummy = make_replay(tmp_path, 'nvbandwidth', {'stdout_text': text})
    result = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe, 'min_gbytes_per_s': 1})
    assert result['failed'] is True and 'no unidirectional GPU-GPU bandwidth matrix printed' in result['msg']


def test_tool_fails(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest', {
        'stdout_text': '[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n', 'stderr_text': 'cudaErrorNoDevice\n', 'rc': 1})
    result = run_module(p2p_bandwidth.main, {'executable': exe})
    assert result['failed'] is True and 'exited with rc=1 (cudaErrorNoDevice)' in result['msg']
    assert 'no GPU-to-GPU matrix parsed' in result['msg']


def test_check_mode_and_adhoc(tmp_path, run_module, run_adhoc):
    exe, log = make_replay(tmp_path, 'nvbandwidth', {'stdout': str(NVB)})
    result = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe, '_ansible_check_mode': True})
    assert result['skipped'] is True and calls(log) == []
    rc, res = run_playbook(REPO, 'p2p_bandwidth', {'tool': 'nvbandwidth', 'executable': exe}, check=True, tmpdir=tmp_path)
    assert rc == 0 and res['skipped'] is True and calls(log) == []
    rc, res = run_adhoc('p2p_bandwidth', {'tool': 'nvbandwidth', 'executable': exe, 'min_gbytes_per_s': 100, 'rung': 'p2p-x'})
    assert rc == 2 and 'p2p-x (nvbandwidth): memcpy CE GPU(row) <- GPU(column)' in res['msg']


def _run_text(tmp_path, run_module, text, **params):
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest', {'stdout_text': text})
    params.setdefault('require_p2p', False)
    return exe, run_module(p2p_bandwidth.main, dict(params, executable=exe))


def test_full_output_passes_without_thresholds(corpus_file, tmp_path, run_module):
    exe, result = _run_text(tmp_path, run_module, corpus_file(KINGHORN).read_text())
    assert 'failed' not in result, result['msg']
    assert result['malformed'] == [] and len(result['matrices']) == 9


def test_cut_output_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """The real 2-GPU run cut before its last matrix (P2P=Enabled latency) and the closing NOTE."""
    text = corpus_file(KINGHORN).read_text()
    exe, result = _run_text(tmp_path, run_module, text[:text.index('P2P=Enabled Latency')])
    assert result['failed'] is True and result['failures'] == [
        'p2p (p2pBandwidthLatencyTest): output is incomplete: latency_p2p_enabled, latency_p2p_enabled_cpu not printed '
        '(cut off or garbled output is not accepted); cmd: %s' % exe]


def test_output_cut_inside_the_last_matrix_fails(corpus_file, tmp_path, run_module):
    """Cut after the first row of the CPU half of the last matrix: its GPU 1 row is missing."""
    text = corpus_file(KINGHORN).read_text()
    exe, result = _run_text(tmp_path, run_module, text[:text.index('     1   5.49   1.78')])
    assert result['failed'] is True and result['failures'] == [
        'p2p (p2pBandwidthLatencyTest): P2P=Enabled Latency (P2P Writes) Matrix (us) CPU is missing figures for '
        '1 pair(s): GPU 1 -> GPU 0; cmd: %s' % exe]


def test_garbled_row_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """A figure of the real bidirectional P2P=Disabled matrix garbled: that row is malformed, the run fails."""
    text = corpus_file(KINGHORN).read_text().replace('     0 918.25  30.92', '     0 918.25  3O.92')
    exe, result = _run_text(tmp_path, run_module, text)
    assert result['failed'] is True and result['malformed'] == ['0 918.25  3O.92']
    assert "1 malformed row(s) on the GPU matrices: '0 918.25  3O.92' (garbled output is not accepted)" in result['msg']


def test_p2p_reads_matrices_are_checked(tmp_path, run_module):
    """HANDMADE --p2p_read run: GPU 1 -> GPU 0 reads are slow (51.30 GB/s) while the writes are fine."""
    exe, ok = _run_text(tmp_path, run_module, P2P_READ.read_text(), min_gbytes_per_s=50, max_latency_us=3.5)
    assert 'failed' not in ok, ok['msg']
    assert ok['checked'] == {'unidirectional_p2p_enabled': 'uni', 'bidirectional_p2p_enabled': 'bidir',
                             'latency_p2p_enabled': 'latency', 'unidirectional_p2p_enabled_reads': 'uni',
                             'latency_p2p_enabled_reads': 'latency'}
    assert ok['worst_pairs']['unidirectional_p2p_enabled_reads'] == {'pair': 'GPU 1 -> GPU 0', 'value': 51.3}
    exe, bad = _run_text(tmp_path, run_module, P2P_READ.read_text(), min_gbytes_per_s=300, max_latency_us=3.05)
    assert bad['failed'] is True and len(bad['failures']) == 2
    assert bad['failures'][0].startswith('p2p (p2pBandwidthLatencyTest): P2P=Enabled Latency (P2P Reads) Matrix (us): '
                                         'GPU 1 -> GPU 0 = 3.06 us > threshold 3.05 us')
    assert bad['failures'][1].startswith('p2p (p2pBandwidthLatencyTest): Unidirectional P2P=Enabled Bandwidth (P2P '
                                         'Reads) Matrix (GB/s): GPU 1 -> GPU 0 = 51.30 GB/s < threshold 300.00 GB/s')


def test_p2p_reads_cut_before_read_latency_fails(tmp_path, run_module):
    """The HANDMADE --p2p_read run cut before its reads latency matrix: the writes are whole, the run is not."""
    text = P2P_READ.read_text()
    exe, result = _run_text(tmp_path, run_module, text[:text.index('P2P=Enabled Latency (P2P Reads)')])
    assert result['failed'] is True and result['failures'] == [
        'p2p (p2pBandwidthLatencyTest): output is incomplete: latency_p2p_enabled_reads, latency_p2p_enabled_reads_cpu '
        'not printed (cut off or garbled output is not accepted); cmd: %s' % exe]


def test_nvbandwidth_requested_testcase_missing_fails(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'nvbandwidth', {'stdout': str(NVB)})
    result = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe,
                                             'testcases': ['device_to_device_memcpy_write_ce', 'all_to_host_memcpy_ce']})
    assert result['failed'] is True and result['failures'] == [
        'p2p (nvbandwidth): output is incomplete: all_to_host_memcpy_ce not printed (cut off or garbled output is not '
        'accepted); cmd: %s -t device_to_device_memcpy_write_ce -t all_to_host_memcpy_ce' % exe]


def test_p2p_read_asked_but_reads_matrices_absent_fails(corpus_file, tmp_path, run_module):
    """--p2p_read was passed but the output (the whole real run of a sample without it) has no (P2P Reads) matrix."""
    exe, result = _run_text(tmp_path, run_module, corpus_file(KINGHORN).read_text(), args=['--p2p_read'])
    assert result['failed'] is True and result['failures'] == [
        'p2p (p2pBandwidthLatencyTest): output is incomplete: unidirectional_p2p_enabled_reads, latency_p2p_enabled_reads, '
        'latency_p2p_enabled_reads_cpu not printed (cut off or garbled output is not accepted); cmd: %s --p2p_read' % exe]


NVB_PCIE = HAND / 'nvbandwidth-4xL40S-no-p2p-pairs-bidir-read-HANDMADE.txt'
BIDIR = 'device_to_device_bidirectional_memcpy_read_ce'


def test_nvbandwidth_bidir_total_checked_and_na_pairs_not_missing(tmp_path, run_module):
    """Bidirectional Read1/Read2/Total: the Total is checked against min_bidir_gbytes_per_s; N/A pairs (no peer access) are
    not 'missing figures' - with require_p2p they fail as what they are, without it they are not applicable."""
    exe, dummy = make_replay(tmp_path, 'nvbandwidth', {'stdout': str(NVB_PCIE)})
    args = {'tool': 'nvbandwidth', 'executable': exe, 'min_gbytes_per_s': 20, 'min_bidir_gbytes_per_s': 40,
            'testcases': ['device_to_device_memcpy_read_ce', BIDIR]}
    result = run_module(p2p_bandwidth.main, dict(args, require_p2p=False))
    assert result['failed'] is True
    assert result['checked'] == {'device_to_device_memcpy_read_ce': 'uni', BIDIR + '_total': 'bidir'}
    assert result['failures'] == [
        'p2p (nvbandwidth): memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s): GPU 3 <-> GPU 2 = 22.07 GB/s '
        '< threshold 40.00 GB/s; cmd: %s -t device_to_device_memcpy_read_ce -t %s' % (exe, BIDIR)]
    assert result['worst_pairs'][BIDIR + '_total'] == {'pair': 'GPU 3 <-> GPU 2', 'value': 22.07}
    ok = run_module(p2p_bandwidth.main, dict(args, require_p2p=False, min_bidir_gbytes_per_s=20))
    assert 'failed' not in ok, ok['msg']
    strict = run_module(p2p_bandwidth.main, dict(args, min_bidir_gbytes_per_s=20))
    assert strict['failed'] is True and len(strict['failures']) == 2
    assert strict['failures'][0].startswith(
        'p2p (nvbandwidth): memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s): N/A (no peer access) for 8 '
        'pair(s): GPU 0 <-> GPU 2, GPU 0 <-> GPU 3, GPU 1 <-> GPU 2')
    assert 'missing figures' not in strict['msg']


def test_nvbandwidth_bidir_part_cut_short_fails(tmp_path, run_module):
    """The one-way parts are not held to a threshold, but a Read1 matrix cut short still fails the run."""
    text = NVB_PCIE.read_text().replace(' 3       N/A       N/A     11.02       N/A\n', '')
    exe, dummy = make_replay(tmp_path, 'nvbandwidth', {'stdout_text': text})
    result = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe, 'require_p2p': False})
    assert result['failed'] is True and len(result['failures']) == 1
    assert result['failures'][0].startswith(
        'p2p (nvbandwidth): memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s) is missing figures for 3 '
        'pair(s): GPU 3 <-> GPU 0, GPU 3 <-> GPU 1, GPU 3 <-> GPU 2')


def test_nvbandwidth_requested_host_testcase_is_whole(tmp_path, run_module):
    """A requested CPU(row) test case (one row) is whole when its row is: not 'missing figures' for GPU 1..3 rows."""
    exe, dummy = make_replay(tmp_path, 'nvbandwidth', {'stdout': str(NVB)})
    result = run_module(p2p_bandwidth.main, {'tool': 'nvbandwidth', 'executable': exe, 'min_gbytes_per_s': 50,
                                             'testcases': ['host_to_device_memcpy_ce', 'device_to_device_memcpy_write_ce']})
    assert 'failed' not in result, result['msg']


def test_threshold_options_carry_the_unit_old_names_are_deprecated_aliases(corpus_file, tmp_path, run_module,
                                                                           own_deprecations):
    """min_gbytes_per_s/min_bidir_gbytes_per_s (GB/s); the old min_gbps/min_bidir_gbps (GB/s despite the name) check
    the same, with a deprecation each (removed in 2.0.0); a bad value given by the old name is refused naming it."""
    exe, dummy = make_replay(tmp_path, 'p2pBandwidthLatencyTest', {'stdout': str(corpus_file(KINGHORN))})
    new = run_module(p2p_bandwidth.main, {'executable': exe, 'require_p2p': False, 'min_gbytes_per_s': 23,
                                          'min_bidir_gbytes_per_s': 40})
    assert new['failed'] is True and not new.get('deprecations')
    assert len(new['failures']) == 2
    assert 'Bidirectional' in new['failures'][0] and '= 30.84 GB/s < threshold 40.00 GB/s' in new['failures'][0]
    assert 'Unidirectional' in new['failures'][1] and 'GPU 0 -> GPU 1 = 22.18 GB/s' in new['failures'][1]
    assert '< threshold 23.00 GB/s' in new['failures'][1]
    old = run_module(p2p_bandwidth.main, {'executable': exe, 'require_p2p': False, 'min_gbps': 23, 'min_bidir_gbps': 40})
    assert old['failed'] is True and old['failures'] == new['failures']
    deprecations = json.dumps(old['deprecations'])
    assert "Alias 'min_gbps' is deprecated" in deprecations and "Alias 'min_bidir_gbps' is deprecated" in deprecations
    assert '2.0.0' in deprecations and 'gpufleet.cluster' in deprecations
    bad = run_module(p2p_bandwidth.main, {'executable': exe, 'min_gbps': -1, 'min_bidir_gbytes_per_s': -2})
    assert bad['failed'] is True and bad['failures'] == [
        'min_gbps (alias of min_gbytes_per_s) must be a finite number >= 0.0, got -1.0',
        'min_bidir_gbytes_per_s must be a finite number >= 0.0, got -2.0']
