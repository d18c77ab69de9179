#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: pci_facts
short_description: PCI devices of a GPU node from sysfs (GPUs, NVSwitches, HCAs)
version_added: 0.1.0
description:
  - Reads C(/sys/bus/pci/devices) and returns the PCI devices of the chosen vendors (NVIDIA and
    Mellanox/NVIDIA networking by default) with class, driver, NUMA node, local CPUs and PCIe
    link generation and width, current and maximum.
  - Needs no vendor tool or driver, so it tells a GPU node from a CPU node before provisioning
    and shows a device trained below its maximum link (for example x8 instead of x16).
  - Missing or unreadable files are absent keys; a missing tree gives no devices.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
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
  sysfs_root:
    description:
      - Directory that holds C(sys/bus/pci/devices). Point it at a recorded tree to test.
      - Must be an existing directory; an empty string or a NUL byte is refused.
    type: path
    default: /
  vendors:
    description:
      - PCI vendor ids to return, as in the C(vendor) file (C(0x10de) NVIDIA, C(0x15b3) Mellanox).
      - An empty list returns every device. Anything but a 4-digit hexadecimal id (with or without C(0x)) is refused.
    type: list
    elements: str
    default: ['0x10de', '0x15b3']
"""

EXAMPLES = r"""
- name: Read GPU, NVSwitch and HCA PCI devices
  gpufleet.cluster.pci_facts:

- name: Skip GPU steps on CPU-only nodes
  ansible.builtin.debug:
    msg: "skipped: no GPU"
  when: ansible_facts.pci.summary.nvidia_gpu_count == 0

- name: Every device of a recorded tree
  gpufleet.cluster.pci_facts:
    sysfs_root: /srv/recordings/node17
    vendors: []
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: complex
  contains:
    pci:
      description: PCI devices and a summary.
      returned: always
      type: complex
      contains:
        devices:
          description:
            - Devices keyed by PCI address (C(0000:17:00.0)). Each has C(address), C(vendor_id),
              C(device_id), C(class_id), C(vendor) (C(nvidia), C(mellanox), C(other), or C(unknown) when
              the vendor file does not hold a hex id), C(class) (C(display_3d), C(bridge_other) for
              NVSwitch, C(network_infiniband), ..., C(unknown) when unreadable), and when the
              files exist C(driver), C(numa_node), C(local_cpulist), C(current_link_speed),
              C(current_link_gen), C(current_link_width), C(max_link_speed), C(max_link_gen),
              C(max_link_width).
          returned: always
          type: dict
          sample:
            "0000:18:00.0":
              address: "0000:18:00.0"
              vendor_id: "0x10de"
              device_id: "0x2330"
              class_id: "0x030200"
              vendor: nvidia
              class: display_3d
              driver: nvidia
              numa_node: 0
              current_link_gen: 5
              current_link_width: 16
              max_link_gen: 5
              max_link_width: 16
        summary:
          description: Addresses and counts of NVIDIA GPUs, NVSwitches and Mellanox functions.
          returned: always
          type: dict
          sample:
            nvidia_gpu_count: 8
            nvidia_gpus: ["0000:18:00.0"]
            nvswitch_count: 4
            nvswitches: ["0000:05:00.0"]
            mellanox_function_count: 10
            mellanox_functions: ["0000:1a:00.0"]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_pci import normalize_vendors, read_pci, vendor_errors


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type="path", default="/"),
            vendors=dict(type="list", elements="str", default=["0x10de", "0x15b3"]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    ac.refuse(module, ac.nul_errors(p) or ac.root_dir_errors("sysfs_root", p["sysfs_root"]) + vendor_errors(p["vendors"]))
    devices, summary = read_pci(p["sysfs_root"], normalize_vendors(p["vendors"]))
    module.exit_json(changed=False, ansible_facts={"pci": {"devices": devices, "summary": summary}})


if __name__ == "__main__":
    main()
