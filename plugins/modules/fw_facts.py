#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fw_facts
short_description: Gather HCA firmware, OFED and Fabric Manager versions
version_added: 0.1.0
description:
  - Reads the firmware version, PSID and PCI address of every RDMA device from C(/sys/class/infiniband).
  - When C(mstflint) or C(flint) is available, queries the flash of every Mellanox/NVIDIA HCA (once per
    adapter, virtual functions skipped) for FW version, PSID, PXE/UEFI versions and a C(FW Version(Running))
    line, which means a burned firmware waits for a reset.
  - Reads the MLNX_OFED or DOCA-OFED version from C(ofed_info -s), kernel module versions from
    C(/sys/module/<module>/version), the Fabric Manager version from C(nv-fabricmanager --version), its
    systemd state and a summary of its log.
  - Every tool is optional. A missing tool gives C(null) values; a tool that fails adds an entry with its
    command line to RV(ansible_facts.firmware.errors) and a warning, or fails the module with
    O(fail_on_error=true).
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
    details: Only runs read-only queries, so it runs in check mode too.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
options:
  query_flash:
    description:
      - Query each HCA flash with C(mstflint -d <pci> q) (or C(flint -d <pci> q)). Needs root.
    type: bool
    default: true
  mlxup_path:
    description:
      - Name or path of C(mlxup). When set, C(mlxup --query) runs and its devices are returned in
        RV(ansible_facts.firmware.mlxup). Not run by default because it is slow.
    type: str
  kernel_modules:
    description:
      - Kernel modules whose C(/sys/module/<name>/version) is reported.
    type: list
    elements: str
    default: [mlx5_core, mlx4_core, ib_core, nvidia, nvidia_fs, nvidia_peermem]
  fail_on_error:
    description:
      - Fail the module when a tool that was found returns an error, instead of a warning.
    type: bool
    default: false
notes:
  - Commands run with C(LC_ALL=C). Output bytes that are not UTF-8 are replaced by U+FFFD. A tool that cannot be
    started is reported like one that failed (a warning, or a failure with O(fail_on_error)).
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a
    O(sysfs_root) that is not a directory, a tool path that is a directory or not executable, a kernel module
    name with anything but letters, digits, C(_) and C(-) (no C(../)), a O(fabricmanager_service) that is not a
    unit name, or a O(fabricmanager_log) that exists but is not a regular file.
  - The rdma-core package version is not reported (use M(ansible.builtin.package_facts)).
seealso:
  - module: gpufleet.cluster.ib_port_facts
  - module: gpufleet.cluster.gpu_facts
'''

EXAMPLES = r'''
- name: Gather firmware and stack versions
  become: true
  gpufleet.cluster.fw_facts:

- name: All HCAs on the same firmware, none waiting for a reset
  ansible.builtin.assert:
    that:
      - ansible_facts.firmware.hca | dict2items | map(attribute='value.fw_ver') | unique | length == 1
      - ansible_facts.firmware.hca | dict2items | selectattr('value.flash.pending_reset', 'defined')
        | selectattr('value.flash.pending_reset') | length == 0

- name: Only sysfs and OFED, no flash query
  gpufleet.cluster.fw_facts:
    query_flash: false
    fabricmanager_service: ''
    fabricmanager_log: ''
'''

RETURN = r'''
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    firmware:
      description: Firmware and software stack versions.
      returned: always
      type: dict
      contains:
        hca:
          description: RDMA devices keyed by name.
          returned: always
          type: dict
          contains:
            fw_ver:
              description: Running firmware version from sysfs.
              type: str
              returned: when present
            board_id:
              description: Board id (PSID on NVIDIA/Mellanox HCAs) from sysfs.
              type: str
              returned: when present
            hca_type:
              description: HCA type from sysfs.
              type: str
              returned: when present
            pci_address:
              description: PCI address.
              type: str
              returned: when the device is a PCI function
            sys_image_guid:
              description: System image GUID (shared by the functions of one adapter).
              type: str
              returned: when present
            flash:
              description:
                - Parsed flash query with C(fw_version), C(fw_version_running) (only when it differs, pending
                  reset), C(pending_reset), C(psid), C(product_version), C(fw_release_date), C(base_guid),
                  C(base_mac), C(rom_info), C(pxe_version), C(uefi_version), C(image_type), C(guids) and
                  C(macs) (lists; ConnectX-3 FS2 images have no base GUID/MAC), and C(errors) (the tool's
                  C(-E-) lines) when it printed any.
              type: dict
              returned: when the flash was queried successfully
            flash_tool:
              description: Command used for the flash query.
              type: str
              returned: when the flash was queried
        ofed:
          description:
            - Parsed C(ofed_info -s) with C(raw), C(distribution), C(version) and C(flavor) (C(MLNX_OFED),
              C(DOCA) for the C(OFED-internal) name, C(MLNX_EN)); C(null) when C(ofed_info) is absent or
              prints no OFED version line.
          returned: always
          type: dict
          sample: {raw: MLNX_OFED_LINUX-5.8-1.0.1.1, distribution: MLNX_OFED_LINUX, version: 5.8-1.0.1.1, flavor: MLNX_OFED}
        kernel_modules:
          description: Version of each loaded kernel module from O(kernel_modules) that reports one.
          returned: always
          type: dict
          sample: {mlx5_core: "24.10-1.1.4", nvidia: "550.90.07"}
        fabricmanager:
          description:
            - C(version) (from C(nv-fabricmanager --version)), C(service_state) (C(systemctl is-active)),
              C(log) (summary with C(version), C(starts), C(levels), C(nvswitch_errors), C(last_error),
              C(configured) (the last start logged that all GPUs and NVSwitches were configured; null when
              the log shows no start) and C(driver_mismatch)).
          returned: always
          type: dict
        mlxup:
          description: Devices parsed from C(mlxup --query); C(null) unless O(mlxup_path) is set.
          returned: always
          type: list
          elements: dict
        tools:
          description: Path of each tool that was found, C(null) otherwise.
          returned: always
          type: dict
        errors:
          description: Failed commands, each C(<command line> failed (rc=N) - <output>).
          returned: always
          type: list
          elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import fw_facts_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type='path', default='/'),
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
    facts = engine.gather(module, module.params)
    if facts['errors'] and module.params['fail_on_error']:
        module.fail_json(msg='; '.join(facts['errors']), ansible_facts=dict(firmware=facts))
    module.exit_json(changed=False, ansible_facts=dict(firmware=facts))


if __name__ == '__main__':
    main()
