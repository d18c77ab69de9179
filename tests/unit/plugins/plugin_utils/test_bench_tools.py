# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/bench_tools' filters (plugins/plugin_utils/_bench_tools.py) on hand-made probe outputs, the APT pin
against the version lock's rule, and the acceptance role's default executables against the role's paths."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.bench_tools import FilterModule
from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _bench_tools as bt
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import version_matches

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))

DPKG = [
    'datacenter-gpu-manager\t1:3.3.8\thi ',
    'gpu-burn\t1.1-1gpufleet1\tii ',
    'perftest\t4.5-1\thi ',
    'nccl-tests\t\tun ',
    'openmpi-bin\t4.1.4-3+b1\trc ',
]
WANTED = {'datacenter-gpu-manager': '3.3.9', 'gpu-burn': '1.1', 'perftest': '4.5-1', 'nccl-tests': '',
          'openmpi-bin': ''}
MADISON = [
    'datacenter-gpu-manager |    1:3.3.9 | http://10.254.77.1:8077/bookworm ./ Packages',
    'datacenter-gpu-manager |    1:3.3.8 | http://10.254.77.1:8077/bookworm ./ Packages',
    'nccl-tests | 2.13.11-1gpufleet1 | http://10.254.77.1:8077/bookworm ./ Packages',
    'openmpi-bin | 4.1.4-3+b1 | http://10.254.77.1:8077/bookworm ./ Packages',
    'openmpi-bin | 4.1.4-3+b1 | http://deb.debian.org/debian bookworm/main amd64 Packages',
]


def test_package_state():
    state = bt.package_state(DPKG, WANTED)
    assert state['installed'] == {'datacenter-gpu-manager': '1:3.3.8', 'gpu-burn': '1.1-1gpufleet1', 'perftest': '4.5-1'}
    # DCGM at another version, nccl-tests never installed, openmpi-bin removed (config files left)
    assert state['missing'] == ['datacenter-gpu-manager', 'nccl-tests', 'openmpi-bin']
    assert state['held'] == ['datacenter-gpu-manager', 'perftest']
    assert state['held_elsewhere'] == ['datacenter-gpu-manager']
    assert state['known'] == ['datacenter-gpu-manager', 'gpu-burn', 'openmpi-bin', 'perftest']
    assert bt.package_state('', WANTED)['missing'] == list(WANTED)


def test_install_specs_resolve_the_newest_matching_version():
    specs = bt.install_specs(MADISON, WANTED, ['datacenter-gpu-manager', 'nccl-tests', 'openmpi-bin'])
    assert specs == {'install': ['datacenter-gpu-manager=1:3.3.9', 'nccl-tests', 'openmpi-bin'], 'unavailable': []}
    assert bt.install_specs(MADISON, {'datacenter-gpu-manager': '1:3.3.8'}, ['datacenter-gpu-manager'])['install'] == [
        'datacenter-gpu-manager=1:3.3.8']


def test_install_specs_name_what_the_sources_have():
    specs = bt.install_specs(MADISON, {'datacenter-gpu-manager': '3.3.10', 'gpu-burn': '1.1'},
                             ['datacenter-gpu-manager', 'gpu-burn'])
    assert specs['install'] == []
    assert specs['unavailable'] == [
        'datacenter-gpu-manager 3.3.10 is not in the configured sources (they have: 1:3.3.9, 1:3.3.8)',
        'gpu-burn 1.1 is not in the configured sources (they have: no version of it)']


@pytest.mark.parametrize('pinned', ['3.3.9', '1:3.3.9', '4.5-1', '4.1.4-3+b1', '2.13.11', '4.5-0.20-1', '1.1~rc1'])
@pytest.mark.parametrize('candidate', ['3.3.9', '1:3.3.9', '3.3.9-1', '3.3.90', '13.3.9', '3.3.9.1-1', '4.5-1', '1:4.5-1',
                                       '4.5-10', '4.5', '4.1.4-3+b1', '4.1.4-3+b10', '4.1.4-3xb1', '2.13.11-1gpufleet1',
                                       '4.5-0.20-1', '4.5-0.20', '1.1~rc1-2', '1.1-rc1'])
def test_apt_pin_is_the_lock_rule(pinned, candidate):
    # the APT pin (POSIX ERE; Python's re agrees on this subset) accepts what the lock's rule accepts
    pattern = bt.apt_pin(pinned)
    assert pattern.startswith('/') and pattern.endswith('/')
    assert bool(re.match(pattern[1:-1], candidate)) == version_matches(pinned, candidate), (pattern, candidate)


