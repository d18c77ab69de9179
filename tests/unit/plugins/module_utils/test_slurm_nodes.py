# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole-node parsers of module_utils/slurm.py (the slurm inventory plugin's input) on real recordings of
Slurm 22.05.8 and 24.11.5 (tests/unit/fixtures/slurm/inventory/README.md) and on hand-made edge cases (HANDMADE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import slurm

INV = Path(__file__).resolve().parents[2] / 'fixtures' / 'slurm' / 'inventory'


def rec(version, name):
    return (INV / version / name).read_text()


def by_name(nodes):
    return dict((n['name'], n) for n in nodes)


def test_text_2205_every_state_and_gres():
    nodes = by_name(slurm.parse_nodes_text(rec('22.05.8', 'scontrol_show_nodes_o.txt')))
    assert sorted(nodes) == ['slurminv-n1', 'slurminv-n2', 'slurminv-n3', 'slurminv-n4']
    n1, n2, n3, n4 = (nodes['slurminv-n%d' % i] for i in (1, 2, 3, 4))
    assert (n1['state'], n1['base_state'], n1['flags'], n1['drain']) == ('IDLE', 'IDLE', [], False)
    assert (n1['gres'], n1['gpus'], n1['gpu_models']) == ('gpu:h100:8', 8, ['h100'])
    assert n1['gres_list'] == [{'name': 'gpu', 'type': 'h100', 'count': 8, 'detail': None}]
    assert n1['features'] == n1['active_features'] == ['h100', 'ib_ndr']
    assert n1['partitions'] == ['gpu', 'all'] and n1['node_addr'] == '10.254.77.194'
    assert (n1['hostname'], n1['cpus_total'], n1['real_memory'], n1['slurm_version']) == \
        ('slurminv-n1', 2, 24105, '22.05.8')
    assert n1['os'] == 'Linux 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0'  # a value with spaces, '#' and '@'
    assert (n2['state'], n2['busy'], n2['cpus_alloc']) == ('MIXED', True, 1)
    assert (n3['state'], n3['drained'], n3['draining']) == ('IDLE+DRAIN', True, False)
    assert n3['reason'] == 'gpufleet[q4-570] FAILED: step apply: HCA firmware burn failed on 0000:3b:00.0'
    assert (n3['reason_user'], n3['reason_time']) == ('root', '2026-11-26T10:47:32')
    assert (n3['gres'], n3['gpus'], n3['gpu_models'], n3['features']) == ('gpu:a100:4', 4, ['a100'], ['a100'])
    assert (n4['state'], n4['down'], n4['reason']) == ('DOWN', True, 'operator: PSU replaced, ticket 4711')
    assert (n4['gres'], n4['gres_list'], n4['gpus'], n4['features'], n4['partitions']) == ('', [], 0, [], ['all'])


def test_json_2411_every_state_and_gres():
    nodes = by_name(slurm.parse_nodes_json(rec('24.11.5', 'scontrol_show_nodes.json')))
    assert sorted(nodes) == ['gpu-t2', 'gpu-t3', 'slurm2411']
    m, t2, t3 = nodes['slurm2411'], nodes['gpu-t2'], nodes['gpu-t3']
    assert (m['state'], m['busy'], m['cpus_alloc'], m['cpus_total']) == ('MIXED', True, 1, 2)
    assert (m['gres'], m['gpus'], m['gpu_models'], m['features']) == ('gpu:h100:8', 8, ['h100'], ['h100', 'ib_ndr'])
    assert (m['node_addr'], m['slurm_version']) == ('127.0.0.1', '24.11.5')
    assert (m['free_memory'], m['real_memory']) == (16423, 1000)
    assert (m['reason'], m['reason_user'], m['reason_time']) == ('', None, None)
    assert (t2['state'], t2['flags'], t2['drained']) == ('IDLE+DRAIN', ['DRAIN'], True)
    assert t2['reason'] == 'gpufleet[q4-570] FAILED: step apply: HCA firmware burn failed on 0000:3b:00.0'
    assert (t2['reason_user'], t2['reason_time']) == ('root', '2026-11-26T10:51:45')  # UTC from the epoch
    assert (t2['slurm_version'], t2['arch'], t2['os']) == (None, None, None)  # never had a slurmd
    assert (t3['state'], t3['down'], t3['gres_list'], t3['features'], t3['partitions']) == ('DOWN', True, [], [],
                                                                                            ['all'])


def test_json_and_text_of_the_same_cluster_agree():
    """24.11.5's two forms, recorded a second apart, give the same records (the lab's controller runs in UTC)."""
    a = by_name(slurm.parse_nodes_json(rec('24.11.5', 'scontrol_show_nodes.json')))
    b = by_name(slurm.parse_nodes_text(rec('24.11.5', 'scontrol_show_nodes_o.txt')))
    assert a == b


def test_2205_has_no_json():
    assert 'unrecognized option' in rec('22.05.8', 'scontrol_show_nodes_json.stderr')
    assert slurm.detect_format(rec('22.05.8', 'scontrol_show_nodes_o.txt')) == 'text'
    assert slurm.detect_format(rec('24.11.5', 'scontrol_show_nodes.json')) == 'json'
    assert slurm.detect_format('scontrol: unrecognized option') is None


# HANDMADE: the older JSON shape (as in public data of Slurm 21.08): state string plus state_flags, features as
# one string, slurmd_version, free_memory, plain epoch numbers - written after the 24.11.5 recording's fields.
HANDMADE_JSON_2302 = json.dumps({'meta': {}, 'errors': [], 'nodes': [{
    'name': 'gpu-a01', 'address': 'gpu-a01-ib', 'hostname': 'gpu-a01', 'state': 'mixed',
    'state_flags': ['DRAIN'], 'features': 'h100,rack_r01', 'active_features': 'h100,rack_r01',
    'gres': 'gpu:h100:8(S:0-1)', 'partitions': ['gpu'], 'cpus': 224, 'alloc_cpus': 16, 'real_memory': 2000000,
    'free_memory': -2, 'reason': 'maintenance', 'reason_set_by_user': 'ops', 'reason_changed_at': 1795690305,
    'slurmd_version': '23.02.7', 'cpu_load': 4294967294}]})


def test_json_older_shape_HANDMADE():
    n = slurm.parse_nodes_json(HANDMADE_JSON_2302)[0]
    assert (n['state'], n['draining'], n['drained']) == ('MIXED+DRAIN', True, False)
    assert (n['features'], n['gpus'], n['gpu_models']) == (['h100', 'rack_r01'], 8, ['h100'])
    assert n['gres_list'][0]['detail'] == 'S:0-1'
    assert (n['free_memory'], n['cpu_load'], n['slurm_version']) == (None, None, '23.02.7')
    assert (n['reason_user'], n['reason_time']) == ('ops', '2026-11-26T10:51:45')


@pytest.mark.parametrize('gres, want', [
    ('gpu:h100:8', [('gpu', 'h100', 8)]),
    ('gpu:8', [('gpu', None, 8)]),
    ('gpu', [('gpu', None, 1)]),
    ('gpu:a100:2(S:0),gpu:v100:2(S:1),nic:1', [('gpu', 'a100', 2), ('gpu', 'v100', 2), ('nic', None, 1)]),
    ('gpu:nvidia_h100_80gb_hbm3:8(S:0-1)', [('gpu', 'nvidia_h100_80gb_hbm3', 8)]),
    ('shard:2K', [('shard', None, 2048)]),
    ('gpu:tesla', [('gpu', 'tesla', 1)]),
    ('(null)', []),
    ('', []),
    (None, []),
])
def test_parse_gres_HANDMADE(gres, want):
    assert [(g['name'], g['type'], g['count']) for g in slurm.parse_gres(gres)] == want


def test_gpu_summary_sums_every_gpu_entry_HANDMADE():
    assert slurm.gpu_summary(slurm.parse_gres('gpu:a100:2(S:0),gpu:v100:2(S:1),nic:1')) == (4, ['a100', 'v100'])


@pytest.mark.parametrize('bad', ['gpu:h100:eight', ':8', 'gpu:a:b:c'])
def test_parse_gres_refuses_HANDMADE(bad):
    with pytest.raises(slurm.SlurmParseError):
        slurm.parse_gres(bad)


@pytest.mark.parametrize('text, why', [
    ('not json', 'not JSON'),
    ('{"meta": {}}', 'without a "nodes" list'),
    ('[1, 2]', 'without a "nodes" list'),
    ('{"nodes": [], "errors": [{"description": "Unable to contact slurm controller", "error_number": 1}]}',
     'Unable to contact slurm controller'),
    ('{"nodes": [{"state": ["IDLE"]}]}', 'without a name'),
    ('{"nodes": [{"name": "x"}]}', 'has no state'),
])
def test_parse_nodes_json_refuses_HANDMADE(text, why):
    with pytest.raises(slurm.SlurmParseError, match=why):
        slurm.parse_nodes_json(text)


# ---- damaged recordings (hypothesis, bounded and reproducible): only SlurmParseError may leave the parsers ----

from hypothesis import HealthCheck, given, settings  # noqa: E402  pylint: disable=wrong-import-position
from hypothesis import strategies as st  # noqa: E402  pylint: disable=wrong-import-position

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 40, 2 ** 40) | st.floats(allow_nan=True)
                           | st.text(max_size=12),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                                                     max_size=3), max_leaves=6)


@SETTINGS
@given(cut=st.integers(0, 4000), garble=st.text(max_size=6), at=st.integers(0, 4000))
def test_damaged_text_never_crashes(cut, garble, at):
    text = rec('22.05.8', 'scontrol_show_nodes_o.txt')[:cut]
    text = text[:at] + garble + text[at:]
    try:
        slurm.parse_nodes_text(text)
    except slurm.SlurmParseError:
        pass


@SETTINGS
@given(key=st.sampled_from(['state', 'state_flags', 'name', 'features', 'gres', 'partitions', 'cpus', 'reason',
                            'reason_changed_at', 'free_mem', 'cpu_load', 'address', 'version', 'alloc_cpus']),
       value=JSON_VALUES, node=st.integers(0, 2))
def test_json_with_any_value_in_a_field_never_crashes(key, value, node):
    data = json.loads(rec('24.11.5', 'scontrol_show_nodes.json'))
    data['nodes'][node][key] = value
    try:
        nodes = slurm.parse_nodes_json(json.dumps(data))
    except slurm.SlurmParseError:
        return
    assert len(nodes) == 3
