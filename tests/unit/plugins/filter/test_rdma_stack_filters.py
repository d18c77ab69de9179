# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ofed_info_version (plugins/filter/rdma_stack.py): roles/rdma_stack's rdma_stack_ofed, parsed by
plugins/module_utils/ofed_info.py (the one owner of the ``ofed_info -s`` parse).

The corpus (../shared/corpus, tests/unit/fixtures/corpus) has no recorded ``ofed_info`` output. The inputs
below are the lab's labelled doca-ofed stand-in run for real, lines quoted in public material (source named
at each), and HAND-MADE edge cases named as such."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
from pathlib import Path

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.rdma_stack import FilterModule, ofed_info_version
from ansible_collections.gpufleet.cluster.plugins.module_utils.ofed_info import parse_ofed_info_short

REPO_ROOT = Path(__file__).resolve().parents[4]
STAND_IN = REPO_ROOT / 'tests' / 'packages' / 'files' / 'doca-ofed' / 'usr' / 'bin' / 'ofed_info'


def _stand_in(tmp_path, pkg_version):
    """``ofed_info -s`` of the lab's doca-ofed TEST stand-in (not NVIDIA's), with a dpkg-query that says the
    stand-in package is installed at ``pkg_version``."""
    fake = tmp_path / 'dpkg-query'
    fake.write_text('#!/bin/sh\nprintf %%s "%s"\n' % pkg_version)
    fake.chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (tmp_path, os.environ.get('PATH', '/usr/bin:/bin')))
    res = subprocess.run(['sh', str(STAND_IN), '-s'], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=True)
    return res.stdout


@pytest.mark.parametrize('pkg_version, version', [('2.9.1-1gpufleet1', '2.9.1'), ('2.10.0-1gpufleet1', '2.10.0')])
def test_lab_stand_in_gives_what_molecule_verifies(tmp_path, pkg_version, version):
    # molecule/rdma_stack/verify.yml compares rdma_stack_ofed with exactly these three keys
    out = _stand_in(tmp_path, pkg_version)
    assert ofed_info_version(out) == {'raw': 'OFED-internal-' + version, 'distribution': 'OFED-internal',
                                      'version': version}
    assert ofed_info_version(out.splitlines()) == ofed_info_version(out)


@pytest.mark.parametrize('text, expected', [
    # `ofed_info -s` on a DOCA host, quoted in MrBr-github/lshca#102
    ('OFED-internal-24.07-0.3.5.0.110:\n', ('OFED-internal-24.07-0.3.5.0.110', 'OFED-internal', '24.07-0.3.5.0.110')),
    # `ofed_info -s` with MLNX_OFED 5.4, quoted in rapidsai/ucxx's install documentation
    ('MLNX_OFED_LINUX-5.4-3.5.8.0:\n', ('MLNX_OFED_LINUX-5.4-3.5.8.0', 'MLNX_OFED_LINUX', '5.4-3.5.8.0')),
    # HAND-MADE in the documented format: the lines the role's regex copy was pinned to before it went
    ('MLNX_OFED_LINUX-5.8-1.0.1.1:', ('MLNX_OFED_LINUX-5.8-1.0.1.1', 'MLNX_OFED_LINUX', '5.8-1.0.1.1')),
    ('OFED-internal-24.10-1.1.4:', ('OFED-internal-24.10-1.1.4', 'OFED-internal', '24.10-1.1.4')),
    # HAND-MADE: surrounding blank lines and spaces, mlnx-en's name, a DOCA host name
    ('\n  MLNX_OFED_LINUX-23.10-0.5.5.0:  \n\n', ('MLNX_OFED_LINUX-23.10-0.5.5.0', 'MLNX_OFED_LINUX', '23.10-0.5.5.0')),
    ('MLNX_EN_LINUX-5.8-1.0.1.1:\n', ('MLNX_EN_LINUX-5.8-1.0.1.1', 'MLNX_EN_LINUX', '5.8-1.0.1.1')),
    ('DOCA-Host-2.9.1:\n', ('DOCA-Host-2.9.1', 'DOCA-Host', '2.9.1')),
    # HAND-MADE: a package line before the version line is skipped, the version line after it found
    ('mlnx-ofa_kernel-5.8-OFED.5.8.1.0.1.1:\nMLNX_OFED_LINUX-5.8-1.0.1.1:\n',
     ('MLNX_OFED_LINUX-5.8-1.0.1.1', 'MLNX_OFED_LINUX', '5.8-1.0.1.1')),
])
def test_versions(text, expected):
    assert ofed_info_version(text) == dict(zip(('raw', 'distribution', 'version'), expected))


