# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_firmware role on localhost, with the HANDMADE VBIOS stand-in (tests/fixtures/hand_made/gpu_firmware) behind
wrappers named nvidia-smi and gpu-flash - its nvidia-smi prints the REAL recorded 2x RTX A5000 ``-q -x`` (MIT,
telegraf; tests/unit/fixtures/corpus/SOURCES.tsv) with only the VBIOS replaced by its state - a bundle copied from a
"controller" directory and a boot id file of the test's own: skipped without a lock key, the versions entry point,
the plan in check mode (nothing run), query -> update -> pending -> again (not updated twice) -> "reboot" -> running,
changed=0, and a model without an image refused with nothing run. A second play runs the rollout's step files
(roles/rollout_node: versions, apply, re-check) with GPU firmware only: the journal's versions and summary, the
apply record and its reboot reason, the re-check passing after "the reboot" and failing when a reboot did not load
the VBIOS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

UNIT = Path(__file__).resolve().parents[1]
REPO = UNIT.parents[1]
STANDIN = REPO / 'tests' / 'fixtures' / 'hand_made' / 'gpu_firmware' / 'vbios_standin_HANDMADE.py'
A5000 = UNIT / 'fixtures' / 'corpus' / 'nvidia_smi' / 'xml-telegraf-2xA5000-590-v13.xml'

