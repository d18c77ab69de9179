#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_settings
short_description: Declarative NVIDIA GPU settings per GPU model (persistence, power limit, clocks, ECC, compute mode, MIG)
version_added: 0.4.0
description:
  - Makes the settings of every NVIDIA GPU of the host what O(settings) says for its model (the product name
    C(nvidia-smi -q -x) prints, for example C(NVIDIA H100 80GB HBM3)). GPUs of other models are left alone and
    listed in RV(unmatched_gpus).
  - Reads the state with C(nvidia-smi -q -x) (and C(nvidia-smi mig -lgi) on MIG-enabled GPUs); only the keys given
    are managed, and the diff (C(--diff)) shows before and after of exactly that subset, per GPU.
  - Every value is checked before the first change - the option's own rules, then against what each GPU
    reports (power limit within its min..max, application clocks a supported pair, locked clocks within its graphics
    clocks, ECC and MIG only where supported). A refusal names the option and what is allowed.
  - Changes are made with C(nvidia-smi -i IDX) C(-pm), C(-e), C(-mig), C(-c), C(-pl), C(-ac), C(-lgc) and
    C(nvidia-smi mig -cgi .. -C) / C(-dci) / C(-dgi). MIG changes are refused, naming the PIDs, while processes run
    on the GPU. Only the difference of the MIG layout is created or destroyed.
  - ECC and MIG mode changes are pending until a reboot (GPU reset); they are reported in RV(reboot_required) and
    RV(reboot_reasons), also on later runs until the reboot.
  - Order of the changes - O(persist_path) first (a failure to write it changes nothing else), then the commands.
    After a failure midway the module fails with C(changed=true) and returns RV(applied). After the changes the
    state is read again and the module fails naming every value the driver did not take.
  - nvidia-smi does not print locked clocks, so the module keeps what it locked in O(lock_record_path), a file
    under C(/run) that is gone after a reboot, like the locks.
  - On a host without nvidia-smi or without a GPU nothing is done - C(changed=false) and RV(skipped_reason).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  nvidia_smi_path:
    description: Path of C(nvidia-smi), or a name looked up on C(PATH).
    type: str
    default: nvidia-smi
  settings:
    description:
      - Settings per GPU model; each model appears once. Keys left out are not managed.
    type: list
    elements: dict
    default: []
    suboptions:
      model:
        description: GPU product name exactly as C(nvidia-smi -q -x) prints it (C(product_name)).
        type: str
        required: true
      persistence_mode:
        description: Persistence mode (C(nvidia-smi -pm)). Forgotten at reboot.
        type: bool
      power_limit_w:
        description: Power limit in watts (C(nvidia-smi -pl)); must lie within the GPU's min..max. Forgotten at reboot.
        type: int
      application_clocks:
        description:
          - Application clocks (C(nvidia-smi -ac MEM,GR)); the pair must be one the GPU lists as supported.
            Forgotten at reboot. Mutually exclusive with O(settings[].locked_clocks).
        type: dict
        suboptions:
          memory_mhz:
            description: Memory clock in MHz.
            type: int
            required: true
          graphics_mhz:
            description: Graphics clock in MHz.
            type: int
            required: true
      locked_clocks:
        description:
          - Locked graphics clock range (C(nvidia-smi -lgc MIN,MAX)) within the GPU's graphics clocks. Forgotten at
            reboot.
        type: dict
        suboptions:
          min_mhz:
            description: Lowest graphics clock in MHz.
            type: int
            required: true
          max_mhz:
            description: Highest graphics clock in MHz, at least O(settings[].locked_clocks.min_mhz).
            type: int
            required: true
      ecc:
        description: ECC mode (C(nvidia-smi -e)); takes effect after a reboot.
        type: str
        choices: [enabled, disabled]
      compute_mode:
        description: Compute mode (C(nvidia-smi -c)). Forgotten at reboot.
        type: str
        choices: [Default, Exclusive_Process, Prohibited]
      mig:
        description: MIG mode and layout (MIG-capable GPUs only).
        type: dict
        suboptions:
          enabled:
            description: MIG mode (C(nvidia-smi -mig)); a change takes effect after a GPU reset or reboot.
            type: bool
            required: true
          instances:
            description:
              - GPU instances by profile name (C(1g.10gb), C(3g.40gb)...), each with its default compute instance.
                Compared as a multiset with C(nvidia-smi mig -lgi); only the difference is created or destroyed.
                Applied once MIG mode is active. Left out, the layout is not managed (nothing is created or
                destroyed); V([]) destroys every instance.
            type: list
            elements: str
  persist_path:
    description:
      - Write the settings the driver forgets at reboot (persistence mode, compute mode, power limit, clocks) to this
        JSON file for a boot-time re-apply without Ansible (role C(gpufleet.cluster.gpu_settings)). Written only when
        its content differs, before any setting is applied. An absolute path.
      - Format C(gpufleet.gpu_settings/1) - keys C(nvidia_smi), C(lock_record_path) and C(gpus), a list of C(uuid),
        C(index), C(name), C(pci_bus_id), C(settings) and C(replay) (nvidia-smi arguments after C(-i UUID)).
    type: path
  lock_record_path:
    description: Where the locked clocks set by this module (or the boot replay) are recorded. An absolute path.
    type: path
    default: /run/gpufleet/gpu_settings-locked-clocks.json
