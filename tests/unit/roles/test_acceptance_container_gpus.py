# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""acceptance role, container_gpus rung: the whole role (main, then report) in a local playbook over six hosts,
docker being the HANDMADE stand-in (tests/fixtures/hand_made/container_gpus) and each host's nvidia-smi a script
printing the REAL recorded 8x A100 ``nvidia-smi -L`` list (tests/unit/fixtures/excerpts). Checks what the ladder
records - pass with figure and threshold, the named failures, the runtime's own error text, ``skipped: no GPU``,
the missing image, a profile without containers - and the JSON, Markdown, JUnit and Prometheus forms."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO = Path(__file__).resolve().parents[3]
LIST = REPO / 'tests' / 'unit' / 'fixtures' / 'excerpts' / 'nvidia_smi' / 'list-L-8xA100-80GB-superbench.txt'
STANDIN = REPO / 'tests' / 'fixtures' / 'hand_made' / 'container_gpus' / 'docker_standin_HANDMADE.py'
IMAGE = 'registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04'

PLAYBOOK = """
- hosts: all
  gather_facts: false
  roles:
    - role: gpufleet.cluster.acceptance
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Report
      ansible.builtin.include_role:
        name: gpufleet.cluster.acceptance
        tasks_from: report
      vars:
        acceptance_report_hosts: "{{ groups['all'] }}"
"""

