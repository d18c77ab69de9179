# -*- coding: utf-8 -*-
"""Compatibility rules of the version lock (plugins/plugin_utils/_compat.py): one test per rule, hand-made locks."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _compat as compat


@pytest.mark.parametrize('text, want', [
    ('550.127.08', (550, 127, 8)), ('1.17.3-1', (1, 17, 3)), ('580', (580,)), ('2:1.7.24~ds1', (2,)), ('v1', None),
])
def test_version_tuple(text, want):
    assert compat.version_tuple(text) == want


def test_cuda_against_driver_each_major():
    assert compat.compat_errors({'nvidia_driver': '550.127.08', 'cuda': ['12.4', '11.8']}) == []
    assert compat.compat_errors({'nvidia_driver': '525.60.13', 'cuda': '12.8'}) == []  # the minimum itself
    errors = compat.compat_errors({'nvidia_driver': '525.60.11', 'cuda': '12.0, 13.0'}, 'lock')
    assert len(errors) == 2
    assert errors[0].startswith('lock.cuda 12.0 needs a driver >= 525.60.13, but lock.nvidia_driver = 525.60.11 (rule: ')
    assert errors[1].startswith('lock.cuda 13.0 needs a driver >= 580, but lock.nvidia_driver = 525.60.11 (rule: ')
    assert 'minor-version-compatibility' in errors[1]
    assert compat.compat_errors({'nvidia_driver': '470.256.02', 'cuda': '11.2'}) == []


def test_cuda_without_driver_or_cuda_is_not_checked():
    assert compat.compat_errors({'cuda': '13.0'}) == []
    assert compat.compat_errors({'nvidia_driver': '450.80.02'}) == []


def test_cuda_format():
    assert compat.cuda_format_errors('l', ['12.4', '12.8.1']) == []
    errors = compat.cuda_format_errors('l', ['12', 'twelve', '10.2'])
    assert errors == [
        "l.cuda entry '12' is not a CUDA release MAJOR.MINOR such as \"12.4\" (quote it in YAML)",
        "l.cuda entry 'twelve' is not a CUDA release MAJOR.MINOR such as \"12.4\" (quote it in YAML)",
        'l.cuda entry 10.2: no minimum driver known for CUDA 10.x (known: 11.x, 12.x, 13.x)']
    assert compat.cuda_format_errors('l', 12.4) == ['l.cuda must be a CUDA release such as "12.4", or a list of them, got 12.4']


def test_cdi_needs_toolkit_and_containerd():
    lock = {'container_toolkit': '1.12.1', 'containerd': '1.6.33'}
    assert compat.compat_errors(lock) == []  # no CDI in the profile
    errors = compat.compat_errors(lock, 'g', cdi=True)
    assert errors[0].startswith('g.container_toolkit = 1.12.1 cannot generate CDI specs: CDI needs '
                                'nvidia-container-toolkit >= 1.13.0')
    assert errors[1].startswith('g.containerd = 1.6.33 does not read CDI specs: CDI needs containerd >= 1.7.0')
    assert compat.compat_errors({'container_toolkit': '1.17.3-1', 'containerd': '1.7.24'}, cdi=True) == []


def test_lock_errors_run_the_rules_on_well_formed_keys():
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _version_lock as vl
    lock = {'nvidia_driver': '525.60.11', 'cuda': ['12.4', 'x'], 'container_toolkit': '1.12.1', 'containerd': '1.6.33'}
    errors = vl.lock_errors(lock, 'gpufleet_lock')
    assert errors == ["gpufleet_lock.cuda entry 'x' is not a CUDA release MAJOR.MINOR such as \"12.4\" (quote it in YAML)"]
    lock['cuda'] = ['12.4']
    errors = vl.lock_errors(lock, 'gpufleet_lock', cdi=True)
    assert [e.split(' (rule')[0] for e in errors] == [
        'gpufleet_lock.cuda 12.4 needs a driver >= 525.60.13, but gpufleet_lock.nvidia_driver = 525.60.11',
        'gpufleet_lock.container_toolkit = 1.12.1 cannot generate CDI specs: CDI needs nvidia-container-toolkit >= 1.13.0 '
        '(or set container_toolkit_cdi: never)',
        'gpufleet_lock.containerd = 1.6.33 does not read CDI specs: CDI needs containerd >= 1.7.0 (or set '
        'container_toolkit_cdi: never)']
    assert vl.lock_errors({'containerd': 'latest'}) == [
        "gpufleet_lock.containerd = 'latest' is not a containerd version, e.g. 1.7.24 (checked against the CDI rule; "
        "nothing installs it)"]
    assert vl.lock_errors({'nvidia_driver': '570.133.20', 'cuda': '12.8', 'containerd': '1.7.24~ds1-1'}, cdi=True) == []
