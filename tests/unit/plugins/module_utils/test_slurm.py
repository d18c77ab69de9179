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


def node(name, node_name=None, reason=None):
    """A recorded node; ``reason`` replaces its recorded reason (the recordings hold the pre-marker
    ``gpufleet: TEXT`` shape, which is no longer ours)."""
    text = rec(name)
    n = slurm.parse_node(text, node_name or slurm.parse_nodes(text)[0]['name'])
    if reason is not None:
        n['reason'] = reason
    return n


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
    # the pre-marker "gpufleet: TEXT" shape is not ours any more: resuming it needs force
    assert slurm.plan(n, 'resume', None, 'gpufleet', False)['skipped_foreign']
    n['reason'] = 'gpufleet[lab]: hand test'
    assert slurm.plan(n, 'down', 'gpufleet[lab]: hand test', 'gpufleet', False)['action'] is None
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


def test_format_reason_and_parse_round_trip():
    assert slurm.format_reason(' rollout\n 7 ', 'q4-570') == 'gpufleet[q4-570]: rollout 7'
    assert slurm.format_reason('step verify: x', 'q4-570', True) == 'gpufleet[q4-570] FAILED: step verify: x'
    assert slurm.format_reason('x', 'r1', prefix='acme') == 'acme[r1]: x'
    assert slurm.parse_reason('gpufleet[q4-570]: upgrading') == \
        {'run_id': 'q4-570', 'failure': False, 'text': 'upgrading', 'legacy': False}
    assert slurm.parse_reason('gpufleet[q4-570] FAILED: step verify: x') == \
        {'run_id': 'q4-570', 'failure': True, 'text': 'step verify: x', 'legacy': False}
    assert slurm.parse_reason('acme[r1]: x', 'acme')['run_id'] == 'r1'
    assert slurm.owned('gpufleet[a]: x') and not slurm.owned('bad fan', 'gpufleet')


@pytest.mark.parametrize('reason', [
    'gpufleet is broken on this node, do not touch',   # the operator's reason that was resumed (issue item 7)
    'gpufleet: rollout',                                # the pre-marker catch-all shape: not one of the two kept
    'gpufleet',
    'gpufleet[]: x', 'gpufleet[a b]: x', 'gpufleet[q4]:x', 'gpufleet [q4]: x', 'gpufleetx[q4]: x',
    'gpufleet[q4] failed: x', 'GPUFLEET[q4]: x', ' gpufleet[q4]: x',
    'gpufleet rollout: x', 'gpufleet rollout q4 upgrading', 'gpufleet acceptance passed',
    'Not responding', '',
])
def test_ownership_is_the_exact_marker_not_startswith(reason):
    assert slurm.parse_reason(reason) is None and not slurm.owned(reason, 'gpufleet')
    n = node('scontrol_show_node_idle_drain.txt', reason=reason)
    d = slurm.plan(n, 'resume', None, 'gpufleet', False)
    assert d['action'] is None and d['skipped_foreign']
    assert slurm.plan(n, 'drain', 'gpufleet[q4]: upgrading', 'gpufleet', False)['action'] is None


def test_empty_reason_on_down_or_drain_node_is_the_operators_handmade():
    for state in ('DOWN', 'DOWN*', 'IDLE+DRAIN', 'DOWN+DRAIN'):
        n = slurm.node_from_kv(slurm.parse_kv_line('NodeName=a State=%s' % state))
        assert n['reason'] == '' and slurm.is_foreign(n, 'gpufleet'), state
        d = slurm.plan(n, 'resume', None, 'gpufleet', False)
        assert d['action'] is None and d['skipped_foreign'] and "reason '(none)'" in d['message']
        assert slurm.plan(n, 'resume', None, 'gpufleet', True)['action'] == 'resume'
        assert slurm.plan(n, 'down', 'gpufleet[q4]: x', 'gpufleet', False)['skipped_foreign']
    idle = node('scontrol_show_node_idle.txt')
    assert not slurm.is_foreign(idle, 'gpufleet')


@pytest.mark.parametrize('reason,run_id,failure', [
    ('gpufleet rollout q4-570: upgrading', 'q4-570', False),
    ('gpufleet rollout 2026q4-570: failed at verify: node: kernel expected 6.8', '2026q4-570', True),
    ('gpufleet acceptance failed at gpu_burn: 3064.0 Gflop/s (min 15000, baseline)', None, True),
])
def test_the_two_old_shapes_are_still_ours(reason, run_id, failure):
    m = slurm.parse_reason(reason)
    assert (m['run_id'], m['failure'], m['legacy']) == (run_id, failure, True)


def test_marker_errors():
    assert slurm.marker_errors('gpufleet', 'q4-570') == []
    assert slurm.marker_errors('gpufleet', 'rollout-0123456789') == []
    for bad in ('', 'a b', 'x]', '-x', 'a' * 65, 'q4:570', None):
        assert 'run_id' in ' '.join(slurm.marker_errors('gpufleet', bad)), bad
    for bad in ('', 'gpu fleet', 'gpufleet[', '1x', None):
        assert 'reason_prefix' in ' '.join(slurm.marker_errors(bad, 'r')), bad


# ---- failure drains stay until the node passes (issue item 6) ----

ACCEPT_OLD = 'gpufleet acceptance failed at gpu_burn: 3064.0 Gflop/s (min 15000, baseline)'
ACCEPT_NEW = 'gpufleet[verify-20261122T0537] FAILED: acceptance gpu_burn: 3064.0 Gflop/s (min 15000, baseline)'