# host -> (container list: 'same' | 'fewer' | None, stand-in case, GPUs, extra host vars)
HOSTS = {
    'match': ('same', 'ok', 8, {}),
    'fewer': ('fewer', 'ok', 8, {}),
    'broken': ('same', 'no_toolkit', 8, {}),
    'nogpu': ('same', 'ok', 0, {}),
    'noimage': ('same', 'ok', 8, {'acceptance_container_gpus_image': None}),
    'nocontainers': ('same', 'ok', 8, {'acceptance_container_gpus': False}),
}


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.isfile(ansible_playbook):
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    tmp = tmp_path_factory.mktemp('acc-ctr')
    lines = LIST.read_text().splitlines(True)
    hosts = {}
    for name, (ctr, case, gpus, extra) in HOSTS.items():
        d = tmp / name
        d.mkdir()
        (d / 'host.txt').write_text(''.join(lines))
        (d / 'ctr.txt').write_text(''.join(lines if ctr == 'same' else lines[:7]))
        (d / 'nvidia-smi').write_text('#!/bin/sh\necho "$*" >> %s/smi.log\ncat %s/host.txt\n' % (d, d))
        (d / 'docker').write_text('#!/bin/sh\n# HANDMADE stand-in, not docker\nGPUFLEET_STANDIN_CASE=%s '
                                  'GPUFLEET_STANDIN_LIST=%s/ctr.txt GPUFLEET_STANDIN_LOG=%s/docker.log exec %s %s "$@"\n'
                                  % (case, d, d, sys.executable, STANDIN))
        for tool in ('nvidia-smi', 'docker'):
            (d / tool).chmod(0o755)
        hosts[name] = dict({'acceptance_gpu_count': gpus, 'acceptance_textfile_dir': str(d / 'textfile'),
                            'acceptance_executables': {'container_gpus': str(d / 'docker'),
                                                       'nvidia_smi': str(d / 'nvidia-smi')}}, **extra)
    inventory = tmp / 'hosts.yml'
    inventory.write_text(json.dumps({'all': {'hosts': hosts, 'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable, 'gpufleet_profile': 'unit',
        'gpufleet_containers': True, 'acceptance_rungs': ['container_gpus'], 'acceptance_hcas': [],
        'acceptance_fail': False, 'acceptance_container_gpus_image': IMAGE,
        'acceptance_report_dir': str(tmp / 'reports')}}}))
    (tmp / 'play.yml').write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    proc = subprocess.run([ansible_playbook, '-i', str(inventory), str(tmp / 'play.yml')], cwd=str(REPO), env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return tmp, json.loads((tmp / 'reports' / 'acceptance-report.json').read_text())


def _rung(report, host):
    rungs = report['nodes'][host]['rungs']
    return rungs[0] if rungs else None


def test_same_gpus_pass_with_figure_threshold_and_origin(run):
    tmp, report = run
    r = _rung(report, 'match')
    assert (r['rung'], r['status'], r['figure'], r['threshold'], r['threshold_kind'], r['threshold_origin'],
            r['unit']) == ('container_gpus', 'pass', 8, 8, 'eq', 'host', 'GPUs')
    assert "sees the host's 8 GPU(s), same UUIDs" in r['message']
    (call,) = [json.loads(line) for line in (tmp / 'match' / 'docker.log').read_text().splitlines()]
    assert call[4:] == ['--network', 'none', '--pull', 'missing', '--gpus', 'all', IMAGE, 'nvidia-smi', '-L']
    assert report['ladder'] == ['dcgm_diag', 'gpu_burn', 'p2p_bandwidth', 'nccl_bench', 'container_gpus',
                                'fabric_health', 'rdma_bw']


def test_fewer_gpus_fail_naming_the_gpu(run):
    dummy, report = run
    r = _rung(report, 'fewer')
    assert r['status'] == 'fail' and r['figure'] == 7 and r['threshold'] == 8
    assert 'missing in the container: GPU 7 NVIDIA A100-SXM4-80GB (GPU-b07c7bf3-4549-25d9-cec2-999db25a20a6)' in r['message']
    assert report['nodes']['fewer']['failed_rung'] == 'container_gpus'


def test_broken_runtime_fails_with_its_own_text(run):
    dummy, report = run
    r = _rung(report, 'broken')
    assert r['status'] == 'fail' and r['figure'] is None and r['threshold'] == 8
    assert ('docker run failed (rc=125): docker: Error response from daemon: could not select device driver "" with '
            'capabilities: [[gpu]].') in r['message']


def test_gpu_less_host_skips_without_running_anything(run):
    tmp, report = run
    r = _rung(report, 'nogpu')
    assert r['status'] == 'skipped' and r['message'] == 'skipped: no GPU' and r['figure'] is None
    assert not (tmp / 'nogpu' / 'docker.log').exists() and not (tmp / 'nogpu' / 'smi.log').exists()
    assert report['nodes']['nogpu']['status'] == 'skipped'


def test_missing_image_fails_and_says_what_to_set(run):
    tmp, report = run
    r = _rung(report, 'noimage')
    assert r['status'] == 'fail' and 'image must name an image of the local registry or mirror' in r['message']
    assert not (tmp / 'noimage' / 'docker.log').exists()


def test_profile_without_containers_has_no_such_rung(run):
    dummy, report = run
    assert report['nodes']['nocontainers']['rungs'] == [] and report['nodes']['nocontainers']['status'] == 'skipped'


def test_markdown_junit_and_prometheus(run):
    tmp, dummy = run
    md = (tmp / 'reports' / 'acceptance-report.md').read_text()
    assert '| match | unit | passed | - | - | - | - | **pass** 8 of 8 GPUs (host) | - |' in md
    assert '**fail** 7 of 8 GPUs (host)' in md and '**fail** no figure of 8 GPUs (host)' in md
    assert '| nogpu | unit | skipped | - | - | - | - | skipped: no GPU | - |' in md
    root = ET.parse(str(tmp / 'reports' / 'acceptance-junit.xml')).getroot()
    cases = dict((s.get('name'), s.find('testcase')) for s in root.iter('testsuite'))
    assert 'could not select device driver' in cases['broken'].find('failure').get('message')
    assert cases['nogpu'].find('skipped').get('message') == 'skipped: no GPU'
    prom = (tmp / 'match' / 'textfile' / 'gpufleet_acceptance.prom').read_text()
    assert 'gpufleet_acceptance_rung_pass{profile="unit",rung="container_gpus",device=""} 1' in prom
    assert ('gpufleet_acceptance_rung_threshold{profile="unit",rung="container_gpus",device="",unit="GPUs",kind="eq",'
            'origin="host"} 8') in prom
