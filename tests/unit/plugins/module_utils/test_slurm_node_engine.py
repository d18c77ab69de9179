# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_node's engine (module_utils/slurm_node.py) alone: a stand-in module object and HANDMADE stand-in
scontrol/squeue scripts answering with the recorded node line of tests/unit/fixtures/slurm. The stateful
end-to-end cases are in tests/unit/plugins/modules/test_slurm_node.py."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import slurm_node_engine as slurm_node

from .stand_ins import Failed, StandInModule, script, unstartable

FIX = Path(__file__).resolve().parents[2] / 'fixtures' / 'slurm'
IDLE = FIX / 'scontrol_show_node_idle.txt'  # dev-slurm-n1, IDLE, no reason
JOBS = FIX / 'squeue_node_jobs.txt'


DEFAULTS = dict(name='dev-slurm-n1', state='query', reason=None, reason_prefix='gpufleet', run_id='adhoc',
                failure=False, passed=False, force=False, wait_idle=False, timeout=3600, poll_interval=5,
                scontrol_path=None, squeue_path=None)


def stand_in(check_mode=False, diff=False, bin_paths=None, **params):
    return StandInModule(params, DEFAULTS, check_mode=check_mode, diff=diff, bin_paths=bin_paths)


def tool(tmp_path, name, body):
    """A HANDMADE stand-in that logs its name and arguments to ``calls.log`` and runs ``body``."""
    return script(tmp_path, name, 'echo "%s $*" >> %s\n%s' % (name, shlex.quote(str(tmp_path / 'calls.log')), body))


@pytest.fixture
def slurm_tools(tmp_path):
    return dict(scontrol_path=tool(tmp_path, 'scontrol', 'cat %s' % shlex.quote(str(IDLE))),
                squeue_path=tool(tmp_path, 'squeue', 'cat %s' % shlex.quote(str(JOBS))))


def calls(tmp_path):
    log = tmp_path / 'calls.log'
    return log.read_text().splitlines() if log.exists() else []


def test_commands_run_in_the_c_locale(tmp_path):
    exe = tool(tmp_path, 'scontrol', 'echo "$LANG $LC_ALL"')
    slurm = slurm_node.Slurm(stand_in(scontrol_path=exe, squeue_path=exe))
    assert slurm.call([exe, 'x']) == (0, 'C C\n', '')


def test_missing_tools_are_looked_up_on_path_and_named():
    module = stand_in(bin_paths={'scontrol': '/usr/bin/scontrol', 'squeue': '/usr/bin/squeue'})
    slurm = slurm_node.Slurm(module)
    assert (slurm.scontrol, slurm.squeue) == ('/usr/bin/scontrol', '/usr/bin/squeue')
    with pytest.raises(Failed) as failed:
        slurm_node.Slurm(stand_in(bin_paths={'scontrol': '/usr/bin/scontrol'}))
    assert failed.value.args[0]['msg'].startswith("squeue not found on PATH (")
    assert failed.value.args[0]['msg'].endswith("); set squeue_path to the path of Slurm's squeue")


def test_program_the_os_cannot_start_names_its_option(tmp_path, slurm_tools):
    bad = unstartable(tmp_path, 'squeue-bad')
    slurm = slurm_node.Slurm(stand_in(**dict(slurm_tools, squeue_path=bad)))
    with pytest.raises(Failed) as failed:
        slurm.jobs('dev-slurm-n1')
    kw = failed.value.args[0]
    assert kw['msg'].startswith('%s could not be started: ' % bad)
    assert kw['msg'].endswith("; squeue_path must be the path of Slurm's squeue") and kw['changed'] is False
    assert kw['cmd'].startswith('%s --noheader --nodelist=dev-slurm-n1' % bad)