@pytest.mark.parametrize('text', [
    '',
    None,
    [],
    # what the role's probe leaves without OFED (the distribution's rdma-core has no ofed_info)
    'ofed_info: command not found',
    '[Errno 2] No such file or directory',
    # HAND-MADE: package lines of a full ofed_info are no OFED version; a version line cut before its colon
    'mlnx-ofa_kernel:\nmlnx-ofa_kernel-5.8-OFED.5.8.1.0.1.1.src.rpm\n',
    'rdma-core-2307mlnx47-1.2307105.x86_64:\n',
    'MLNX_OFED_LINUX-5.8-1.0.1',
])
def test_no_version_is_an_empty_dict(text):
    assert ofed_info_version(text) == {}


@pytest.mark.parametrize('text', [
    'OFED-internal-24.07-0.3.5.0.110:\n',
    'MLNX_OFED_LINUX-5.4-3.5.8.0:\n',
    # first line of a plain `ofed_info` (quoted in cisco-system-traffic-generator/trex-core#1046): the parser's
    # `base` is not part of rdma_stack_ofed
    'MLNX_OFED_LINUX-23.04-1.1.3.0 (OFED-23.04-1.1.3):\n\nar_mgr:\n',
])
def test_the_parser_is_the_owner(text):
    parsed = parse_ofed_info_short(text)
    assert ofed_info_version(text) == {'raw': parsed['raw'], 'distribution': parsed['distribution'],
                                       'version': parsed['version']}


def test_filter_is_wired_and_refuses_a_bad_shape():
    flt = FilterModule().filters()['ofed_info_version']
    want = {'raw': 'OFED-internal-2.9.1', 'distribution': 'OFED-internal', 'version': '2.9.1'}
    assert flt('OFED-internal-2.9.1:') == want
    with pytest.raises(AnsibleFilterError, match='ofed_info_version'):
        flt({'stdout': 'OFED-internal-2.9.1:'})


def test_role_holds_no_copy_of_the_parser():
    role = REPO_ROOT / 'roles' / 'rdma_stack'
    for path in sorted(role.glob('*/*.yml')):
        text = path.read_text()
        assert '(?P<name>' not in text and 'MLNX_OFED_LINUX|' not in text, path
    assert 'gpufleet.cluster.ofed_info_version' in (role / 'tasks' / 'ofed_info.yml').read_text()


PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Parse ofed_info -s output as the role does
      ansible.builtin.set_fact:
        rdma_stack_ofed: "{{ probe.stdout | default('') | gpufleet.cluster.ofed_info_version }}"
        no_ofed: "{{ failed_probe.stdout | default('') | gpufleet.cluster.ofed_info_version }}"

    - name: Write what Ansible made of it
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'ofed': rdma_stack_ofed, 'none': no_ofed, 'empty': no_ofed | length == 0} | to_json }}"
        mode: "0644"
"""


def test_filter_through_ansible(tmp_path, run_play):
    """The FQCN filter in a real play (connection local) on the stand-in's output and on a failed probe."""
    stub = tmp_path / 'stub'
    stub.mkdir()
    out = tmp_path / 'out.json'
    extra = {'out': str(out), 'probe': {'stdout': _stand_in(stub, '2.9.1-1gpufleet1').rstrip('\n'), 'rc': 0},
             'failed_probe': {'rc': 2, 'msg': '[Errno 2] No such file or directory', 'failed': True}}
    rc, output = run_play(PLAYBOOK, extra)
    assert rc == 0, output
    got = json.loads(out.read_text())
    assert got == {'ofed': {'raw': 'OFED-internal-2.9.1', 'distribution': 'OFED-internal', 'version': '2.9.1'},
                   'none': {}, 'empty': True}
