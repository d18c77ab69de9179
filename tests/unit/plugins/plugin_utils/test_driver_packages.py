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


# --- rdma_stack: its packages, the OFED meta-package pinned (rdma_stack_ofed_version) and held ------------------

@pytest.mark.parametrize('debian_version, version, expected', [
    # an upstream version: any revision, as apt's NAME=2.9.1-* selects it
    ('2.9.1-1gpufleet1', '2.9.1', True),
    ('2.9.10-1', '2.9.1', False),
    ('2.10.0-1gpufleet1', '2.9.1', False),
    ('5.8-1.0.1.1', '5.8', True),
    # a version with its revision, as apt's NAME=2.9.1-1 names it: the whole Debian version
    ('2.9.1-1', '2.9.1-1', True),
    ('1:2.9.1-1', '2.9.1-1', True),                # epoch aside, as for the upstream version
    ('2.9.1-1gpufleet1', '2.9.1-1', False),
    ('2.9.1-10', '2.9.1-1', False),
    ('2.9.1-1gpufleet1', '2.9.1-1gpufleet1', True),
    ('5.8-1.0.1.1', '5.8-1.0.1.1', True),
    ('5.8-1.0.1.10', '5.8-1.0.1.1', False),
    ('24.10-1.1.4.0', '24.10-1.1.4', False),
    ('', '2.9.1-1', False),
])
def test_at_version_with_a_revision(debian_version, version, expected):
    assert at_version(debian_version, version) is expected


# HAND-MADE, as the rdma_stack probe prints it (dpkg-query -W -f '${Package}\t${Version}\t${db:Status-Abbrev}\n'):
# the DOCA-OFED stand-in of the molecule scenario, pinned at 2.9.1 and held, and the tools it names unpinned.
DOCA_CONVERGED = [
    'doca-ofed\t2.9.1-1gpufleet1\thi ',
    'perftest\t24.10.0-0.66.g1ff3b2a\tii ',
    'infiniband-diags\t2410mlnx54-1.2410068\tii ',
]
DOCA_TOOLS = ['perftest', 'infiniband-diags']


def test_rdma_stack_held_pinned_package_is_installed_not_missing():
    # the second run on a converged host with rdma_stack_hold: the held meta-package is installed at the pin
    state = package_state(DOCA_CONVERGED, '2.9.1', ['doca-ofed'], DOCA_TOOLS)
    assert state['missing'] == [] and state['others'] == [] and state['held_elsewhere'] == []
    assert state['installed'] == state['known'] == ['doca-ofed'] + DOCA_TOOLS
    assert state['at_version'] == ['doca-ofed'] and state['held'] == ['doca-ofed']
    # the same with the full Debian version pinned (rdma_stack_ofed_version: 2.9.1-1gpufleet1)
    assert package_state(DOCA_CONVERGED, '2.9.1-1gpufleet1', ['doca-ofed'], DOCA_TOOLS)['missing'] == []
    # a package someone else holds is installed too: unpinned and held (hi) is not missing
    held_tool = ['perftest\t24.10.0-0.66.g1ff3b2a\thi ']
    assert package_state(held_tool, '', [], ['perftest'])['missing'] == []


def test_rdma_stack_moved_pin_misses_the_meta_package():
    # rdma_stack_ofed_version moved from 2.9.1 to 2.10.0 (or to another revision): the held 2.9.1 is missing
    # at the new version; its hold is not released here (not a driver version) - the install moves held packages
    for version in ('2.10.0', '2.9.1-2gpufleet1'):
        state = package_state(DOCA_CONVERGED, version, ['doca-ofed'], DOCA_TOOLS)
        assert state['missing'] == ['doca-ofed'], version
        assert state['held'] == ['doca-ofed'] and state['held_elsewhere'] == [] and state['at_version'] == []


