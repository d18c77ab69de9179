# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_bench end to end with the replay program standing in for nccl-tests, mpirun and srun."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import nccl_bench

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
HAND = FIXTURES / 'hand_made'
TOOLS_HAND = FIXTURES.parents[1] / 'fixtures' / 'hand_made' / 'nccl_tests'
REPO = FIXTURES.parents[2]
sys.path.insert(0, str(FIXTURES / 'replay'))
from replay import calls, make_replay, run_playbook  # noqa: E402  pylint: disable=wrong-import-position

ALLREDUCE = 'nccl_tests/superbench-allreduce-8xA100-40GB.txt'
MPIRUN_LOG = 'nccl_tests/aws-batch-mpirun-prefixed-avg.txt'
SRUN_LOG = 'nccl_tests/aws-2x-p4de-16xA100-efa-srun-prefixed.txt'


@pytest.fixture
def own_deprecations(monkeypatch):
    """The deprecations of this test's module runs, returned in the result as on a target: ansible-core collects
    them in a process-wide list, and once controller code was imported in this worker they would go to its display."""
    from ansible.module_utils import _internal
    from ansible.module_utils.common import warnings
    monkeypatch.setattr(_internal, 'is_controller', False)
    monkeypatch.setattr(warnings, '_global_deprecations', type(warnings._global_deprecations)())


def test_local_pass(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    result = run_module(nccl_bench.main, {'executable': exe, 'gpus_per_process': 8, 'min_busbw_gbytes_per_s': 200,
                                          'min_avg_busbw': 60, 'iterations': 20})
    assert 'failed' not in result and result['changed'] is False
    assert result['avg_busbw'] == 68.4048 and result['avg_busbw_source'] == 'tool'
    assert result['busbw_at_check'] == 235.26 and result['check_size'] == 8589934592
    assert result['max_busbw'] == 235.26 and len(result['rows']) == 34 and result['devices'] == 8
    assert result['out_of_bounds'] == 0 and result['failures'] == []
    assert calls(log)[0]['argv'] == ['-b', '8', '-e', '8G', '-f', '2', '-g', '8', '-c', '1', '-n', '20']


def test_below_min_busbw_names_rung_gpus_figure_and_command(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    result = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 300, 'rung': 'nccl-node'})
    assert result['failed'] is True
    msg = result['msg']
    assert msg.startswith('nccl-node (all_reduce_perf): busbw at 8589934592 B on 8 ranks/8 GPUs on localhost')
    assert '(A100-SXM4-40GB)' in msg and '= 235.26 GB/s < threshold 300.00 GB/s' in msg
    assert 'cmd: %s -b 8 -e 8G' % exe in msg
    assert len(result['rows']) == 34 and result['avg_busbw'] == 68.4048  # full result on failure


def test_check_size_row_missing_is_a_failure(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    ok = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 150, 'check_size': '32M'})
    assert 'failed' not in ok and ok['busbw_at_check'] == 156.89
    result = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 1, 'check_size': '3M'})
    assert result['failed'] is True and 'busbw at 3145728 B on 8 ranks' in result['msg']
    assert 'is missing (threshold 1.00 GB/s)' in result['msg']


def test_out_of_bounds_and_wrong_rows_fail(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf',
                             {'stdout': str(HAND / 'nccl-allreduce-2gpu-out-of-bounds-FAILED-HANDMADE.txt')})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert result['failed'] is True
    assert 'out of bounds values = 2 FAILED on 2 ranks/2 GPUs on gpu007 (NVIDIA H100 80GB HBM3)' in result['msg']
    assert '#wrong > 0 at sizes 536870912' in result['msg']
    assert result['wrong_rows'] == [536870912] and len(result['failures']) == 2


def test_tool_failure_without_rows(tmp_path, run_module):
    text = ('# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n'
            'gpu001: Test NCCL failure common.cu:958 \'unhandled system error\'\n')
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout_text': text, 'rc': 3,
                                                           'stderr_text': 'gpu001:1:1 [0] NCCL WARN bootstrap\n'})
    result = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 100,
                                          'env': {'NCCL_IB_HCA': 'mlx5_0'}, 'rung': 'nccl-pair'})
    assert result['failed'] is True
    assert result['failures'][0].startswith('nccl-pair (all_reduce_perf): local GPUs (no rank lines) '
                                            'NCCL_IB_HCA=mlx5_0 exited with rc=3 (gpu001:1:1 [0] NCCL WARN bootstrap)')
    assert 'no data rows parsed' in result['failures'][1]
    assert result['errors'] == ["Test NCCL failure common.cu:958 'unhandled system error'"]


