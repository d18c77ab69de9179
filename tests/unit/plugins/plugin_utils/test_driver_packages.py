# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The package database's view of the driver-versioned packages (plugins/plugin_utils/_driver_packages.py,
filters driver_package_state and driver_installed_version in plugins/filter/nvidia_driver.py).

The corpus has no recorded dpkg-query output: every listing below is HAND-MADE in dpkg-query's format
``${binary:Package}\\t${Version}\\t${db:Status-Abbrev}\\n`` (the status is three characters: wanted
selection, package state, error flag - ``ii ``, ``hi `` held, ``rc `` removed with its config files left,
``iU `` unpacked only, ``un `` known by name only)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from pathlib import Path

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.nvidia_driver import FilterModule
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._driver_packages import (
    at_version,
    dpkg_rows,
    installed_version,
    package_state,
)

REPO_ROOT = Path(__file__).resolve().parents[4]

# HAND-MADE: a node on 550.90.07 whose lock moved to 550.127.08 half-way through a run.
BRANCH_MOVE = [
    'nvidia-driver\t1:550.127.08-1\thi ',            # at the version (epoch), held
    'nvidia-kernel-open-dkms\t1:550.90.07-1\thi ',   # held at another driver version
    'nvidia-persistenced\t550.127.08-1\tii ',        # at the version, no epoch, not held
    'libnvidia-compute\t1:550.90.07-1\trc ',         # removed, config files left: known, not installed
    'libcuda1\t1:550.127.08-1\tiU ',                 # unpacked only (half-installed): known, not installed
    'nvidia-container-toolkit\t1.17.3-1\thi ',       # held, but no driver version (a glob of the probe found it)
    'xserver-xorg-video-nvidia\t\tun ',              # dpkg knows the name only
    'firmware-nvidia-gsp\t550.127.08.1-1\tii ',      # 550.127.08.1 is not 550.127.08
]
VERSIONED = ['nvidia-driver', 'nvidia-kernel-open-dkms', 'nvidia-persistenced']
PRECOMPILED = 'linux-modules-nvidia-550-server-6.8.0-45-generic'


def test_branch_move():
    state = package_state(BRANCH_MOVE, '550.127.08', VERSIONED + ['libcuda1'], [PRECOMPILED])
    assert state == {
        'installed': ['nvidia-driver', 'nvidia-kernel-open-dkms', 'nvidia-persistenced', 'nvidia-container-toolkit',
                      'firmware-nvidia-gsp'],
        'at_version': ['nvidia-driver', 'nvidia-persistenced'],
        'held': ['nvidia-driver', 'nvidia-kernel-open-dkms', 'nvidia-container-toolkit'],
        'held_elsewhere': ['nvidia-kernel-open-dkms'],
        'known': ['nvidia-driver', 'nvidia-kernel-open-dkms', 'nvidia-persistenced', 'libnvidia-compute', 'libcuda1',
                  'nvidia-container-toolkit', 'firmware-nvidia-gsp'],
        # versioned ones first (argument order), then the unversioned precompiled module that is not listed at all
        'missing': ['nvidia-kernel-open-dkms', 'libcuda1', PRECOMPILED],
        'others': ['nvidia-container-toolkit', 'firmware-nvidia-gsp'],
    }


def test_fresh_host_misses_everything_and_knows_nothing():
    # HAND-MADE: dpkg-query prints "no packages found matching ..." on stderr only; stdout is empty
    state = package_state([], '550.127.08', VERSIONED, [PRECOMPILED])
    assert state['missing'] == VERSIONED + [PRECOMPILED]
    assert state['installed'] == state['known'] == state['held'] == state['held_elsewhere'] == []


def test_converged_host_misses_nothing():
    # HAND-MADE: everything at the version and held (the second run of the role)
    lines = ['%s\t1:550.127.08-1\thi ' % name for name in VERSIONED] + [PRECOMPILED + '\t6.8.0-45.45\thi ']
    state = package_state(lines, '550.127.08', VERSIONED, [PRECOMPILED])
    assert state['missing'] == [] and state['held_elsewhere'] == []
    assert state['at_version'] == VERSIONED
    assert state['held'] == state['known'] == state['installed'] == VERSIONED + [PRECOMPILED]


