# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout planning: batches, partition cap, resume (hand-made host lists)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._rollout import (
    cap_blockers,
    PlanError,
    batch_size,
    done_hosts,
    plan_batches,
)

HOSTS = ['n%02d' % i for i in range(1, 11)]


@pytest.mark.parametrize('spec, total, size', [
    (1, 10, 1), ('3', 10, 3), ('25%', 10, 2), ('5%', 10, 1), ('100%', 7, 7), ('33.3%', 10, 3), (50, 4, 50),
])
def test_batch_size(spec, total, size):
    assert batch_size(spec, total) == size


@pytest.mark.parametrize('spec', [0, -1, '0', '0%', '101%', 'half', True, '', None])
def test_bad_batch_size_names_the_variable(spec):
    with pytest.raises(PlanError) as exc:
        batch_size(spec, 10)
    assert str(exc.value).startswith('rollout_serial: ')


def test_plain_serial():
    assert plan_batches(HOSTS, 4) == [HOSTS[0:4], HOSTS[4:8], HOSTS[8:10]]


def test_list_serial_last_repeats():
    assert [len(b) for b in plan_batches(HOSTS, [1, 2, '50%'])] == [1, 2, 5, 2]


def test_partition_cap_spreads_partitions():
    parts = dict((h, 'gpu-a' if i < 6 else 'gpu-b') for i, h in enumerate(HOSTS))
    batches = plan_batches(HOSTS, 4, parts, cap=2)
    for b in batches:
        for p in ('gpu-a', 'gpu-b'):
            assert sum(1 for h in b if parts[h] == p) <= 2
    assert sorted(h for b in batches for h in b) == HOSTS
    assert batches[0] == ['n01', 'n02', 'n07', 'n08']


def test_node_in_two_partitions_counts_for_both():
    parts = {'a': ['p1', 'p2'], 'b': 'p1', 'c': 'p2', 'd': None}
    assert plan_batches(['a', 'b', 'c', 'd'], 4, parts, cap=1) == [['a', 'd'], ['b', 'c']]


def test_cap_from_the_command_line_is_a_string():
    parts = {'a': 'p', 'b': 'p'}
    assert plan_batches(['a', 'b'], 2, parts, cap='1') == [['a'], ['b']]
    assert plan_batches(['a', 'b'], 2, parts, cap='') == [['a', 'b']]
    with pytest.raises(PlanError):
        plan_batches(['a', 'b'], 2, parts, cap='one')


def test_bad_cap():
    with pytest.raises(PlanError) as exc:
        plan_batches(HOSTS, 2, {}, cap=0)
    assert 'rollout_partition_cap' in str(exc.value)
    with pytest.raises(PlanError):
        plan_batches(HOSTS, [], {})


def test_empty_host_list():
    assert plan_batches([], 3) == []


def test_done_hosts():
    journal = [
        {'host': 'n01', 'rollout_id': 'r1', 'lock_id': 'L', 'verdict': 'passed'},
        {'host': 'n02', 'rollout_id': 'r1', 'lock_id': 'L', 'verdict': 'failed'},
        {'host': 'n03', 'rollout_id': 'r1', 'lock_id': 'OTHER', 'verdict': 'passed'},
        {'host': 'n04', 'rollout_id': 'r0', 'lock_id': 'L', 'verdict': 'passed'},
        'garbage',
    ]
    assert done_hosts(journal, 'r1', 'L') == ['n01']


# Issue #13 item 8: the cap counts nodes that are out of service already, not only the current batch.
PARTS = {'n1': 'gpu-a', 'n2': 'gpu-a', 'n3': 'gpu-b', 'n4': 'gpu-b'}


def test_cap_counts_a_node_failed_in_an_earlier_batch():
    # n3 failed in batch 1 and stays drained: n4 (same partition, cap 1) must wait; n2 (other partition) goes
    msgs = cap_blockers('n4', ['n2', 'n4'], PARTS, ['n3'], 1)
    assert msgs == ['partition gpu-b already has 1 node(s) out of service (n3); rollout_partition_cap is 1']
    assert cap_blockers('n2', ['n2', 'n4'], PARTS, ['n3'], 1) == []


def test_cap_counts_a_node_drained_before_the_rollout_and_batch_mates_ahead():
    parts = {'a1': 'p', 'a2': 'p', 'a3': 'p', 'a4': 'p'}
    # cap 2, a4 drained by an operator: a1 goes (1 out + 0 ahead < 2), a2 waits (1 out + a1 ahead)
    assert cap_blockers('a1', ['a1', 'a2'], parts, ['a4'], 2) == []
    assert cap_blockers('a2', ['a1', 'a2'], parts, ['a4'], 2) == [
        'partition p already has 1 node(s) out of service (a4) and a1 of this batch going out first; '
        'rollout_partition_cap is 2']
    # a held-back host ahead does not count for the one after it
    assert cap_blockers('a3', ['a1', 'a2', 'a3'], parts, ['a4'], 2) != []
    assert cap_blockers('a3', ['a2', 'a3'], parts, ['a4', 'a1'], 3) != []  # 2 out + a2 + a3 would be 4
    assert cap_blockers('a3', ['a2', 'a3'], parts, ['a4', 'a1'], 4) == []


def test_cap_a_host_out_of_service_itself_is_never_held_back():
    # n2 was drained for a failure before the rollout: rolling it takes nothing more away
    assert cap_blockers('n2', ['n2'], PARTS, ['n1', 'n2'], 1) == []


def test_cap_uses_scheduler_names_and_ignores_unknown_nodes():
    parts = {'gpu01.example.org': 'p', 'gpu02.example.org': 'p'}
    names = {'gpu02.example.org': 'node-2'}
    assert cap_blockers('gpu01.example.org', ['gpu01.example.org'], parts, ['node-2'], 1, names) != []
    assert cap_blockers('gpu01.example.org', ['gpu01.example.org'], parts, ['gpu02', 'other'], 1, names) == []
    # without a names map the scheduler name is the short host name
    assert cap_blockers('gpu01.example.org', ['gpu01.example.org'], parts, ['gpu02'], 1) != []
    assert cap_blockers('gpu01.example.org', ['gpu01.example.org'], parts, ['gpu03', 'other'], 1) == []


def test_cap_none_and_bad_cap():
    assert cap_blockers('n4', ['n4'], PARTS, ['n3'], None) == []
    assert cap_blockers('n4', ['n4'], PARTS, ['n3'], 'null') == []
    assert cap_blockers('n4', ['n4'], PARTS, ['n3'], '1') != []
    with pytest.raises(PlanError, match='rollout_partition_cap'):
        cap_blockers('n4', ['n4'], PARTS, ['n3'], 0)