"""

EXAMPLES = r"""
- name: H100 nodes - persistence on, 600 W, ECC on, MIG with two 3g.40gb instances
  gpufleet.cluster.gpu_settings:
    settings:
      - model: NVIDIA H100 80GB HBM3
        persistence_mode: true
        power_limit_w: 600
        ecc: enabled
        compute_mode: Default
        mig:
          enabled: true
          instances: [3g.40gb, 3g.40gb]
    persist_path: /etc/gpufleet/gpu_settings.json
  register: gpus

- name: Tell when a reboot is needed
  ansible.builtin.debug:
    msg: "{{ gpus.reboot_reasons }}"
  when: gpus.reboot_required

- name: A10G - application clocks
  gpufleet.cluster.gpu_settings:
    settings:
      - model: NVIDIA A10G
        application_clocks: {memory_mhz: 6251, graphics_mhz: 1710}
"""

RETURN = r"""
changed:
  description: Whether a setting (or the persistence file) was, or in check mode would be, changed.
  returned: always
  type: bool
commands:
  description: nvidia-smi command lines run, or in check mode that would run.
  returned: always
  type: list
  elements: list
  sample: [["/usr/bin/nvidia-smi", "-i", "0", "-pl", "250"]]
gpus:
  description:
    - Managed state of every GPU (after the change; in check mode before it) - C(index), C(uuid), C(name),
      C(pci_bus_id), C(persistence_mode), C(power_limit_w), C(power_limit_range_w), C(power_limit_default_w),
      C(application_clocks), C(locked_clocks), C(ecc) (C(current)/C(pending)), C(compute_mode), C(mig)
      (C(current), C(pending), C(instances)), C(processes) (PIDs). A value the GPU does not report is null.
  returned: always
  type: list
  elements: dict
reboot_required:
  description: Whether an ECC or MIG mode change waits for a reboot (GPU reset).
  returned: always
  type: bool
reboot_reasons:
  description: Why a reboot is required, one line per GPU and setting.
  returned: always
  type: list
  elements: str
  sample: ["GPU 0 (NVIDIA A10G): ECC disabled takes effect after a reboot (current: enabled)"]
unmatched_gpus:
  description: GPUs whose model has no entry in O(settings), as C(INDEX) colon C(NAME); left alone.
  sample: ["0: NVIDIA A10G"]
  returned: always
  type: list
  elements: str
skipped_reason:
  description: Why nothing was done on this host (C(no GPU - ...)).
  returned: when the host has no nvidia-smi or no GPU
  type: str
  sample: "no GPU: nvidia-smi not found"
diff:
  description: Managed settings before and after, keyed C(gpuN).
  returned: when changed or in diff mode
  type: dict
applied:
  description:
    - What was applied before a failure - C(persist_path) (the file written, or null) and C(commands) (argvs run).
  returned: when a step failed after the changes had begun
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_settings_engine as engine

_CLOCKS = dict(memory_mhz=dict(type="int", required=True), graphics_mhz=dict(type="int", required=True))
_LOCKED = dict(min_mhz=dict(type="int", required=True), max_mhz=dict(type="int", required=True))
_MIG = dict(enabled=dict(type="bool", required=True), instances=dict(type="list", elements="str"))
ARGUMENT_SPEC = dict(
    nvidia_smi_path=dict(type="str", default="nvidia-smi"),
    settings=dict(type="list", elements="dict", default=[], options=dict(
        model=dict(type="str", required=True),
        persistence_mode=dict(type="bool"),
        power_limit_w=dict(type="int"),
        application_clocks=dict(type="dict", options=_CLOCKS),
        locked_clocks=dict(type="dict", options=_LOCKED),
        ecc=dict(type="str", choices=["enabled", "disabled"]),
        compute_mode=dict(type="str", choices=["Default", "Exclusive_Process", "Prohibited"]),
        mig=dict(type="dict", options=_MIG),
    )),
    persist_path=dict(type="path"),
    lock_record_path=dict(type="path", default="/run/gpufleet/gpu_settings-locked-clocks.json"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)

    def find(name):
        return _runner.find(module, name)

    def write(path, text):
        return atomic_write.write_text(module, path, text, prefix=".gpu_settings.")

    try:
        result = engine.run(module.params, module.check_mode, module._diff, find, write)
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