def test_unpinned_host_keeps_its_holds_known():
    # HAND-MADE: at the version but not held (nvidia_driver_pin false): nothing to release, nothing held
    state = package_state(['nvidia-driver\t550.127.08-0ubuntu1\tii '], '550.127.08', ['nvidia-driver'])
    assert state['missing'] == [] and state['held'] == [] and state['known'] == ['nvidia-driver']


def test_fabricmanager_other_branch():
    # HAND-MADE: the probe lists nvidia-fabricmanager-* and the wanted package; the 550 one is installed and held,
    # the 570 one (wanted) is not installed yet; a glob also finds a removed 535 with its config left
    lines = ['nvidia-fabricmanager-535\t535.161.08-1\trc ',
             'nvidia-fabricmanager-550\t550.127.08-1\thi ',
             'nvidia-fabricmanager-570\t\tun ']
    state = package_state(lines, '570.86.15', ['nvidia-fabricmanager-570'])
    assert state['others'] == ['nvidia-fabricmanager-550']
    assert state['held'] == ['nvidia-fabricmanager-550'] and state['held_elsewhere'] == ['nvidia-fabricmanager-550']
    assert state['missing'] == ['nvidia-fabricmanager-570'] and state['at_version'] == []
    assert 'nvidia-fabricmanager-570' not in state['installed']


def test_a_package_listed_twice_is_named_once():
    # HAND-MADE: a package matched by a glob and by its own name is printed once per pattern
    lines = ['nvidia-fabricmanager-550\t550.90.07-1\thi '] * 2
    state = package_state(lines, '550.127.08', ['nvidia-fabricmanager-550'])
    assert state['installed'] == state['held'] == ['nvidia-fabricmanager-550']
    assert state['held_elsewhere'] == state['missing'] == ['nvidia-fabricmanager-550']


@pytest.mark.parametrize('debian_version, version, expected', [
    ('550.127.08-1', '550.127.08', True),
    ('1:550.127.08-1', '550.127.08', True),
    ('12:550.127.08-0ubuntu0.24.04.1', '550.127.08', True),
    ('550.127.08', '550.127.08', False),          # no revision: not how the driver packages are versioned
    ('550.127.08.1-1', '550.127.08', False),
    ('550.127.081-1', '550.127.08', False),
    ('550x127x08-1', '550.127.08', False),        # the dots are dots, not any character
    ('1:550.90.07-1', '550.127.08', False),
    ('', '550.127.08', False),
    ('550.9-1', 550.9, True),                     # a version YAML read as a number
])
def test_at_version(debian_version, version, expected):
    assert at_version(debian_version, version) is expected


def test_rows_need_three_fields_and_accept_stdout():
    # HAND-MADE: an old-format line (spaces) and a two-field line are no rows; stdout gives the same as stdout_lines
    text = 'nvidia-driver 550.127.08-1 ii \nnvidia-driver\t550.127.08-1\nnvidia-driver\t550.127.08-1\tii \n'
    assert dpkg_rows(text) == dpkg_rows(text.splitlines()) == [('nvidia-driver', '550.127.08-1', 'ii ')]
    assert dpkg_rows(None) == []
    state = package_state(BRANCH_MOVE, '550.127.08', VERSIONED)
    assert package_state('\n'.join(BRANCH_MOVE), '550.127.08', VERSIONED) == state