def test_rc_nonzero_fails_even_with_good_rows(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE)), 'rc': 1})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert result['failed'] is True and 'exited with rc=1' in result['msg'] and len(result['rows']) == 34


def test_timeout_kills_the_run(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE)), 'sleep': 30})
    result = run_module(nccl_bench.main, {'executable': exe, 'timeout': 1})
    assert result['failed'] is True and result['rc'] == -9 and result['elapsed'] < 10
    assert 'did not finish within timeout 1 s (killed)' in result['msg']


def test_mpirun_passes_env_with_x_and_parses_tagged_output(corpus_file, tmp_path, run_module):
    mpirun, log = make_replay(tmp_path, 'mpirun', {'stdout': str(corpus_file(MPIRUN_LOG))})
    result = run_module(nccl_bench.main, {
        'launcher': 'mpirun', 'launcher_executable': mpirun, 'executable': 'all_reduce_perf',
        'hosts': ['gpu001', 'gpu002'], 'ranks_per_host': 8, 'launcher_args': ['--bind-to', 'none'],
        'env': {'NCCL_IB_HCA': '=mlx5_0,mlx5_3', 'NCCL_SOCKET_IFNAME': 'bond0'}, 'min_busbw_gbytes_per_s': 400,
        'begin_size': '8', 'end_size': '16G'})
    assert 'failed' not in result, result['msg']
    assert result['avg_busbw'] == 156.742 and result['busbw_at_check'] == 483.05 and len(result['rows']) == 32
    assert calls(log)[0]['argv'] == [
        '-np', '16', '-H', 'gpu001:8,gpu002:8', '-x', 'LC_ALL=C', '-x', 'NCCL_IB_HCA==mlx5_0,mlx5_3',
        '-x', 'NCCL_SOCKET_IFNAME=bond0', '--bind-to', 'none', 'all_reduce_perf',
        '-b', '8', '-e', '16G', '-f', '2', '-g', '1', '-c', '1']


def test_srun_passes_env_through_environment(corpus_file, tmp_path, run_module):
    srun, log = make_replay(tmp_path, 'srun', {'stdout': str(corpus_file(SRUN_LOG))}, env_keys=['NCCL_IB_HCA', 'LC_ALL'])
    result = run_module(nccl_bench.main, {
        'launcher': 'srun', 'launcher_executable': srun, 'hosts': ['p4de-1', 'p4de-2'],
        'env': {'NCCL_IB_HCA': 'mlx5'}, 'min_busbw_gbytes_per_s': 80, 'rung': 'nccl-2node'})
    assert result['failed'] is True  # 78.33 < 80, figure computed avg since the excerpt has no Avg line
    assert result['complete'] is False and 'output on hosts p4de-1,p4de-2 (no rank lines) NCCL_IB_HCA=mlx5 is ' \
        'incomplete: no "# Out of bounds values" or "# Avg bus bandwidth" line after the last row' in result['msg']
    assert result['avg_busbw_source'] == 'computed' and result['busbw_at_check'] == 78.33
    assert 'nccl-2node (all_reduce_perf): busbw at 2147483648 B on hosts p4de-1,p4de-2 (no rank lines) ' \
           'NCCL_IB_HCA=mlx5 = 78.33 GB/s < threshold 80.00 GB/s' in result['msg']
    call = calls(log)[0]
    assert call['env'] == {'NCCL_IB_HCA': 'mlx5', 'LC_ALL': 'C'}
    assert call['argv'][:5] == ['--export=ALL', '--ntasks-per-node=8', '-N', '2', '-w', 'p4de-1,p4de-2'][:5]


def test_hostname_prefixed_wrapped_multinode(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf',
                             {'stdout': str(HAND / 'nccl-allreduce-2x8-H100-hostname-prefix-wrapped-HANDMADE.txt')})
    result = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 450, 'expected_ranks': 16})
    assert 'failed' not in result, result['msg']
    assert result['hosts'] == ['gpu001', 'gpu002'] and result['nranks'] == 16 and len(result['rows']) == 4
    assert len(result['nccl_warnings']) == 1
    bad = run_module(nccl_bench.main, {'executable': exe, 'expected_ranks': 32})
    assert bad['failed'] is True and '16 rank lines on 16 ranks/16 GPUs on gpu001,gpu002' in bad['msg']


