# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl-tests parser on every recorded output of the corpus and on hand-made edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import nccl_tests
from ansible_collections.gpufleet.cluster.plugins.module_utils.bench_common import parse_size, strip_prefix

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'

# file -> (rows, leading columns, check column, avg reported, oob, ranks, last row (size, oop busbw, ip busbw))
RECORDED = {
    'superbench-allreduce-8xA100-40GB.txt': (34, ['size', 'count', 'type', 'redop'], 'error', 68.4048, 0, 8,
                                             (8589934592, 235.26, 235.03)),
    'superbench-allgather-8xA100.txt': (34, ['size', 'count', 'type'], 'error', 58.2651, 0, 8,
                                        (8589934592, 223.39, 230.07)),
    'aws-2x-p4de-16xA100-efa-srun-prefixed.txt': (29, ['size', 'count', 'type', 'redop', 'root'], 'wrong', None, None,
                                                  0, (2147483648, 78.33, 78.33)),
    'aws-batch-mpirun-prefixed-avg.txt': (32, ['size', 'count', 'type', 'redop', 'root'], 'wrong', 156.742, 0, 0,
                                          (17179869184, 483.05, 483.35)),
    'issue287-alltoall-1gpu-rtx5090-NA-wrong.txt': (1, ['size', 'count', 'type', 'redop', 'root'], 'wrong', 0.0, 0, 1,
                                                    (33554432, 0.0, 0.0)),
    'deepops-k8s-roce-allreduce-oldformat-error-col.txt': (29, ['size', 'count', 'type', 'redop'], 'error', 7.76739, 0,
                                                           0, (2147483648, 22.92, 22.85)),
    'deepops-slurm-allreduce-1M-4G-oldformat.txt': (13, ['size', 'count', 'type', 'redop'], 'error', 113.289, 0, 0,
                                                    (4294967296, 191.05, 191.56)),
    'coreweave-gb200-72rank-rack.txt': (5, ['size', 'count', 'type', 'redop', 'root'], 'wrong', 745.53, 0, 1,
                                        (8589934592, 834.57, 846.82)),
}


def test_every_recorded_file_is_covered(corpus, corpus_full):
    files = sorted(p.name for p in (corpus / 'nccl_tests').glob('*'))
    if corpus_full:
        assert files == sorted(RECORDED)
    assert set(files) <= set(RECORDED)


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_recorded(name, corpus_file):
    rows, leading, check, avg, oob, nranks, last = RECORDED[name]
    parsed = nccl_tests.parse(corpus_file('nccl_tests/' + name).read_text())
    assert len(parsed['rows']) == rows
    assert parsed['layout']['leading'] == leading and parsed['layout']['check'] == check
    assert parsed['avg_busbw_reported'] == avg
    assert parsed['out_of_bounds'] == oob
    assert len(parsed['ranks']) == nranks
    assert parsed['malformed'] == [] and parsed['errors'] == []
    assert (parsed['rows'][-1]['size'], parsed['rows'][-1]['oop_busbw'], parsed['rows'][-1]['ip_busbw']) == last
    summary = nccl_tests.summarize(parsed)
    assert summary['wrong_rows'] == []
    assert summary['busbw_at_check'] == last[1] and summary['check_size'] == last[0]
    if avg is None:
        assert summary['avg_busbw_source'] == 'computed'
    else:
        assert summary['avg_busbw'] == avg and summary['avg_busbw_source'] == 'tool'


def test_computed_average_matches_the_tools_own_line(corpus_file):
    """Without the summary line the mean of every busbw is used, as nccl-tests computes it."""
    for name in ('superbench-allreduce-8xA100-40GB.txt', 'aws-batch-mpirun-prefixed-avg.txt',
                 'deepops-slurm-allreduce-1M-4G-oldformat.txt'):
        text = corpus_file('nccl_tests/' + name).read_text()
        reported = nccl_tests.parse(text)['avg_busbw_reported']
        stripped = '\n'.join(l for l in text.splitlines() if 'Avg bus bandwidth' not in l)
        summary = nccl_tests.summarize(nccl_tests.parse(stripped))
        assert summary['avg_busbw_source'] == 'computed'
        assert summary['avg_busbw'] == pytest.approx(reported, abs=0.01)


