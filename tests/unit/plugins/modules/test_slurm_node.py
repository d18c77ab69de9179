# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_node end to end against a HANDMADE stateful stand-in of scontrol/squeue (below): it starts from the real
recorded node lines of tests/unit/fixtures/slurm and applies `scontrol update` the way Slurm 22.05 did in our lab.
The real behaviour is tested on a real Slurm in molecule/slurm_node."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import slurm_node

FIX = Path(__file__).resolve().parents[2] / 'fixtures' / 'slurm'

# HANDMADE stand-in for scontrol and squeue (one program, dispatching on its file name).
FAKE = r'''
import json, os, re, sys
state_file = os.environ.get('FAKE_SLURM_STATE') or os.path.join(os.path.dirname(os.path.abspath(__file__)), 'state.json')
st = json.load(open(state_file))
prog = os.path.basename(sys.argv[0])
args = sys.argv[1:]
st['calls'].append([prog] + args)
def save():
    json.dump(st, open(state_file, 'w'))
def field(line, key):
    return re.search(r'(?:^|\s)%s=(\S*)' % key, line).group(1)
if prog == 'scontrol' and args[:3] == ['show', 'node', '-o']:
    name = args[3]
    save()
    if name not in st['nodes']:
        sys.stderr.write('Node %s not found\n' % name)
        sys.exit(1)
    print(st['nodes'][name])
elif prog == 'scontrol' and args[0] == 'update':
    kv = dict(a.split('=', 1) for a in args[1:])
    name, want = kv['nodename'], kv['state']
    line = st['nodes'][name]
    line = re.sub(r' Reason=.*$', '', line)
    parts = field(line, 'State').split('+')
    base, flags = parts[0], [f for f in parts[1:]]
    if want == 'DRAIN':
        flags = ['DRAIN'] + [f for f in flags if f != 'DRAIN']
    elif want == 'DOWN':
        base = 'DOWN'
    elif want == 'RESUME':
        flags = [f for f in flags if f != 'DRAIN']
        base = 'IDLE' if base.startswith('DOWN') else base
    line = re.sub(r' State=\S*', ' State=' + '+'.join([base] + flags), line)
    if want != 'RESUME':
        line += ' Reason=%s [root@2026-11-22T06:00:00]' % kv['reason']
    st['nodes'][name] = line
    save()
elif prog == 'squeue':
    name = [a for a in args if a.startswith('--nodelist=')][0].split('=', 1)[1]
    jobs = st['jobs'].get(name, [])
    if st.get('jobs_end_after') is not None:
        st['jobs_end_after'] -= 1
        if st['jobs_end_after'] < 0:
            st['jobs'][name] = []
    save()
    for j in jobs:
        print(j)
else:
    sys.stderr.write('fake slurm: unexpected call %r\n' % (sys.argv,))
    sys.exit(2)
'''


def line(fname):
    return (FIX / fname).read_text().strip()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    prog = tmp_path / 'fake_slurm.py'
    prog.write_text('#!%s\n%s' % (sys.executable, FAKE))
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    paths = {}
    for name in ('scontrol', 'squeue'):  # the program dispatches on the name it is called by
        os.symlink(str(prog), str(tmp_path / name))
        paths[name] = str(tmp_path / name)
    state_file = tmp_path / 'state.json'
    monkeypatch.setenv('FAKE_SLURM_STATE', str(state_file))

    class Fake(object):
        def set(self, nodes, jobs=None, jobs_end_after=None):
            state_file.write_text(json.dumps({'nodes': nodes, 'jobs': jobs or {}, 'calls': [],
                                              'jobs_end_after': jobs_end_after}))

        def state(self):
            return json.loads(state_file.read_text())

        def updates(self):
            return [c for c in self.state()['calls'] if c[:2] == ['scontrol', 'update']]

        def args(self, **kw):
            a = {'scontrol_path': paths['scontrol'], 'squeue_path': paths['squeue']}
            a.update(kw)
            return a
    return Fake()


