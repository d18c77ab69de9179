# -*- coding: utf-8 -*-
"""job_slice: AWX's slice extra vars read, bad values refused naming the variable (hand-made inputs)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.job_slice import job_slice


@pytest.mark.parametrize('variables, want', [
    ({}, {'sliced': False, 'number': 1, 'count': 1}),
    ({'awx_job_slice_count': 1}, {'sliced': False, 'number': 1, 'count': 1}),
    ({'awx_job_slice_count': '2', 'awx_job_slice_number': '2'}, {'sliced': True, 'number': 2, 'count': 2}),
    ({'tower_job_slice_count': 4, 'tower_job_slice_number': 1}, {'sliced': True, 'number': 1, 'count': 4}),
    ({'awx_job_slice_count': 3, 'tower_job_slice_count': 3, 'awx_job_slice_number': 3}, {'sliced': True, 'number': 3, 'count': 3}),
    ({'awx_job_slice_count': '', 'other': 'x'}, {'sliced': False, 'number': 1, 'count': 1}),
])
def test_reads_the_slice(variables, want):
    assert job_slice(variables) == want


@pytest.mark.parametrize('variables, words', [
    ({'awx_job_slice_count': 'two'}, ['awx_job_slice_count', 'whole number']),
    ({'awx_job_slice_count': True}, ['awx_job_slice_count', 'whole number']),
    ({'awx_job_slice_count': 0}, ['awx_job_slice_count', '1 or more']),
    ({'awx_job_slice_count': 2}, ['awx_job_slice_count=2', 'awx_job_slice_number', 'not set']),
    ({'awx_job_slice_count': 2, 'awx_job_slice_number': 3}, ['awx_job_slice_number', 'between 1 and the slice count 2', '3']),
    ({'awx_job_slice_count': 2, 'awx_job_slice_number': 0}, ['awx_job_slice_number', 'between 1']),
    ({'awx_job_slice_count': 2, 'tower_job_slice_count': 3, 'awx_job_slice_number': 1}, ['awx_job_slice_count=2', 'tower_job_slice_count=3', 'disagrees']),
    (['awx_job_slice_count'], ['mapping']),
])
def test_refuses_bad_values_naming_the_variable(variables, words):
    with pytest.raises(AnsibleFilterError) as err:
        job_slice(variables)
    for w in words:
        assert w in str(err.value)


from ansible_collections.gpufleet.cluster.plugins.filter.job_slice import merge_slices, merge_slices_apply  # noqa: E402


def _slice(number, count, nodes):
    return {'schema_version': 1, 'slice': {'sliced': True, 'number': number, 'count': count}, 'hosts': sorted(nodes),
            'nodes': {h: {'gpufleet_verify': {'status': 'passed', 'deviations': []}, 'acceptance_result': {'status': 'skipped'},
                          'fleet': {'fleet': True, 'items': ['driver'], 'entry': {'profile': 'p', 'versions': {'driver': v}}}}
                      for h, v in nodes.items()}}


def test_merge_two_slices_and_apply_the_fleet_deviations():
    got = merge_slices([_slice(2, 2, {'n2': '570', 'n4': '570'}), _slice(1, 2, {'n1': '570', 'n3': '550'})])
    assert got['count'] == 2 and sorted(got['nodes']) == ['n1', 'n2', 'n3', 'n4']
    assert got['fleet']['items'] == ['driver'] and got['fleet']['profiles'] == {h: 'p' for h in ('n1', 'n2', 'n3', 'n4')}
    out = merge_slices_apply(got['nodes'], [{'host': 'n3', 'message': 'n3: driver expected 570, found 550'}])
    assert out['n3']['gpufleet_verify'] == {'status': 'failed', 'deviations': ['n3: driver expected 570, found 550']}
    assert out['n1']['gpufleet_verify']['status'] == 'passed'
    assert got['nodes']['n3']['gpufleet_verify']['status'] == 'passed'  # the input is not changed


@pytest.mark.parametrize('slices, words', [
    ([], ['no slice results']),
    ([{'nodes': {}}], ['slice file 1', 'not a slice result']),
    ([_slice(1, 3, {'a': '1'}), _slice(3, 3, {'c': '1'})], ['slice(s) 2 of 3 did not report']),
    ([_slice(1, 2, {'a': '1'}), _slice(1, 2, {'b': '1'})], ['slice 1 of 2', 'two results']),
    ([_slice(1, 2, {'a': '1'}), _slice(2, 2, {'a': '1'})], ['slice 2 of 2', 'a is in slice 1 too']),
    ([_slice(1, 2, {'a': '1'}), _slice(2, 3, {'b': '1'})], ['different sliced jobs']),
])
def test_merge_refuses_incomplete_or_mixed_results(slices, words):
    with pytest.raises(AnsibleFilterError) as err:
        merge_slices(slices)
    for w in words:
        assert w in str(err.value)


def test_merge_keeps_the_multinode_record_with_every_slice_hosts():
    a, b = _slice(1, 2, {'n1': '1'}), _slice(2, 2, {'n2': '1'})
    rec = {'status': 'skipped', 'message': 'skipped: acceptance_multinode is false', 'launcher': 'mpirun', 'figure': None,
           'threshold': None, 'threshold_origin': 'none', 'unit': 'GB/s'}
    a['multinode'], b['multinode'] = dict(rec, hosts=['n1']), dict(rec, hosts=['n2'])
    assert merge_slices([b, a])['multinode'] == dict(rec, hosts=['n1', 'n2'])
    assert merge_slices([_slice(1, 1, {'n1': '1'})])['multinode'] is None