def test_missing_tools_name_the_package():
    results = [
        {'item': {'tool': 'dcgm', 'path': '/usr/bin/dcgmi'}, 'stat': {'exists': True, 'executable': True}},
        {'item': {'tool': 'gpu_burn', 'path': '/usr/bin/gpu_burn'}, 'stat': {'exists': False}},
        {'item': {'tool': 'nccl_tests', 'path': '/usr/bin/all_reduce_perf'}, 'stat': {'exists': False}},
        {'item': {'tool': 'perftest', 'path': '/usr/bin/ib_write_bw'}, 'stat': {'exists': True, 'executable': False}},
    ]
    packages = {'dcgm': ['datacenter-gpu-manager'], 'gpu_burn': ['gpu-burn'], 'nccl_tests': ['nccl-tests'],
                'perftest': ['perftest']}
    installed = {'gpu-burn': '1.1-1gpufleet1', 'perftest': '4.5-1'}
    assert bt.missing_tools(results, packages, installed) == [
        'gpu_burn: /usr/bin/gpu_burn is missing - install package gpu-burn (gpu-burn is installed (1.1-1gpufleet1) '
        'but lacks it: reinstall it)',
        'nccl_tests: /usr/bin/all_reduce_perf is missing - install package nccl-tests (nccl-tests is not installed)',
        'perftest: /usr/bin/ib_write_bw is not executable - install package perftest (perftest is installed (4.5-1) '
        'but lacks it: reinstall it)']
    assert bt.missing_tools(results[:1], packages) == []


def test_program_results_read_a_real_find_call(tmp_path):
    """The role's one find call, run for real over an executable, a file without an execute bit, a link to an
    executable, a dangling link, a directory and a path that does not exist."""
    (tmp_path / 'tool').write_text('#!/bin/sh\n')
    (tmp_path / 'tool').chmod(0o755)
    (tmp_path / 'plain').write_text('x')
    (tmp_path / 'plain').chmod(0o644)
    (tmp_path / 'link').symlink_to(tmp_path / 'tool')
    (tmp_path / 'dangling').symlink_to(tmp_path / 'nowhere')
    (tmp_path / 'dir').mkdir()
    names = ['tool', 'plain', 'link', 'dangling', 'dir', 'missing']
    programs = [{'tool': 'dcgm', 'path': str(tmp_path / n)} for n in names]
    res = subprocess.run(['find', '-L'] + [p['path'] for p in programs] + ['-maxdepth', '0', '-printf', '%y %m %p\n'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert res.returncode == 1 and 'missing' in res.stderr  # the missing path: named on stderr, not printed
    got = bt.program_results(res.stdout.splitlines(), programs)
    assert [r['item'] for r in got] == programs
    assert dict((os.path.basename(r['item']['path']), (r['stat']['exists'], r['stat']['executable'])) for r in got) == {
        'tool': (True, True), 'plain': (True, False), 'link': (True, True), 'dangling': (True, False),
        'dir': (True, False), 'missing': (False, False)}
    messages = bt.missing_tools(got, {'dcgm': ['datacenter-gpu-manager']})
    assert len(messages) == 4 and all('datacenter-gpu-manager is not installed' in m for m in messages)
    assert bt.program_results(None, []) == []


@pytest.mark.parametrize('name, args', [
    ('bench_tools_found', (['f 755'], [])),
    ('bench_tools_found', (['f rwx /usr/bin/x'], [])),
    ('bench_tools_found', ([], {'tool': 'dcgm'})),
    ('bench_tools_found', ([], [{'path': '/usr/bin/x'}])),
    ('bench_tools_package_state', (DPKG, ['gpu-burn'])),
    ('bench_tools_package_state', (42, WANTED)),
    ('bench_tools_install_specs', (MADISON, WANTED, 'gpu-burn')),
    ('bench_tools_missing', ({'results': []}, {})),
    ('bench_tools_missing', ([{'stat': {}}], {})),
    ('bench_tools_missing', ([], ['gpu-burn'])),
    ('bench_tools_apt_pin', ('',)),
    ('bench_tools_apt_pin', (None,)),
])
def test_filters_refuse_bad_shapes_by_name(name, args):
    with pytest.raises(AnsibleFilterError, match='^%s: ' % name):
        FilterModule().filters()[name](*args)


def _yaml(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return yaml.safe_load(f)


def test_acceptance_runs_the_programs_bench_tools_installs():
    # one list of paths in two roles: the acceptance ladder's default executables are programs bench_tools checks
    bench = _yaml('roles', 'bench_tools', 'vars', 'main.yml')['__bench_tools_executables_default']
    acc = _yaml('roles', 'acceptance', 'vars', 'main.yml')['__acceptance_executables_default']
    rung_tools = {'dcgm_diag': ['dcgm'], 'gpu_burn': ['gpu_burn'], 'p2p_bandwidth': ['cuda_samples', 'nvbandwidth'],
                  'nccl_bench': ['nccl_tests'], 'rdma_bw': ['perftest']}
    choices = {'{{ acceptance_p2p_tool }}': ['p2pBandwidthLatencyTest', 'nvbandwidth'],
               '{{ acceptance_rdma_test }}': ['write', 'read', 'send']}
    for rung, path in acc.items():
        paths = [path]
        for var, values in choices.items():
            if var in path:
                paths = [p.replace(var, v) for p in paths for v in values]
        provided = [p for tool in rung_tools[rung] for p in bench[tool]]
        assert set(paths) <= set(provided), (rung, paths, provided)
    assert sorted(acc) == sorted(rung_tools)
    assert _yaml('roles', 'acceptance', 'defaults', 'main.yml')['acceptance_p2p_tool'] == 'p2pBandwidthLatencyTest'