def test_rdma_stack_fresh_host_knows_nothing_to_hold():
    # HAND-MADE: a fresh host (dpkg-query prints nothing for unknown names), one that knows doca-ofed by name only
    # (un), and one where it was removed with its configuration left (rc): in check mode the hold is only tried
    # for what dpkg has in some state
    for lines, known in (([], []), (['doca-ofed\t\tun '], []), (['doca-ofed\t2.9.1-1gpufleet1\trc '], ['doca-ofed'])):
        state = package_state(lines, '2.9.1', ['doca-ofed'], DOCA_TOOLS)
        assert state['missing'] == ['doca-ofed'] + DOCA_TOOLS, lines
        assert state['known'] == known and state['installed'] == [], lines


def test_rdma_stack_multi_arch_library_listed_by_its_name():
    # HAND-MADE: ${Package} lists a Multi-Arch: same library once per architecture, under the name the role
    # installs it by (${binary:Package} would print libibverbs1:amd64, which is not that name)
    lines = ['libibverbs1\t50.0-2\tii ', 'libibverbs1\t50.0-2\tii ', 'rdma-core\t50.0-2\tii ']
    state = package_state(lines, '', [], ['rdma-core', 'libibverbs1'])
    assert state['missing'] == [] and state['installed'] == ['libibverbs1', 'rdma-core']
    qualified = package_state(['libibverbs1:amd64\t50.0-2\tii '], '', [], ['libibverbs1'])
    assert qualified['missing'] == ['libibverbs1'] and qualified['others'] == ['libibverbs1:amd64']


def _rdma_install_tasks():
    import yaml
    return yaml.safe_load((REPO_ROOT / 'roles/rdma_stack/tasks/install.yml').read_text())


def _rdma_task(tasks, name):
    for task in tasks:
        if task['name'] == name:
            return task
    raise AssertionError('roles/rdma_stack/tasks/install.yml has no task %r' % name)


def test_rdma_stack_parses_no_package_status_in_jinja():
    """One owner: rdma_stack's install reads its tab-separated probe with driver_package_state."""
    text = (REPO_ROOT / 'roles/rdma_stack/tasks/install.yml').read_text()
    assert ' ii ' not in text and 'regex_escape' not in text and "select('match'" not in text
    tasks = _rdma_install_tasks()
    argv = _rdma_task(tasks, 'Probe which packages and versions are installed already')['ansible.builtin.command']['argv']
    assert '${Package}\t${Version}\t${db:Status-Abbrev}\n' in argv
    state = _rdma_task(tasks, 'Work out what has to change')['ansible.builtin.set_fact']['__rdma_stack_state']
    assert 'gpufleet.cluster.driver_package_state(rdma_stack_ofed_version, __rdma_stack_pinned' in state


RDMA_CASES = {
    # name: (provider, rdma_stack_ofed_version, probe lines, source changed, check mode)
    'converged_held': ('doca_ofed', '2.9.1', DOCA_CONVERGED, False, False),
    'converged_held_full_version': ('doca_ofed', '2.9.1-1gpufleet1', DOCA_CONVERGED, False, False),
    'pin_moved': ('doca_ofed', '2.10.0', DOCA_CONVERGED, False, False),
    'other_revision': ('doca_ofed', '2.9.1-1', DOCA_CONVERGED, False, False),
    'source_changed': ('doca_ofed', '2.9.1', DOCA_CONVERGED, True, False),
    'fresh_check_mode': ('doca_ofed', '2.9.1', [], False, True),
    'unpinned_tool_held': ('doca_ofed', '', ['doca-ofed\t2.10.0-1gpufleet1\tii ', 'perftest\t24.10.0-0.66\thi ',
                                             'infiniband-diags\t2410mlnx54-1\tii '], False, False),
    'distro_one_missing': ('distro', '', ['rdma-core\t52.0-2\tii ', 'ibverbs-utils\t52.0-2\tii ',
                                          'infiniband-diags\t52.0-2\thi ', 'rdmacm-utils\t52.0-2\tii '], False, False),
}