IDLE = line('scontrol_show_node_idle.txt')                       # dev-slurm-n1
# dev-slurm-n1 drained by us: the recording's pre-marker reason "gpufleet: ..." is no longer ours, so the marker is
# put in its place (HANDMADE edit of the recorded line)
DRAINED = line('scontrol_show_node_idle_drain.txt').replace('Reason=gpufleet: ', 'Reason=gpufleet[q4-550]: ')
OPERATOR = line('scontrol_show_node_allocated_drain.txt')        # dev-slurm-n2, operator reason, 2 jobs
JOBS = (FIX / 'squeue_node_jobs.txt').read_text().splitlines()


def test_query_reports_state_reason_and_jobs(fake, run_module):
    fake.set({'dev-slurm-n2': OPERATOR}, {'dev-slurm-n2': JOBS})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='query'))
    assert r['changed'] is False and r['action'] is None
    assert (r['state'], r['base_state'], r['flags'], r['draining'], r['drained']) == \
        ('ALLOCATED+DRAIN', 'ALLOCATED', ['DRAIN'], True, False)
    assert (r['reason'], r['reason_user'], r['reason_time']) == \
        ('operator: bad fan, ticket 4711', 'root', '2026-11-22T05:37:25')
    assert r['foreign'] is True
    assert [(j['job_id'], j['user'], j['name']) for j in r['jobs']] == [('1', 'root', 'sleep job'), ('2', 'root', 'other')]
    assert fake.updates() == []


def test_drain_check_then_apply_then_again(fake, run_module):
    fake.set({'dev-slurm-n1': IDLE})
    args = fake.args(name='dev-slurm-n1', state='drain', reason='rollout', _ansible_diff=True)
    r = run_module(slurm_node.main, dict(args, _ansible_check_mode=True))
    assert r['changed'] is True and r['action'] == 'DRAIN' and fake.updates() == []
    assert r['diff']['before'] == {'state': 'IDLE', 'reason': ''}
    assert r['diff']['after'] == {'state': 'IDLE+DRAIN', 'reason': 'gpufleet[adhoc]: rollout'}
    r = run_module(slurm_node.main, args)
    assert r['changed'] is True and r['state'] == 'IDLE+DRAIN' and r['drained'] is True
    assert r['reason'] == 'gpufleet[adhoc]: rollout'
    assert fake.updates() == [['scontrol', 'update', 'nodename=dev-slurm-n1', 'state=DRAIN',
                               'reason=gpufleet[adhoc]: rollout']]
    r = run_module(slurm_node.main, args)
    assert r['changed'] is False and len(fake.updates()) == 1
    r = run_module(slurm_node.main, dict(args, _ansible_check_mode=True))
    assert r['changed'] is False


def test_new_own_reason_updates_and_is_changed(fake, run_module):
    fake.set({'dev-slurm-n1': DRAINED})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='drain', reason='second reason',
                                              run_id='q4-570'))
    assert r['changed'] is True and r['reason'] == 'gpufleet[q4-570]: second reason' and r['message'] == 'reason updated'
    assert r['marker'] == {'run_id': 'q4-550', 'failure': False, 'text': 'rollout 2026-11 driver 550', 'legacy': False}


def test_operator_drain_is_not_resumed_nor_rewritten_without_force(fake, run_module):
    fake.set({'dev-slurm-n2': OPERATOR}, {'dev-slurm-n2': JOBS})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='resume'))
    assert r['changed'] is False and r['foreign'] is True and 'someone else' in r['message']
    assert 'not resumed: drained/down by someone else' in json.dumps(r.get('warnings', []))  # str or event dicts
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='drain', reason='x'))
    assert r['changed'] is False and r['reason'] == 'operator: bad fan, ticket 4711'
    assert fake.updates() == []
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='resume', force=True))
    assert r['changed'] is True and r['state'] == 'ALLOCATED' and r['reason'] == ''


def test_resume_own_drain(fake, run_module):
    fake.set({'dev-slurm-n1': DRAINED})
    args = fake.args(name='dev-slurm-n1', state='resume', _ansible_diff=True)
    r = run_module(slurm_node.main, args)
    assert r['changed'] is True and r['state'] == 'IDLE' and r['diff']['after'] == {'state': 'IDLE', 'reason': ''}
    assert r['before'] == {'state': 'IDLE+DRAIN', 'reason': 'gpufleet[q4-550]: rollout 2026-11 driver 550'}
    assert run_module(slurm_node.main, args)['changed'] is False


