# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm parsers on real recordings of our lab's Slurm 22.05.8 (tests/unit/fixtures/slurm/README.md) and on
hand-made edge cases (named HANDMADE)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import slurm

FIX = Path(__file__).resolve().parents[2] / 'fixtures' / 'slurm'


def rec(name):
    return (FIX / name).read_text()


def node(name, node_name=None):
    text = rec(name)
    return slurm.parse_node(text, node_name or slurm.parse_nodes(text)[0]['name'])


def test_idle_node():
    n = node('scontrol_show_node_idle.txt')
    assert n['name'] == 'dev-slurm-n1'
    assert (n['state'], n['base_state'], n['flags']) == ('IDLE', 'IDLE', [])
    assert not (n['drain'] or n['drained'] or n['draining'] or n['down'] or n['not_responding'])
    assert (n['reason'], n['reason_user'], n['reason_time']) == ('', None, None)
    assert n['node_addr'] == '10.254.77.186' and n['partitions'] == ['lab']
    assert (n['cpus_alloc'], n['cpus_total'], n['slurm_version']) == (0, 2, '22.05.8')


def test_idle_drain_is_drained_with_reason_user_time():
    n = node('scontrol_show_node_idle_drain.txt')
    assert (n['state'], n['base_state'], n['flags']) == ('IDLE+DRAIN', 'IDLE', ['DRAIN'])
    assert n['drained'] and not n['draining']
    assert n['reason'] == 'gpufleet: rollout 2026-11 driver 550'
    assert (n['reason_user'], n['reason_time']) == ('root', '2026-11-22T05:37:21')


def test_reason_update_changes_reason_and_time():
    a = node('scontrol_show_node_idle_drain.txt')
    b = node('scontrol_show_node_idle_drain_reason_updated.txt')
    assert b['reason'] == 'gpufleet: second reason' and b['reason_time'] != a['reason_time']
    assert b['state'] == 'IDLE+DRAIN'


@pytest.mark.parametrize('fname,state,busy', [
    ('scontrol_show_node_allocated.txt', 'ALLOCATED', True),
    ('scontrol_show_node_mixed.txt', 'MIXED', True),
])
def test_busy_nodes(fname, state, busy):
    n = node(fname)
    assert n['state'] == state and n['busy'] is busy and not n['drain']


@pytest.mark.parametrize('fname,state,reason', [
    ('scontrol_show_node_allocated_drain.txt', 'ALLOCATED+DRAIN', 'operator: bad fan, ticket 4711'),
    ('scontrol_show_node_mixed_drain.txt', 'MIXED+DRAIN', 'gpufleet: rollout'),
])
def test_draining_nodes(fname, state, reason):
    n = node(fname)
    assert n['state'] == state and n['draining'] and not n['drained'] and n['reason'] == reason


def test_two_nodes_in_one_output():
    nodes = slurm.parse_nodes(rec('scontrol_show_node_two_nodes.txt'))
    assert [n['name'] for n in nodes] == ['dev-slurm-n1', 'dev-slurm-n2']
    assert [n['reason'] for n in nodes] == ['gpufleet: rollout 2026-11 driver 550', 'operator: bad fan, ticket 4711']
    assert slurm.parse_node(rec('scontrol_show_node_two_nodes.txt'), 'dev-slurm-n2')['state'] == 'ALLOCATED+DRAIN'


def test_os_value_with_spaces_does_not_leak():
    kv = slurm.parse_kv_line(rec('scontrol_show_node_idle.txt'))
    assert kv['OS'].startswith('Linux ') and '#1 SMP' in kv['OS']
    assert kv['Sockets'] == '2' and kv['State'] == 'IDLE' and kv['ExtSensorsTemp'] == 'n/s'


def test_down_not_responding_recording():
    n = node('scontrol_show_node_down_not_responding.txt')
    assert (n['state'], n['base_state'], n['flags']) == ('DOWN+NOT_RESPONDING', 'DOWN', ['NOT_RESPONDING'])
    assert n['down'] and n['not_responding'] and not n['drain']
    assert (n['reason'], n['reason_user']) == ('Not responding', 'slurm')
    # Slurm's own reason is not ours: resuming it needs force
    assert slurm.plan(n, 'resume', None, 'gpufleet', False)['skipped_foreign']


