# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hca_firmware role on localhost, with the HANDMADE mstflint stand-in behind a wrapper, a one-card sysfs tree (the
recorded mlx5_0 device of prometheus/procfs in a hand-made PCI layout) and a bundle copied from a "controller"
directory: skipped without a lock key, the versions entry point, a burn, pending reset not burned again, a missing
image refused with nothing burned."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

UNIT = Path(__file__).resolve().parents[1]
REPO = UNIT.parents[1]
STANDIN = REPO / 'tests' / 'fixtures' / 'hand_made' / 'hca_firmware' / 'mstflint_standin_HANDMADE.py'
MLX5 = UNIT / 'fixtures' / 'corpus' / 'sysfs_infiniband' / 'procfs' / 'fixtures' / 'sys' / 'class' / 'infiniband' / 'mlx5_0'

PLAY = r'''
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: No hca_firmware in the lock
      ansible.builtin.include_role:
        name: gpufleet.cluster.hca_firmware
      vars:
        gpufleet_lock: {nvidia_driver: 570.133.20}

    - ansible.builtin.assert:
        that: hca_firmware_skipped_reason is search('no hca_firmware in the version lock')

    - name: Versions before
      ansible.builtin.include_role:
        name: gpufleet.cluster.hca_firmware
        tasks_from: versions

    - ansible.builtin.assert:
        that: >-
          hca_firmware_versions == [{'pci': '0000:3b:00.0', 'psid': 'MT_0000000228', 'flash': '20.35.1012',
          'running': '20.35.1012', 'pending_reset': false}]

    - name: Burn the lock's version
      ansible.builtin.include_role:
        name: gpufleet.cluster.hca_firmware
      vars:
        gpufleet_lock: {hca_firmware: 20.36.1012}

    - ansible.builtin.assert:
        that:
          - hca_firmware_skipped_reason == ''
          - hca_firmware_cards | map(attribute='action') | list == ['burn']
          - hca_firmware_cards[0].devices == ['mlx5_0', 'mlx5_1']
          - hca_firmware_reboot_required
          - hca_firmware_reboot_reason is search('0000:3b:00.0 \(PSID MT_0000000228\). flash 20.36.1012, running 20.35.1012')

    - name: Versions after the burn
      ansible.builtin.include_role:
        name: gpufleet.cluster.hca_firmware
        tasks_from: versions

    - ansible.builtin.assert:
        that:
          - hca_firmware_versions[0].flash == '20.36.1012'
          - hca_firmware_versions[0].running == '20.35.1012'
          - hca_firmware_versions[0].pending_reset

    - name: Again before the reboot (a dict by PSID this time)
      ansible.builtin.include_role:
        name: gpufleet.cluster.hca_firmware
      vars:
        gpufleet_lock: {hca_firmware: {MT_0000000228: 20.36.1012}}

    - ansible.builtin.assert:
        that:
          - hca_firmware_cards | map(attribute='action') | list == ['pending-reset']
          - hca_firmware_reboot_required

    - name: A version the bundle has no image for
      block:
        - name: Burn 20.99.1000
          ansible.builtin.include_role:
            name: gpufleet.cluster.hca_firmware
          vars:
            gpufleet_lock: {hca_firmware: 20.99.1000}
        - ansible.builtin.fail:
            msg: NOT REFUSED
      rescue:
        - ansible.builtin.assert:
            that:
              - ansible_failed_result.msg is search('no image for PSID MT_0000000228 version 20.99.1000')
              - ansible_failed_result.msg is search('the bundle holds fw-cx6.bin .MT_0000000228 20.36.1012.')
              - hca_firmware_burned == []

    - ansible.builtin.debug:
        msg: ROLE TEST DONE
'''


