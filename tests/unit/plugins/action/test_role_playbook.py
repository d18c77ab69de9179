# -*- coding: utf-8 -*-
"""The node_facts_check role in a small playbook run in tmp_path: three local hosts read a REAL recorded
/sys/class/infiniband tree and a recorded nvidia-smi XML (printed by a stand-in nvidia-smi); one host's
copy has other firmware, so node_compare passes everywhere and fleet_compare names that host with the
majority value."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO_ROOT = Path(__file__).resolve().parents[4]

PLAYBOOK = """
- hosts: all
  gather_facts: false
  tasks:
    - name: Check each host
      block:
        - ansible.builtin.include_role:
            name: gpufleet.cluster.node_facts_check
      always:
        - ansible.builtin.copy:
            dest: "{{ out }}/{{ inventory_hostname }}.json"
            content: "{{ node_facts_check_result | to_json }}"
            mode: "0644"
"""


def test_role_fleet_majority(corpus, tmp_path):
    ansible_playbook = Path(sys.executable).parent / 'ansible-playbook'
    if not ansible_playbook.is_file():
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    rec = tmp_path / 'rec'
    for name in ('ok', 'other'):
        shutil.copytree(str(corpus / 'sysfs_infiniband/node_exporter/sys'), str(rec / name / 'sys'))
    fw = rec / 'other/sys/class/infiniband/mlx4_0/fw_ver'
    os.chmod(str(fw), stat.S_IRUSR | stat.S_IWUSR)
    os.chmod(str(fw.parent), os.stat(str(fw.parent)).st_mode | stat.S_IWUSR)
    fw.write_text('2.42.5000\n')
    smi = rec / 'nvidia-smi'
    smi.write_text('#!/bin/sh\n[ "$1" = -q ] && exec cat %s\nexit 2\n'
                   % (corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml'))
    smi.chmod(0o755)
    out = tmp_path / 'out'
    out.mkdir()
    inventory = tmp_path / 'hosts.yml'
    hosts = dict(('node%02d' % i, {'node_facts_check_sysfs_root': str(rec / ('other' if i == 3 else 'ok'))})
                 for i in (1, 2, 3))
    inventory.write_text(json.dumps({'all': {'hosts': hosts, 'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable, 'out': str(out),
        'gpufleet_profile': 'a5000_ib', 'gpufleet_expect_gpus': 2, 'gpufleet_expect_hcas': 1,
        'gpufleet_expect_hca_match': '^mlx4_',
        'gpufleet_expect_gpu_pcie': {'gen': 4, 'width': 16},
        'gpufleet_expect_hca_ports': {'state': 'ACTIVE', 'rate_gbps': 40, 'link_layer': 'InfiniBand'},
        'gpufleet_lock': {'nvidia_driver_branch': '590', 'vbios': '94.02.6D.00.0D'},
        'node_facts_check_nvidia_smi': str(smi), 'node_facts_check_query_flash': False}}}))
    playbook = tmp_path / 'check.yml'
    playbook.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    proc = subprocess.run([str(ansible_playbook), '-i', str(inventory), str(playbook)], cwd=str(REPO_ROOT), env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-2000:]
    results = dict((h, json.loads((out / ('%s.json' % h)).read_text())) for h in hosts)
    for host in ('node01', 'node02'):
        assert results[host]['status'] == 'passed' and results[host]['deviations'] == [], results[host]
    assert results['node03']['status'] == 'failed'
    assert results['node03']['messages'] == [
        'node03: hca firmware board_id SM_1141000001000 expected 2.31.5050 (majority, 2 of 3 hosts of profile a5000_ib), '
        'found 2.42.5000']
    assert sorted(results['node01']['checked']) == ['driver_branch', 'gpu_memory_health', 'gpu_pcie', 'gpus', 'hca_ports',
                                                    'hcas', 'vbios']
    assert 'node03 differs from profile a5000_ib (1 deviation(s))' in proc.stdout