def test_check_mode_runs_nothing(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    result = run_module(nccl_bench.main, {'executable': exe, '_ansible_check_mode': True})
    assert result['skipped'] is True and result['changed'] is False
    assert result['msg'] == 'skipped: check mode, all_reduce_perf not run'
    assert result['cmd'].startswith(exe) and calls(log) == []


def test_missing_executable_fails(tmp_path, run_module, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    result = run_module(nccl_bench.main, {'executable': 'all_reduce_perf'})
    assert result['failed'] is True and 'all_reduce_perf not found on PATH' in result['msg']


def test_bad_size_fails(tmp_path, run_module):
    result = run_module(nccl_bench.main, {'executable': 'x', 'check_size': 'big'})
    assert result['failed'] is True and "not a size: 'big'" in result['msg']


def test_adhoc_pass_fail_and_check(corpus_file, tmp_path, run_adhoc):
    exe, log = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    rc, res = run_adhoc('nccl_bench', {'executable': exe, 'min_busbw_gbytes_per_s': 200})
    assert rc == 0 and res['avg_busbw'] == 68.4048 and res['changed'] is False
    rc, res = run_adhoc('nccl_bench', {'executable': exe, 'min_busbw_gbytes_per_s': 250, 'rung': 'nccl-node'})
    assert rc == 2 and res['changed'] is False and res['busbw_at_check'] == 235.26
    assert 'nccl-node (all_reduce_perf): busbw at 8589934592 B' in res['msg'] and '235.26 GB/s < threshold 250.00' in res['msg']
    assert len(calls(log)) == 2


def test_playbook_check_mode(corpus_file, tmp_path, run_adhoc):  # run_adhoc: skips without the venv/link
    exe, log = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    rc, res = run_playbook(REPO, 'nccl_bench', {'executable': exe, 'min_busbw_gbytes_per_s': 200}, check=True, tmpdir=tmp_path)
    assert rc == 0 and res['skipped'] is True and res['changed'] is False
    assert res['msg'] == 'skipped: check mode, all_reduce_perf not run' and calls(log) == []


def _without_closing_lines(text):
    return '\n'.join(line for line in text.splitlines()
                     if not line.startswith(('# Out of bounds', '# Avg bus bandwidth'))) + '\n'


def test_full_output_is_complete(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert 'failed' not in result, result['msg']
    assert result['complete'] is True and result['malformed'] == [] and result['error_exceeded'] == []
    assert result['avg_busbw_status'] is None


def test_cut_output_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """The real all-reduce run with its closing lines removed: every row reads, no threshold is set, still a failure."""
    text = _without_closing_lines(corpus_file(ALLREDUCE).read_text())
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout_text': text})
    result = run_module(nccl_bench.main, {'executable': exe, 'rung': 'nccl-node'})
    assert result['failed'] is True and result['complete'] is False and len(result['rows']) == 34
    assert result['failures'] == [
        'nccl-node (all_reduce_perf): output on 8 ranks/8 GPUs on localhost (A100-SXM4-40GB) is incomplete: no '
        '"# Out of bounds values" or "# Avg bus bandwidth" line after the last row (cut off or garbled output is not '
        'accepted); cmd: %s -b 8 -e 8G -f 2 -g 1 -c 1' % exe]


def test_output_cut_mid_table_fails(corpus_file, tmp_path, run_module):
    """Cut after the 1 MiB row (a run killed half way): the rows read so far are returned, the run fails."""
    lines = corpus_file(ALLREDUCE).read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if line.split()[:1] == ['1048576'])
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout_text': '\n'.join(lines[:cut + 1]) + '\n'})
    result = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 10, 'check_size': '1M'})
    assert result['failed'] is True and result['busbw_at_check'] == 24.54 and result['complete'] is False
    assert len(result['failures']) == 1 and 'is incomplete' in result['msg']


def test_garbled_row_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """One figure of the 1 MiB row of the real run garbled (a byte flipped in transfer): not accepted."""
    text = corpus_file(ALLREDUCE).read_text()
    row = next(line for line in text.splitlines() if line.split()[:1] == ['1048576'])
    text = text.replace(row, row.replace('14.02', '14.0?'))
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout_text': text})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert result['failed'] is True and result['complete'] is True and len(result['rows']) == 33
    assert result['malformed'] == [row.replace('14.02', '14.0?').strip()]
    assert '1 malformed row(s) on 8 ranks/8 GPUs on localhost (A100-SXM4-40GB): \'1048576' in result['msg']
    assert 'garbled output is not accepted' in result['msg'] and len(result['failures']) == 1


def test_old_layout_error_asterisk_fails(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf',
                             {'stdout': str(TOOLS_HAND / 'nccl-allreduce-oldformat-error-asterisk-HANDMADE.txt')})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert result['failed'] is True and result['error_exceeded'] and result['complete'] is True
    assert "error above the tool's threshold (flagged *) at sizes %d" % result['error_exceeded'][0] in result['msg']
    assert '#wrong > 0' not in result['msg']  # the old layout has no #wrong column


