# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests (hypothesis) of the benchmark and topology parsers on damaged copies of the recorded outputs
(../shared/corpus, through the conftest ``corpus_file`` fixture, so a missing corpus skips) and of the hand-made
failing runs.

One damage event per example - the text cut at any point, a line deleted, duplicated, the lines shuffled, up to four
bytes of one line garbled, or one number changed - and for every example:

- the parser raises nothing;
- no figure is invented: every number in the result is a number of the damaged text;
- a failing verdict never turns into a pass: the verdict is the one the module computes without thresholds (a
  threshold figure changed by the damage can of course pass; a verdict the tool printed, a row it could not read or
  a run that did not close cannot). The one exception is a cut before the failure's first line: a log of several runs
  cut between two of them is a clean log of fewer runs.

Bounded and reproducible: ``max_examples=30`` per file, ``derandomize=True``, no example database.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufleet.cluster.plugins.module_utils import nccl_tests, nvidia_smi
from ansible_collections.gpufleet.cluster.plugins.module_utils import p2p_bandwidth as p2p
from ansible_collections.gpufleet.cluster.plugins.module_utils import p2p_bandwidth_engine as p2p_module

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
TOOLS_HAND = Path(__file__).resolve().parents[3] / 'fixtures' / 'hand_made'

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# bytes a transfer or a terminal may leave in a line; none of them spells a status word (OK, FAILED, N/A, CAN)
GARBLE = ('\x00', '\ufffd', '?', '#', '|', ' ', '\t', 'x', '-', '.', ':', '(', '\u00b2')
NUMBER_RE = re.compile(r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?')

NCCL_RECORDED = ['nccl_tests/' + name for name in (
    'aws-2x-p4de-16xA100-efa-srun-prefixed.txt', 'aws-batch-mpirun-prefixed-avg.txt', 'coreweave-gb200-72rank-rack.txt',
    'deepops-k8s-roce-allreduce-oldformat-error-col.txt', 'deepops-slurm-allreduce-1M-4G-oldformat.txt',
    'issue287-alltoall-1gpu-rtx5090-NA-wrong.txt', 'superbench-allgather-8xA100.txt',
    'superbench-allreduce-8xA100-40GB.txt')]
# hand-made runs (file -> text of the failure's first line, None when every cut must still fail)
NCCL_HAND = {
    HAND / 'nccl-allreduce-2gpu-out-of-bounds-FAILED-HANDMADE.txt': None,
    HAND / 'nccl-3runs-8xH100-allgather-test-nccl-failure-HANDMADE.txt': 'gpu021: Test NCCL failure',
    HAND / 'nccl-allreduce-8xH100-debug-info-multiline-HANDMADE.txt': None,
    TOOLS_HAND / 'nccl_tests' / 'nccl-allreduce-oldformat-error-asterisk-HANDMADE.txt': None,
    TOOLS_HAND / 'nccl_tests' / 'nccl-2.18-allreduce-16rank-wrong-g-format-HANDMADE.txt': None,
}
P2P_RECORDED = ['p2p_bandwidth/' + name for name in (
    'kinghorn-2xRTX4090-p2p-disabled-525.txt', 'mleng-4xGB200-unidir-p2p-writes-matrix.txt',
    'mleng-8xA100-unidir-p2p-writes-matrix.txt')]
NVB_HAND = [HAND / 'nvbandwidth-4xH100-d2d-HANDMADE.txt', HAND / 'nvbandwidth-4xL40S-no-p2p-pairs-bidir-read-HANDMADE.txt']
TOPO_RECORDED = ['nvidia_smi/' + name for name in (
    'issue37-topo-m-DGX1-V100-hybrid-cube-mesh.txt', 'topo-m-2gpu-NV1-mlx5-PHB-old-legend.txt',
    'topo-m-4gpu-NV3-4xmlx5-PIX-matrix-only.txt', 'topo-m-8xA100-NV12-mleng.txt', 'topo-m-8xH100-NV18-mleng.txt',
    'topo-m-h100-single-ansi.txt')]
TOPO_HAND = [HAND / 'nvidia-smi-topo-m-nic-legend-HANDMADE.txt',
             HAND / 'nvidia-smi-topo-m-space-aligned-empty-cpu-affinity-HANDMADE.txt']


# ---- damage --------------------------------------------------------------------------------------------------


def damage(data, text):
    """One damage event drawn from ``data``: returns ``(kind, damaged text, cut offset or None)``."""
    lines = text.splitlines(True)
    kind = data.draw(st.sampled_from(('cut', 'delete', 'duplicate', 'shuffle', 'garble', 'number')), label='kind')
    if kind == 'cut' or not lines:
        at = data.draw(st.integers(0, len(text)), label='cut at')
        return 'cut', text[:at], at
    i = data.draw(st.integers(0, len(lines) - 1), label='line')
    if kind == 'delete':
        return kind, ''.join(lines[:i] + lines[i + 1:]), None
    if kind == 'duplicate':
        return kind, ''.join(lines[:i + 1] + lines[i:]), None
    if kind == 'shuffle':
        return kind, ''.join(data.draw(st.permutations(lines), label='order')), None
    if kind == 'garble':
        line = list(lines[i].rstrip('\n'))
        if line:
            for dummy in range(data.draw(st.integers(1, 4), label='bytes')):
                pos = data.draw(st.integers(0, len(line) - 1), label='at')
                line[pos] = data.draw(st.sampled_from(GARBLE), label='byte')
        return kind, ''.join(lines[:i]) + ''.join(line) + '\n' + ''.join(lines[i + 1:]), None
    numbers = list(NUMBER_RE.finditer(text))
    if not numbers:
        return kind, text, None
    match = numbers[data.draw(st.integers(0, len(numbers) - 1), label='number')]
    new = data.draw(st.one_of(st.integers(-1, 10 ** 10).map(str),
                              st.floats(0, 1e5, allow_nan=False).map(lambda v: '%.2f' % v)), label='value')
    return kind, text[:match.start()] + new + text[match.end():], None


def numbers_of(text):
    """Every number written in ``text`` (also as read by int() of a %g count)."""
    out = set()
    for token in NUMBER_RE.findall(text):
        try:
            value = float(token)
        except ValueError:
            continue
        out.add(value)
        if abs(value) < 1e18:
            out.add(float(int(value)))
    return out


def assert_not_invented(values, text, what):
    known = numbers_of(text)
    for value in values:
        if value is not None:
            assert float(value) in known, (what, value)


def read(path_or_rel, request):
    """A hand-made file (a Path), or a corpus file through conftest's ``corpus_file`` (skips without the corpus)."""
    if isinstance(path_or_rel, Path):
        return path_or_rel.read_text()
    return request.getfixturevalue('corpus_file')(path_or_rel).read_text()


# ---- nccl-tests ----------------------------------------------------------------------------------------------


def nccl_fails(parsed):
    """nccl_bench's verdict without thresholds (see its main())."""
    summary = nccl_tests.summarize(parsed)
    return bool(not parsed['rows'] or (parsed['out_of_bounds'] or 0) > 0 or parsed['out_of_bounds_status'] == 'FAILED'
                or summary['wrong_rows'] or parsed['error_exceeded'] or parsed['avg_busbw_status'] == 'FAILED'
                or not parsed['complete'] or parsed['malformed'] or nccl_tests.run_problems(parsed))


def nccl_figures(parsed):
    values = [parsed['out_of_bounds'], parsed['avg_busbw_reported']]
    for row in parsed['rows']:
        values += [value for key, value in row.items() if key not in ('type', 'redop')]
    return values


@pytest.mark.parametrize('source', NCCL_RECORDED + sorted(NCCL_HAND), ids=str)
def test_nccl_tests_damage(source, request):
    text = read(source, request)
    failing = nccl_fails(nccl_tests.parse(text))
    marker = NCCL_HAND.get(source)
    evidence = text.index(marker) if marker else 0

    @SETTINGS
    @given(st.data())
    def check(data):
        kind, bad, cut = damage(data, text)
        parsed = nccl_tests.parse(bad)
        summary = nccl_tests.summarize(parsed)
        nccl_tests.summarize(parsed, check_size=8)
        tool_avg = summary['avg_busbw'] if summary['avg_busbw_source'] == 'tool' else None  # else a labelled mean
        assert_not_invented(nccl_figures(parsed) + [tool_avg, summary['max_busbw'], summary['busbw_at_check']], bad, kind)
        if failing and (cut is None or cut > evidence):
            assert nccl_fails(parsed), (kind, bad)

    check()


# ---- p2pBandwidthLatencyTest and nvbandwidth ---------------------------------------------------------------------


def p2p_failures(parsed, tool):
    params = {'tool': tool, 'testcases': [], 'args': [], 'min_gbytes_per_s': None, 'min_bidir_gbytes_per_s': None,
              'max_latency_us': None, 'require_p2p': True, 'expected_gpus': None}
    return p2p_module.evaluate(parsed, params, 'p2p', 'cmd')[0]


def p2p_figures(parsed):
    values = list(parsed.get('sums', {}).values())
    for matrix in parsed['matrices'].values():
        values += [v for row in matrix['values'].values() for v in row.values()]
    return values


@pytest.mark.parametrize('source', P2P_RECORDED + NVB_HAND, ids=str)
def test_p2p_bandwidth_damage(source, request):
    text = read(source, request)
    tool = 'nvbandwidth' if 'nvbandwidth' in str(source) else 'p2pBandwidthLatencyTest'
    parse = p2p.parse_nvbandwidth if tool == 'nvbandwidth' else p2p.parse_p2p
    failing = bool(p2p_failures(parse(text), tool))

    @SETTINGS
    @given(st.data())
    def check(data):
        kind, bad, dummy = damage(data, text)
        parsed = parse(bad)
        (p2p.parse_p2p if parse is p2p.parse_nvbandwidth else p2p.parse_nvbandwidth)(bad)  # the other one too
        for matrix in parsed['matrices'].values():
            p2p.missing_pairs(matrix)
            p2p.not_applicable_pairs(matrix)
        assert_not_invented(p2p_figures(parsed), bad, kind)
        if failing:
            assert p2p_failures(parsed, tool), (kind, bad)

    check()


# ---- nvidia-smi topo -m ------------------------------------------------------------------------------------------


@pytest.mark.parametrize('source', TOPO_RECORDED + TOPO_HAND, ids=str)
def test_topo_matrix_damage(source, request):
    text = read(source, request)

    @SETTINGS
    @given(st.data())
    def check(data):
        kind, bad, dummy = damage(data, text)
        topo = nvidia_smi.parse_topo_matrix(bad)
        for row, links in topo.get('matrix', {}).items():
            assert row not in links, (kind, row)
            for value in links.values():
                assert isinstance(value, str) and value.strip() in bad, (kind, value)
        for cells in topo.get('affinity', {}).values():
            for value in cells.values():
                assert value is None or value in bad, (kind, value)

    check()
