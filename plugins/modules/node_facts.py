#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: node_facts
short_description: PCI devices, RDMA ports, GPUs, firmware and bonds of a GPU node in one call
version_added: 0.5.0
description:
  - Reads in one module call (one round trip per host) what the single facts modules read one call each - PCI
    devices (as M(gpufleet.cluster.pci_facts)), InfiniBand/RoCE devices and ports from sysfs (as
    M(gpufleet.cluster.ib_port_facts)), GPUs from C(nvidia-smi) (as M(gpufleet.cluster.gpu_facts)), HCA firmware,
    OFED, kernel module and Fabric Manager versions (as M(gpufleet.cluster.fw_facts)) and Linux bonds (as
    M(gpufleet.cluster.bond_facts)).
  - Each subset is read by the same code as its own module and lands under the same key with the same content
    (C(pci), C(infiniband), C(nvidia_gpu), C(firmware), C(bonding)), so whatever reads those facts works unchanged.
    RV(ansible_facts.node_facts) records what this call read, from where and when, so a role later in the play can
    reuse the facts instead of reading the hardware again (filter C(gpufleet.cluster.node_facts_missing)).
  - O(subset) limits the call to what is needed - a role that only needs the PCI devices does not run
    C(nvidia-smi).
  - Read-only; never reports C(changed).
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpufleet.cluster.hardware_roots
  - gpufleet.cluster.firmware_tools
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
options:
  subset:
    description:
      - What to read. C(all) is every subset. C(pci) reads C(sys/bus/pci/devices); C(infiniband) reads
        C(sys/class/infiniband); C(gpu) runs C(nvidia-smi -q -x) (and C(topo -m) with O(gpu_topology)); C(firmware)
        reads the HCAs' sysfs, runs the flash query, C(ofed_info -s), C(nv-fabricmanager --version) and
        C(systemctl is-active) and reads the Fabric Manager log; C(bonding) reads C(proc/net/bonding).
      - An empty list is refused.
    type: list
    elements: str
    choices: [all, pci, infiniband, gpu, firmware, bonding]
    default: [all]
  proc_root:
    description:
      - Directory under which C(proc/net/bonding/) is read (subset C(bonding)). Must be an existing directory.
    type: path
    default: /
  vendors:
    description:
      - PCI vendor ids the C(pci) subset returns (C(0x10de) NVIDIA, C(0x15b3) Mellanox); an empty list returns every
        device. Anything but a 4-digit hexadecimal id (with or without C(0x)) is refused.
    type: list
    elements: str
    default: ['0x10de', '0x15b3']
  nvidia_smi_path:
    description:
      - Name or path of C(nvidia-smi) for the C(gpu) subset. Not found means no GPU (RV(ansible_facts.nvidia_gpu) with
        C(count) 0 and the RV(msg)), not a failure. A path that exists must be an executable file.
    type: str
    default: nvidia-smi
  gpu_topology:
    description:
      - Also run C(nvidia-smi topo -m) for the GPU/NIC topology (subset C(gpu), when there are GPUs).
    type: bool
    default: true
  query_flash:
    description:
      - Query each HCA flash with C(mstflint -d <pci> q) (or C(flint -d <pci> q)) in the C(firmware) subset. Needs root.
    type: bool
    default: true
  mlxup_path:
    description:
      - Name or path of C(mlxup). When set, C(mlxup --query) runs in the C(firmware) subset. Not run by default
        because it is slow.
    type: str
  kernel_modules:
    description:
      - Kernel modules whose C(/sys/module/<name>/version) the C(firmware) subset reports.
    type: list
    elements: str
    default: [mlx5_core, mlx4_core, ib_core, nvidia, nvidia_fs, nvidia_peermem]
  fail_on_error:
    description:
      - Fail the module when a tool of the C(firmware) subset that was found returns an error, instead of a warning.
    type: bool
    default: false
notes:
  - Bad input is refused before anything is read or run, with a message naming the option - an empty O(subset), a NUL
    byte in any text, a O(sysfs_root) or O(proc_root) that is not a directory, a PCI vendor id that is not 4 hex
    digits, a tool path that is a directory or not executable, a kernel module name with anything but letters,
    digits, C(_) and C(-), a O(fabricmanager_service) that is not a unit name, a O(fabricmanager_log) that exists but
    is not a regular file.
  - The module fails where the subset's own module fails - C(nvidia-smi) that runs but prints no parseable output or
    finds no GPU, a bonding file that is not text, a firmware tool error with O(fail_on_error).
  - Commands run with C(LC_ALL=C).
seealso:
  - module: gpufleet.cluster.pci_facts
  - module: gpufleet.cluster.ib_port_facts
  - module: gpufleet.cluster.gpu_facts
  - module: gpufleet.cluster.fw_facts
  - module: gpufleet.cluster.bond_facts
'''

EXAMPLES = r'''
- name: Read everything once
  become: true
  gpufleet.cluster.node_facts:

- name: Only the PCI devices (no nvidia-smi), unless this play read them already
  gpufleet.cluster.node_facts:
    subset: [pci]
  when: ansible_facts | gpufleet.cluster.node_facts_missing(['pci'], '/')

