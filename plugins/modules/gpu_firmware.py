#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_firmware
short_description: Bring the GPUs' VBIOS / HGX firmware to the version lock's version with a pluggable update command
version_added: 0.5.0
description:
  - Reads the VBIOS every GPU runs (C(nvidia-smi -q -x), field C(vbios_version)) and compares it with O(vbios) - one
    version for every GPU, or a dict GPU model (the C(product_name) nvidia-smi prints) -> version, the version lock's
    key C(vbios).
  - A GPU that runs another version gets the update command O(command) - an argument list with C({placeholders}), run
    without a shell - for example NVIDIA's C(nvfwupd) for an HGX tray, C(nvflash), or a vendor's BMC/Redfish CLI. The
    collection ships no vendor tool; the image per model is O(images). O(scope=gpu) runs the command once per GPU,
    O(scope=node) once per GPU model (tools that update a whole baseboard through its BMC).
  - Everything is checked before the first update. The module refuses - nothing is run - when a GPU's model has no
    version in a O(vbios) dict, when O(vbios) is one version but the node has GPUs of several models, and, for the
    GPUs that need an update, when O(command) is empty, O(images) has no image for the model, or the image is not a
    file on the node.
  - After the updates the VBIOS is read back. A GPU that runs the wanted version is done; one that still runs its old
    VBIOS waits for a GPU reset, reboot or power cycle (the usual case) and is reported in RV(reboot_required) and
    RV(reboot_reason), as is any GPU whose update command printed a line matching O(pending_pattern). A read-back that
    shows neither version fails the module.
  - nvidia-smi shows only the running VBIOS, so the module records each update in O(state_path) (the version and the
    boot, from O(boot_id_path)). A GPU updated in this boot that still runs the old version is V(pending-reset) and is
    not updated again; one updated in an earlier boot that still runs the old version is V(pending-power-cycle) - a
    reboot did not load it (a cold power cycle is needed, or the update did not take; remove its entry from
    O(state_path) to update it again).
  - On a host without nvidia-smi, or whose nvidia-smi finds no GPU, nothing is done - C(changed=false) and
    RV(skipped_reason).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the VBIOS (nvidia-smi only), plans and refuses as in a real run, and returns the commands it would run.
  diff_mode:
    support: full
    details: The running VBIOS and the version waiting for a reset (staged), per GPU (keyed by PCI address), before and after.
  platform:
    platforms: posix
options:
  vbios:
    description:
      - "The VBIOS every GPU must run - V(96.00.99.00.01) (five groups of two hex digits, as nvidia-smi prints it), or a
        dict GPU model -> version, for example C({'NVIDIA H100 80GB HBM3': 96.00.99.00.01})."
    type: raw
    required: true
  images:
    description:
      - GPU model -> the firmware image for it (a file name relative to O(bundle_dir), or an absolute path), filled
        into O(command) as C({image}). Needed only for the models that need an update.
    type: dict
    default: {}
  bundle_dir:
    description:
      - Directory of the firmware images on the node (relative O(images) are relative to it).
    type: path
    default: /var/lib/gpufleet/gpu-firmware
  command:
    description:
      - The update command as an argument list, run without a shell, each argument with optional placeholders.
      - O(scope=gpu) - C({image}) C({version}) C({model}) C({pci}) (C(0000:3b:00.0)) C({bus_id}) (as nvidia-smi prints
        it, C(00000000:3B:00.0)) C({index}) C({uuid}) C({serial}).
      - O(scope=node) - C({image}) C({version}) C({model}) C({pcis}) (comma-separated) C({count}).
      - A literal brace is written C({{) or C(}}). Empty - the module refuses when a GPU needs an update.
    type: list
    elements: str
    default: []
  scope:
    description:
      - V(gpu) - the command runs once per GPU that needs the update. V(node) - once per GPU model that needs it (a
        BMC update of a whole HGX baseboard).
    type: str
    choices: [gpu, node]
    default: gpu
  pending_pattern:
    description:
      - A regular expression (Python syntax) searched in the update command's output; a match means the tool says the
        new firmware is active only after a reset, reboot or power cycle, also when the read-back shows the new version.
        The default matches lines such as C(Reboot required) or C(power cycle is needed), not C(no reboot required).
        Empty - only the read-back decides.
    type: str
    default: '(?i)(?<!no )(?<!not )\b(reboot|reset|power[ -]?cycle|ac[ -]cycle)\b[^\n]*\b(required|needed|pending)\b'
  nvidia_smi_path:
    description:
      - Path of nvidia-smi, or a name looked up on C(PATH).
    type: str
    default: nvidia-smi
  state_path:
    description:
      - The module's record of its updates (JSON, written atomically) - which GPU was updated to which version in
        which boot.
    type: path
    default: /var/lib/gpufleet/gpu-firmware-state.json
  boot_id_path:
    description:
      - The file holding the current boot's id.
    type: path
    default: /proc/sys/kernel/random/boot_id
  timeout:
    description:
      - Seconds one update command may take before it is killed and the module fails.
    type: int
    default: 3600
  query_only:
    description:
      - Only read and plan - RV(gpus) with each GPU's running and staged VBIOS - never refuse a missing image or
        command and never run the update. For a journal before and after a change.
    type: bool
    default: false
notes:
  - Needs root. Commands run with C(LC_ALL=C) as argument lists, never through a shell.
  - Bad input is refused before anything runs, naming the option - a version that is not five hex pairs, an empty
    O(vbios) dict, an image for a model O(vbios) does not list, a placeholder the O(scope) does not have (or a format
    spec, an index, an attribute), a O(command) whose first item is an option, a O(pending_pattern) that is not a
    regular expression, a relative O(state_path), a O(timeout) outside 1 second to 30 days, a NUL byte anywhere.
  - What the command does to the GPU is the vendor tool's business - the module checks the result by the read-back
    and never retries a failed update on its own.
