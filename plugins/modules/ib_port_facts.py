#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ib_port_facts
short_description: Gather InfiniBand/RoCE device and port facts from sysfs
version_added: 0.1.0
description:
  - Reads C(/sys/class/infiniband) and returns one entry per RDMA device (C(mlx5_0), C(rxe0), ...)
    with firmware, board, GUID, NUMA node, PCI address and, per port, state, physical state, rate,
    link layer, LIDs, bound network devices and every integer counter.
  - Does not need C(infiniband-diags) (C(ibstat)); works on any host with the RDMA core loaded.
  - Missing or unreadable sysfs files leave the corresponding key out; the module never fails on
    odd sysfs content. A host without RDMA devices returns an empty dictionary.
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpufleet.cluster.hardware_roots
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
notes:
  - Counter values are reported as the kernel shows them; C(port_rcv_data) and C(port_xmit_data)
    count 4-octet words, and 32-bit counters saturate at 4294967295 on old HCAs.
  - Keys are device names and port numbers as strings, so use C(ansible_facts.infiniband['mlx5_0'].ports['1']).
  - O(sysfs_root) must be an existing directory; an empty string or a NUL byte is refused.
seealso:
  - module: gpufleet.cluster.gpu_facts
  - module: gpufleet.cluster.fw_facts
'''

EXAMPLES = r'''
- name: Gather RDMA port facts
  gpufleet.cluster.ib_port_facts:

- name: Port 1 of mlx5_0 must be ACTIVE, LinkUp and at 400 Gb/s
  ansible.builtin.assert:
    that:
      - ansible_facts.infiniband['mlx5_0'].ports['1'].state == 'ACTIVE'
      - ansible_facts.infiniband['mlx5_0'].ports['1'].phys_state == 'LinkUp'
      - ansible_facts.infiniband['mlx5_0'].ports['1'].rate_gbps == 400

- name: Read a recorded sysfs tree
  gpufleet.cluster.ib_port_facts:
    sysfs_root: /var/tmp/sysfs-copy
'''

RETURN = r'''
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    infiniband:
      description: RDMA devices keyed by device name. Empty when the host has none.
      returned: always
      type: dict
      sample:
        mlx5_0:
          fw_ver: "14.28.2006"
          board_id: "SM_2001000001034"
          hca_type: "MT4118"
          node_guid: "0a7f:bc12:45ef:d23b"
          numa_node: 0
          pci_address: "0000:3b:00.0"
          driver: mlx5_core
          ports:
            "1":
              state: ACTIVE
              state_num: 4
              phys_state: LinkUp
              phys_state_num: 5
              rate: "25 Gb/sec (1X EDR)"
              rate_gbps: 25
              width: 1X
              speed: EDR
              link_layer: InfiniBand
              lid: 1
              sm_lid: 1
              netdevs: [ib0]
              counters:
                symbol_error: 0
                link_downed: 0
              hw_counters:
                out_of_sequence: 1
      contains:
        fw_ver:
          description: Firmware version (C(fw_ver)).
          returned: when present
          type: str
        board_id:
          description: Board identifier, for Mellanox/NVIDIA HCAs the PSID (C(board_id)).
          returned: when present
          type: str
        node_guid:
          description: Node GUID as shown by sysfs (C(xxxx:xxxx:xxxx:xxxx)).
          returned: when present
          type: str
        sys_image_guid:
          description: System image GUID.
          returned: when present
          type: str
        hca_type:
          description: HCA type (for example C(MT4123)).
          returned: when present
          type: str
        hw_rev:
          description: Hardware revision.
          returned: when present
          type: str
        node_desc:
          description: Node description (usually C(<hostname> <device>)).
          returned: when present and not empty
          type: str
        node_type:
          description: Node type text without its number (for example C(CA)).
          returned: when present
          type: str
        numa_node:
          description: NUMA node of the PCI device (C(device/numa_node)); C(-1) means no affinity.
          returned: when present
          type: int
        pci_address:
          description: PCI address, the basename of the resolved C(device) link.
          returned: when the device is a PCI function
          type: str
        virtual_function:
          description: Whether the PCI function is an SR-IOV virtual function (has a C(physfn) link).
          returned: when the device is a PCI function
          type: bool
        driver:
          description: Kernel driver bound to the PCI function (for example C(mlx5_core)).
          returned: when present
          type: str
        ports:
          description: Ports keyed by port number as a string.
          returned: always
          type: dict
          contains:
            state:
              description: Logical port state (C(ACTIVE), C(DOWN), C(INIT), C(ARMED)).
              returned: when present
              type: str
            state_num:
              description: Numeric logical state (C(4) is ACTIVE).
              returned: when present
              type: int
            phys_state:
              description: Physical port state (C(LinkUp), C(Polling), C(Disabled), ...).
              returned: when present
              type: str
            phys_state_num:
              description: Numeric physical state (C(5) is LinkUp).
              returned: when present
              type: int
            rate:
              description: Raw rate text, for example C(100 Gb/sec (4X EDR)).
              returned: when present
              type: str
            rate_gbps:
              description: Rate in Gb/s as a number.
              returned: when the rate text is parseable
              type: float
            width:
              description: Link width, for example C(4X).
              returned: when shown in the rate text
              type: str
            speed:
              description: Lane speed name, for example C(EDR), C(HDR), C(NDR).
              returned: when shown in the rate text
              type: str
            link_layer:
              description: C(InfiniBand) or C(Ethernet).
              returned: when present
              type: str
            lid:
              description: Base LID (decoded from hex).
              returned: when present
              type: int
            sm_lid:
              description: Subnet manager LID (decoded from hex).
              returned: when present
              type: int
            lmc:
              description: LID mask control.
              returned: when present
              type: int
            sm_sl:
              description: Service level used to reach the subnet manager.
              returned: when present
              type: int
            cap_mask:
              description: Capability mask as shown by sysfs.
              returned: when present
              type: str
            gid0:
              description: GID index 0.
              returned: when present
              type: str
            netdevs:
              description:
                - Linux network devices bound to this port, from C(device/net/*/dev_port) and C(dev_id)
                  (as C(ibdev2netdev) does) plus C(ports/N/gid_attrs/ndevs/*).
              returned: always
              type: list
              elements: str
            counters:
              description: Every integer file of C(ports/N/counters) (C(symbol_error), C(link_downed), ...).
              returned: when the directory exists
              type: dict
            hw_counters:
              description: Every integer file of C(ports/N/hw_counters) (driver specific).
              returned: when the directory exists
              type: dict
            counters_ext:
              description: Every integer file of C(ports/N/counters_ext) (older drivers).
              returned: when the directory exists
              type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_ib import collect


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type='path', default='/'),
        ),
        supports_check_mode=True,
    )
    ac.refuse(module, ac.nul_errors(module.params) or ac.root_dir_errors('sysfs_root', module.params['sysfs_root']))
    devices = collect(module.params['sysfs_root'])
    module.exit_json(changed=False, ansible_facts=dict(infiniband=devices))


if __name__ == '__main__':
    main()
