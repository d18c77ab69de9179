# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel role on localhost against the hand-made host tree of test_kernel_boot.py (boot/, lib/modules/, proc/,
etc/default/grub) with the HANDMADE stand-ins of tests/fixtures/hand_made/kernel_boot/ first on PATH (packages are
not installed here: kernel_install_packages false): skipped without a lock key; install -> boot next once, reboot
required; a second run changes nothing; after the "reboot" confirm makes the kernel the default; a node that came
back on the old kernel fails confirm; a driver DKMS cannot build for the kernel fails the role with no boot entry
changed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location('kernel_boot_host', str(HERE.parent / 'plugins' / 'modules' / 'test_kernel_boot.py'))
kb = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(kb)

PLAY = r'''
- hosts: localhost
  connection: local
  gather_facts: false
  environment:
    PATH: "{{ standin_path }}"
  vars:
    kernel_install_packages: false
    kernel_boot_dir: "{{ root }}/boot"
    kernel_modules_dir: "{{ root }}/lib/modules"
    kernel_proc_root: "{{ root }}"
    kernel_grub_default_file: "{{ root }}/etc/default/grub"
    kernel_required_modules: [nvidia, nvidia_uvm, mlx5_core]
  tasks:
    - name: No kernel in the lock
      ansible.builtin.include_role:
        name: gpufleet.cluster.kernel
      vars:
        gpufleet_lock: {nvidia_driver: 570.133.20}
      when: step == 'first'

    - ansible.builtin.assert:
        that: kernel_skipped_reason is search('no kernel in the version lock') and not kernel_reboot_required
      when: step == 'first'

    - name: The lock's kernel
      ansible.builtin.include_role:
        name: gpufleet.cluster.kernel
        tasks_from: "{{ entry }}"
      vars:
        gpufleet_lock: {kernel: "{{ new }}"}

    - name: Write what the role set
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'required': kernel_reboot_required, 'reason': kernel_reboot_reason, 'result': kernel_result} | to_json }}"
        mode: "0644"
'''


def _play(run_play, host, tmp_path, entry='main', step='next'):
    out = tmp_path / ('out-%s.json' % step)
    rc, output = run_play(PLAY, dict(root=str(host.root), new=kb.NEW, entry=entry, step=step, out=str(out),
                                     standin_path='%s:/usr/sbin:/usr/bin:/sbin:/bin' % host.bin))
    return rc, output, (json.loads(out.read_text()) if out.exists() else None)


@pytest.fixture
def host(tmp_path):
    h = kb.Host(tmp_path / 'host')
    h.standin_run('grub-set-default', '--boot-directory', str(h.boot), kb.advanced(kb.OLD))
    h.install(kb.NEW)
    h.update_grub()
    h.forget_calls()
    return h


def test_role_boots_next_then_confirm_makes_it_default(host, tmp_path, run_play):
    rc, output, got = _play(run_play, host, tmp_path, step='first')
    assert rc == 0, output
    assert got['required'] and got['result']['next'] == kb.NEW and got['result']['default'] == kb.OLD, got
    assert 'boots next, once' in got['reason'] and host.grubenv()['next_entry'] == kb.advanced(kb.NEW)
    assert host.calls('dkms autoinstall') and len(host.calls('grub-reboot')) == 1
    rc, output, got = _play(run_play, host, tmp_path, step='again')
    assert rc == 0 and not got['result']['changed'] and len(host.calls('grub-reboot')) == 1, output
    # confirm before the reboot: the node does not run the kernel yet
    rc, output, got = _play(run_play, host, tmp_path, entry='confirm', step='early')
    assert rc != 0 and 'the node runs kernel %s after the reboot, not %s' % (kb.OLD, kb.NEW) in output, output
    assert host.power_on().strip() == 'booted %s' % kb.NEW
    rc, output, got = _play(run_play, host, tmp_path, entry='confirm', step='confirm')
    assert rc == 0 and not got['required'] and got['result']['default'] == kb.NEW, output
    assert host.grubenv()['saved_entry'] == kb.advanced(kb.NEW)


def test_role_refuses_a_kernel_the_driver_cannot_build_for(host, tmp_path, run_play):
    host.plant_build_failure(kb.NEW)
    before = (host.grubdir / 'grubenv').read_bytes()
    rc, output, got = _play(run_play, host, tmp_path, step='refused')
    assert rc != 0 and got is None, output
    assert 'kernel %s refused, no boot entry was changed: nvidia: missing' % kb.NEW in output, output
    assert 'Bad return status for module build on kernel: %s' % kb.NEW in output
    assert (host.grubdir / 'grubenv').read_bytes() == before and host.calls('grub-reboot') == []


PLAY_TOOLS = r'''
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    kernel_install_packages: false
    kernel_boot_dir: "{{ root }}/boot"
    kernel_modules_dir: "{{ root }}/lib/modules"
    kernel_proc_root: "{{ root }}"
    kernel_grub_default_file: "{{ root }}/etc/default/grub"
    kernel_required_modules: [nvidia]
  tasks:
    - name: The running release (read-only entry point)
      ansible.builtin.include_role:
        name: gpufleet.cluster.kernel
        tasks_from: versions

    - name: The lock's kernel with the tools given by path
      ansible.builtin.include_role:
        name: gpufleet.cluster.kernel
        tasks_from: install
      vars:
        gpufleet_lock: {kernel: "{{ new }}"}
        kernel_tool_paths: "{{ tools }}"

    - name: Write what the role set
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'running': kernel_running, 'result': kernel_result} | to_json }}"
        mode: "0644"
'''


def _tools_play(run_play, host, tmp_path, tools):
    out = tmp_path / 'out-tools.json'
    rc, output = run_play(PLAY_TOOLS, dict(root=str(host.root), new=kb.NEW, tools=tools, out=str(out)))
    return rc, output, (json.loads(out.read_text()) if out.exists() else None)


def test_role_tools_by_path_and_versions(host, tmp_path, run_play):
    # the stand-ins are not on PATH here: only kernel_tool_paths finds them (the fleet lab's way)
    tools = {'grub_editenv': host.tools['grub-editenv'], 'grub_reboot': host.tools['grub-reboot'],
             'grub_set_default': host.tools['grub-set-default'], 'dkms': host.tools['dkms'],
             'modinfo': host.tools['modinfo']}
    rc, output, got = _tools_play(run_play, host, tmp_path, tools)
    assert rc == 0, output
    assert got['running'] == kb.OLD and got['result']['running'] == kb.OLD, got
    assert got['result']['modules']['nvidia']['status'] == 'ok', got
    assert any(a.startswith(host.tools['dkms'] + ' autoinstall -k ' + kb.NEW) for a in got['result']['actions']), got
    assert host.calls('dkms autoinstall') and host.calls('grub-reboot') == []  # install: no boot entry change


@pytest.mark.parametrize('tools, what', [
    ({'grub_editor': '/usr/sbin/grub-editenv'}, 'grub_editor'),
    ({'dkms': ''}, '"dkms": ""'),
    ({'dkms': ['/usr/sbin/dkms']}, '/usr/sbin/dkms'),
])
def test_role_bad_tool_paths_fail_before_anything(host, tmp_path, run_play, tools, what):
    before = host.snapshot()
    rc, output, got = _tools_play(run_play, host, tmp_path, tools)
    assert rc != 0 and got is None, output
    assert 'kernel_tool_paths must be a dict of grub_editenv, grub_reboot, grub_set_default, grubby, dkms, modinfo' \
        in output and what in output, output
    assert host.snapshot() == before and host.calls() == []