@pytest.mark.parametrize('probe, expected', [
    # HAND-MADE dpkg-query -W -f '${db:Status-Abbrev}${Version}' outputs
    ('ii 1:550.127.08-1', '550.127.08'),
    ('hi 550.90.07-0ubuntu0.24.04.1', '550.90.07'),
    ('iiR550.127.08-1', '550.127.08'),
    ('rc 1:550.127.08-1', ''),
    ('iU 1:550.127.08-1', ''),
    ('hU 1:550.127.08-1', ''),
    ('un ', ''),
    ('', ''),
    (None, ''),
    # two architectures of the package, printed back to back (no newline in the format)
    ('ii 1:550.127.08-1ii 1:550.127.08-1', '550.127.08'),
    # HAND-MADE rpm -q --qf 'ii %{VERSION}' outputs
    ('ii 550.127.08', '550.127.08'),
    ('package nvidia-driver is not installed', ''),
])
def test_installed_version(probe, expected):
    assert installed_version(probe) == expected


def test_filters_are_wired_and_refuse_bad_shapes():
    filters = FilterModule().filters()
    assert filters['driver_installed_version']('hi 1:550.127.08-1') == '550.127.08'
    state = package_state(BRANCH_MOVE, '550.127.08', VERSIONED)
    assert filters['driver_package_state'](BRANCH_MOVE, '550.127.08', VERSIONED) == state
    assert filters['driver_package_state']([], '550.127.08', ['nvidia-driver'])['missing'] == ['nvidia-driver']
    with pytest.raises(AnsibleFilterError, match='versioned packages must be a list'):
        filters['driver_package_state'](BRANCH_MOVE, '550.127.08', 'nvidia-driver')
    with pytest.raises(AnsibleFilterError, match='stdout_lines'):
        filters['driver_package_state']({'stdout': ''}, '550.127.08', VERSIONED)
    with pytest.raises(AnsibleFilterError, match='driver_installed_version'):
        filters['driver_installed_version'](['ii 550.127.08-1'])


def test_roles_parse_no_package_status_in_jinja():
    """One owner: the driver and fabric manager tasks call the filters instead of matching dpkg's status."""
    for path in ('roles/nvidia_driver/tasks/install_apt.yml', 'roles/nvidia_driver/tasks/state.yml',
                 'roles/fabricmanager/tasks/install_apt.yml'):
        text = (REPO_ROOT / path).read_text()
        assert '[ih]i' not in text and "split', '\\t'" not in text, path
        assert 'gpufleet.cluster.driver_' in text, path


PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Feed the filters recorded probe output
      ansible.builtin.copy:
        dest: "{{ out }}"
        mode: "0644"
        content: >-
          {{ {'state': probe.stdout_lines | gpufleet.cluster.driver_package_state(version, versioned, unversioned),
              'fm': fm_probe.stdout_lines | gpufleet.cluster.driver_package_state(fm_version, [fm_pkg]),
              'installed': installed.stdout | gpufleet.cluster.driver_installed_version,
              'none': '' | gpufleet.cluster.driver_installed_version} | to_json }}
"""


def test_filters_through_ansible(tmp_path, run_play):
    """The FQCN filters in a real play (connection local): the values reach Ansible's templating unchanged."""
    out = tmp_path / 'out.json'
    extra = {'out': str(out), 'probe': {'stdout_lines': BRANCH_MOVE}, 'version': '550.127.08',
             'versioned': VERSIONED, 'unversioned': [PRECOMPILED],
             'fm_probe': {'stdout_lines': ['nvidia-fabricmanager-550\t550.127.08-1\thi ']}, 'fm_version': 570.86,
             'fm_pkg': 'nvidia-fabricmanager-570', 'installed': {'stdout': 'hi 1:550.127.08-1'}}
    rc, output = run_play(PLAYBOOK, extra)
    assert rc == 0, output
    got = json.loads(out.read_text())
    assert got['state'] == package_state(BRANCH_MOVE, '550.127.08', VERSIONED, [PRECOMPILED])
    assert got['fm']['others'] == got['fm']['held_elsewhere'] == ['nvidia-fabricmanager-550']
    assert got['fm']['missing'] == ['nvidia-fabricmanager-570']
    assert got['installed'] == '550.127.08' and got['none'] == ''
