# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pull bundle builder with stand-in tools (HANDMADE: an ansible-inventory printing a hand-made export, an
ansible-galaxy writing an empty tarball, a pip writing empty wheel files): what goes into the bundle, what stays out,
and the errors. The real tools run in the fleet tier's pull step."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import tarfile

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull_bundle as B

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

EXPORT = {
    '_meta': {'hostvars': {'a1': {'ansible_host': '10.0.0.1'}, 'b1': {'secret': 'x'}}},
    'all': {'children': ['ungrouped', 'gpu_nodes'], 'vars': {'site': 'dc1'}},
    'gpu_nodes': {'children': ['profile_a', 'profile_b']},
    'profile_a': {'hosts': ['a1'], 'vars': {'gpufleet_profile': 'a'}},
    'profile_b': {'hosts': ['b1'], 'vars': {'b_only': 1}},
}


def _script(path, body):
    path.write_text('#!/bin/sh\n' + body)
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def tools(tmp_path):
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    (tmp_path / 'export.json').write_text(json.dumps(EXPORT))
    calls = tmp_path / 'calls.log'
    return {
        'ansible-inventory': _script(bindir / 'ansible-inventory', 'echo "inventory $*" >> %s; cat %s\n'
                                     % (calls, tmp_path / 'export.json')),
        'ansible-galaxy': _script(bindir / 'ansible-galaxy', 'echo "galaxy $*" >> %s\n'
                                  'while [ $# -gt 0 ]; do [ "$1" = --output-path ] && out=$2; shift; done\n'
                                  'tar czf "$out/gpufleet-cluster-0.1.0.tar.gz" -T /dev/null\n' % calls),
        # writes a wheel per requirement line (name-version-py3-none-any.whl) unless PIP_FAIL_ON names it
        'pip': _script(bindir / 'pip', 'echo "pip $*" >> %s\n'
                       'while [ $# -gt 0 ]; do case $1 in -d) d=$2;; -r) r=$2;; esac; shift; done\n'
                       'sed "s/==/-/" "$r" | while read -r w; do\n'
                       '  case "$w" in "$PIP_SKIP"*) [ -n "$PIP_SKIP" ] && continue;; esac\n'
                       '  : > "$d/$(echo "$w" | tr - _ | sed "s/_\\([0-9]\\)/-\\1/")-py3-none-any.whl"; done\n' % calls),
        'calls': calls,
    }


def _deps(tmp_path):
    base = tmp_path / 'site'
    for name in ('ansible/posix', 'community/general', 'ansible/utils'):
        d = base / 'ansible_collections' / name
        (d / 'plugins' / '__pycache__').mkdir(parents=True, exist_ok=True)
        (d / 'MANIFEST.json').write_text('{}')
        (d / 'plugins' / 'x.py').write_text('# x\n')
        (d / 'plugins' / '__pycache__' / 'x.pyc').write_text('')
    return [str(base)]


def test_bundle_holds_the_profile_the_runner_and_the_pins(tmp_path, tools):
    lock = tmp_path / 'lock.yml'
    lock.write_text('gpufleet_lock: {nvidia_driver: 570.133.20}\n')
    out = str(tmp_path / 'out' / 'profile_a')
    m = B.build(ROOT, ['inv.yml'], 'profile_a', '3.11', out, tools, lock=str(lock), cache_dir=str(tmp_path / 'cache'),
                collection_paths=_deps(tmp_path), now=1000)
    assert m['nodes'] == ['a1'] and m['profile'] == 'profile_a' and m['python'] == '3.11' and m['lock'] == 'lock.yml'
    assert re.match(r'^profile_a-[0-9a-f]{12}$', m['id']) and m['built_unix'] == 1000
    assert json.load(open(os.path.join(out, 'MANIFEST.json'))) == dict((k, v) for k, v in m.items() if k != 'archive')
    inv = yaml.safe_load(open(os.path.join(out, 'inventory.yml')))
    text = json.dumps(inv)
    assert 'a1' in text and 'b1' not in text and 'b_only' not in text and 'ansible_host' not in text
    runner = open(os.path.join(out, 'gpufleet-pull')).read()
    assert runner.startswith('#!/usr/bin/python3\n') and 'def main(' in runner
    assert os.access(os.path.join(out, 'gpufleet-pull'), os.X_OK)
    assert os.access(os.path.join(out, 'gpufleet-pull.sbatch'), os.X_OK)
    reqs = open(os.path.join(out, 'requirements.txt')).read().split()
    assert 'ansible-core==2.19.14' in reqs and 'pip==26.3' in reqs
    wheels = sorted(os.listdir(os.path.join(out, 'wheels')))
    assert 'ansible_core-2.19.14-py3-none-any.whl' in wheels and len(wheels) == len(reqs)
    assert sorted(os.listdir(os.path.join(out, 'collections'))) == ['deps', 'gpufleet-cluster-0.1.0.tar.gz']
    deps = os.path.join(out, 'collections', 'deps', 'ansible_collections')
    assert os.path.isfile(os.path.join(deps, 'community', 'general', 'plugins', 'x.py'))
    assert not os.path.exists(os.path.join(deps, 'community', 'general', 'plugins', '__pycache__'))
    with tarfile.open(m['archive']) as tar:
        assert 'profile_a/MANIFEST.json' in tar.getnames()
    calls = tools['calls'].read_text()
    assert 'inventory -i inv.yml --list --export' in calls
    assert '--python-version 3.11 --implementation cp --abi cp311' in calls and '--no-deps' in calls
    # the wheelhouse is cached: a second build downloads nothing; the same inputs give the same id
    m2 = B.build(ROOT, ['inv.yml'], 'profile_a', '3.11', out, tools, lock=str(lock), cache_dir=str(tmp_path / 'cache'),
                 collection_paths=_deps(tmp_path), now=2000)
    assert tools['calls'].read_text().count('pip download') == 1
    assert m2['built_unix'] == 2000


