# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_tests.evaluate (a parsed nccl-tests output and the nccl_bench thresholds -> failures and figures) on the
recorded outputs the parser and module tests use, and on hand-made edge cases named as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import nccl_tests

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
SUPERBENCH = 'nccl_tests/superbench-allreduce-8xA100-40GB.txt'  # recorded, in the bundled corpus subset
AWS = 'nccl_tests/aws-batch-mpirun-prefixed-avg.txt'
DEEPOPS_OLD = 'nccl_tests/deepops-k8s-roce-allreduce-oldformat-error-col.txt'
RUNG = 'nccl (all_reduce_perf)'
SUPERBENCH_WHO = '8 ranks/8 GPUs on localhost (A100-SXM4-40GB)'


def params(**kw):
    """The nccl_bench options evaluate reads, at the module's defaults."""
    out = dict(check_size=None, min_busbw_gbytes_per_s=None, min_avg_busbw=None, expected_ranks=None, hosts=[],
               env={})
    out.update(kw)
    return out


def evaluate(text, **kw):
    return nccl_tests.evaluate(nccl_tests.parse(text), params(**kw), RUNG, 'CMD')


def test_recorded_run_within_thresholds_passes(corpus_file):
    failures, summary = evaluate(corpus_file(SUPERBENCH).read_text(), min_busbw_gbytes_per_s=230.0,
                                 min_avg_busbw=60.0, expected_ranks=8)
    assert failures == []
    assert (summary['check_size'], summary['busbw_at_check']) == (8589934592, 235.26)
    assert (summary['avg_busbw'], summary['avg_busbw_source'], summary['nranks']) == (68.4048, 'tool', 8)


@pytest.mark.parametrize('name', [SUPERBENCH, AWS, DEEPOPS_OLD])
def test_recorded_runs_pass_without_thresholds(name, corpus_file):
    failures, summary = evaluate(corpus_file(name).read_text())
    assert failures == []
    assert summary == nccl_tests.summarize(nccl_tests.parse(corpus_file(name).read_text()))


def test_thresholds_missed_name_rung_subject_figure_and_command(corpus_file):
    failures, dummy = evaluate(corpus_file(SUPERBENCH).read_text(), min_busbw_gbytes_per_s=300.0, min_avg_busbw=100.0,
                               expected_ranks=16)
    assert failures == [
        '%s: busbw at 8589934592 B on %s = 235.26 GB/s < threshold 300.00 GB/s; cmd: CMD' % (RUNG, SUPERBENCH_WHO),
        '%s: avg busbw (tool) on %s = 68.40 GB/s < threshold 100.00 GB/s; cmd: CMD' % (RUNG, SUPERBENCH_WHO),
        '%s: 8 rank lines on %s, expected 16; cmd: CMD' % (RUNG, SUPERBENCH_WHO)]


@pytest.mark.parametrize('check_size', ['3M', 3145728])
def test_missing_figure_at_check_size_is_a_failure(check_size, corpus_file):
    """No row of 3 MiB in the recorded table: the threshold's figure is missing, which fails, never passes."""
    failures, summary = evaluate(corpus_file(SUPERBENCH).read_text(), check_size=check_size,
                                 min_busbw_gbytes_per_s=1.0)
    assert summary['busbw_at_check'] is None and summary['check_size'] == 3145728
    assert failures == ['%s: busbw at 3145728 B on %s is missing (threshold 1.00 GB/s); cmd: CMD'
                        % (RUNG, SUPERBENCH_WHO)]


def test_check_size_in_the_table_is_checked(corpus_file):
    text = corpus_file(SUPERBENCH).read_text()
    row = [r for r in nccl_tests.parse(text)['rows'] if r['size'] == 33554432][0]
    failures, summary = evaluate(text, check_size='32M', min_busbw_gbytes_per_s=row['oop_busbw'])
    assert failures == [] and summary['busbw_at_check'] == row['oop_busbw']
    failures, dummy = evaluate(text, check_size='32M', min_busbw_gbytes_per_s=row['oop_busbw'] + 0.01)
    assert len(failures) == 1 and failures[0].startswith('%s: busbw at 33554432 B on ' % RUNG)


def test_no_data_rows_is_a_failure_whatever_the_thresholds():
    """Hand-made edge case: an empty output."""
    for kw in ({}, {'min_busbw_gbytes_per_s': 1.0, 'min_avg_busbw': 1.0}):
        failures, summary = evaluate('', **kw)
        assert failures == ['%s: no data rows parsed from the output on local GPUs (no rank lines) (missing figures '
                            'fail); cmd: CMD' % RUNG]
        assert summary['busbw_at_check'] is None and summary['avg_busbw'] is None


def test_out_of_bounds_2_failed_run_fails_hand_made():
    """HAND-MADE output (hand_made/README.md): #wrong 2 in one row and '# Out of bounds values : 2 FAILED'."""
    text = (HAND / 'nccl-allreduce-2gpu-out-of-bounds-FAILED-HANDMADE.txt').read_text()
    who = '2 ranks/2 GPUs on gpu007 (NVIDIA H100 80GB HBM3)'
    failures, summary = evaluate(text)
    assert failures == [
        '%s: out of bounds values = 2 FAILED on %s (wrong results); cmd: CMD' % (RUNG, who),
        '%s: #wrong > 0 at sizes 536870912 on %s; cmd: CMD' % (RUNG, who)]
    assert summary['wrong_rows'] == [536870912]
    # the bandwidth is fine: the wrong results alone fail the run
    failures, dummy = evaluate(text, min_busbw_gbytes_per_s=200.0, min_avg_busbw=200.0)
    assert len(failures) == 2


def test_out_of_bounds_failed_verdict_alone_fails_hand_made_edge(corpus_file):
    """Hand-made edge case: the recorded superbench output with its verdict line changed to FAILED (count 0)."""
    text = corpus_file(SUPERBENCH).read_text()
    assert '# Out of bounds values : 0 OK' in text
    failures, dummy = evaluate(text.replace('# Out of bounds values : 0 OK', '# Out of bounds values : 0 FAILED'))
    assert failures == ['%s: out of bounds values = 0 FAILED on %s (wrong results); cmd: CMD' % (RUNG, SUPERBENCH_WHO)]


def test_cut_output_is_a_failure_hand_made_edge(corpus_file):
    """Hand-made edge case: the recorded superbench output cut before its closing lines."""
    text = corpus_file(SUPERBENCH).read_text()
    failures, dummy = evaluate(text[:text.index('# Out of bounds values')])
    assert failures == ['%s: output on %s is incomplete: no "# Out of bounds values" or "# Avg bus bandwidth" line '
                        'after the last row (cut off or garbled output is not accepted); cmd: CMD'
                        % (RUNG, SUPERBENCH_WHO)]


def test_subject_without_rank_lines_names_hosts_and_hca(corpus_file):
    """The recorded AWS output prints no rank lines: messages name the hosts option and NCCL_IB_HCA."""
    failures, dummy = evaluate(corpus_file(AWS).read_text(), hosts=['gpu001', 'gpu002'], env={'NCCL_IB_HCA': 'mlx5_0'},
                               expected_ranks=16)
    assert failures == ['%s: 0 rank lines on hosts gpu001,gpu002 (no rank lines) NCCL_IB_HCA=mlx5_0, expected 16; '
                        'cmd: CMD' % RUNG]
