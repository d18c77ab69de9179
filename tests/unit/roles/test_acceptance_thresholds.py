# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""acceptance role: a bandwidth threshold has one name, unit included, from the inventory key to the module
option (GB/s ``gbytes_per_s``, Gb/s ``gbits_per_s``). The role calls the modules by the option names (never a
deprecated alias); the deprecated inventory keys still count, with a deprecation warning, and both names of one
threshold are refused - checked with the role's own validate and thresholds tasks in a local playbook."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _baselines as baselines

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, 'roles', 'acceptance')
BENCH_MODULES = ('p2p_bandwidth', 'nccl_bench', 'rdma_bw')


def _load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def _options(module):
    """Option name -> its aliases, from the module's DOCUMENTATION."""
    path = os.path.join(REPO, 'plugins', 'modules', module + '.py')
    with open(path) as f:
        text = f.read()
    doc = text.split("DOCUMENTATION = r'''", 1)[1].split("'''", 1)[0]
    return dict((name, spec.get('aliases', [])) for name, spec in yaml.safe_load(doc)['options'].items())


def _module_tasks(tasks):
    for task in tasks or []:
        for key in ('block', 'rescue', 'always'):
            yield from _module_tasks(task.get(key))
        for module in BENCH_MODULES:
            if 'gpufleet.cluster.' + module in task:
                yield module, task['gpufleet.cluster.' + module]


def test_role_calls_the_bench_modules_by_their_option_names():
    called = []
    for name in sorted(os.listdir(os.path.join(ROLE, 'tasks'))):
        for module, args in _module_tasks(_load(os.path.join(ROLE, 'tasks', name))):
            options = _options(module)
            aliases = [a for names in options.values() for a in names]
            assert set(args) <= set(options), (name, module, sorted(set(args) - set(options)))
            assert not set(args) & set(aliases), (name, module, 'deprecated alias')
            called.append((name, module, sorted(k for k in args if k.startswith('min_'))))
    assert called == [('ladder.yml', 'p2p_bandwidth', ['min_gbytes_per_s']),
                      ('ladder.yml', 'nccl_bench', ['min_busbw_gbytes_per_s']),
                      ('ladder.yml', 'rdma_bw', ['min_gbits_per_s']),
                      ('multinode.yml', 'nccl_bench', ['min_busbw_gbytes_per_s'])]


def test_inventory_keys_are_rung_and_option_with_the_unit():
    v = _load(os.path.join(ROLE, 'vars', 'main.yml'))
    resolved = baselines.host_thresholds({'hcas': {'mlx5_0': {'rate_gbps': 400}}})
    assert sorted(v['__acceptance_threshold_keys']) == sorted(resolved)
    assert v['__acceptance_threshold_keys_deprecated'] == baselines.RENAMED_KEYS
    options = dict((m, _options(m)) for m in BENCH_MODULES)
    for key, module, option in (('p2p_min_gbytes_per_s', 'p2p_bandwidth', 'min_gbytes_per_s'),
                                ('nccl_min_busbw_gbytes_per_s', 'nccl_bench', 'min_busbw_gbytes_per_s'),
                                ('nccl_multinode_min_busbw_gbytes_per_s', 'nccl_bench', 'min_busbw_gbytes_per_s'),
                                ('rdma_min_gbits_per_s', 'rdma_bw', 'min_gbits_per_s')):
        assert key in v['__acceptance_threshold_keys'] and key.endswith(option) and option in options[module]
    assert options['p2p_bandwidth']['min_gbytes_per_s'] == ['min_gbps']
    assert options['rdma_bw']['min_gbits_per_s'] == ['min_gbps']
    assert options['nccl_bench']['min_busbw_gbytes_per_s'] == ['min_busbw']


PLAYBOOK = """
- hosts: all
  gather_facts: false
  tasks:
    - name: The role's input check
      ansible.builtin.include_role:
        name: gpufleet.cluster.acceptance
        tasks_from: validate
        public: true
    - name: The role's thresholds
      ansible.builtin.include_role:
        name: gpufleet.cluster.acceptance
        tasks_from: thresholds
        public: true
    - name: Write what the ladder and the multinode step would pass to the modules
      ansible.builtin.copy:
        dest: "{{ out }}/{{ inventory_hostname }}.json"
        content: "{{ {'thr': __acceptance_thr, 'mn': __acceptance_mn_thr} | to_json }}"
        mode: "0644"
"""

NEW = {'p2p_min_gbytes_per_s': 20, 'nccl_min_busbw_gbytes_per_s': 360, 'rdma_min_gbits_per_s': 150,
       'nccl_multinode_min_busbw_gbytes_per_s': 90}
OLD = {'p2p_min_gbps': 20, 'nccl_min_busbw': 360, 'rdma_min_gbps': 150, 'nccl_multinode_min_busbw': 90}


def _run(tmp_path, thresholds):
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.isfile(ansible_playbook):
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    out = tmp_path / 'out'
    out.mkdir()
    hosts = dict((name, {'acceptance_thresholds': value}) for name, value in thresholds.items())
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(json.dumps({'all': {'hosts': hosts, 'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable, 'out': str(out),
        '__acceptance_hca_specs': {'mlx5_0': {'model': None, 'rate_gbps': 400}}}}}))
    playbook = tmp_path / 'thresholds.yml'
    playbook.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='1')
    proc = subprocess.run([ansible_playbook, '-i', str(inventory), str(playbook)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    results = dict((p.stem, json.loads(p.read_text())) for p in out.iterdir())
    return proc, results


def test_role_reads_the_new_keys_and_the_deprecated_ones(tmp_path):
    proc, results = _run(tmp_path, {'new': NEW, 'old': OLD, 'both': {'p2p_min_gbps': 20, 'p2p_min_gbytes_per_s': 30}})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2 and sorted(results) == ['new', 'old'], output[-3000:]
    for host in ('new', 'old'):
        thr = results[host]['thr']
        assert thr['p2p_min_gbytes_per_s'] == {'value': 20.0, 'origin': 'inventory'}
        assert thr['nccl_min_busbw_gbytes_per_s'] == {'value': 360.0, 'origin': 'inventory'}
        assert thr['rdma_min_gbits_per_s'] == {'mlx5_0': {'value': 150.0, 'origin': 'inventory'}}
        assert results[host]['mn'] == {'value': 90.0, 'origin': 'inventory'}
        assert not set(thr) & set(OLD)
    for old in sorted(OLD):
        assert 'acceptance_thresholds key %s is deprecated, use %s' % (old, baselines.RENAMED_KEYS[old]) in output
    assert output.count('DEPRECATION WARNING') == len(OLD), output[-3000:]  # the old keys' only
    assert 'not both names of one threshold' in proc.stdout


def test_role_with_the_new_keys_warns_nothing(tmp_path):
    proc, results = _run(tmp_path, {'new': NEW})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and sorted(results) == ['new'], output[-3000:]
    assert 'DEPRECATION' not in output and '[WARNING]' not in output, output[-3000:]