PLAY = r'''
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    __lock: {vbios: {"NVIDIA RTX A5000": 94.02.6D.00.1A}}
    # play vars, not extra vars: extra vars would outrank the include_role vars of the steps below
    gpu_firmware_nvidia_smi_path: "{{ __t.nvidia_smi_path }}"
    gpu_firmware_command: "{{ __t.command }}"
    gpu_firmware_images: "{{ __t.images }}"
    gpu_firmware_bundle_src: "{{ __t.bundle_src }}"
    gpu_firmware_bundle_dir: "{{ __t.bundle_dir }}"
    gpu_firmware_state_path: "{{ __t.state_path }}"
    gpu_firmware_boot_id_path: "{{ __t.boot_id_path }}"
  tasks:
    - name: No vbios in the lock
      ansible.builtin.include_role:
        name: gpufleet.cluster.gpu_firmware
      vars:
        gpufleet_lock: {nvidia_driver: 570.133.20}

    - ansible.builtin.assert:
        that: gpu_firmware_skipped_reason is search('no vbios in the version lock')

    - name: Versions before
      ansible.builtin.include_role:
        name: gpufleet.cluster.gpu_firmware
        tasks_from: versions
      vars:
        gpufleet_lock: "{{ __lock }}"

    - ansible.builtin.assert:
        that: >-
          gpu_firmware_versions | map(attribute='running') | list == ['94.02.6D.00.0D', '94.02.6D.00.0D'] and
          gpu_firmware_versions | map(attribute='pci') | list == ['0000:81:00.0', '0000:c1:00.0'] and
          gpu_firmware_versions | map(attribute='action') | list == ['update', 'update']

    # (the bundle where it is on the "controller": the check-mode staging of a bundle to copy is hca_firmware's, tested
    # with a real --check run in test_hca_firmware_role.py)
    - name: The plan (check mode)
      ansible.builtin.include_role:
        name: gpufleet.cluster.gpu_firmware
        apply:
          check_mode: true
      vars:
        gpufleet_lock: "{{ __lock }}"
        gpu_firmware_bundle_src: null
        gpu_firmware_bundle_dir: "{{ __t.bundle_src }}"

    - ansible.builtin.assert:
        that:
          - gpu_firmware_gpus | map(attribute='action') | list == ['update', 'update']
          - gpu_firmware_commands | length == 2
          - gpu_firmware_commands[0] is search('gpu-flash --bus 0000:81:00.0 --image .*/a5000.img$')

    - name: Update to the lock's VBIOS
      ansible.builtin.include_role:
        name: gpufleet.cluster.gpu_firmware
      vars:
        gpufleet_lock: "{{ __lock }}"

    - ansible.builtin.assert:
        that:
          - gpu_firmware_skipped_reason == ''
          - gpu_firmware_gpus | map(attribute='action') | list == ['update', 'update']
          - gpu_firmware_reboot_required
          - gpu_firmware_reboot_reason is search('GPU 1 0000:c1:00.0 \(NVIDIA RTX A5000\). runs 94.02.6D.00.0D, 94.02.6D.00.1A waits for a reset')

    - name: Again before the reboot (one version for every GPU this time)
      ansible.builtin.include_role:
        name: gpufleet.cluster.gpu_firmware
      vars:
        gpufleet_lock: {vbios: 94.02.6D.00.1A}

    - ansible.builtin.assert:
        that:
          - gpu_firmware_gpus | map(attribute='action') | list == ['pending-reset', 'pending-reset']
          - gpu_firmware_reboot_required
          - gpu_firmware_commands == []

    - name: "Reboot (the stand-in's boot id changes)"
      ansible.builtin.copy:
        dest: "{{ gpu_firmware_boot_id_path }}"
        content: "boot-2\n"
        mode: "0644"

    - name: After the reboot
      ansible.builtin.include_role:
        name: gpufleet.cluster.gpu_firmware
      vars:
        gpufleet_lock: "{{ __lock }}"

    - ansible.builtin.assert:
        that:
          - gpu_firmware_gpus | map(attribute='action') | list == ['none', 'none']
          - gpu_firmware_gpus | map(attribute='running') | list == ['94.02.6D.00.1A', '94.02.6D.00.1A']
          - not gpu_firmware_reboot_required

    - name: A version the bundle has no image for
      block:
        - name: Update to 94.02.6D.00.2B without an image
          ansible.builtin.include_role:
            name: gpufleet.cluster.gpu_firmware
          vars:
            gpufleet_lock: {vbios: 94.02.6D.00.2B}
            gpu_firmware_images: {}
        - ansible.builtin.fail:
            msg: NOT REFUSED
      rescue:
        - ansible.builtin.assert:
            that:
              - ansible_failed_result.msg is search('images has no image for the model NVIDIA RTX A5000')
              - ansible_failed_result.msg is search('nothing was updated')
              - gpu_firmware_updated == []


# The rollout's wiring of the step (roles/rollout_node, GPU firmware only): versions before (journal), the apply step
# (its record: the GPUs, the reboot reason), "the reboot", the re-check (the VBIOS must run), and the re-check failing
# when the reboot did not load it - the step files of the role, on the same stand-in.
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    rollout_node_roles: [gpu_firmware]
    gpufleet_lock: {vbios: {"NVIDIA RTX A5000": 94.02.6D.00.3C}}
    gpu_firmware_nvidia_smi_path: "{{ __t.nvidia_smi_path }}"
    gpu_firmware_command: "{{ __t.command }}"
    gpu_firmware_images: {"NVIDIA RTX A5000": a5000-3c.img}
    gpu_firmware_bundle_src: "{{ __t.bundle_src }}"
    gpu_firmware_bundle_dir: "{{ __t.bundle_dir }}"
    gpu_firmware_state_path: "{{ __t.state_path }}"
    gpu_firmware_boot_id_path: "{{ __t.boot_id_path }}"
  tasks:
    - name: The rollout's versions before
      ansible.builtin.include_role:
        name: gpufleet.cluster.rollout_node
        tasks_from: versions
      vars:
        __rollout_node_versions_var: __rollout_node_before

    - ansible.builtin.assert:
        that:
          - __rollout_node_before.gpu_firmware | map(attribute='running') | list == ['94.02.6D.00.1A', '94.02.6D.00.1A']
          - __rollout_node_before.summary is search('GPU 0 VBIOS 94.02.6D.00.1A, GPU 1 VBIOS 94.02.6D.00.1A')

    - name: The rollout's apply step
      ansible.builtin.include_role:
        name: gpufleet.cluster.rollout_node
        tasks_from: steps/apply

    - ansible.builtin.assert:
        that:
          - __rollout_node_record.gpu_firmware | map(attribute='action') | list == ['update', 'update']
          - __rollout_node_record.reboot_required
          - __rollout_node_record.reboot_reasons | length == 1
          - __rollout_node_record.reboot_reasons[0] is search('^VBIOS updated, pending until a GPU reset')

    - name: "Reboot (the stand-in's boot id changes)"
      ansible.builtin.copy:
        dest: "{{ gpu_firmware_boot_id_path }}"
        content: "boot-3\n"
        mode: "0644"

    - name: The rollout's re-check after the reboot
      ansible.builtin.include_role:
        name: gpufleet.cluster.rollout_node
        tasks_from: steps/re_check
      vars:
        __rollout_node_rebooted: true

    - ansible.builtin.assert:
        that: gpu_firmware_versions | map(attribute='running') | list == ['94.02.6D.00.3C', '94.02.6D.00.3C']

    - name: A reboot that did not load the VBIOS fails the re-check
      block:
        - name: The re-check with the stand-in back on 94.02.6D.00.1A
          ansible.builtin.include_role:
            name: gpufleet.cluster.rollout_node
            tasks_from: steps/re_check
          vars:
            __rollout_node_rebooted: true
            gpu_firmware_nvidia_smi_path: "{{ __t.nvidia_smi_path }}-old"
        - ansible.builtin.fail:
            msg: NOT FAILED
      rescue:
        - ansible.builtin.assert:
            that: >-
              ansible_failed_result.msg is search('still requires a reboot after rebooting: VBIOS not loaded by the reboot
              on GPU 0 0000:81:00.0: runs 94.02.6D.00.1A, the lock wants 94.02.6D.00.3C; a power cycle is needed')

    - ansible.builtin.debug:
        msg: ROLLOUT TEST DONE
'''


