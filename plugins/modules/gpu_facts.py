#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_facts
short_description: Gather NVIDIA GPU facts from nvidia-smi
version_added: 0.1.0
description:
  - Runs C(nvidia-smi -q -x) and C(nvidia-smi topo -m) and returns driver and CUDA versions, one
    entry per GPU (identity, PCIe link, temperature, power, ECC, retired pages or remapped rows,
    MIG mode and devices) and the GPU/NIC topology matrix with CPU and NUMA affinity.
  - Handles the XML of driver generations 418 to 595. Values that nvidia-smi reports as C(N/A) or
    C(Not Supported) are C(null); units are stripped from numbers.
  - A host without C(nvidia-smi) is not an error; the module returns C(count=0), an empty C(gpus)
    list and says so in RV(msg).
  - >-
    A failing C(nvidia-smi -q -x) (for example C(NVIDIA-SMI has failed because it couldn't communicate
    with the NVIDIA driver) or C(Failed to initialize NVML: Driver/library version mismatch)) fails the
    module with that text and the command line. A failing C(topo -m) only gives a warning and an empty
    topology.
  - >-
    When C(nvidia-smi) answers C(No devices were found) (the driver is loaded but sees no GPU) the module fails
    with a message saying so and RV(reason=no_devices), distinct from output that cannot be parsed.
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
    details: Only runs read-only C(nvidia-smi) queries, so it runs in check mode too.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
options:
  executable:
    description:
      - Name or path of C(nvidia-smi). A name is looked up on E(PATH) and in the usual sbin directories.
      - An empty string, a NUL byte, or a path that is a directory or not executable is refused. Output of
        C(nvidia-smi -q -x) that is not UTF-8 text fails the module (C(topo -m) output that is not leaves the
        topology empty with a warning).
    type: str
    default: nvidia-smi
  topology:
    description:
      - Also run C(nvidia-smi topo -m) and return the topology matrix.
    type: bool
    default: true
notes:
  - Commands run with C(LC_ALL=C).
  - GPU indexes are the order of C(nvidia-smi -q -x), the same as C(nvidia-smi -i) and the C(GPU<n>)
    labels of C(topo -m).
seealso:
  - module: gpufleet.cluster.ib_port_facts
  - module: gpufleet.cluster.fw_facts
'''

EXAMPLES = r'''
- name: Gather GPU facts
  gpufleet.cluster.gpu_facts:

- name: Expect 8 GPUs on the 550 driver, no pending row remapping
  ansible.builtin.assert:
    that:
      - ansible_facts.nvidia_gpu.count == 8
      - ansible_facts.nvidia_gpu.driver_version is version('550', '>=')
      - ansible_facts.nvidia_gpu.gpus | selectattr('remapped_rows') | map(attribute='remapped_rows.pending') is not any

- name: Use a nvidia-smi outside PATH, skip topology
  gpufleet.cluster.gpu_facts:
    executable: /usr/local/nvidia/bin/nvidia-smi
    topology: false
'''

RETURN = r'''
msg:
  description: Why no GPU was reported (nvidia-smi missing).
  returned: when nvidia-smi was not found
  type: str
  sample: "skipped: no GPU (nvidia-smi not found)"
