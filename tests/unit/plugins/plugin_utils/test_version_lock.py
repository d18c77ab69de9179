# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version lock manifest: validation, expectations, package comparison (hand-made manifests)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _version_lock as vl
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._hwcheck import check_node, validate_expected

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
        profile = yaml.safe_load(f)
    lock = profile['gpufleet_lock']
    assert vl.lock_errors(lock) == []
    # the profile names the RDMA stack provider its lock needs, and the mirror that provider installs from
    assert vl.lock_errors(lock, provider=profile.get('rdma_stack_provider')) == []
    assert profile['rdma_stack_provider'] == 'doca_ofed'
    assert '{{ gpufleet_lock.doca_ofed }}' in profile['rdma_stack_apt_repo']
    assert profile['rdma_stack_apt_repo'].startswith('deb [signed-by=')
    # under the role's default provider (distro: rdma-core) nothing would install or check its doca_ofed pin
    assert vl.lock_errors(lock, provider='distro') == [
        "gpufleet_lock.doca_ofed = 2.9.1 is pinned, but rdma_stack_provider distro installs the distribution's "
        "rdma-core, which has no ofed_info: rdma_stack_provider doca_ofed installs and holds it (with "
        "rdma_stack_apt_repo pointing at your DOCA mirror); the node checks do not read it (to check the "
        "ofed_info -s version of a DOCA-OFED the node image brings, pin ofed_version). Set that provider (and its "
        "mirror) or remove the key"]


# An OFED key nothing installs or checks under the hosts' rdma_stack_provider is refused: doca_ofed is only
# installed by provider doca_ofed (the node checks do not read it); mlnx_ofed and ofed_version are compared
# with ofed_info -s, which rdma-core (provider distro) does not have.
@pytest.mark.parametrize('key, value, provider, ok', [
    ('doca_ofed', '2.9.1', 'doca_ofed', True),
    ('doca_ofed', '2.9.1', 'distro', False),
    ('doca_ofed', '2.9.1', 'mlnx_ofed', False),
    ('doca_ofed', '2.9.1', 'none', False),
    ('mlnx_ofed', '5.8-1.0.1.1', 'mlnx_ofed', True),
    ('mlnx_ofed', '5.8-1.0.1.1', 'none', True),
    ('mlnx_ofed', '5.8-1.0.1.1', 'distro', False),
    ('mlnx_ofed', '5.8-1.0.1.1', 'doca_ofed', False),
    ('ofed_version', '24.10-1.1.4', 'doca_ofed', True),
    ('ofed_version', '24.10-1.1.4', 'mlnx_ofed', True),
    ('ofed_version', '24.10-1.1.4', 'none', True),
    ('ofed_version', '24.10-1.1.4', 'distro', False),
])
def test_ofed_key_must_be_installed_or_checked_by_the_provider(key, value, provider, ok):
    errors = vl.lock_errors({key: value}, provider=provider)
    if ok:
        assert errors == []
    else:
        assert len(errors) == 1, errors
        # names the key, the provider, and what would install or check the key
        assert errors[0].startswith('gpufleet_lock.%s = %s is pinned, but rdma_stack_provider %s ' % (key, value, provider))
        assert 'rdma_stack_provider %s' % vl.OFED_KEY_PROVIDERS[key][0][0] in errors[0].split(': ', 1)[1]


def test_provider_rule_details():
    # no provider given: the rule is left out (callers that do not know the hosts' provider)
    assert vl.lock_errors({'doca_ofed': '2.9.1'}) == []
    # keys that no provider installs are not concerned; unpinned (null) OFED keys neither
    assert vl.lock_errors(dict(GOOD, doca_ofed=None), provider='distro') == []
    # the name given is used; a badly formatted key is reported once, for its format
    assert vl.lock_errors({'doca_ofed': '2.9.1'}, 'rollout_lock', 'distro')[0].startswith('rollout_lock.doca_ofed = 2.9.1')
    errors = vl.lock_errors({'doca_ofed': 'latest'}, provider='distro')
    assert len(errors) == 1 and 'is not a DOCA release' in errors[0]
    # an unknown provider is an error of its own, naming the choices
    assert vl.lock_errors({}, provider='rdma-core') == [
        "rdma_stack_provider must be one of distro, doca_ofed, mlnx_ofed, none (got 'rdma-core')"]
    assert vl.lock_errors(None, provider='ofed') == [
        "rdma_stack_provider must be one of distro, doca_ofed, mlnx_ofed, none (got 'ofed')"]
    assert vl.lock_errors({'doca_ofed': '2.9.1'}, provider=['doca_ofed'])[0].startswith('rdma_stack_provider must be')