- name: What node_facts_check compares - no topology matrix, no flash query
  become: true
  gpufleet.cluster.node_facts:
    subset: [pci, infiniband, gpu, firmware]
    gpu_topology: false
    query_flash: false

- name: A recorded tree
  gpufleet.cluster.node_facts:
    subset: [pci, infiniband, bonding]
    sysfs_root: /srv/recordings/node17
    proc_root: /srv/recordings/node17
'''

RETURN = r'''
msg:
  description: "C(skipped: no GPU (nvidia-smi not found)) when the C(gpu) subset found no C(nvidia-smi)."
  returned: when the gpu subset found no nvidia-smi
  type: str
ansible_facts:
  description: Facts added to the host. Only the keys of the subsets read are set (others keep their value).
  returned: always
  type: dict
  contains:
    node_facts:
      description:
        - What this call read - C(subset) (the subsets, in reading order), C(sysfs_root), C(proc_root) (null unless
          C(bonding) was read), C(nvidia_smi) (the path used, null when not found or not read) and C(epoch) (the
          host's time of the call, seconds since 1970, as C(ansible_facts.date_time.epoch)).
        - The filter C(gpufleet.cluster.node_facts_missing) tells from it whether a role must read again - the
          subsets it needs not read, read from another root, or read before the play's fact gathering.
      returned: always
      type: dict
      sample: {subset: [pci, infiniband, gpu, firmware], sysfs_root: /, proc_root: null, nvidia_smi: /usr/bin/nvidia-smi,
               epoch: 1795689600}
    pci:
      description:
        - PCI devices and a summary, as M(gpufleet.cluster.pci_facts) returns them - C(devices) keyed by PCI address
          and C(summary) with C(nvidia_gpu_count), C(nvidia_gpus), C(nvswitch_count), C(nvswitches),
          C(mellanox_function_count), C(mellanox_functions).
      returned: when the pci subset was read
      type: dict
      sample: {devices: {}, summary: {nvidia_gpu_count: 0, nvidia_gpus: [], nvswitch_count: 0, nvswitches: [],
                                      mellanox_function_count: 0, mellanox_functions: []}}
    infiniband:
      description: RDMA devices keyed by name with their ports, as M(gpufleet.cluster.ib_port_facts) returns them.
      returned: when the infiniband subset was read
      type: dict
      sample: {rxe0: {node_type: CA, ports: {"1": {state: ACTIVE, rate_gbps: 2.5, link_layer: Ethernet, netdevs: [eth0]}}}}
    nvidia_gpu:
      description:
        - Driver and CUDA versions, GPUs and topology, as M(gpufleet.cluster.gpu_facts) returns them (C(count) 0 and
          C(executable) null without C(nvidia-smi)).
      returned: when the gpu subset was read
      type: dict
      sample: {executable: null, driver_version: null, cuda_version: null, attached_gpus: 0, count: 0, gpus: [],
               topology: {}}
    firmware:
      description:
        - HCA firmware (sysfs and flash), OFED, kernel module and Fabric Manager versions, tools and errors, as
          M(gpufleet.cluster.fw_facts) returns them.
      returned: when the firmware subset was read
      type: dict
      sample: {hca: {}, ofed: null, kernel_modules: {}, fabricmanager: {version: null, service_state: null, log: null},
               mlxup: null, tools: {}, errors: []}
    bonding:
      description: Bonds keyed by name with a degraded verdict, as M(gpufleet.cluster.bond_facts) returns them.
      returned: when the bonding subset was read
      type: dict
      sample: {bond0: {mode: 802.3ad, mii_status: up, degraded: false, degraded_reasons: []}}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import node_facts_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            subset=dict(type='list', elements='str', default=['all'], choices=['all'] + list(engine.SUBSETS)),
            sysfs_root=dict(type='path', default='/'),
            proc_root=dict(type='path', default='/'),
            vendors=dict(type='list', elements='str', default=['0x10de', '0x15b3']),
            nvidia_smi_path=dict(type='str', default='nvidia-smi'),
            gpu_topology=dict(type='bool', default=True),
            query_flash=dict(type='bool', default=True),
            mstflint_path=dict(type='str', default='mstflint'),
            flint_path=dict(type='str', default='flint'),
            mlxup_path=dict(type='str'),
            ofed_info_path=dict(type='str', default='ofed_info'),
            kernel_modules=dict(type='list', elements='str',
                                default=['mlx5_core', 'mlx4_core', 'ib_core', 'nvidia', 'nvidia_fs', 'nvidia_peermem']),
            fabricmanager_path=dict(type='str', default='nv-fabricmanager'),
            fabricmanager_service=dict(type='str', default='nvidia-fabricmanager'),
            fabricmanager_log=dict(type='path', default='/var/log/fabricmanager.log'),
            fail_on_error=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    ac.refuse(module, engine.input_errors(module.params))
    module.exit_json(**engine.gather(module, module.params))


if __name__ == '__main__':
    main()