def test_down_recording():
    n = node('scontrol_show_node_down.txt')
    assert (n['state'], n['down'], n['not_responding']) == ('DOWN', True, False)
    assert (n['reason'], n['reason_user'], n['reason_time']) == ('gpufleet: hand test', 'root', '2026-11-22T05:40:20')
    assert slurm.plan(n, 'down', 'gpufleet: hand test', 'gpufleet', False)['action'] is None
    d = slurm.plan(n, 'resume', None, 'gpufleet', False)
    assert d['action'] == 'resume' and d['after'] == {'state': 'IDLE', 'reason': ''}


def test_unknown_node_raises():
    with pytest.raises(slurm.SlurmParseError, match='no NodeName=nope'):
        slurm.parse_node(rec('scontrol_show_node_idle.txt'), 'nope')


def test_squeue_recording():
    jobs = slurm.parse_squeue(rec('squeue_node_jobs.txt'))
    assert jobs == [
        {'job_id': '1', 'user': 'root', 'state': 'RUNNING', 'partition': 'lab', 'name': 'sleep job'},
        {'job_id': '2', 'user': 'root', 'state': 'RUNNING', 'partition': 'lab', 'name': 'other'},
    ]


# ---- hand-made edge cases (HANDMADE: not recordings) ----

@pytest.mark.parametrize('text,base,flags,nr,drained,draining,down', [
    ('DOWN*+DRAIN+NOT_RESPONDING', 'DOWN', ['DRAIN', 'NOT_RESPONDING'], True, True, False, True),
    ('IDLE*', 'IDLE', [], True, False, False, False),
    ('DOWN+NOT_RESPONDING', 'DOWN', ['NOT_RESPONDING'], True, False, False, True),
    ('IDLE+COMPLETING+DRAIN', 'IDLE', ['COMPLETING', 'DRAIN'], False, False, True, False),
    ('MIXED+DRAIN+RESERVED', 'MIXED', ['DRAIN', 'RESERVED'], False, False, True, False),
    ('IDLE+FAIL', 'IDLE', ['FAIL'], False, False, False, True),
    ('FUTURE', 'FUTURE', [], False, False, False, False),
])
def test_state_strings_handmade(text, base, flags, nr, drained, draining, down):
    s = slurm.parse_state(text)
    assert (s['base_state'], s['flags'], s['not_responding'], s['drained'], s['draining'], s['down']) == \
        (base, flags, nr, drained, draining, down)


def test_reason_with_equals_and_brackets_handmade():
    line = ('NodeName=gpu01 Arch=x86_64 State=IDLE+DRAIN Partitions=gpu '
            'Reason=gpufleet: acceptance gpu_burn figure=3064 [x] < 15000 [slurm@2026-01-02T03:04:05]')
    n = slurm.node_from_kv(slurm.parse_kv_line(line))
    assert n['reason'] == 'gpufleet: acceptance gpu_burn figure=3064 [x] < 15000'
    assert (n['reason_user'], n['reason_time']) == ('slurm', '2026-01-02T03:04:05')
    assert n['partitions'] == ['gpu'] and n['state'] == 'IDLE+DRAIN'


def test_reason_followed_by_more_keys_handmade():
    # newer Slurm prints Comment=/Extra= after Reason=
    line = 'NodeName=gpu01 State=DOWN Reason=Not responding [slurm@2026-01-02T03:04:05] Comment=(null) Extra=(null)'
    kv = slurm.parse_kv_line(line)
    assert kv['Reason'] == 'Not responding' and kv['ReasonUser'] == 'slurm' and kv['Comment'] == '(null)'


def test_reason_without_user_time_handmade():
    n = slurm.node_from_kv(slurm.parse_kv_line('NodeName=a State=DOWN Reason=manual'))
    assert n['reason'] == 'manual' and n['reason_user'] is None


def test_squeue_name_with_separator_and_array_handmade():
    jobs = slurm.parse_squeue('123_4|alice|RUNNING|gpu|a|b c\n\n')
    assert jobs == [{'job_id': '123_4', 'user': 'alice', 'state': 'RUNNING', 'partition': 'gpu', 'name': 'a|b c'}]
    with pytest.raises(slurm.SlurmParseError):
        slurm.parse_squeue('garbage line')


def test_empty_state_and_bad_line_handmade():
    with pytest.raises(slurm.SlurmParseError):
        slurm.parse_state('')
    with pytest.raises(slurm.SlurmParseError):
        slurm.node_from_kv({'NodeName': 'x'})