def test_filter_passes_the_provider():
    from ansible_collections.gpufleet.cluster.plugins.filter.version_lock import FilterModule

    errors_filter = FilterModule().filters()['version_lock_errors']
    assert errors_filter({'doca_ofed': '2.9.1'}) == []
    assert errors_filter({'doca_ofed': '2.9.1'}, provider='doca_ofed') == []
    assert 'rdma_stack_provider distro' in errors_filter({'doca_ofed': '2.9.1'}, 'rollout_lock', 'distro')[0]


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
    ({'dcgm': '2.4.8'}, 'gpufleet_lock.dcgm = '),
    ({'dcgm': '3.3'}, 'a DCGM 3.x or 4.x version'),
    ({'dcgm': 'latest'}, 'gpufleet_lock.dcgm'),
    ({'nccl_tests': 'v2.13.11'}, 'gpufleet_lock.nccl_tests'),
    ({'gpu_burn': 'master'}, 'gpufleet_lock.gpu_burn'),
    ({'cuda_samples': '12.8 '}, 'gpufleet_lock.cuda_samples'),
    ({'nvbandwidth': True}, 'gpufleet_lock.nvbandwidth'),
    ({'perftest': '4.5 -1'}, 'gpufleet_lock.perftest'),
    ({'openmpi': {'x': '4.1.4'}}, 'gpufleet_lock.openmpi'),
])
def test_bad_locks_name_the_key(change, needle):
    lock = dict(GOOD, **change)
    errors = vl.lock_errors(lock)
    assert errors, lock
    assert any(needle in e for e in errors), errors


# The acceptance tools' keys (roles/bench_tools) take package versions as the mirror has them: with or without
# an epoch and a Debian revision.
@pytest.mark.parametrize('key, value', [
    ('dcgm', '3.3.9'), ('dcgm', '1:3.3.9'), ('dcgm', '1:4.1.1-1'), ('nccl_tests', '2.13.11'),
    ('nccl_tests', '2.13.11-1gpufleet1'), ('gpu_burn', '1.1'), ('cuda_samples', '12.8'), ('nvbandwidth', '0.7'),
    ('perftest', '4.5-0.20-1'), ('openmpi', '4.1.4-3+b1'), ('openmpi', None),
])
def test_bench_tool_keys(key, value):
    assert vl.lock_errors(dict(GOOD, **{key: value})) == []


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


# ---------------------------------------------------------------- the Fabric Manager rule (one owner)
def test_fabricmanager_rule_for_a_role_names_both_variables():
    # the message molecule/nvidia_driver asserts for the fabricmanager role
    assert vl.fabricmanager_errors('550.127.08', '570.133.20') == [
        'fabricmanager_version 550.127.08 must equal nvidia_driver_version 570.133.20 exactly: '
        'Fabric Manager refuses to start against another driver version']
    assert vl.fabricmanager_errors('550.127.05', '550.127.08', 'fabricmanager_version', 'gpufleet_lock.nvidia_driver') == [
        'fabricmanager_version 550.127.05 must equal gpufleet_lock.nvidia_driver 550.127.08 exactly: '
        'Fabric Manager refuses to start against another driver version']


@pytest.mark.parametrize('fabricmanager, driver', [
    ('550.127.08', '550.127.08'),
    ('', '570.133.20'),          # not pinned: nothing to compare
    ('550.127.08', ''),
    (None, '550.127.08'),
    ('550.127.08', None),
    (550.54, '550.54'),          # an unquoted YAML version is a float
])
def test_fabricmanager_rule_nothing_to_report(fabricmanager, driver):
    assert vl.fabricmanager_errors(fabricmanager, driver) == []


def test_fabricmanager_rule_is_exact():
    # no prefix or upstream-version matching: a patch release of the driver needs its own fabric manager
    assert vl.fabricmanager_errors('550.127', '550.127.08')
    assert vl.fabricmanager_errors('550.127.08', '550.127.08-1')


