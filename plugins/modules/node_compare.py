#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: node_compare
short_description: Compare a node's hardware facts with its expected hardware profile
version_added: 0.1.0
description:
  - Compares the facts of M(gpufleet.cluster.pci_facts), M(gpufleet.cluster.ib_port_facts),
    M(gpufleet.cluster.gpu_facts) and M(gpufleet.cluster.fw_facts) with the expected hardware of the
    host's profile (GPU count and model, PCIe generation and width, temperature and ECC limits, row
    remapping, driver branch, VBIOS, HCA count, port state, rate, link layer and MTU, HCA firmware,
    OFED and Fabric Manager versions) and fails with a list of B(every) deviation, each naming the
    device, the expected and the found value.
  - A figure the facts do not hold is a deviation, never a pass (for example C(nvidia-smi not found;
    expected 8 GPUs)). Only the checks whose expectation is set (not C(null)) run.
  - Runs on the controller (action plugin); it does not contact the host and changes nothing.
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Compares data only; check mode gives the same result.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  facts:
    description:
      - The host's facts, with any of the keys C(pci), C(infiniband), C(nvidia_gpu), C(firmware) (as the
        facts modules return them), C(ibv_devinfo) (raw C(ibv_devinfo) output, the only source of the
        active IB MTU; C(null) when the tool is missing), C(kernel) (the running kernel release,
        C(ansible_facts.kernel)) and C(packages) (the installed packages as M(ansible.builtin.package_facts)
        returns them).
      - Defaults to those keys of the host's C(ansible_facts).
    type: dict
  expected:
    description:
      - The expected hardware. Keys left out or C(null) are not checked.
      - C(gpus) (int) GPU count; C(gpu_model) (str) product name of every GPU; C(gpu_pcie) (dict with
        C(gen) and C(width)) - the generation is the GPU's maximum link generation (the current one drops
        to Gen1 at idle), the width the current width; C(gpu_temp_max_c) (number) highest GPU temperature;
        C(ecc_uncorrected_max) (int) highest volatile uncorrected ECC count (not reported, for example ECC
        disabled, is a deviation); C(gpu_memory_health) (bool) no row-remapping failure, no pending
        remapping or page retirement; C(driver_branch) (str, C(550)); C(driver_version) (str);
        C(vbios) (str, or dict GPU model to version); C(fabricmanager_version) (str, also checked to
        equal the driver version).
      - C(hcas) (int) number of RDMA devices that are not SR-IOV virtual functions and match C(hca_match);
        C(hca_match) (str) regular expression selecting the HCAs checked (all when unset); C(hca_ports)
        (dict of C(state), C(phys_state), C(rate_gbps), C(link_layer), C(width), C(speed)) every port of
        every HCA; C(ib_mtu) (int) active MTU of every port (from C(facts.ibv_devinfo));
        C(hca_firmware) (str, or dict board_id/PSID to version) running firmware of every HCA, and no
        burned image waiting for a reset; C(ofed_version) (str) C(ofed_info -s) version.
      - C(kernel) (str) running kernel release as C(uname -r) prints it; C(packages) (dict package name to
        version) installed package versions - a version without a packaging revision (C(1.17.3)) matches any
        revision of it, one with a revision (C(1.17.3-1)) must match exactly; a package not installed deviates.
        The version lock of a profile (C(gpufleet_lock)) turns into these keys through the
        P(gpufleet.cluster.version_lock_expectations#filter) filter.
    type: dict
    required: true
  fail_on_deviation:
    description:
      - Fail when there is a deviation. With C(false) the result still lists them in RV(deviations).
    type: bool
    default: true
  label:
    description:
      - Name of the node in RV(msg). Defaults to C(inventory_hostname).
    type: str
notes:
  - The comparison logic is in C(plugins/plugin_utils/_hwcheck.py) (pure functions, unit tested).
  - Facts that do not have the shape the facts modules return (for example C(nvidia_gpu.gpus) that is not a list of
    dicts) fail the task with a message naming the key, before anything is compared.
seealso:
  - module: gpufleet.cluster.fleet_compare
  - module: gpufleet.cluster.gpu_facts
  - module: gpufleet.cluster.ib_port_facts
  - module: gpufleet.cluster.fw_facts
'''

EXAMPLES = r'''
- name: Gather what the node is
  gpufleet.cluster.gpu_facts:

- name: Gather the RDMA ports
  gpufleet.cluster.ib_port_facts:

- name: Compare with an HGX H100 NDR profile
  gpufleet.cluster.node_compare:
    expected:
      gpus: 8
      gpu_model: NVIDIA H100 80GB HBM3
      gpu_pcie: {gen: 5, width: 16}
      ecc_uncorrected_max: 0
      gpu_memory_health: true
      driver_branch: "550"
      hcas: 8
      hca_match: '^mlx5_[0-7]$'
      hca_ports: {state: ACTIVE, phys_state: LinkUp, rate_gbps: 400, link_layer: InfiniBand}
      hca_firmware: 28.42.1000

- name: Collect the deviations without failing
  gpufleet.cluster.node_compare:
    facts:
      nvidia_gpu: "{{ ansible_facts.nvidia_gpu }}"
    expected:
      gpus: 8
    fail_on_deviation: false
  register: node_check
'''

RETURN = r'''
deviations:
  description: Every deviation found, in check order (GPUs, HCAs, software stack).
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: What deviates (C(node), C(GPU 5), C(mlx5_3), C(mlx5_3 port 1)).
      type: str
      returned: always
    item:
      description: The check (C(gpu_count), C(pcie_width), C(rate_gbps), C(fw_ver), C(remapped_rows), ...).
      type: str
      returned: always
    expected:
      description: Expected value (C(<= N) for limits).
      type: raw
      returned: always
    actual:
      description: Found value, C(null) when not reported.
      type: raw
      returned: always
    message:
      description: One line naming device, expected and found value.
      type: str
      returned: always
      sample: "mlx5_3 port 1: rate_gbps expected 400, found 200"
checked:
  description: The expectation keys that were checked.
  returned: always
  type: list
  elements: str
  sample: [gpus, hca_ports, hcas]
summary:
  description: What the node is, C(gpu_count), C(gpu_models), C(driver_version), C(nvidia_smi) (found), C(hcas) (names).
  returned: always
  type: dict
versions:
  description:
    - The versions a fleet must agree on, for M(gpufleet.cluster.fleet_compare) (C(driver), C(ofed),
      C(fabricmanager), C(vbios) list, C(hca_firmware) board id to list of versions).
  returned: always
  type: dict
  sample: {driver: 550.127.08, ofed: 24.10-1.1.4, fabricmanager: 550.127.08, vbios: [96.00.99.00.01],
           hca_firmware: {MT_0000000838: [28.42.1000]}}
msg:
  description: Every deviation joined with C(; ), or what matched.
  returned: always
  type: str
  sample: "node17: 2 deviation(s) from the expected hardware: GPU 2: ECC volatile uncorrected expected <= 0, found 3; GPU 6: remapped rows failure"
'''
