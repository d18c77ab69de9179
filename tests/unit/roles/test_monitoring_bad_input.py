# -*- coding: utf-8 -*-
"""monitoring_node and monitoring_server refuse bad input before any change, naming the variable and what is
allowed: their validate.yml run by ansible-playbook on local hosts (assert runs on the controller, nothing is
touched), one host per bad input, plus one host with the defaults that must pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO_ROOT = Path(__file__).resolve().parents[3]

NODE = {
    'n_ok': ({}, None),
    'n_collectors': ({'monitoring_node_collectors': ['ib', 'gpu']}, 'monitoring_node_collectors must be a list of ib, status, fs'),
    'n_interval': ({'monitoring_node_collector_interval': {'ib': 'soon', 'status': '60s', 'fs': '60s'}},
                   'monitoring_node_collector_interval must map every collector'),
    'n_interval_missing': ({'monitoring_node_collector_interval': {'ib': '30s'}}, 'monitoring_node_collector_interval must map'),
    'n_port': ({'monitoring_node_exporter_port': 70000}, 'monitoring_node_exporter_port must be a port number 1-65535'),
    'n_path': ({'monitoring_node_textfile_dir': 'relative/dir'}, 'monitoring_node_textfile_dir must be an absolute path'),
    'n_fs_path': ({'monitoring_node_filesystems': [{'path': 'shared', 'max_used_percent': 80}]}, 'monitoring_node_filesystems'),
    'n_fs_pct': ({'monitoring_node_filesystems': [{'path': '/shared', 'max_used_percent': 150}]}, 'max_used_percent: a number above 0'),
    'n_fs_key': ({'monitoring_node_filesystems': [{'path': '/shared', 'max_used_percent': 80, 'pct': 1}]}, 'monitoring_node_filesystems'),
    'n_gpus': ({'monitoring_node_expected_gpus': 'eight'}, 'monitoring_node_expected_gpus must be a whole number'),
    'n_dcgm': ({'monitoring_node_dcgm_exporter': 'maybe'}, 'monitoring_node_dcgm_exporter must be auto, true or false'),
    'n_counters': ({'monitoring_node_dcgm_counters': {'GPU_TEMP': ['gauge', 'x']}}, 'monitoring_node_dcgm_counters must map DCGM field names'),
}
SERVER = {
    's_ok': ({}, None),
    's_groups': ({'monitoring_server_scrape_groups': ['nosuch']}, 'monitoring_server_scrape_groups must be a list of inventory groups'),
    's_port': ({'monitoring_server_port': 0}, 'monitoring_server_port must be a port number'),
    's_interval': ({'monitoring_server_scrape_interval': 15}, 'monitoring_server_scrape_interval must be a Prometheus duration'),
    's_for_value': ({'monitoring_server_alert_for': {'IbPortDown': '5 minutes'}}, 'not a duration: IbPortDown'),
    's_for_name': ({'monitoring_server_alert_for': {'NoSuchAlert': '5m'}}, 'unknown: NoSuchAlert'),
    's_thr_value': ({'monitoring_server_alert_thresholds': {'gpu_temp_page_c': 'hot'}}, 'monitoring_server_alert_thresholds: allowed keys'),
    's_thr_name': ({'monitoring_server_alert_thresholds': {'gpu_temp': 80}}, 'unknown: gpu_temp'),
    's_thr_ratio': ({'monitoring_server_alert_thresholds': {'filesystem_page_ratio': 1.5}}, 'filesystem_page_ratio 0-1'),
}

PLAYBOOK = """
- hosts: node_cases
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpufleet.cluster.monitoring_node
        tasks_from: validate.yml
- hosts: server_cases
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpufleet.cluster.monitoring_server
        tasks_from: validate.yml
"""


def test_bad_inputs_fail_naming_the_variable(tmp_path):
    ansible_playbook = Path(sys.executable).parent / 'ansible-playbook'
    if not ansible_playbook.is_file():
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    local = {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}
    inventory = {'all': {'children': {
        'node_cases': {'hosts': {h: dict(local, **v) for h, (v, _m) in NODE.items()}},
        'server_cases': {'hosts': {h: dict(local, **v) for h, (v, _m) in SERVER.items()}},
        'gpu_nodes': {'hosts': {'n_ok': None}}}}}
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(inventory))
    (tmp_path / 'play.yml').write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO_ROOT / 'ansible.cfg'), ANSIBLE_STDOUT_CALLBACK='ansible.builtin.json',
               ANSIBLE_FORCE_COLOR='0')
    res = subprocess.run([str(ansible_playbook), '-i', str(tmp_path / 'inventory.yml'), str(tmp_path / 'play.yml')],
                         capture_output=True, text=True, timeout=300, cwd=str(REPO_ROOT), env=env, check=False)
    assert '{' in res.stdout, res.stderr[-3000:]
    out = json.loads(res.stdout[res.stdout.index('{'):])
    failures = {}
    for play in out['plays']:
        for task in play['tasks']:
            for host, result in task['hosts'].items():
                if result.get('failed'):
                    msgs = [result.get('msg', '')] + [r.get('msg', '') for r in result.get('results', []) if r.get('failed') or r.get('evaluated_to') is False]
                    failures[host] = ' '.join(msgs)
    for host, (_v, message) in list(NODE.items()) + list(SERVER.items()):
        if message is None:
            assert host not in failures, failures.get(host)
        else:
            assert host in failures, '%s passed validation' % host
            assert message in ' '.join(failures[host].split()), failures[host]