def test_lock_and_role_messages_share_the_rule():
    lock = vl.lock_errors({'nvidia_driver': '550.127.08', 'fabricmanager': '550.127.05'})
    role = vl.fabricmanager_errors('550.127.05', '550.127.08')
    assert lock == ['gpufleet_lock.fabricmanager = 550.127.05 must equal gpufleet_lock.nvidia_driver = 550.127.08 '
                    'exactly: Fabric Manager refuses to start against another driver version']
    assert lock[0].endswith(vl.FABRICMANAGER_RULE) and role[0].endswith(vl.FABRICMANAGER_RULE)


@pytest.mark.parametrize('lock, version', [
    (GOOD, '550.127.08'),
    ({'nvidia_driver': '570.133.20'}, '570.133.20'),                         # the driver's: fabric manager = driver
    ({'nvidia_driver': '570.133.20', 'fabricmanager': None}, '570.133.20'),  # null is not pinned
    ({'fabricmanager': '550.127.08'}, '550.127.08'),                         # lock_errors refuses it; the pin stays
    ({'kernel': '5.15.0-125-generic'}, ''),
    ({}, ''),
    (None, ''),
    (['550.127.08'], ''),
])
def test_lock_fabricmanager(lock, version):
    assert vl.lock_fabricmanager(lock) == version


def test_lock_fabricmanager_of_the_prod_and_fleet_locks():
    for path in (('inventories', 'prod', 'group_vars', 'profile_h100_ib.yml'),
                 ('tests', 'fleet', 'group_vars', 'profile_lab_stack.yml'), ('tests', 'fleet', 'lock-570-inventory.yml')):
        with open(os.path.join(ROOT, *path)) as f:
            lock = yaml.safe_load(f)['gpufleet_lock']
        assert vl.lock_fabricmanager(lock) == lock['fabricmanager'] == lock['nvidia_driver'], path


def test_filters_expose_the_fabricmanager_rule():
    from ansible_collections.gpufleet.cluster.plugins.filter.version_lock import FilterModule
    filters = FilterModule().filters()
    assert filters['version_lock_fabricmanager']({'nvidia_driver': '570.133.20'}) == '570.133.20'
    assert filters['version_lock_fabricmanager_errors']('550.127.08', '570.133.20') == \
        vl.fabricmanager_errors('550.127.08', '570.133.20')
    assert filters['version_lock_fabricmanager_errors']('550.127.05', '550.127.08', 'a', 'b')[0].startswith(
        'a 550.127.05 must equal b 550.127.08 exactly')
    for name in ('version_lock_fabricmanager', 'version_lock_fabricmanager_errors'):
        with open(os.path.join(ROOT, 'plugins', 'filter', name + '.yml')) as f:
            assert yaml.safe_load(f)['DOCUMENTATION']['name'] == name


def _jinja_reads(node, where, conditional=False):
    """(where, expression) of every Jinja expression in a parsed YAML task/vars file, string literals removed."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _jinja_reads(value, where + (str(key),), key in ('when', 'that', 'changed_when', 'failed_when'))
    elif isinstance(node, list):
        for value in node:
            yield from _jinja_reads(value, where, conditional)
    elif isinstance(node, str):
        exprs = [node] if conditional else re.findall(r'{[{%](.*?)[}%]}', node, re.S)
        for expr in exprs:
            yield where, re.sub(r"'[^']*'|\"[^\"]*\"", "''", expr)


def test_fabricmanager_role_reads_the_driver_role_only_in_its_deprecated_fallback():
    """The fabricmanager role takes shared versions from gpufleet_lock (or its own variables); its one read of
    the nvidia_driver role's nvidia_driver_version is the deprecated fallback in vars/main.yml."""
    role = os.path.join(ROOT, 'roles', 'fabricmanager')
    readers = []
    for sub in ('defaults', 'vars', 'tasks'):
        for name in sorted(os.listdir(os.path.join(role, sub))):
            with open(os.path.join(role, sub, name)) as f:
                doc = yaml.safe_load(f)
            readers += [where for where, expr in _jinja_reads(doc, (sub, name))
                        if re.search(r'\bnvidia_driver_version\b', expr)]
    assert readers == [('vars', 'main.yml', '__fabricmanager_legacy_driver')], readers