reason:
  description: C(no_devices) when the module failed because nvidia-smi said C(No devices were found).
  returned: on that failure
  type: str
  sample: no_devices
  version_added: 0.2.0
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    nvidia_gpu:
      description: GPU facts.
      returned: always
      type: dict
      contains:
        executable:
          description: Path of the C(nvidia-smi) that ran, C(null) when none was found.
          returned: always
          type: str
        driver_version:
          description: Driver version.
          returned: always
          type: str
          sample: "535.161.08"
        cuda_version:
          description: Highest CUDA version the driver supports.
          returned: always
          type: str
          sample: "12.2"
        attached_gpus:
          description: GPU count as reported by nvidia-smi (C(attached_gpus)).
          returned: always
          type: int
        count:
          description: Number of entries in RV(ansible_facts.nvidia_gpu.gpus); C(0) without nvidia-smi.
          returned: always
          type: int
        gpus:
          description: One entry per GPU, in nvidia-smi index order.
          returned: always
          type: list
          elements: dict
          contains:
            index:
              description: GPU index (as in C(nvidia-smi -i)).
              type: int
              returned: always
            name:
              description: Product name.
              type: str
              returned: always
            brand:
              description: Product brand.
              type: str
              returned: always
            architecture:
              description: GPU architecture (driver 470 and later).
              type: str
              returned: always
            uuid:
              description: GPU UUID.
              type: str
              returned: always
            pci_bus_id:
              description: PCI bus id (C(00000000:81:00.0)).
              type: str
              returned: always
            pci_device_id:
              description: PCI device and vendor id as nvidia-smi prints it (C(223110DE)).
              type: str
              returned: always
            serial:
              description: Board serial number.
              type: str
              returned: always
            minor_number:
              description: Minor number of C(/dev/nvidiaN).
              type: int
              returned: always
            vbios_version:
              description: VBIOS version.
              type: str
              returned: always
            inforom_image_version:
              description: InfoROM image version.
              type: str
              returned: always
            gsp_firmware_version:
              description: GSP firmware version.
              type: str
              returned: always
            persistence_mode:
              description: C(Enabled) or C(Disabled).
              type: str
              returned: always
            compute_mode:
              description: Compute mode (C(Default), C(Exclusive_Process), ...).
              type: str
              returned: always
            performance_state:
              description: Performance state (C(P0) to C(P12)).
              type: str
              returned: always
            mig_mode:
              description: MIG mode, keys C(current) and C(pending) (C(Enabled), C(Disabled) or C(null)).
              type: dict
              returned: always
            mig_devices:
              description:
                - MIG devices with C(index), C(gpu_instance_id), C(compute_instance_id),
                  C(multiprocessor_count), C(memory_total_mib) and C(memory_used_mib).
              type: list
              elements: dict
              returned: always
            pcie_link_gen_current:
              description: Current PCIe generation.
              type: int
              returned: always
            pcie_link_gen_max:
              description: Maximum PCIe generation of the link.
              type: int
              returned: always
            pcie_link_gen_device_max:
              description: Maximum PCIe generation of the GPU (newer drivers).
              type: int
              returned: always
            pcie_link_gen_host_max:
              description: Maximum PCIe generation of the host side (newer drivers).
              type: int
              returned: always
            pcie_link_width_current:
              description: Current PCIe width (lanes).
              type: int
              returned: always
            pcie_link_width_max:
              description: Maximum PCIe width (lanes).
              type: int
              returned: always
            pcie_replay_counter:
              description: PCIe replay counter.
              type: int
              returned: always
            memory_total_mib:
              description: Frame buffer size in MiB.
              type: int
              returned: always
            memory_used_mib:
              description: Frame buffer used in MiB.
              type: int
              returned: always
            temperature_gpu:
              description: GPU temperature in degrees C.
              type: int
              returned: always
            temperature_memory:
              description: HBM temperature in degrees C.
              type: int
              returned: always
            temperature_slowdown:
              description: Slowdown threshold in degrees C.
              type: int
              returned: always
            temperature_shutdown:
              description: Shutdown threshold in degrees C.
              type: int
              returned: always
            power_draw:
              description: Power draw in W (instant draw on drivers that report several).
              type: float
              returned: always
            power_limit:
              description: Current (enforced) power limit in W.
              type: float
              returned: always
            power_limit_default:
              description: Default power limit in W.
              type: float
              returned: always
            power_limit_min:
              description: Minimum settable power limit in W.
              type: float
              returned: always
            power_limit_max:
              description: Maximum settable power limit in W.
              type: float
              returned: always
            ecc_mode:
              description: ECC mode, keys C(current) and C(pending).
              type: dict
              returned: always
            ecc_errors:
              description:
                - ECC error totals, C(volatile) and C(aggregate), each with C(corrected) and C(uncorrected)
                  (single/double bit totals on old drivers, SRAM plus DRAM on newer ones; C(null) when
                  ECC is not supported).
              type: dict
              returned: always
            retired_pages:
              description:
                - Page retirement (pre-Ampere) with C(single_bit), C(double_bit) counts and C(pending),
                  C(pending_blacklist) booleans; C(null) when the GPU uses row remapping instead.
              type: dict
              returned: always
            remapped_rows:
              description:
                - Row remapping (Ampere and later) with C(correctable), C(uncorrectable) counts and
                  C(pending), C(failure) booleans; C(null) when not supported.
              type: dict
              returned: always
            fabric_state:
              description: NVLink fabric state on NVSwitch systems (C(Completed), C(In Progress), ...).
              type: str
              returned: always
            fabric_status:
              description: NVLink fabric status on NVSwitch systems (C(Success), ...).
              type: str
              returned: always
            topology:
              description:
                - This GPU's row of the topology matrix, C(links) (peer name to C(NV12), C(PIX), C(SYS), ...)
                  plus C(cpu_affinity), C(numa_affinity) and C(gpu_numa_id) when printed; C(null) when the
                  topology was not read.
              type: dict
              returned: always
        topology:
          description:
            - Parsed C(nvidia-smi topo -m) with C(devices) (GPUs then NICs), C(matrix) (row to column to link
              type, self cells left out), C(affinity) (row to C(cpu_affinity), C(numa_affinity), C(gpu_numa_id))
              and C(nic_names) (C(NIC0) to C(mlx5_0) when printed). Empty when not read.
          returned: always
          type: dict
          sample:
            devices: [GPU0, GPU1, mlx5_0]
            matrix:
              GPU0: {GPU1: NV1, mlx5_0: PHB}
              GPU1: {GPU0: NV1, mlx5_0: PHB}
              mlx5_0: {GPU0: PHB, GPU1: PHB}
            affinity:
              GPU0: {cpu_affinity: "0-7"}
            nic_names: {}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_facts_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            executable=dict(type='str', default='nvidia-smi'),
            topology=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    ac.refuse(module, ac.nul_errors(p) or ac.executable_errors('executable', p['executable']))
    module.exit_json(**engine.gather(module, p['executable'], p['topology']))


if __name__ == '__main__':
    main()