def test_rows_in_detail(corpus_file):
    parsed = nccl_tests.parse(corpus_file('nccl_tests/aws-2x-p4de-16xA100-efa-srun-prefixed.txt').read_text())
    assert parsed['rows'][0] == {
        'size': 8, 'count': 2, 'type': 'float', 'redop': 'sum', 'root': -1,
        'oop_time_us': 164.3, 'oop_algbw': 0.0, 'oop_busbw': 0.0, 'oop_wrong': 0, 'oop_error': None,
        'ip_time_us': 163.3, 'ip_algbw': 0.0, 'ip_busbw': 0.0, 'ip_wrong': 0, 'ip_error': None}
    row = [r for r in parsed['rows'] if r['size'] == 536870912][0]
    assert (row['oop_time_us'], row['oop_algbw'], row['oop_busbw'], row['ip_time_us']) == (13552.0, 39.62, 74.28, 13548.0)


def test_old_layout_error_column_and_interleaved_info(corpus_file):
    parsed = nccl_tests.parse(corpus_file('nccl_tests/superbench-allreduce-8xA100-40GB.txt').read_text())
    assert parsed['params'] == {'nthread': 1, 'ngpus': 8, 'min_bytes': 1, 'max_bytes': 8589934592, 'step': 2,
                                'step_kind': 'factor', 'warmup_iters': 5, 'iters': 20, 'validation': 0}
    assert parsed['rows'][0]['oop_error'] is None and parsed['rows'][0]['oop_wrong'] is None  # N/A
    assert parsed['ranks'][7] == {'rank': 7, 'group': None, 'pid': 112424, 'host': 'localhost', 'device': 7,
                                  'busid': '0x00', 'name': 'A100-SXM4-40GB'}
    old = nccl_tests.parse(corpus_file('nccl_tests/deepops-slurm-allreduce-1M-4G-oldformat.txt').read_text())
    assert old['rows'][3]['oop_error'] == 1e-06 and old['rows'][0]['ip_error'] == 7e-07


def test_alltoall_na_wrong_is_not_a_failure(corpus_file):
    parsed = nccl_tests.parse(corpus_file('nccl_tests/issue287-alltoall-1gpu-rtx5090-NA-wrong.txt').read_text())
    row = parsed['rows'][0]
    assert row['redop'] == 'none' and row['oop_wrong'] == 0 and row['ip_wrong'] is None
    assert row['ip_algbw'] == 43046.10
    assert parsed['ranks'][0]['host'] == 'GENOA-01' and parsed['ranks'][0]['group'] == 0
    assert parsed['params']['agg_iters'] == 1 and parsed['params']['graph'] == 0


def test_hand_made_hostname_prefix_wrapped_row_and_warn():
    parsed = nccl_tests.parse((HAND / 'nccl-allreduce-2x8-H100-hostname-prefix-wrapped-HANDMADE.txt').read_text())
    assert [r['size'] for r in parsed['rows']] == [1073741824, 2147483648, 4294967296, 8589934592]
    wrapped = parsed['rows'][1]
    assert (wrapped['oop_busbw'], wrapped['ip_time_us'], wrapped['ip_busbw'], wrapped['ip_wrong']) == (444.02, 8466.5, 443.88, 0)
    assert parsed['malformed'] == []
    assert parsed['nccl_warnings'] == ['gpu001:4100:4160 [0] NCCL WARN NET/IB : mlx5_3:1 Got async event : port error']
    summary = nccl_tests.summarize(parsed)
    assert summary['hosts'] == ['gpu001', 'gpu002'] and summary['devices'] == 16 and summary['nranks'] == 16
    assert summary['avg_busbw'] == 460.569


def test_hand_made_out_of_bounds_failed():
    parsed = nccl_tests.parse((HAND / 'nccl-allreduce-2gpu-out-of-bounds-FAILED-HANDMADE.txt').read_text())
    assert parsed['out_of_bounds'] == 2 and parsed['out_of_bounds_status'] == 'FAILED'
    assert nccl_tests.summarize(parsed)['wrong_rows'] == [536870912]