seealso:
  - module: gpufleet.cluster.gpu_facts
  - name: NVIDIA nvfwupd
    description: NVIDIA's firmware update tool for HGX/DGX baseboards through the BMC.
    link: https://docs.nvidia.com/dgx/dgxh100-fw-update-guide/
"""

EXAMPLES = r"""
- name: VBIOS of the lock with NVIDIA's nvfwupd, once per model through the BMC, reboot decided by the caller
  become: true
  gpufleet.cluster.gpu_firmware:
    vbios: {"NVIDIA H100 80GB HBM3": "96.00.99.00.01"}
    images: {"NVIDIA H100 80GB HBM3": nvfw_HGX_H100x8_250114.2.0_custom_prod-signed.fwpkg}
    scope: node
    command: [/usr/local/bin/nvfwupd, -t, ip=10.0.0.21, user=admin, password_file=/root/.bmc,
              servertype=HGX_H100x8, update_fw, -p, "{image}", -y]
  register: vbios

- name: Reboot when a new VBIOS waits for it
  ansible.builtin.reboot:
    msg: "{{ vbios.reboot_reason }}"
  when: vbios.reboot_required

- name: A PCIe card, one GPU at a time with a vendor CLI
  become: true
  gpufleet.cluster.gpu_firmware:
    vbios: "94.02.75.00.01"
    images: {"NVIDIA A10G": /srv/firmware/gpu/a10g-94.02.75.00.01.rom}
    command: [/opt/vendor/bin/gpu-flash, --bus, "{pci}", --image, "{image}", --yes]

- name: What would be updated (no change)
  become: true
  gpufleet.cluster.gpu_firmware:
    vbios: "96.00.99.00.01"
    images: {"NVIDIA H100 80GB HBM3": h100.fwpkg}
    command: [nvfwupd, update_fw, -p, "{image}", -y]
  check_mode: true
  diff: true
"""

RETURN = r"""
changed:
  description: Whether an update command ran (in check mode - would run).
  returned: always
  type: bool
gpus:
  description:
    - One entry per GPU - C(index), C(model), C(pci), C(bus_id), C(uuid), C(serial), C(running) (the VBIOS read
      before), C(wanted), C(before) and C(after) (each C(running) and C(staged) - the version installed that waits for
      a reset, else null; C(after) is what is expected in check mode), C(action) (C(none), C(update),
      C(pending-reset) - updated in this boot, waiting for a reset - or C(pending-power-cycle) - updated in an earlier
      boot, a reboot did not load it) and C(image).
  returned: always
  type: list
  elements: dict
  sample:
    - index: 0
      model: NVIDIA H100 80GB HBM3
      pci: "0000:18:00.0"
      running: 96.00.74.00.0B
      wanted: 96.00.99.00.01
      before: {running: 96.00.74.00.0B, staged: null}
      after: {running: 96.00.74.00.0B, staged: 96.00.99.00.01}
      action: update
      image: /var/lib/gpufleet/gpu-firmware/h100.fwpkg
commands:
  description: The update commands run (in check mode - that would run), shell-quoted for reading.
  returned: always
  type: list
  elements: str
reboot_required:
  description: Whether a GPU waits for a reset, reboot or power cycle to run the wanted VBIOS.
  returned: always
  type: bool
reboot_reason:
  description: The GPUs that wait, with their running and waiting versions; empty when none.
  returned: always
  type: str
  sample: >-
    VBIOS updated, pending until a GPU reset, reboot or power cycle: GPU 0 0000:18:00.0 (NVIDIA H100 80GB HBM3): runs
    96.00.74.00.0B, 96.00.99.00.01 waits for a reset
updated:
  description: The GPUs updated before an update or the read-back failed.
  returned: when an update failed
  type: list
  elements: str
problems:
  description: What would refuse an update (no image, no command, a model the lock lacks) - with O(query_only) only.
  returned: with O(query_only)
  type: list
  elements: str
skipped_reason:
  description: Why nothing was done on this host.
  returned: when the host has no GPU nvidia-smi sees
  type: str
  sample: "no GPU: nvidia-smi not found"
diff:
  description: Running and staged VBIOS per GPU (keyed by PCI address), before and after.
  returned: when changed or in diff mode
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_firmware_engine as engine

ARGUMENT_SPEC = dict(
    vbios=dict(type="raw", required=True),
    images=dict(type="dict", default={}),
    bundle_dir=dict(type="path", default="/var/lib/gpufleet/gpu-firmware"),
    command=dict(type="list", elements="str", default=[]),
    scope=dict(type="str", choices=["gpu", "node"], default="gpu"),
    pending_pattern=dict(type="str", default=engine.DEFAULT_PENDING),
    nvidia_smi_path=dict(type="str", default="nvidia-smi"),
    state_path=dict(type="path", default="/var/lib/gpufleet/gpu-firmware-state.json"),
    boot_id_path=dict(type="path", default="/proc/sys/kernel/random/boot_id"),
    timeout=dict(type="int", default=3600),
    query_only=dict(type="bool", default=False),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)

    def write(path, text):
        return atomic_write.write_text(module, path, text, prefix=".gpu_firmware.")

    try:
        result = engine.run(module.params, module.check_mode, module._diff, lambda name: _runner.find(module, name), write)
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
