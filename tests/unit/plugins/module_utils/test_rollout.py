# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout planning: batches, partition cap, resume (hand-made host lists)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils.rollout import (
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