def test_thousand_ranks_with_srun_labels(corpus_file):
    """1024 rank lines (the recorded GB200 rank line pattern), each with an srun --label prefix."""
    text = corpus_file('nccl_tests/coreweave-gb200-72rank-rack.txt').read_text().splitlines()
    ranks = ['%d: #  Rank %4d Group  0 Pid %6d on slurm-gb200-%03d device  %d [0x01] NVIDIA Graphics Device'
             % (r, r, 14000 + r, r // 4, r % 4) for r in range(1024)]
    body = ['0: ' + line for line in text[1:]]
    parsed = nccl_tests.parse('\n'.join(ranks + body))
    summary = nccl_tests.summarize(parsed)
    assert summary['nranks'] == 1024 and summary['devices'] == 1024 and len(summary['hosts']) == 256
    assert len(parsed['rows']) == 5 and parsed['avg_busbw_reported'] == 745.53


def test_truncated_and_garbage_output_gives_no_rows():
    assert nccl_tests.parse('')['rows'] == []
    parsed = nccl_tests.parse('# nThread 1 nGpus 8\nnode1: Test NCCL failure common.cu:1005 \'unhandled system error\'\n')
    assert parsed['rows'] == [] and parsed['errors']
    summary = nccl_tests.summarize(parsed)
    assert summary['avg_busbw'] is None and summary['busbw_at_check'] is None


def test_row_cut_off_is_reported_malformed():
    text = ('#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n'
            '   268435456      67108864     float     sum      -1   1121.4  239.38\n'
            '# Out of bounds values : 0 OK\n')
    parsed = nccl_tests.parse(text)
    assert parsed['rows'] == [] and parsed['malformed'] == ['268435456 67108864 float sum -1 1121.4 239.38']


@pytest.mark.parametrize('line,want', [
    ('[1,0]<stdout>:#  Rank  0', '#  Rank  0'),
    ('0:            8             2', '           8             2'),
    ('123: # Avg', '# Avg'),
    ('gpu-001.cluster: [1,3]<stdout>:   8  2', '  8  2'),
    ('host:3442:3442 [0] NCCL INFO x', 'host:3442:3442 [0] NCCL INFO x'),
    ('           8             2     float', '           8             2     float'),
])
def test_strip_prefix(line, want):
    assert strip_prefix(line) == want


@pytest.mark.parametrize('value,want', [('8', 8), ('8G', 8 * 1024 ** 3), ('128M', 128 * 1024 ** 2), ('1KB', 1024),
                                        (4096, 4096), (None, None)])
def test_parse_size(value, want):
    assert parse_size(value) == want


def test_parse_size_rejects_garbage():
    with pytest.raises(ValueError):
        parse_size('eight')


# ---- real layout variants (hand-made cases; see tests/fixtures/hand_made/nccl_tests/README.md) ----

TOOLS_HAND = Path(__file__).resolve().parents[3] / 'fixtures' / 'hand_made' / 'nccl_tests'


def test_old_layout_error_asterisk_hand_made():
    """nccl-tests 1.x/2.0 and rccl-tests flag an error above threshold with '*' glued to the error cell; the row
    is read (not dropped) and its size counts as a wrong row, with or without the closing lines."""
    text = (TOOLS_HAND / 'nccl-allreduce-oldformat-error-asterisk-HANDMADE.txt').read_text()
    parsed = nccl_tests.parse(text)
    assert [r['size'] for r in parsed['rows']] == [1048576, 2097152, 4194304, 8388608]
    assert parsed['layout'] == {'leading': ['size', 'count', 'type', 'redop'], 'check': 'error'}
    flagged = parsed['rows'][2]
    assert (flagged['oop_error'], flagged['oop_busbw'], flagged['ip_error']) == (2.0, 43.30, 5e-07)
    assert parsed['error_exceeded'] == [4194304] and parsed['malformed'] == [] and parsed['complete'] is True
    assert parsed['out_of_bounds'] == 1 and parsed['out_of_bounds_status'] == 'FAILED'
    summary = nccl_tests.summarize(parsed)
    assert summary['wrong_rows'] == [4194304] and summary['avg_busbw'] == 40.1762
    excerpt = '\n'.join(line for line in text.splitlines() if not line.startswith('# Out of') and 'Avg bus' not in line)
    cut = nccl_tests.parse(excerpt)
    assert nccl_tests.summarize(cut)['wrong_rows'] == [4194304] and cut['complete'] is False


def test_nccl_tests_2_18_wrong_count_printed_with_g_hand_made():
    """nccl-tests prints #wrong with %5g: 16777216 wrong elements read 1.67772e+07 and must not read as 'no figure'."""
    parsed = nccl_tests.parse((TOOLS_HAND / 'nccl-2.18-allreduce-16rank-wrong-g-format-HANDMADE.txt').read_text())
    assert len(parsed['rows']) == 3 and parsed['malformed'] == [] and parsed['errors'] == []
    assert parsed['rows'][1]['oop_wrong'] == 16777200 and parsed['rows'][1]['ip_wrong'] == 0
    assert parsed['params']['agg_iters'] == 1 and parsed['params']['graph'] == 0
    assert parsed['ranks'][15]['busid'] == '0000:8f:00' and parsed['ranks'][15]['host'] == 'gpu-012'
    summary = nccl_tests.summarize(parsed)
    assert summary['wrong_rows'] == [536870912] and summary['hosts'] == ['gpu-011', 'gpu-012']
    assert summary['devices'] == 16 and summary['avg_busbw'] == 459.745 and parsed['complete'] is True


@pytest.mark.parametrize('cell,want', [('0', 0), ('N/A', None), ('-1', None), ('1e+06', 1000000), ('2.5e+07', 25000000)])
def test_wrong_cell_forms(cell, want):
    """'N/A' with -c 0; -1 where forks print 'not checked'; %g exponents above a million."""
    row = '     8388608       2097152     float     sum      -1    88.10   95.22  166.63  %5s    90.19   93.01  162.77      0'
    parsed = nccl_tests.parse(row % cell)
    assert parsed['rows'][0]['oop_wrong'] == want and parsed['layout']['check'] == 'wrong'


def test_timeout_and_garbled_rows_are_not_silently_dropped():
    header = ('#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n')
    good = '   268435456      67108864     float     sum      -1   1121.4  239.38  239.38      0   1121.2  239.43  239.43      0\n'
    garbled = '   536870912     134217728     float     sum      -1   2165.3  247.94  -nan      0   2166.4  247.81  247.81      0\n'
    parsed = nccl_tests.parse(header + good + garbled + 'gpu001: Test timeout (60s) common.cu:456\n')
    assert [r['size'] for r in parsed['rows']] == [268435456]
    assert parsed['malformed'] == [garbled.strip()]
    assert parsed['errors'] == ['Test timeout (60s) common.cu:456'] and parsed['complete'] is False  # host: stripped
    superscript = nccl_tests.parse(header + good.replace('268435456', '26843545\u00b2'))
    assert superscript['rows'] == [] and len(superscript['malformed']) == 1


# ---- robustness: every recorded output cut, shuffled and garbled ----


def figures(parsed):
    """(size, count, figure) -> set of values of every figure that was read."""
    out = {}
    for row in parsed['rows']:
        for key, value in row.items():
            if key not in ('size', 'count', 'type', 'redop', 'root') and value is not None:
                out.setdefault((row['size'], row['count'], key), set()).add(value)
    return out


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_cut_shuffled_garbled_never_invent_or_pass_silently(name, corpus_file, damaged_tokens):
    text = corpus_file('nccl_tests/' + name).read_text()
    orig = nccl_tests.parse(text)
    known = figures(orig)
    for kind, bad in damaged_tokens(text):
        parsed = nccl_tests.parse(bad)  # never raises
        nccl_tests.summarize(parsed)
        nccl_tests.summarize(parsed, check_size=8)
        if kind == 'cut':
            # a cut may fall inside the last figure ('239.38' -> '239.3'): only the missing closing lines tell
            assert parsed['rows'] == orig['rows'] or not parsed['complete'], bad
            continue
        for key, values in figures(parsed).items():
            assert values <= known.get(key, set()), (kind, key, values)  # no invented figure
        if kind == 'garbled' and len(parsed['rows']) < len(orig['rows']):
            # a row went missing: the output says so (a row it could not read, or the closing lines lost)
            assert not parsed['complete'] or parsed['malformed'], (kind, bad)


def test_rccl_min_bw_verdict_on_the_avg_line():
    """rccl-tests append OK/FAILED to the Avg line when NCCL_TESTS_MIN_BW is set (ROCm/rccl-tests src/common.cu)."""
    parsed = nccl_tests.parse('# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 54.8575 FAILED\n')
    assert parsed['avg_busbw_reported'] == 54.8575 and parsed['avg_busbw_status'] == 'FAILED'


# ---- NCCL_DEBUG=INFO: multi-line INFO messages inside the table (see tests/unit/fixtures/hand_made/README.md) ----


def test_multiline_nccl_info_continuations_are_not_rows_hand_made():
    """NCCL prefixes only the first line of a message; the bare lines after it (numbers, a '|' table) are not rows
    of the table, so a clean run is neither short of rows nor 'malformed'."""
    parsed = nccl_tests.parse((HAND / 'nccl-allreduce-8xH100-debug-info-multiline-HANDMADE.txt').read_text())
    assert [r['size'] for r in parsed['rows']] == [134217728, 268435456, 536870912, 1073741824]
    assert parsed['malformed'] == [] and parsed['errors'] == [] and parsed['complete'] is True
    assert parsed['rows'][2]['oop_busbw'] == 413.63 and parsed['rows'][3]['ip_busbw'] == 418.77
    assert nccl_tests.summarize(parsed)['avg_busbw'] == 405.11 and nccl_tests.run_problems(parsed) == []


def test_damaged_rows_among_info_continuations_still_fail_hand_made():
    """The table's shape decides: a row with a garbled figure or cut short next to the continuation lines is
    still malformed, the continuation lines are not."""
    text = (HAND / 'nccl-allreduce-8xH100-debug-info-multiline-HANDMADE.txt').read_text()
    row = '   536870912     134217728     float     sum      -1   2271.4  236.36  413.63       0'
    assert row in text
    garbled = nccl_tests.parse(text.replace(row, row.replace('413.63', '41?.63')))
    assert [r['size'] for r in garbled['rows']] == [134217728, 268435456, 1073741824]
    assert len(garbled['malformed']) == 1 and garbled['malformed'][0].split()[:9] == row.replace('413.63', '41?.63').split()
    size_lost = nccl_tests.parse(text.replace(row, row.replace('536870912', '|')))
    assert len(size_lost['malformed']) == 1 and size_lost['malformed'][0].split()[:3] == ['|', '134217728', 'float']
    full = next(line for line in text.splitlines() if line.startswith(row))
    cut = nccl_tests.parse(text.replace(full, row[:70]))
    assert cut['malformed'] == [' '.join(row[:70].split())] and len(cut['rows']) == 3  # pending wrapped-row start


INFO_CONTINUATION = (
    'node1:100:200 [0] NCCL INFO a message of several lines:\n'
    '   0   1   2   3   4   5   6   7   8   9  10\n'
    '   0   1   2   3   4   5   6   7   8   9  10  11\n'
    '   0   1   2   3   4   5   6   7   8   9  10  11  12\n'
    '  1.00  2.00  3.00  4.00  5.00  6.00  7.00  8.00  9.00 10.00 11.00 12.00 13.00\n'
    ' Max NThreads |            512 |            640 |            512 |\n')


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_info_continuations_inside_every_recorded_table(name, corpus_file):
    """The same bare continuation lines dropped between the rows of every recorded layout (11, 12 and 13 columns,
    launcher prefixes) change nothing."""
    text = corpus_file('nccl_tests/' + name).read_text()
    orig = nccl_tests.parse(text)
    lines = text.splitlines()
    first_row = next(i for i, line in enumerate(lines) if nccl_tests.parse(line)['rows'])
    prefix = lines[first_row][:len(lines[first_row]) - len(strip_prefix(lines[first_row]))]
    block = '\n'.join(prefix + line for line in INFO_CONTINUATION.splitlines())
    spliced = '\n'.join(lines[:first_row + 1] + [block] + lines[first_row + 1:])
    parsed = nccl_tests.parse(spliced)
    assert parsed['rows'] == orig['rows'] and parsed['malformed'] == [] and parsed['complete'] == orig['complete']


# ---- several runs in one log; failure lines name their run ----


def test_failed_run_among_several_is_named_hand_made():
    parsed = nccl_tests.parse((HAND / 'nccl-3runs-8xH100-allgather-test-nccl-failure-HANDMADE.txt').read_text())
    assert [(r['index'], r['line'], r['binary'], r['rows'], r['complete']) for r in parsed['runs']] == [
        (1, 9, 'all_reduce_perf', 3, True), (2, 32, 'all_gather_perf', 0, False), (3, 48, 'reduce_scatter_perf', 3, True)]
    assert parsed['runs'][1]['errors'] == [
        "line 44: Test NCCL failure common.cu:1279 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '",
        'line 45: .. gpu021 pid 51200: Test failure common.cu:1112']
    assert parsed['complete'] is True and len(parsed['rows']) == 6 and len(parsed['ranks']) == 8  # the last run closed
    problems = nccl_tests.run_problems(parsed)
    assert len(problems) == 1
    assert problems[0].startswith("run 2 (all_gather_perf, from line 32) printed failure line(s): line 44: Test NCCL "
                                  "failure common.cu:1279 'unhandled cuda error")


def test_recorded_runs_back_to_back(corpus_file):
    """Two recorded logs one after the other: two clean runs, no problem; the second one cut short: named."""
    first = corpus_file('nccl_tests/superbench-allreduce-8xA100-40GB.txt').read_text()
    second = corpus_file('nccl_tests/deepops-slurm-allreduce-1M-4G-oldformat.txt').read_text()
    both = nccl_tests.parse(first + second)
    got = [(r['index'], r['rows'], r['complete'], r['errors']) for r in both['runs']]
    assert got == [(1, 34, True, []), (2, 13, True, [])]
    assert both['runs'][1]['line'] == len(first.splitlines()) + 3  # the excerpt starts at its column header
    assert nccl_tests.run_problems(both) == [] and both['malformed'] == []
    cut = nccl_tests.parse(second[:second.index('# Out of bounds')] + first)
    assert [(r['rows'], r['complete']) for r in cut['runs']] == [(13, False), (34, True)]
    assert nccl_tests.run_problems(cut) == [
        'run 1 (from line 3) is incomplete: no "# Out of bounds values"/"# Avg bus bandwidth" line after its last row']


def test_single_run_failure_line_is_a_problem():
    parsed = nccl_tests.parse('# nThread 1 nGpus 8\nnode1: Test NCCL failure common.cu:1005 \'unhandled system error\'\n')
    assert nccl_tests.run_problems(parsed) == [
        "the run printed failure line(s): line 2: Test NCCL failure common.cu:1005 'unhandled system error'"]


@pytest.mark.parametrize('closing', ['# Out of bounds values : 2 FAIL?D', '# Out of bounds values : ? FAILED',
                                     '# Avg bus bandwidth    : 54.8575 FA|LED', '# Avg bus bandwidth    : 5x.85'])
def test_unreadable_closing_line_is_malformed(closing):
    """A verdict or count on a closing line that cannot be read is never taken for OK."""
    row = '   268435456      67108864     float     sum      -1   1121.4  239.38  239.38      0   1121.2  239.43  239.43      0'
    parsed = nccl_tests.parse(row + '\n' + closing + '\n')
    assert parsed['malformed'] == [closing]


@pytest.mark.parametrize('redop,root', [('3', '-1'), ('sum', 'x')])
def test_row_cells_must_fit_the_header_columns(redop, root):
    """Counting cells is not enough: the redop column holds a word and the root column an integer. A line with a
    number for the redop (or a word for the root) is not read as a row; it starts like one, so it is malformed."""
    header = ('#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw'
              ' #wrong\n')
    line = '   8   2   float   %s   %s   1.0  0.00  0.00  0  1.0  0.00  0.00  0' % (redop, root)
    parsed = nccl_tests.parse(header + line + '\n')
    assert parsed['rows'] == [] and parsed['malformed'] == [line.strip()]