@pytest.mark.parametrize('failed', [ACCEPT_OLD, ACCEPT_NEW])
@pytest.mark.parametrize('fname', ['scontrol_show_node_idle_drain.txt', 'scontrol_show_node_mixed_drain.txt'])
def test_maintenance_drain_keeps_the_failure_reason(failed, fname):
    n = node(fname, reason=failed)
    d = slurm.plan(n, 'drain', 'gpufleet[q4-570]: upgrading', P, False)
    assert d['action'] is None and d['kept_failure'] and d['reason'] == failed
    assert d['after']['reason'] == failed and 'failure reason' in d['message']
    # a node that is DOWN (not drained) for a failure: the drain keeps the failure reason too
    down = slurm.node_from_kv(slurm.parse_kv_line('NodeName=a State=DOWN Reason=%s [root@2026-01-01T00:00:00]'
                                                  % failed))
    d = slurm.plan(down, 'drain', 'gpufleet[q4-570]: upgrading', P, False)
    assert d['action'] == 'drain' and d['reason'] == failed and d['after']['reason'] == failed
    d = slurm.plan(down, 'down', 'gpufleet[q4-570]: upgrading', P, False)
    assert d['action'] is None and d['kept_failure']
    # force replaces it
    assert slurm.plan(n, 'drain', 'gpufleet[q4-570]: upgrading', P, True)['reason'] == 'gpufleet[q4-570]: upgrading'


@pytest.mark.parametrize('failed', [ACCEPT_OLD, ACCEPT_NEW,
                                    'gpufleet rollout q4-550: failed at verify: x',
                                    'gpufleet[q4-550] FAILED: step apply: dpkg error'])
def test_resume_never_lifts_a_failure_drain_unless_passed(failed):
    n = node('scontrol_show_node_idle_drain.txt', reason=failed)
    d = slurm.plan(n, 'resume', None, P, False)
    assert d['action'] is None and d['kept_failure'] and not d['skipped_foreign']
    assert d['after'] == {'state': 'IDLE+DRAIN', 'reason': failed} and 'until it passes' in d['message']
    d = slurm.plan(n, 'resume', None, P, False, passed=True)
    assert d['action'] == 'resume' and 'failure drain is lifted' in d['message']
    assert slurm.plan(n, 'resume', None, P, True)['action'] == 'resume'


def test_a_maintenance_drain_resumes_without_passed_and_a_new_failure_replaces_an_old_one():
    n = node('scontrol_show_node_idle_drain.txt', reason='gpufleet[q4-570]: upgrading')
    assert slurm.plan(n, 'resume', None, P, False)['action'] == 'resume'
    d = slurm.plan(n, 'drain', 'gpufleet[q4-570] FAILED: step verify: x', P, False)
    assert d['action'] == 'drain' and not d['kept_failure'] and d['reason'] == 'gpufleet[q4-570] FAILED: step verify: x'
    n = node('scontrol_show_node_idle_drain.txt', reason=ACCEPT_OLD)
    d = slurm.plan(n, 'drain', 'gpufleet[q4-570] FAILED: step verify: x', P, False)
    assert d['action'] == 'drain' and d['reason'] == 'gpufleet[q4-570] FAILED: step verify: x'


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
    drained = node('scontrol_show_node_idle_drain.txt', reason='gpufleet[q4-550]: rollout 2026-11 driver 550')
    d = slurm.plan(drained, 'drain', 'gpufleet[q4-570]: second reason', P, False)
    assert d['action'] == 'drain' and d['message'] == 'reason updated'
    assert d['after'] == {'state': 'IDLE+DRAIN', 'reason': 'gpufleet[q4-570]: second reason'}


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
    own = node('scontrol_show_node_mixed_drain.txt', reason='gpufleet[q4]: rollout')
    assert slurm.plan(own, 'resume', None, P, False)['after'] == {'state': 'MIXED', 'reason': ''}
    idle = node('scontrol_show_node_idle.txt')
    assert slurm.plan(idle, 'resume', None, P, False)['action'] is None
    # an empty prefix no longer owns every reason
    assert slurm.plan(op, 'resume', None, '', False)['skipped_foreign']


def test_plan_down_and_query_handmade_states():
    down = slurm.node_from_kv(slurm.parse_kv_line(
        'NodeName=a State=DOWN*+DRAIN Reason=gpufleet[r]: broken [root@2026-01-01T00:00:00]'))
    assert slurm.plan(down, 'down', 'gpufleet[r]: broken', P, False)['action'] is None
    assert slurm.plan(down, 'down', 'gpufleet[r]: other', P, False)['action'] == 'down'
    d = slurm.plan(down, 'resume', None, P, False)
    assert d['action'] == 'resume' and d['after']['state'] == 'IDLE'
    idle = node('scontrol_show_node_idle.txt')
    d = slurm.plan(idle, 'down', 'gpufleet[r]: x', P, False)
    assert d['action'] == 'down' and d['after'] == {'state': 'DOWN', 'reason': 'gpufleet[r]: x'}
    slurm_down = slurm.node_from_kv(slurm.parse_kv_line(
        'NodeName=a State=DOWN* Reason=Not responding [slurm@2026-01-01T00:00:00]'))
    assert slurm.plan(slurm_down, 'down', 'gpufleet[r]: x', P, False)['skipped_foreign']
    assert slurm.plan(idle, 'query', None, P, False)['action'] is None
    with pytest.raises(ValueError):
        slurm.plan(idle, 'reboot', None, P, False)