def test_rdma_stack_install_decisions_through_ansible(tmp_path, run_play):
    """The role's own expressions (vars/main.yml, vars/Debian.yml and install.yml's state, cache refresh and
    check-mode hold guard) in a real play: a converged host whose pinned package is held refreshes nothing."""
    import re
    import yaml
    tasks = _rdma_install_tasks()
    state_expr = _rdma_task(tasks, 'Work out what has to change')['ansible.builtin.set_fact']['__rdma_stack_state']
    refresh_when = _rdma_task(tasks, 'Update the APT cache')['when']
    hold = _rdma_task(tasks, 'Hold the pinned OFED package')
    assert refresh_when[:2] == ["ansible_facts.os_family == 'Debian'", 'not ansible_check_mode']
    assert hold['when'][:2] == ["ansible_facts.os_family == 'Debian'", 'rdma_stack_hold']
    refresh, guard = refresh_when[2], hold['when'][2]
    assert guard == 'not ansible_check_mode or item in __rdma_stack_state.known'
    # the guard for the pinned package, with the case's check mode (ansible_check_mode is the play's)
    guard = re.sub(r'\bitem\b', '__rdma_stack_pinned[0]', guard.replace('ansible_check_mode', '__check'))
    play = [{
        'hosts': 'localhost', 'connection': 'local', 'gather_facts': False,
        'vars_files': [str(REPO_ROOT / 'roles/rdma_stack/vars/main.yml'), str(REPO_ROOT / 'roles/rdma_stack/vars/Debian.yml')],
        'tasks': [{
            'name': 'Decide as the role does, case {{ item.key }}',
            'vars': {
                'rdma_stack_provider': '{{ item.value[0] }}', 'rdma_stack_ofed_version': '{{ item.value[1] }}',
                'rdma_stack_packages': [], 'rdma_stack_extra_packages': [],
                '__rdma_stack_dpkg': {'stdout_lines': '{{ item.value[2] }}'},
                '__rdma_stack_repo': {'changed': '{{ item.value[3] | bool }}'},
                '__check': '{{ item.value[4] | bool }}',
                '__rdma_stack_state': state_expr,
            },
            'ansible.builtin.set_fact': {
                'decisions': "{{ decisions | default({}) | combine({item.key: {"
                             "'install': __rdma_stack_install, 'state': __rdma_stack_state, "
                             "'refresh': (%s) | bool, "
                             "'hold_tried': __rdma_stack_pinned | length > 0 and (%s) | bool}}) }}" % (refresh, guard),
            },
            'loop': '{{ cases | dict2items }}',
        }, {
            'name': 'Write them',
            'ansible.builtin.copy': {'dest': '{{ out }}', 'content': '{{ decisions | to_json }}', 'mode': '0644'},
        }],
    }]
    out = tmp_path / 'out.json'
    cases = dict((name, list(case)) for name, case in RDMA_CASES.items())
    rc, output = run_play(yaml.safe_dump(play), {'out': str(out), 'cases': cases})
    assert rc == 0, output
    got = json.loads(out.read_text())
    assert got['converged_held']['install'] == ['doca-ofed=2.9.1-*', 'perftest', 'infiniband-diags']
    assert got['converged_held_full_version']['install'] == ['doca-ofed=2.9.1-1gpufleet1', 'perftest', 'infiniband-diags']
    refresh = dict((name, got[name]['refresh']) for name in RDMA_CASES)
    assert refresh == {'converged_held': False, 'converged_held_full_version': False, 'pin_moved': True,
                       'other_revision': True, 'source_changed': True, 'fresh_check_mode': True,
                       'unpinned_tool_held': False, 'distro_one_missing': True}
    assert got['distro_one_missing']['state']['missing'] == ['perftest']
    assert got['unpinned_tool_held']['install'] == ['doca-ofed', 'perftest', 'infiniband-diags']
    # check mode on a fresh host: dpkg does not know doca-ofed, so the hold is left to the install's report
    assert got['fresh_check_mode']['hold_tried'] is False
    assert got['converged_held']['hold_tried'] is True and got['distro_one_missing']['hold_tried'] is False
