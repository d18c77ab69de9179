# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""acceptance role, fabric_health rung, and verify.yml's site report: the role in a local playbook over four hosts
reading sysfs trees (the HAND-MADE NDR tree, the REAL recorded node_exporter tree, none), then verify.yml's own
``gpufleet_verify`` task and its JSON/Markdown site report (taken from playbooks/verify.yml, not copied)."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO = Path(__file__).resolve().parents[3]
HAND = REPO / 'tests' / 'unit' / 'fixtures' / 'hand_made' / 'fabric' / 'ndr-3hca-climbing-HANDMADE' / 'read2'
RECORDED = REPO / 'tests' / 'unit' / 'fixtures' / 'corpus' / 'sysfs_infiniband' / 'node_exporter'

# host -> extra host vars
HOSTS = {
    'healthy': {'acceptance_hcas': ['mlx5_0', 'mlx5_1'], 'acceptance_fabric_sysfs_root': str(HAND)},
    'slow': {'acceptance_hcas': ['mlx5_2'], 'acceptance_fabric_sysfs_root': str(HAND)},
    'nohca': {'acceptance_hcas': []},
    'recorded': {'acceptance_hcas': ['mlx4_0'], 'acceptance_fabric_sysfs_root': str(RECORDED),
                 'acceptance_fabric_check_sm': False, 'acceptance_fabric_min_rate_gbps': 40},
}