def _lab(tmp_path):
    (tmp_path / 'standin').mkdir()
    (tmp_path / 'boot_id').write_text('boot-1\n')
    common = '%s %s --state %s --base %s --boot-id-file %s' % (sys.executable, STANDIN, tmp_path / 'standin' / 'state.json',
                                                               A5000, tmp_path / 'boot_id')
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    for name, sub in (('nvidia-smi', 'smi'), ('gpu-flash', 'flash')):
        (bindir / name).write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real tool\nexec %s %s "$@"\n' % (common, sub))
        (bindir / name).chmod(0o755)
    src = tmp_path / 'controller-bundle'
    src.mkdir()
    for name, version in (('a5000.img', '94.02.6D.00.1A'), ('a5000-3c.img', '94.02.6D.00.3C')):
        subprocess.run(common.split() + ['--standin-make-image', str(src / name), 'NVIDIA RTX A5000', version], check=True)
    # a second nvidia-smi on a state of its own that stays on the recording's 94.02.6D.00.0D ... 1A: a GPU the reboot
    # did not load (the rollout test's negative re-check)
    old = common.replace(str(tmp_path / 'standin' / 'state.json'), str(tmp_path / 'standin-old' / 'state.json'))
    (tmp_path / 'standin-old').mkdir()
    (tmp_path / 'standin-old' / 'state.json').write_text(
        '{"gpus": {"0": {"running": "94.02.6D.00.1A", "staged": null, "staged_boot": null}, '
        '"1": {"running": "94.02.6D.00.1A", "staged": null, "staged_boot": null}}}')
    (bindir / 'nvidia-smi-old').write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real tool\nexec %s smi "$@"\n' % old)
    (bindir / 'nvidia-smi-old').chmod(0o755)
    return {'__t': dict(nvidia_smi_path=str(bindir / 'nvidia-smi'),
                        command=[str(bindir / 'gpu-flash'), '--bus', '{pci}', '--image', '{image}'],
                        images={'NVIDIA RTX A5000': 'a5000.img'}, bundle_src=str(src),
                        bundle_dir=str(tmp_path / 'node-bundle'),
                        state_path=str(tmp_path / 'var' / 'gpu-firmware-state.json'),
                        boot_id_path=str(tmp_path / 'boot_id'))}


def test_role_skip_versions_plan_update_pending_reboot_refusal(tmp_path, run_play):
    extra = _lab(tmp_path)
    rc, out = run_play(PLAY, extra)
    # (the output's tail: the first play's marker is in the log, the recap counts both plays)
    assert rc == 0 and 'ROLLOUT TEST DONE' in out and ' failed=0 ' in out, out
    assert (tmp_path / 'node-bundle' / 'a5000.img').is_file()
    calls = [c for c in (tmp_path / 'standin' / 'calls.log').read_text().splitlines() if c.startswith('flash')]
    assert calls == ['flash --bus 0000:81:00.0 --image %s' % (tmp_path / 'node-bundle' / 'a5000.img'),
                     'flash --bus 0000:c1:00.0 --image %s' % (tmp_path / 'node-bundle' / 'a5000.img'),
                     'flash --bus 0000:81:00.0 --image %s' % (tmp_path / 'node-bundle' / 'a5000-3c.img'),
                     'flash --bus 0000:c1:00.0 --image %s' % (tmp_path / 'node-bundle' / 'a5000-3c.img')]