def test_failure_after_update_says_the_node_was_changed(tmp_path, slurm_tools):
    broken = tool(tmp_path, 'squeue-broken', 'echo "squeue: error: Unable to contact slurm controller" >&2; exit 1')
    slurm = slurm_node.Slurm(stand_in(**dict(slurm_tools, squeue_path=broken)))
    slurm.update('dev-slurm-n1', 'drain', 'gpufleet[q4]: upgrading')
    with pytest.raises(Failed) as failed:
        slurm.jobs('dev-slurm-n1')
    kw = failed.value.args[0]
    assert kw['changed'] is True and kw['rc'] == 1
    assert kw['msg'] == ('squeue failed (rc=1): squeue: error: Unable to contact slurm controller; note: scontrol '
                         'update state=DRAIN had already succeeded, the node was changed')
    assert calls(tmp_path)[0] == 'scontrol update nodename=dev-slurm-n1 state=DRAIN reason=gpufleet[q4]: upgrading'


def test_reason_is_passed_as_is(tmp_path, slurm_tools):
    """One argv item, no shell and no $VAR or ~ expansion (AnsibleModule.run_command expanded both)."""
    slurm = slurm_node.Slurm(stand_in(**slurm_tools))
    slurm.update('dev-slurm-n1', 'down', 'gpufleet[x]: $HOME ~ "quoted"')
    assert calls(tmp_path) == ['scontrol update nodename=dev-slurm-n1 state=DOWN reason=gpufleet[x]: $HOME ~ "quoted"']


def test_check_mode_drain_reports_the_change_without_update(tmp_path, slurm_tools):
    module = stand_in(check_mode=True, diff=True, state='drain', reason='rollout', **slurm_tools)
    failed, result = slurm_node.manage(module, 'dev-slurm-n1')
    assert failed is False and result['changed'] is True and result['action'] == 'DRAIN'
    assert result['diff']['after'] == {'state': 'IDLE+DRAIN', 'reason': 'gpufleet[adhoc]: rollout'}
    assert [j['job_id'] for j in result['jobs']] == ['1', '2'] and result['waited'] == 0.0
    assert [c.split(' ', 2)[:2] for c in calls(tmp_path)] == [['scontrol', 'show'], ['squeue', '--noheader']]


def test_wait_idle_timeout_is_a_failed_result(tmp_path, slurm_tools, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(slurm_node.time, 'time', lambda: clock[0])
    monkeypatch.setattr(slurm_node.time, 'sleep', lambda s: clock.__setitem__(0, clock[0] + s))
    module = stand_in(wait_idle=True, timeout=10, poll_interval=4, **slurm_tools)
    failed, result = slurm_node.manage(module, 'dev-slurm-n1')
    assert failed is True and result['changed'] is False and result['waited'] == 10.0
    assert result['msg'].startswith('node dev-slurm-n1 still runs 2 job(s) after 10s (timeout): 1 (sleep job, user '
                                    'root, RUNNING)')
    assert sum(1 for c in calls(tmp_path) if c.startswith('squeue')) == 4  # first look, then at 4, 8 and 10 s


def test_wait_idle_stops_when_the_jobs_end():
    class Stub(object):
        asked = 0

        def jobs(self, name):
            self.asked += 1
            return []

    stub = Stub()
    jobs, waited = slurm_node.wait_idle(stub, 'n1', [{'job_id': '1'}], timeout=30, poll_interval=1)
    assert jobs == [] and stub.asked == 1 and 1 <= waited < 5


@pytest.mark.parametrize('name', ['', ' ', '-a', 'gpu[01-02]', 'a,b', 'a b'])
def test_refuse_bad_name(name):
    with pytest.raises(Failed) as failed:
        slurm_node.refuse_bad_input(stand_in(name=name))
    assert failed.value.args[0]['msg'].startswith('name must be one Slurm NodeName')


def test_refuse_collects_option_errors(tmp_path):
    with pytest.raises(Failed) as failed:
        slurm_node.refuse_bad_input(stand_in(run_id='a b', timeout=0, poll_interval=0,
                                             scontrol_path=str(tmp_path / 'nope')))
    msg = failed.value.args[0]['msg']
    nope = 'scontrol_path %s does not exist' % (tmp_path / 'nope')
    for opt in ('run_id must', 'timeout must', 'poll_interval must', nope):
        assert opt in msg
    assert slurm_node.refuse_bad_input(stand_in(name=' dev-slurm-n1 ')) == 'dev-slurm-n1'
