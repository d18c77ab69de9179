# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scheduler role on localhost with provider none (no scheduler is asked anything): the provider by its name
(`scheduler_provider`) and by the deprecated inventory name (`gpufleet_scheduler`, read as its default until 2.0.0,
with a DEPRECATED notice); `scheduler_provider` wins over the old name; an unknown provider - by either name - fails
naming `scheduler_provider` and what is allowed (the entry point's argument spec), before any provider task runs."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.playbook

PLAY = r'''
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Query the node through the scheduler role
      ansible.builtin.include_role:
        name: gpufleet.cluster.scheduler
        tasks_from: query

    - name: Write what the role set
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ scheduler_result | to_json }}"
        mode: "0644"
'''


def _run(run_play, tmp_path, **extra):
    out = tmp_path / 'result.json'
    rc, output = run_play(PLAY, dict(extra, out=str(out)))
    return rc, output, (json.loads(out.read_text()) if out.exists() else None)


def test_new_name_no_notice(run_play, tmp_path):
    rc, output, got = _run(run_play, tmp_path, scheduler_provider='none')
    assert rc == 0, output
    assert got['scheduler'] == 'none' and got['skipped'] is True
    assert 'DEPRECATED: gpufleet_scheduler' not in output


def test_deprecated_name_is_read_with_a_notice(run_play, tmp_path):
    rc, output, got = _run(run_play, tmp_path, gpufleet_scheduler='none')
    assert rc == 0, output
    assert got['scheduler'] == 'none'
    assert 'DEPRECATED: gpufleet_scheduler (none)' in output
    assert 'Set scheduler_provider instead' in output


def test_new_name_wins_over_the_old(run_play, tmp_path):
    rc, output, got = _run(run_play, tmp_path, gpufleet_scheduler='slurm', scheduler_provider='none')
    assert rc == 0, output
    assert got['scheduler'] == 'none'
    assert 'DEPRECATED: gpufleet_scheduler (slurm)' in output


@pytest.mark.parametrize('var', ['scheduler_provider', 'gpufleet_scheduler'])
def test_unknown_provider_by_either_name_fails_naming_the_option(run_play, tmp_path, var):
    rc, output, got = _run(run_play, tmp_path, **{var: 'kubernetes'})
    assert rc != 0
    assert got is None
    # the entry point's argument spec judges it first, naming the option and its choices
    assert 'value of scheduler_provider must be one of: slurm, none, got: kubernetes' in output
    assert 'Traceback' not in output
