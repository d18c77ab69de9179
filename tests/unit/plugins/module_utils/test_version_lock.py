# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version lock manifest: validation, expectations, package comparison (hand-made manifests)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.module_utils import version_lock as vl
from ansible_collections.gpufleet.cluster.plugins.module_utils.hwcheck import check_node, validate_expected

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))

GOOD = {
    'kernel': '5.15.0-125-generic',
    'nvidia_driver': '550.127.08',
    'nvidia_driver_branch': '550',
    'fabricmanager': '550.127.08',
    'doca_ofed': '2.9.1',
    'container_toolkit': '1.17.3',
    'hca_firmware': '28.42.1000',
    'vbios': '96.00.99.00.01',
}


def test_prod_inventory_lock_is_valid():
    with open(os.path.join(ROOT, 'inventories', 'prod', 'group_vars', 'profile_h100_ib.yml')) as f:
        lock = yaml.safe_load(f)['gpufleet_lock']
    assert vl.lock_errors(lock) == []


def test_good_lock_and_nulls():
    assert vl.lock_errors(GOOD) == []
    assert vl.lock_errors(dict((k, None) for k in GOOD)) == []
    assert vl.lock_errors(None) == []
    assert vl.lock_errors({'nvidia_driver_branch': 550, 'nvidia_driver': '550.54'}) == []


@pytest.mark.parametrize('change, needle', [
    ({'nvidia_driver': '550'}, 'gpufleet_lock.nvidia_driver = '),
    ({'nvidia_driver': 'latest'}, 'BRANCH.MINOR[.PATCH]'),
    ({'nvidia_driver_branch': '570'}, 'nvidia_driver_branch = 570 does not match gpufleet_lock.nvidia_driver = 550.127.08'),
    ({'fabricmanager': '550.127.05'}, 'fabricmanager = 550.127.05 must equal gpufleet_lock.nvidia_driver = 550.127.08'),
    ({'fabricmanager': '570.133.20'}, 'must equal'),
    ({'kernel': 'generic'}, 'gpufleet_lock.kernel'),
    ({'hca_firmware': '28.42'}, 'gpufleet_lock.hca_firmware'),
    ({'hca_firmware': {}}, 'empty dict'),
    ({'hca_firmware': {'MT_0000000838': 'x'}}, 'hca_firmware[MT_0000000838]'),
    ({'vbios': '96.00.99'}, 'gpufleet_lock.vbios'),
    ({'container_toolkit': 'v1.17'}, 'gpufleet_lock.container_toolkit'),
    ({'mlnx_ofed': '5.8-1.0.1.1'}, 'either doca_ofed or mlnx_ofed'),
    ({'drivers': '550.127.08'}, 'gpufleet_lock.drivers is not a known key (allowed: '),
    ({'packages': ['a']}, 'gpufleet_lock.packages must be a dict'),
    ({'packages': {'Bad Name': '1'}}, 'is not a package name'),
    ({'packages': {'nvidia-dcgm': None}}, 'packages.nvidia-dcgm'),
    ({'nvidia_driver_branch': True}, 'gpufleet_lock.nvidia_driver_branch'),
])
def test_bad_locks_name_the_key(change, needle):
    lock = dict(GOOD, **change)
    errors = vl.lock_errors(lock)
    assert errors, lock
    assert any(needle in e for e in errors), errors


def test_not_a_dict():
    assert 'must be a dict' in vl.lock_errors(['550'])[0]


def test_format_error_does_not_add_a_misleading_cross_error():
    errors = vl.lock_errors({'nvidia_driver': 'x', 'fabricmanager': '550.127.08'})
    assert len(errors) == 1 and 'nvidia_driver' in errors[0]
    assert vl.lock_errors({'fabricmanager': '550.127.08'}) == [
        'gpufleet_lock.fabricmanager is pinned but gpufleet_lock.nvidia_driver is not: pin both, to the same version']


def test_errors_use_the_given_name():
    assert vl.lock_errors({'nvidia_driver': 'x'}, 'rollout_lock')[0].startswith('rollout_lock.nvidia_driver')


def test_expectations():
    exp = vl.lock_expectations(dict(GOOD, packages={'datacenter-gpu-manager': '3.3.9'}))
    assert exp == {
        'kernel': '5.15.0-125-generic', 'driver_version': '550.127.08', 'driver_branch': '550',
        'fabricmanager_version': '550.127.08', 'hca_firmware': '28.42.1000', 'vbios': '96.00.99.00.01',
        'packages': {'nvidia-container-toolkit': '1.17.3', 'nvidia-container-toolkit-base': '1.17.3',
                     'datacenter-gpu-manager': '3.3.9'},
    }
    assert validate_expected(exp) == []
    assert vl.lock_expectations({}) == {}
    assert vl.lock_expectations({'mlnx_ofed': '5.8-1.0.1.1'}) == {'ofed_version': '5.8-1.0.1.1'}


@pytest.mark.parametrize('pinned, installed, ok', [
    ('550.127.08', '550.127.08-1', True),
    ('550.127.08', '550.127.08-0ubuntu1', True),
    ('550.127.08', '1:550.127.08-1', True),
    ('550.127.08', '550.127.05-1', False),
    ('550.127.08', '550.127.08.1-1', False),
    ('1.17.3-1', '1.17.3-1', True),
    ('1.17.3-1', '1.17.3-2', False),
    ('1.17.3', '1.17.3', True),
])
def test_version_matches(pinned, installed, ok):
    assert vl.version_matches(pinned, installed) is ok


def test_package_deviations_with_package_facts_shapes():
    installed = {
        # package_facts on Debian: version holds the Debian revision, no release
        'nvidia-container-toolkit': [{'name': 'nvidia-container-toolkit', 'version': '1.17.8-1gpufleet1', 'source': 'apt'}],
        # package_facts on EL: version and release apart, epoch maybe
        'nvidia-fabric-manager': [{'name': 'nvidia-fabric-manager', 'version': '550.127.08', 'release': '1',
                                   'epoch': 3, 'source': 'rpm'}],
    }
    devs = vl.package_deviations({'nvidia-container-toolkit': '1.17.3', 'nvidia-fabric-manager': '550.127.08',
                                  'datacenter-gpu-manager': '3.3.9'}, installed)
    assert devs == [('datacenter-gpu-manager', '3.3.9', None),
                    ('nvidia-container-toolkit', '1.17.3', '1.17.8-1gpufleet1')]


def test_node_check_reports_kernel_and_packages():
    exp = vl.lock_expectations({'kernel': '5.15.0-125-generic', 'container_toolkit': '1.17.3'})
    facts = {'kernel': '6.1.0-27-amd64',
             'packages': {'nvidia-container-toolkit': [{'version': '1.17.3-1'}]}}
    devs = check_node(facts, exp)
    msgs = [d['message'] for d in devs]
    assert 'node: kernel expected 5.15.0-125-generic, found 6.1.0-27-amd64' in msgs
    assert 'package nvidia-container-toolkit-base: version expected 1.17.3, found not installed' in msgs
    assert len(devs) == 2
    # packages not gathered at all: a deviation, never a pass
    devs = check_node({'kernel': '5.15.0-125-generic'}, exp)
    assert [d['item'] for d in devs] == ['packages']
    assert validate_expected({'packages': {'x': None}}) == [
        "expected.packages.x = None is not a package version (e.g. 1.17.3 or 1.17.3-1)"]
