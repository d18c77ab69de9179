# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/fabric_health.yml end to end on local hosts: three nodes reading sysfs trees (the HAND-MADE NDR tree, the
same with a counter that climbs while the node waits, none), the fabric view from a probe host whose infiniband-diags
print the output RECORDED HERE on an ibsim fabric and whose ibdiagnet db_csv is the HAND-MADE one; then the report
and the exit status."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO = Path(__file__).resolve().parents[3]
FIX = REPO / 'tests' / 'unit' / 'fixtures'
HAND = FIX / 'hand_made' / 'fabric' / 'ndr-3hca-climbing-HANDMADE'
IBSIM = FIX / 'ibsim'
DB = FIX / 'hand_made' / 'fabric' / 'ibdiagnet2-db_csv-fw-mixed-HANDMADE.db_csv'


def _tool(path, recording):
    path.write_text('#!/bin/sh\ncat %s\n' % recording)
    path.chmod(0o755)
    return str(path)


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.isfile(ansible_playbook):
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    tmp = tmp_path_factory.mktemp('fabplay')
    healthy, climbing = tmp / 'healthy', tmp / 'climbing'
    shutil.copytree(str(HAND / 'read2'), str(healthy))
    shutil.copytree(str(HAND / 'read1'), str(climbing))
    # the climbing node's symbol_error on mlx5_1 climbs by 5 every 0.2 s (atomic renames) while the play runs
    counter = climbing / 'sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error'
    bump = subprocess.Popen(['sh', '-c', 'n=4711; while :; do n=$((n + 5)); echo $n > %s.new && mv %s.new %s; sleep 0.2; '
                             'done' % (counter, counter, counter)], start_new_session=True)
    bindir = tmp / 'bin'
    bindir.mkdir()
    probe = {'fabric_health_ibswitches': _tool(bindir / 'ibswitches', IBSIM / 'ibswitches.txt'),
             'fabric_health_iblinkinfo': _tool(bindir / 'iblinkinfo', IBSIM / 'iblinkinfo-l.txt'),
             'gpufleet_fabric_ibdiagnet_db_csv': str(DB), 'fabric_health_sysfs_root': str(tmp / 'none')}
    nodes = {'node-healthy': {'fabric_health_sysfs_root': str(healthy)},
             'node-climbing': {'fabric_health_sysfs_root': str(climbing)},
             'node-nohca': {'fabric_health_sysfs_root': str(tmp / 'none')}}
    (tmp / 'none').mkdir()
    common = {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable, 'gpufleet_profile': 'unit',
              'gpufleet_report_dir': str(tmp / 'reports'), 'fabric_health_interval': 3,
              'fabric_health_sminfo': str(tmp / 'no-sminfo'),
              'gpufleet_expect_hca_ports': {'rate_gbps': 200, 'width': '2X'}, 'gpufleet_expect_hca_match': '^mlx5_[01]$'}
    inventory = tmp / 'hosts.yml'
    inventory.write_text(json.dumps({'all': {'vars': common, 'children': {
        'gpu_nodes': {'hosts': nodes}, 'fabric_probe': {'hosts': {'probe': probe}}}}}))
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    try:
        proc = subprocess.run([ansible_playbook, '-i', str(inventory), '-i', 'localhost,', 'playbooks/fabric_health.yml'],
                              cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300, check=False)
    finally:
        os.killpg(bump.pid, signal.SIGKILL)
        bump.wait()
    return tmp, proc


def test_exit_status_and_message(run):
    tmp, proc = run
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-1500:]
    assert 'fabric health: 1 node(s) with problems (node-climbing), fabric view with problems from probe' in proc.stdout


def test_json_report(run):
    tmp, dummy = run
    report = json.loads((tmp / 'reports' / 'fabric-health.json').read_text())
    nodes = report['nodes']
    assert sorted(nodes) == ['node-climbing', 'node-healthy', 'node-nohca']
    assert nodes['node-healthy']['status'] == 'pass' and len(nodes['node-healthy']['ports']) == 2
    assert nodes['node-nohca'] == {'profile': 'unit', 'status': 'skipped', 'message': 'skipped: no HCA', 'ports': [],
                                   'problems': []}
    (problem,) = nodes['node-climbing']['problems']
    assert re.match(r'^mlx5_1/1: symbol_error grew by [0-9]+ in [0-9.]+ s \(from [0-9]+ to [0-9]+; max 10\)$', problem)
    view = report['fabric']['probe']
    assert view['status'] == 'problems' and view['switches'] == 2 and view['links_total'] == 75
    assert 'link gpu02 mlx5_0 port 1 -> leaf01 port 2 runs 1X 10 Gbps: could be 12X, width 1X below 2X' in view['problems']
    assert view['problems'][-1].startswith('switch firmware differs within MT_0000000838: 31.2012.1092 on 2 switch(es)')


def test_markdown_report(run):
    tmp, dummy = run
    md = (tmp / 'reports' / 'fabric-health.md').read_text()
    assert '3 node(s): 1 healthy, 1 with problems, 1 skipped (no HCA).' in md
    assert '| node-healthy | unit | pass | mlx5_0/1 ACTIVE 400 Gb/sec (4X NDR): pass<br>mlx5_1/1 ACTIVE 400 Gb/sec (4X NDR): pass |' in md
    assert '- **node-climbing** mlx5_1/1: symbol_error grew by ' in md
    assert '- probe: **problems**: 2 switch(es), 75 port line(s), 5 link(s) below speed, 0 port(s) down, switch firmware ' \
           'per PSID: MT_0000000838 31.2012.1092 / 31.2012.1000; MT_0000000839 31.2012.1092' in md
