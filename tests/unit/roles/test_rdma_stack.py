# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_stack role: its version pattern, and the labelled doca-ofed TEST stand-in prints what the collection's
parser reads (the role parses ofed_info through the gpufleet.cluster.ofed_info_version filter over that parser,
tests/unit/plugins/filter/test_rdma_stack_filters.py)."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import os
import re
import subprocess

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.module_utils import ofed_info

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, 'roles', 'rdma_stack')
STAND_IN = os.path.join(REPO, 'tests', 'packages', 'files', 'doca-ofed', 'usr', 'bin', 'ofed_info')


def _load(path):
    with open(os.path.join(ROLE, path)) as f:
        return yaml.safe_load(f)


def _version_re():
    """The pattern validate.yml checks rdma_stack_ofed_version against."""
    for task in _load('tasks/validate.yml'):
        if task['name'] == 'Check rdma_stack_ofed_version':
            for cond in task['ansible.builtin.assert']['that']:
                m = re.search(r"is match\('(.*)'\)$", cond)
                if m:
                    return re.compile(m.group(1))
    raise AssertionError('no version pattern in validate.yml')


@pytest.mark.parametrize('good', ['2.9.1', '2.9.1-1', '24.10-1.1.4.0', '5.8-1.0.1.1', '2.10.0-1gpufleet1', '1.0+dfsg~1'])
def test_version_accepted(good):
    assert _version_re().match(good)


@pytest.mark.parametrize('bad', ['', 'latest', 'v2.9.1', '2.9.1; rm -rf /', '2.9.1 ', '2.9.1-1-2', '2.9.*', '=2.9.1'])
def test_version_rejected(bad):
    assert not _version_re().match(bad)


def test_ofed_providers_have_packages():
    v = _load('vars/main.yml')
    providers = set(v['__rdma_stack_providers'])
    assert set(v['__rdma_stack_ofed_packages']) == providers - {'distro', 'none'}
    spec = _load('meta/argument_specs.yml')['argument_specs']['main']['options']
    assert spec['rdma_stack_provider']['choices'] == v['__rdma_stack_providers']
    assert spec['rdma_stack_nvidia_peermem']['choices'] == v['__rdma_stack_peermem_choices']


def _stand_in(tmp_path, version, *args):
    fake = tmp_path / 'dpkg-query'
    if version is None:
        fake.write_text('#!/bin/sh\necho "dpkg-query: no packages found matching doca-ofed" >&2\nexit 1\n')
    else:
        fake.write_text('#!/bin/sh\nprintf %%s "%s"\n' % version)
    fake.chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (tmp_path, os.environ.get('PATH', '/usr/bin:/bin')))
    return subprocess.run(['sh', STAND_IN] + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)


@pytest.mark.parametrize('pkg_version, ofed_version', [('2.9.1-1gpufleet1', '2.9.1'), ('2.10.0-1gpufleet1', '2.10.0')])
def test_stand_in_prints_the_parsers_format(tmp_path, pkg_version, ofed_version):
    res = _stand_in(tmp_path, pkg_version, '-s')
    assert res.returncode == 0
    parsed = ofed_info.parse_ofed_info_short(res.stdout)
    assert parsed == {'raw': 'OFED-internal-' + ofed_version, 'distribution': 'OFED-internal',
                      'version': ofed_version, 'flavor': 'DOCA'}


def test_stand_in_is_labelled_and_fails_without_its_package(tmp_path):
    with open(STAND_IN) as f:
        assert "gpufleet test package, not NVIDIA's" in f.read()
    res = _stand_in(tmp_path, None, '-s')
    assert res.returncode == 1 and res.stdout == ''
