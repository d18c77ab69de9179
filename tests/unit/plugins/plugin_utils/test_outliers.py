# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Outliers of the acceptance report (plugins/plugin_utils/_outliers.py, the acceptance_outliers filter).

The fleet test runs on report JSON built from REAL recorded outputs (tests/unit/fleet_report_corpus.py: the corpus's
nccl-tests, gpu-burn, p2p and perftest outputs parsed by the collection's parsers, spread over synthetic node names)
with one planted slow node and one node slower than its own history: exactly those two are flagged. The rule tests
(ties, small fleets, the limit itself, bad input) use HANDMADE figures, named so."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

import fleet_report_corpus as F
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._outliers import (
    OutlierError, find_outliers, median, previous_accepted)


@pytest.fixture(scope='module')
def fig():
    from conftest import CORPUS
    if CORPUS is None or not all((CORPUS / f).is_file() for f in F.FILES):
        pytest.skip('the recorded nccl/gpu-burn/p2p/perftest outputs are not all in the corpus (full corpus not found)')
    return F.parse_corpus(CORPUS)


def _flagged(out):
    return set((h, r['rung']) for h, n in out['nodes'].items() for r in n['rungs'] if r.get('outlier'))


def test_recorded_figures_are_what_the_parsers_read(fig):
    # the recordings' own figures (docs/thresholds.md's A100 and ConnectX-7 references)
    assert fig['nccl_bench'] == 235.26 and fig['gpu_burn'] == 16890.0
    assert fig['p2p_bandwidth'] == 270.84 and fig['rdma_bw'] == 328.61
    assert len(fig['nccl_curve']) == 34 and fig['nccl_curve'][-1][0] == 8589934592


def test_planted_slow_node_and_slower_than_history_flagged_nothing_else(fig):
    out = find_outliers(F.report(F.results(fig)), [F.history(fig)], 5)
    assert _flagged(out) == F.EXPECTED
    assert sorted(out['outliers']['nodes']) == ['gpu-a03', 'gpu-a06']
    slow = [r for r in out['nodes']['gpu-a06']['rungs'] if r['rung'] == 'nccl_bench'][0]['outlier']
    assert slow['status'] == 'warn' and 'fleet' in [x['basis'] for x in slow['reasons']]
    assert 'below the median 234.9' in out['outliers']['nodes']['gpu-a06'][0]
    hist = [r for r in out['nodes']['gpu-a03']['rungs'] if r['rung'] == 'gpu_burn'][0]['outlier']
    assert [x['basis'] for x in hist['reasons']] == ['history'] and hist['reasons'][0]['below_percent'] == 7.41
    # warn never fails: both nodes still passed, the summary counts them
    assert out['nodes']['gpu-a06']['status'] == 'passed' and out['nodes']['gpu-a03']['status'] == 'passed'
    assert out['summary']['warned'] == 2 and out['summary']['passed'] == 10 and out['outliers']['failing'] == []
    # the failed history rung of gpu-a07 (higher figure) is no reference
    assert previous_accepted([F.history(fig)], 'gpu-a07', 'gpu_burn') is None
    # small profile: said, not compared; the input is not modified
    assert any(n.startswith('profile_small gpu_burn: 2 node(s)') for n in out['outliers']['notes'])
    json.dumps(out)


def test_without_history_only_the_slow_node(fig):
    out = find_outliers(F.report(F.results(fig)), [], 5)
    assert _flagged(out) == {('gpu-a06', 'nccl_bench')}


def test_a_wider_limit_flags_nothing_and_a_profile_that_fails_outliers_fails_them(fig):
    assert _flagged(find_outliers(F.report(F.results(fig)), [F.history(fig)], 9)) == set()
    out = find_outliers(F.report(F.results(fig)), [F.history(fig)], 5, fail_hosts=['gpu-a06'])
    node = out['nodes']['gpu-a06']
    assert node['status'] == 'failed' and node['failed_rung'] == 'nccl_bench' and node['outlier'] == 'fail'
    assert out['nodes']['gpu-a03']['outlier'] == 'warn' and out['outliers']['failing'] == ['gpu-a06']
    assert out['summary']['failed'] == 1 and out['summary']['passed'] == 9
    rec = [r for r in node['rungs'] if r['rung'] == 'nccl_bench'][0]
    assert rec['status'] == 'fail' and 'acceptance_outlier_fail' in rec['message']


# ---- rules on HANDMADE figures

def _hm_report(figures, profile='p', rung='nccl_bench'):
    """HANDMADE: host -> figure on one rung, all passed."""
    return {'nodes': dict((h, {'profile': profile, 'status': 'passed', 'rungs': [
        {'rung': rung, 'device': None, 'status': 'pass', 'figure': v, 'unit': 'GB/s'}]}) for h, v in figures.items())}


def test_median_even_count_is_the_mean_of_the_middle_two():
    assert median([1, 2, 3, 4]) == 2.5 and median([3, 1, 2]) == 2 and median([]) is None


def test_exactly_at_the_limit_is_not_flagged_and_said():
    out = find_outliers(_hm_report({'a': 100.0, 'b': 100.0, 'c': 100.0, 'd': 95.0, 'e': 94.9}), [], 5)
    assert _flagged(out) == {('e', 'nccl_bench')}
    assert any('d exactly 5% below the median 100: not flagged' in n for n in out['outliers']['notes'])


def test_tie_two_equal_halves_flags_the_lower_half_and_says_so():
    out = find_outliers(_hm_report({'a': 100.0, 'b': 100.0, 'c': 80.0, 'd': 80.0}), [], 5)
    assert _flagged(out) == {('c', 'nccl_bench'), ('d', 'nccl_bench')}
    assert any('tie - the profile splits into two equal halves' in n and 'c, d' in n for n in out['outliers']['notes'])


def test_equal_figures_flag_nothing_and_say_so():
    out = find_outliers(_hm_report(dict((h, 50.0) for h in 'abcd')), [], 5)
    assert _flagged(out) == set() and any('all 4 figures are equal' in n for n in out['outliers']['notes'])


def test_small_fleet_is_not_compared_but_history_still_counts():
    rep = _hm_report({'a': 100.0, 'b': 100.0, 'c': 50.0})
    out = find_outliers(rep, [], 5)
    assert _flagged(out) == set()
    assert out['outliers']['notes'] == ['p nccl_bench: 3 node(s) with a figure, fewer than 4: not compared with the fleet '
                                        'median (history still checked)']
    old = _hm_report({'c': 60.0})
    assert _flagged(find_outliers(rep, [old], 5)) == {('c', 'nccl_bench')}


def test_history_uses_the_newest_accepted_figure():
    rep = _hm_report({'a': 90.0})
    newest_lower = [_hm_report({'a': 120.0}), _hm_report({'a': 92.0})]
    assert _flagged(find_outliers(rep, newest_lower, 5)) == set()
    assert _flagged(find_outliers(rep, list(reversed(newest_lower)), 5)) == {('a', 'nccl_bench')}


def test_failed_and_skipped_rungs_are_not_judged_but_count_in_the_median():
    rep = _hm_report({'a': 100.0, 'b': 100.0, 'c': 100.0, 'd': 10.0})
    rep['nodes']['d']['rungs'][0]['status'] = 'fail'
    rep['nodes']['d']['status'] = 'failed'
    out = find_outliers(rep, [], 5)
    assert _flagged(out) == set() and out['outliers']['fleet'][0]['median'] == 100.0


def test_dcgm_and_container_rungs_are_never_outliers():
    out = find_outliers(_hm_report({'a': 0, 'b': 0, 'c': 0, 'd': 3}, rung='dcgm_diag'), [], 5)
    assert _flagged(out) == set() and out['outliers']['fleet'] == []


def test_per_hca_keys_and_profiles_are_separate():
    rep = {'nodes': {}}
    for i, h in enumerate('abcd'):
        rep['nodes'][h] = {'profile': 'p', 'status': 'passed', 'rungs': [
            {'rung': 'rdma_bw', 'device': 'mlx5_0', 'status': 'pass', 'figure': 400.0},
            {'rung': 'rdma_bw', 'device': 'mlx5_1', 'status': 'pass', 'figure': 200.0 if h != 'b' else 150.0}]}
    out = find_outliers(rep, [], 5)
    assert _flagged(out) == {('b', 'rdma_bw')}
    assert out['nodes']['b']['outlier_messages'][0].startswith('rdma_bw mlx5_1: 150 is 25.0% below the median 200')


@pytest.mark.parametrize('percent, text', [
    (-1, 'acceptance_outlier_percent: -1 is not allowed'),
    (-0.5, 'acceptance_outlier_percent: -0.5 is not allowed'),
    (100, 'acceptance_outlier_percent: 100 is not allowed'),
    ('five', "acceptance_outlier_percent: 'five' is not a number"),
    (True, 'acceptance_outlier_percent: True is not a number'),
    (float('nan'), 'acceptance_outlier_percent: nan is not allowed'),
])
def test_bad_percentage_is_refused_naming_the_variable(percent, text):
    with pytest.raises(OutlierError) as err:
        find_outliers({'nodes': {}}, [], percent)
    assert text in str(err.value)


def test_percentage_as_text_is_read():
    assert find_outliers({'nodes': {}}, [], '7%')['outliers']['percent'] == 7.0


@pytest.mark.parametrize('rungs, text', [
    (['nccl_bench', 'nccl'], "acceptance_outlier_rungs: unknown rung(s) 'nccl'; allowed: gpu_burn, p2p_bandwidth"),
    (['dcgm_diag'], "unknown rung(s) 'dcgm_diag'"),
    ('nccl_bench', 'acceptance_outlier_rungs must be a list'),
])
def test_unknown_rung_is_refused_naming_the_variable(rungs, text):
    with pytest.raises(OutlierError) as err:
        find_outliers({'nodes': {}}, [], 5, rungs)
    assert text in str(err.value)


def test_bad_report_and_history_are_refused():
    with pytest.raises(OutlierError, match='acceptance report must be a dict'):
        find_outliers([], [], 5)
    with pytest.raises(OutlierError, match='history must be a list'):
        find_outliers({'nodes': {}}, {'a': 1}, 5)


def test_filter_raises_ansible_errors():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.gpufleet.cluster.plugins.filter.fleet_report import FilterModule
    filters = FilterModule().filters()
    with pytest.raises(AnsibleFilterError, match='acceptance_outlier_percent: -5 is not allowed'):
        filters['acceptance_outliers']({'nodes': {}}, [], -5)
    with pytest.raises(AnsibleFilterError, match='needs the acceptance report'):
        filters['fleet_report_html'](None)


def test_a_flagged_figure_never_becomes_the_reference():
    rep = _hm_report({'a': 90.0})
    first = find_outliers(rep, [_hm_report({'a': 100.0})], 5)
    assert _flagged(first) == {('a', 'nccl_bench')}
    # the next run with the same figure: the flagged run is history now, the reference is still 100
    again = find_outliers(rep, [_hm_report({'a': 100.0}), first], 5)
    assert _flagged(again) == {('a', 'nccl_bench')} and again == first


def test_the_input_report_is_left_as_it_was(fig):
    # find_outliers marks a copy (its own new dicts and lists, not copy.deepcopy: see _outliers._copy)
    report = F.report(F.results(fig))
    before = json.dumps(report, sort_keys=True)
    out = find_outliers(report, [F.history(fig)], 5, fail_hosts=['gpu-a06'])
    assert out['nodes']['gpu-a06']['status'] == 'failed'
    assert json.dumps(report, sort_keys=True) == before
    assert out['nodes'] is not report['nodes'] and out['nodes']['gpu-a06']['rungs'] is not report['nodes']['gpu-a06']['rungs']