def _verify_task(name):
    """A task of verify.yml or of the report play it imports (playbooks/verify_report.yml), blocks included."""
    def walk(tasks):
        for task in tasks:
            yield task
            for key in ('block', 'rescue', 'always'):
                yield from walk(task.get(key, []))
    for pb in ('verify.yml', 'verify_report.yml'):
        for play in yaml.safe_load((REPO / 'playbooks' / pb).read_text()):
            for task in walk(play.get('tasks', [])):
                if task.get('name') == name:
                    return task
    raise AssertionError('task %r not in playbooks/verify.yml or verify_report.yml' % name)


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.isfile(ansible_playbook):
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    tmp = tmp_path_factory.mktemp('acc-fab')
    record = _verify_task("Add the ladder's outcome to this node's verification")
    json_task = _verify_task('Write the JSON report')
    json_task['ansible.builtin.copy']['dest'] = str(tmp / 'site-report.json')
    minimal = {'name': 'Minimal node record', 'ansible.builtin.set_fact': {'gpufleet_verify': {
        'profile': 'unit', 'status': 'ok', 'gpu_count': 0, 'gpu_status': 'skipped: no GPU', 'driver_version': '',
        'hcas': [], 'hca_status': 'skipped: no HCA', 'deviations': []}}}
    report_role = {'name': 'Acceptance report', 'vars': {'acceptance_report_hosts': sorted(HOSTS)},
                   'ansible.builtin.include_role': {'name': 'gpufleet.cluster.acceptance', 'tasks_from': 'report'}}
    plays = [
        {'hosts': 'all', 'gather_facts': False, 'roles': [{'role': 'gpufleet.cluster.acceptance'}],
         'post_tasks': [minimal, record]},
        {'hosts': 'localhost', 'gather_facts': False, 'vars': {'__report_hosts': sorted(HOSTS)}, 'tasks': [
            {'name': 'Site report (verify.yml template)', 'ansible.builtin.template': {
                'src': str(REPO / 'playbooks' / 'templates' / 'report.md.j2'), 'dest': str(tmp / 'site-report.md'),
                'mode': '0644'}},
            json_task, report_role]},
    ]
    hosts = dict((h, dict(v, acceptance_textfile_dir=str(tmp / h / 'textfile'))) for h, v in HOSTS.items())
    inventory = tmp / 'hosts.yml'
    inventory.write_text(json.dumps({'all': {'hosts': hosts, 'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable, 'gpufleet_profile': 'unit',
        'acceptance_rungs': ['fabric_health'], 'acceptance_gpu_count': 0, 'acceptance_fail': False,
        'acceptance_fabric_interval': 0, 'acceptance_fabric_min_rate_gbps': 400,
        'acceptance_executables': {'fabric_health': str(tmp / 'no-sminfo')},
        'acceptance_report_dir': str(tmp / 'reports')}}, 'localhost': {}}))
    (tmp / 'play.yml').write_text(yaml.safe_dump(plays, sort_keys=False))
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    proc = subprocess.run([ansible_playbook, '-i', str(inventory), '-i', 'localhost,', str(tmp / 'play.yml')],
                          cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return tmp, json.loads((tmp / 'reports' / 'acceptance-report.json').read_text())


def _rung(report, host):
    (rung,) = report['nodes'][host]['rungs']
    return rung


def test_ladder_has_the_rung_before_rdma_bw(run):
    dummy, report = run
    assert report['ladder'][-2:] == ['fabric_health', 'rdma_bw']


def test_healthy_ports_pass_with_zero_problems(run):
    dummy, report = run
    r = _rung(report, 'healthy')
    assert (r['status'], r['figure'], r['threshold'], r['threshold_kind'], r['threshold_origin'], r['unit']) == \
        ('pass', 0, 0, 'max', 'policy', 'problems')
    assert r['message'] == 'fabric_health: 2 port(s) healthy over 0 s (mlx5_0/1, mlx5_1/1)'


def test_rate_below_the_profile_fails_naming_the_port(run):
    dummy, report = run
    r = _rung(report, 'slow')
    assert r['status'] == 'fail' and r['figure'] == 1
    assert r['message'] == ("fabric_health: 1 problem(s) on 1 port(s): mlx5_2/1: rate 200 Gb/s (200 Gb/sec (2X NDR)) "
                            "below the profile's 400 Gb/s")
    assert report['nodes']['slow']['failed_rung'] == 'fabric_health'


def test_no_hca_is_skipped_with_the_reason(run):
    dummy, report = run
    r = _rung(report, 'nohca')
    assert r['status'] == 'skipped' and r['message'] == 'skipped: no HCA' and r['figure'] is None


def test_recorded_tree_missing_counters_fail(run):
    dummy, report = run
    r = _rung(report, 'recorded')
    assert r['status'] == 'fail'
    assert 'mlx4_0/2: counter symbol_error missing or unreadable in either read' in r['message']
    assert 'mlx4_0/1: counter symbol_error missing' in r['message']  # node_exporter's mlx4_0 has no symbol_error file


def test_textfile_has_the_rung(run):
    tmp, dummy = run
    text = (tmp / 'slow' / 'textfile' / 'gpufleet_acceptance.prom').read_text()
    assert 'gpufleet_acceptance_rung_pass{profile="unit",rung="fabric_health",device=""} 0' in text.splitlines()
    assert 'gpufleet_acceptance_rung_figure{profile="unit",rung="fabric_health",device="",unit="problems"} 1' \
        in text.splitlines()


def test_site_report_shows_the_fabric_health_verdict(run):
    tmp, dummy = run
    site = json.loads((tmp / 'site-report.json').read_text())
    assert site['healthy']['fabric_health'] == {
        'status': 'pass', 'problems': 0, 'message': 'fabric_health: 2 port(s) healthy over 0 s (mlx5_0/1, mlx5_1/1)'}
    assert site['nohca']['fabric_health']['status'] == 'skipped'
    assert site['slow']['fabric_health']['status'] == 'fail' and site['slow']['acceptance']['failed_rung'] == 'fabric_health'
    md = (tmp / 'site-report.md').read_text()
    assert '| host | profile | check | GPUs | HCAs | driver | acceptance | fabric health |' in md
    assert '| healthy | unit | ok | skipped: no GPU | skipped: no HCA | - | passed | pass |' in md
    assert '| nohca | unit | ok | skipped: no GPU | skipped: no HCA | - | skipped | skipped: no HCA |' in md
    assert '| slow | unit | ok | skipped: no GPU | skipped: no HCA | - | failed at fabric_health | fail (1 problem(s)) |' in md
    assert ("## Fabric health failures\n\n- **recorded**: fabric_health: " in md
            and "- **slow**: fabric_health: 1 problem(s) on 1 port(s): mlx5_2/1: rate 200 Gb/s" in md)