def test_avg_busbw_failed_status_fails(corpus_file, tmp_path, run_module):
    """HANDMADE variant of the real run: rccl-tests append FAILED to the Avg line when NCCL_TESTS_MIN_BW is not met
    (ROCm/rccl-tests src/common.cu); the superbench recording is from nccl-tests, which prints no status."""
    text = corpus_file(ALLREDUCE).read_text().replace('# Avg bus bandwidth    : 68.4048',
                                                      '# Avg bus bandwidth    : 68.4048 FAILED')
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout_text': text})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert result['failed'] is True and result['avg_busbw_status'] == 'FAILED'
    assert result['failures'][0].startswith('nccl (all_reduce_perf): Avg bus bandwidth 68.4048 FAILED (the tool')


def test_failed_run_in_a_log_of_several_fails_with_rc_0(tmp_path, run_module):
    """A job script ran three binaries and exited 0; all_gather_perf printed 'Test NCCL failure' and no table. The
    other two runs are clean and closed: the module still fails and names the run, its binary and lines."""
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf',
                             {'stdout': str(HAND / 'nccl-3runs-8xH100-allgather-test-nccl-failure-HANDMADE.txt'), 'rc': 0})
    result = run_module(nccl_bench.main, {'executable': exe, 'rung': 'nccl-node'})
    assert result['failed'] is True and result['rc'] == 0 and result['complete'] is True and len(result['rows']) == 6
    assert len(result['failures']) == 1
    assert result['failures'][0].startswith(
        "nccl-node (all_reduce_perf): run 2 (all_gather_perf, from line 32) printed failure line(s): line 44: Test "
        "NCCL failure common.cu:1279 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '; line 45: .. "
        "gpu021 pid 51200: Test failure common.cu:1112 on 8 ranks/8 GPUs on gpu021")
    assert [(r['index'], r['binary'], r['complete']) for r in result['runs']] == [
        (1, 'all_reduce_perf', True), (2, 'all_gather_perf', False), (3, 'reduce_scatter_perf', True)]


def test_recorded_runs_back_to_back_pass(corpus_file, tmp_path, run_module):
    text = corpus_file(ALLREDUCE).read_text() + corpus_file('nccl_tests/deepops-slurm-allreduce-1M-4G-oldformat.txt').read_text()
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout_text': text})
    result = run_module(nccl_bench.main, {'executable': exe})
    assert 'failed' not in result, result['msg']
    assert [(r['index'], r['rows'], r['complete']) for r in result['runs']] == [(1, 34, True), (2, 13, True)]


def test_multiline_nccl_info_run_passes(tmp_path, run_module):
    """NCCL_DEBUG=INFO messages of several lines inside the table: a clean run, not 'malformed rows'."""
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf',
                             {'stdout': str(HAND / 'nccl-allreduce-8xH100-debug-info-multiline-HANDMADE.txt')})
    result = run_module(nccl_bench.main, {'executable': exe, 'env': {'NCCL_DEBUG': 'INFO'}, 'min_busbw_gbytes_per_s': 400})
    assert 'failed' not in result, result['msg']
    assert result['malformed'] == [] and len(result['rows']) == 4 and result['busbw_at_check'] == 418.67


def test_busbw_threshold_carries_the_unit_old_name_is_a_deprecated_alias(corpus_file, tmp_path, run_module,
                                                                         own_deprecations):
    """min_busbw_gbytes_per_s (GB/s, as nccl-tests prints busbw); the old min_busbw checks the same, with a
    deprecation (removed in 2.0.0); a bad value given by the old name is refused naming it."""
    exe, dummy = make_replay(tmp_path, 'all_reduce_perf', {'stdout': str(corpus_file(ALLREDUCE))})
    new = run_module(nccl_bench.main, {'executable': exe, 'min_busbw_gbytes_per_s': 300})
    assert new['failed'] is True and not new.get('deprecations')
    assert '= 235.26 GB/s < threshold 300.00 GB/s' in new['msg']
    old = run_module(nccl_bench.main, {'executable': exe, 'min_busbw': 300})
    assert old['failed'] is True and old['failures'] == new['failures']
    deprecations = json.dumps(old['deprecations'])
    assert "Alias 'min_busbw' is deprecated" in deprecations and '2.0.0' in deprecations
    assert 'gpufleet.cluster' in deprecations
    assert 'failed' not in run_module(nccl_bench.main, {'executable': exe, 'min_busbw': 235})
    bad = run_module(nccl_bench.main, {'executable': exe, 'min_busbw': -1, 'min_avg_busbw': -1})
    assert bad['failed'] is True and bad['failures'] == [
        'min_busbw (alias of min_busbw_gbytes_per_s) must be a finite number >= 0.0, got -1.0',
        'min_avg_busbw must be a finite number >= 0.0, got -1.0']