def test_down_needs_reason_and_sets_down(fake, run_module):
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='down'))
    assert r['failed'] and 'reason' in r['msg']
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='down', reason='  '))
    assert r['failed'] and 'reason must not be empty with state=down' in r['msg']
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='down', reason='XID 79'))
    assert r['changed'] and r['down'] and r['reason'] == 'gpufleet[adhoc]: XID 79'
    assert run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='down', reason='XID 79'))['changed'] is False


def test_unknown_node_and_hostlist_fail_clearly(fake, run_module):
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='nope'))
    assert r['failed'] and r['msg'].startswith("Slurm node 'nope' not found (scontrol: Node nope not found)")
    r = run_module(slurm_node.main, fake.args(name='gpu[01-04]'))
    assert r['failed'] and 'one Slurm NodeName' in r['msg']


def test_wait_idle_timeout_lists_jobs_and_leaves_node(fake, run_module):
    fake.set({'dev-slurm-n2': OPERATOR.replace('operator: bad fan, ticket 4711', 'gpufleet[adhoc]: rollout')},
             {'dev-slurm-n2': JOBS})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='drain', reason='rollout', wait_idle=True,
                                              timeout=2, poll_interval=1))
    assert r['failed'] is True and r['changed'] is False
    assert r['msg'].startswith('node dev-slurm-n2 still runs 2 job(s) after 2s (timeout): 1 (sleep job, user root, '
                               'RUNNING), 2 (other, user root, RUNNING); the node is left as it is (ALLOCATED+DRAIN)')
    assert fake.updates() == [] and r['waited'] >= 2


def test_wait_idle_returns_when_jobs_end(fake, run_module):
    fake.set({'dev-slurm-n2': OPERATOR}, {'dev-slurm-n2': JOBS}, jobs_end_after=1)
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='query', wait_idle=True, timeout=30,
                                              poll_interval=1))
    assert 'failed' not in r and r['jobs'] == [] and 1 <= r['waited'] < 10


def broken_tool(tmp_path, name, message):
    """A HANDMADE stand-in for a Slurm command that prints ``message`` on stderr and exits 1."""
    bad = tmp_path / name
    bad.write_text('#!/bin/sh\necho "%s" >&2\nexit 1\n' % message)
    bad.chmod(0o755)
    return bad


def test_wait_idle_not_in_check_mode(fake, run_module):
    fake.set({'dev-slurm-n2': OPERATOR}, {'dev-slurm-n2': JOBS})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='query', wait_idle=True, timeout=5,
                                              _ansible_check_mode=True))
    assert 'failed' not in r and r['waited'] == 0.0 and len(r['jobs']) == 2


def test_scontrol_error_names_command(fake, run_module, tmp_path):
    bad = broken_tool(tmp_path, 'scontrol-broken', 'slurm_load_node error: Unable to contact slurm controller')
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', scontrol_path=str(bad)))
    assert r['failed'] and 'Unable to contact slurm controller' in r['msg'] and r['cmd'].startswith(str(bad))


# ---- issue item 7: ownership is the exact marker ----

def test_operator_reason_starting_with_gpufleet_is_not_resumed(fake, run_module):
    mine = OPERATOR.replace('operator: bad fan, ticket 4711', 'gpufleet is broken on this node, do not touch')
    fake.set({'dev-slurm-n2': mine}, {'dev-slurm-n2': JOBS})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='resume'))
    assert r['changed'] is False and r['foreign'] is True and r['marker'] is None
    assert 'not resumed: drained/down by someone else' in json.dumps(r.get('warnings', []))
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n2', state='drain', reason='upgrading', run_id='q4'))
    assert r['changed'] is False and r['reason'] == 'gpufleet is broken on this node, do not touch'
    assert fake.updates() == []


def test_down_node_with_empty_reason_is_not_resumed(fake, run_module):
    fake.set({'dev-slurm-n1': IDLE.replace(' State=IDLE ', ' State=DOWN ')})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='resume'))
    assert 'failed' not in r
    assert r['changed'] is False and r['foreign'] is True and r['state'] == 'DOWN'
    assert fake.updates() == []
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='resume', force=True))
    assert r['changed'] is True and r['state'] == 'IDLE'