@pytest.mark.parametrize('kwargs, msg', [
    ({'profile': 'profile_z'}, "--profile: profile group 'profile_z' is not in the inventory"),
    ({'python_version': '2.7'}, '--python: python_version must be a Python 3 version'),
    ({'lock': '/nonexistent/lock.yml'}, '--lock /nonexistent/lock.yml is not a file'),
    ({'inventory_sources': []}, 'give the inventory (-i)'),
    ({'collection_paths': ['/nonexistent']}, 'collection ansible.posix is not installed on this controller'),
    ({'collection_tarball': '/nonexistent.tar.gz'}, '--collection-tarball /nonexistent.tar.gz is not a file'),
])
def test_bundle_refuses(tmp_path, tools, kwargs, msg):
    args = dict(collection_root=ROOT, inventory_sources=['inv.yml'], profile='profile_a', python_version='3.11',
                out_dir=str(tmp_path / 'out' / 'b'), tools=tools, cache_dir=str(tmp_path / 'cache'),
                collection_paths=_deps(tmp_path))
    args.update(kwargs)
    with pytest.raises(B.BundleError, match=re.escape(msg)):
        B.build(**args)
    out = str(tmp_path / 'out')
    assert not os.path.isdir(out) or os.listdir(out) == []  # nothing half-built left


def test_a_missing_wheel_is_named(tmp_path, tools, monkeypatch):
    monkeypatch.setenv('PIP_SKIP', 'cryptography')
    with pytest.raises(B.BundleError, match=re.escape('no wheel of cryptography==50.0.2 for Python 3.11')):
        B.build(ROOT, ['inv.yml'], 'profile_a', '3.11', str(tmp_path / 'b'), tools, cache_dir=str(tmp_path / 'c'),
                collection_paths=_deps(tmp_path))


def test_a_failing_tool_is_named_with_its_command(tmp_path, tools):
    tools = dict(tools, **{'ansible-inventory': _script(tmp_path / 'bin' / 'inv2', 'echo "ERROR! no such file" >&2; exit 1\n')})
    with pytest.raises(B.BundleError, match=r'reading the inventory \(ansible-inventory --list --export\) failed '
                                            r'\(exit 1\): ERROR! no such file'):
        B.build(ROOT, ['inv.yml'], 'profile_a', '3.11', str(tmp_path / 'b'), tools, collection_paths=_deps(tmp_path))


def test_dependency_collections_are_the_execution_environments():
    with open(os.path.join(ROOT, 'meta', 'ee-requirements.yml')) as f:
        assert B.dependency_collections(f.read()) == ['ansible.posix', 'community.general', 'ansible.utils']
    with pytest.raises(B.BundleError, match='lists no collections'):
        B.dependency_collections('collections: []\n')


def test_pip_download_argv():
    argv = B.pip_download_argv('pip', '3.12', ['manylinux_2_28_aarch64'], 'r.txt', 'd')
    assert argv[argv.index('--python-version') + 1] == '3.12' and 'cp312' in argv
    assert ['--platform', 'manylinux_2_28_aarch64', '--platform', 'any', '-d', 'd', '-r', 'r.txt'] == argv[-8:]