def _lab(tmp_path):
    root = tmp_path / 'root'
    cls = root / 'sys' / 'class' / 'infiniband'
    cls.mkdir(parents=True)
    for name, pci in (('mlx5_0', '0000:3b:00.0'), ('mlx5_1', '0000:3b:00.1')):
        ibdev = root / 'sys' / 'devices' / 'pci0000:00' / pci / 'infiniband' / name
        shutil.copytree(str(MLX5), str(ibdev))
        (ibdev / 'sys_image_guid').write_text('043f:7203:00f0:4c46\n')
        os.symlink('../../../%s' % pci, str(ibdev / 'device'))
        os.symlink(os.path.relpath(str(ibdev), str(cls)), str(cls / name))
    (tmp_path / 'boot_id').write_text('boot-1\n')
    wrapper = tmp_path / 'bin' / 'mstflint'
    wrapper.parent.mkdir()
    wrapper.write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real tool\nexec %s %s --state %s --boot-id-file %s "$@"\n'
                       % (sys.executable, STANDIN, tmp_path / 'state' / 'mstflint.json', tmp_path / 'boot_id'))
    wrapper.chmod(0o755)
    src = tmp_path / 'controller-bundle'
    src.mkdir()
    for args in (['--standin-add', '0000:3b:00.0', 'MT_0000000228', '20.35.1012'],
                 ['--standin-make-image', str(src / 'fw-cx6.bin'), 'MT_0000000228', '20.36.1012']):
        subprocess.run([str(wrapper)] + args, check=True)
    return dict(hca_firmware_sysfs_root=str(root), hca_firmware_tool_path=str(wrapper),
                hca_firmware_bundle_src=str(src), hca_firmware_bundle_dir=str(tmp_path / 'node-bundle'))


def test_role_skip_versions_burn_pending_refusal(tmp_path, run_play):
    extra = _lab(tmp_path)
    rc, out = run_play(PLAY, extra)
    assert rc == 0 and 'ROLE TEST DONE' in out, out
    assert (tmp_path / 'node-bundle' / 'fw-cx6.bin').is_file()
    calls = (tmp_path / 'state' / 'calls.log').read_text().splitlines()
    assert [c for c in calls if c.endswith(' -y b')] == ['-d 0000:3b:00.0 -i %s -y b' % (tmp_path / 'node-bundle' / 'fw-cx6.bin')]


CHECK_PLAY = r'''
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Plan in check mode on a node without the bundle
      ansible.builtin.include_role:
        name: gpufleet.cluster.hca_firmware
      vars:
        gpufleet_lock: {hca_firmware: 20.36.1012}

    - ansible.builtin.assert:
        that:
          - hca_firmware_cards | map(attribute='action') | list == ['burn']
          - hca_firmware_cards[0].image is search('^' ~ __hca_firmware_stage.path ~ '/fw-cx6.bin$')
          - hca_firmware_cards[0].after.flash == '20.36.1012'
          - hca_firmware_cards[0].after.running == '20.35.1012'
          - hca_firmware_reboot_required
          - "hca_firmware_reboot_reason is search('^check mode. HCA firmware would be burned, then wait for a reset')"

    - name: The staged bundle is gone
      ansible.builtin.stat:
        path: "{{ __hca_firmware_stage.path }}"
      register: __staged
      check_mode: false

    - ansible.builtin.assert:
        that: not __staged.stat.exists

    - ansible.builtin.debug:
        msg: CHECK TEST DONE
'''


def test_check_mode_plans_with_the_bundle_the_copy_would_bring(tmp_path):
    """--check on a node without the bundle: the plan uses a staged copy, removed again; nothing else changes."""
    extra = _lab(tmp_path)
    playbook = Path(sys.executable).parent / 'ansible-playbook'
    if not playbook.is_file():
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    (tmp_path / 'play.yml').write_text(CHECK_PLAY)
    (tmp_path / 'vars.json').write_text(__import__('json').dumps(dict(extra, ansible_python_interpreter=sys.executable)))
    proc = subprocess.run([str(playbook), '-i', 'localhost,', str(tmp_path / 'play.yml'), '--check', '--diff',
                           '-e', '@%s' % (tmp_path / 'vars.json')], cwd=str(REPO), capture_output=True, text=True,
                          timeout=300, check=False, env=dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0'))
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0 and 'CHECK TEST DONE' in out, out
    assert not (tmp_path / 'node-bundle').exists()
    calls = (tmp_path / 'state' / 'calls.log').read_text().splitlines()
    assert [c for c in calls if c.endswith(' -y b')] == []