def test_full_reason_and_owned():
    assert slurm.full_reason('rollout', 'gpufleet') == 'gpufleet: rollout'
    assert slurm.full_reason('gpufleet: rollout', 'gpufleet') == 'gpufleet: rollout'
    assert slurm.full_reason(' gpufleet rollout 7: upgrading', 'gpufleet') == 'gpufleet rollout 7: upgrading'
    assert slurm.full_reason(' x ', '') == 'x'
    assert slurm.owned('gpufleet: x', 'gpufleet') and not slurm.owned('bad fan', 'gpufleet')
    assert slurm.owned('anything', '')


# ---- plan(): the decisions the module makes ----

P = 'gpufleet'


def test_plan_drain_idle_then_same_reason_is_noop():
    idle = node('scontrol_show_node_idle.txt')
    d = slurm.plan(idle, 'drain', 'gpufleet: rollout 2026-11 driver 550', P, False)
    assert d['action'] == 'drain' and d['after'] == {'state': 'IDLE+DRAIN', 'reason': 'gpufleet: rollout 2026-11 driver 550'}
    drained = node('scontrol_show_node_idle_drain.txt')
    d = slurm.plan(drained, 'drain', 'gpufleet: rollout 2026-11 driver 550', P, False)
    assert d['action'] is None and d['after']['state'] == 'IDLE+DRAIN'


def test_plan_drain_own_new_reason_updates():
    drained = node('scontrol_show_node_idle_drain.txt')
    d = slurm.plan(drained, 'drain', 'gpufleet: second reason', P, False)
    assert d['action'] == 'drain' and d['message'] == 'reason updated'
    assert d['after'] == {'state': 'IDLE+DRAIN', 'reason': 'gpufleet: second reason'}


def test_plan_drain_keeps_operator_reason_unless_force():
    op = node('scontrol_show_node_allocated_drain.txt')
    d = slurm.plan(op, 'drain', 'gpufleet: rollout', P, False)
    assert d['action'] is None and d['skipped_foreign'] and 'someone else' in d['message']
    assert slurm.plan(op, 'drain', 'gpufleet: rollout', P, True)['action'] == 'drain'


def test_plan_resume():
    op = node('scontrol_show_node_allocated_drain.txt')
    d = slurm.plan(op, 'resume', None, P, False)
    assert d['action'] is None and d['skipped_foreign'] and "'operator: bad fan, ticket 4711' by root" in d['message']
    d = slurm.plan(op, 'resume', None, P, True)
    assert d['action'] == 'resume' and d['after'] == {'state': 'ALLOCATED', 'reason': ''}
    own = node('scontrol_show_node_mixed_drain.txt')
    assert slurm.plan(own, 'resume', None, P, False)['after'] == {'state': 'MIXED', 'reason': ''}
    idle = node('scontrol_show_node_idle.txt')
    assert slurm.plan(idle, 'resume', None, P, False)['action'] is None
    # empty prefix: every reason is ours
    assert slurm.plan(op, 'resume', None, '', False)['action'] == 'resume'


def test_plan_down_and_query_handmade_states():
    down = slurm.node_from_kv(slurm.parse_kv_line(
        'NodeName=a State=DOWN*+DRAIN Reason=gpufleet: broken [root@2026-01-01T00:00:00]'))
    assert slurm.plan(down, 'down', 'gpufleet: broken', P, False)['action'] is None
    assert slurm.plan(down, 'down', 'gpufleet: other', P, False)['action'] == 'down'
    d = slurm.plan(down, 'resume', None, P, False)
    assert d['action'] == 'resume' and d['after']['state'] == 'IDLE'
    idle = node('scontrol_show_node_idle.txt')
    d = slurm.plan(idle, 'down', 'gpufleet: x', P, False)
    assert d['action'] == 'down' and d['after'] == {'state': 'DOWN', 'reason': 'gpufleet: x'}
    slurm_down = slurm.node_from_kv(slurm.parse_kv_line(
        'NodeName=a State=DOWN* Reason=Not responding [slurm@2026-01-01T00:00:00]'))
    assert slurm.plan(slurm_down, 'down', 'gpufleet: x', P, False)['skipped_foreign']
    assert slurm.plan(idle, 'query', None, P, False)['action'] is None
    with pytest.raises(ValueError):
        slurm.plan(idle, 'reboot', None, P, False)