@pytest.mark.parametrize('opt,value', [('run_id', 'q4 570'), ('run_id', 'x]'), ('run_id', ''),
                                       ('reason_prefix', ''), ('reason_prefix', 'gpu fleet')])
def test_bad_marker_parts_are_refused_before_slurm_is_asked(fake, run_module, opt, value):
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='drain', reason='x', **{opt: value}))
    assert r['failed'] and opt in r['msg'] and fake.state()['calls'] == []


# ---- issue item 9: changed after a successful update, paths named ----

def test_squeue_failure_after_update_reports_changed(fake, run_module, tmp_path):
    bad = broken_tool(tmp_path, 'squeue-broken', 'squeue: error: Unable to contact slurm controller')
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='drain', reason='upgrading', run_id='q4',
                                              squeue_path=str(bad)))
    assert r['failed'] is True and r['changed'] is True
    assert 'Unable to contact slurm controller' in r['msg'] and 'state=DRAIN had already succeeded' in r['msg']
    assert len(fake.updates()) == 1


def test_squeue_failure_without_update_is_not_changed(fake, run_module, tmp_path):
    bad = broken_tool(tmp_path, 'squeue-broken', 'squeue: error: x')
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', squeue_path=str(bad)))
    assert r['failed'] is True and r['changed'] is False


@pytest.mark.parametrize('value', ['/nonexistent/bin/scontrol', 'no-such-scontrol-here'])
def test_missing_scontrol_path_names_option_and_path(fake, run_module, value):
    fake.set({'dev-slurm-n1': IDLE})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', scontrol_path=value))
    assert r['failed'] and 'scontrol_path' in r['msg'] and value in r['msg']
    assert 'Error executing command' not in r['msg']


def test_no_scontrol_on_path_names_option(fake, run_module, tmp_path, monkeypatch):
    empty = tmp_path / 'emptybin'
    empty.mkdir()
    monkeypatch.setenv('PATH', str(empty))
    monkeypatch.setattr(slurm_node.AnsibleModule, 'get_bin_path', lambda self, name, *a, **kw: None)
    fake.set({'dev-slurm-n1': IDLE})
    args = fake.args(name='dev-slurm-n1')
    del args['scontrol_path']
    r = run_module(slurm_node.main, args)
    assert r['failed'] and 'scontrol_path' in r['msg'] and 'scontrol not found on PATH' in r['msg']


# ---- issue item 6: a failure drain stays until the node passes ----

ACCEPT_OLD = 'gpufleet acceptance failed at gpu_burn: 3064.0 Gflop/s (min 15000, baseline)'
ACCEPT_NEW = 'gpufleet[verify-20261122T0537] FAILED: acceptance gpu_burn: 3064.0 Gflop/s (min 15000, baseline)'


@pytest.mark.parametrize('failed', [ACCEPT_OLD, ACCEPT_NEW])
def test_rollout_keeps_an_acceptance_failure_drained(fake, run_module, failed):
    fake.set({'dev-slurm-n1': DRAINED.replace('gpufleet[q4-550]: rollout 2026-11 driver 550', failed)})
    # the rollout's drain: the failure reason is kept
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='drain', reason='upgrading', run_id='q4-570'))
    assert r['changed'] is False and r['kept_failure'] is True and r['reason'] == failed
    assert r['marker']['failure'] is True
    # the deferred resume (jobs did not end): the node stays drained, with a warning
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='resume'))
    assert r['changed'] is False and r['kept_failure'] is True and r['state'] == 'IDLE+DRAIN' and r['reason'] == failed
    assert 'stays drained until it passes' in json.dumps(r.get('warnings', []))
    assert fake.updates() == []
    # the resume after a passed verification lifts it
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='resume', passed=True))
    assert r['changed'] is True and r['state'] == 'IDLE' and r['reason'] == ''


def test_failure_drain_is_written_with_the_failed_marker(fake, run_module):
    fake.set({'dev-slurm-n1': DRAINED})
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='drain', reason='step verify: kernel 6.8',
                                              run_id='q4-570', failure=True))
    assert r['changed'] is True and r['reason'] == 'gpufleet[q4-570] FAILED: step verify: kernel 6.8'
    r = run_module(slurm_node.main, fake.args(name='dev-slurm-n1', state='resume'))
    assert r['changed'] is False and r['kept_failure'] is True
