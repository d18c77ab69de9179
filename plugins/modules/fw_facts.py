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
  mstflint_path:
    description:
      - Name or path of C(mstflint). Preferred over O(flint_path) when both are found.
    type: str
    default: mstflint
  flint_path:
    description:
      - Name or path of C(flint) (NVIDIA MFT).
    type: str
    default: flint
  mlxup_path:
    description:
      - Name or path of C(mlxup). When set, C(mlxup --query) runs and its devices are returned in
        RV(ansible_facts.firmware.mlxup). Not run by default because it is slow.
    type: str
  ofed_info_path:
    description:
      - Name or path of C(ofed_info) (MLNX_OFED and DOCA-OFED).
    type: str
    default: ofed_info
  kernel_modules:
    description:
      - Kernel modules whose C(/sys/module/<name>/version) is reported.
    type: list
    elements: str
    default: [mlx5_core, mlx4_core, ib_core, nvidia, nvidia_fs, nvidia_peermem]
  fabricmanager_path:
    description:
      - Name or path of C(nv-fabricmanager).
    type: str
    default: nv-fabricmanager
  fabricmanager_service:
    description:
      - systemd unit whose C(systemctl is-active) state is reported. Empty string to skip.
    type: str
    default: nvidia-fabricmanager
  fabricmanager_log:
    description:
      - Fabric Manager log file to summarise (last MiB only). Empty string to skip.
    type: path
    default: /var/log/fabricmanager.log
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

import os
import re
import shlex

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac

from ansible_collections.gpufleet.cluster.plugins.module_utils.fabricmanager import parse_log, parse_version
from ansible_collections.gpufleet.cluster.plugins.module_utils.mlx_fw import parse_flint_query, parse_mlxup_query
from ansible_collections.gpufleet.cluster.plugins.module_utils.ofed_info import parse_ofed_info_short
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_ib import collect, read_text

LOG_TAIL_BYTES = 1024 * 1024
HCA_KEYS = ('fw_ver', 'board_id', 'hca_type', 'pci_address', 'sys_image_guid', 'node_guid', 'driver')


class Runner(object):
    def __init__(self, module):
        self.module = module
        self.errors = []
        self.tools = {}

    def find(self, name, path):
        if not path:
            self.tools[name] = None
            return None
        if os.sep in path:
            found = path if os.path.isfile(path) and os.access(path, os.X_OK) else None
        else:
            found = self.module.get_bin_path(path, required=False)
        self.tools[name] = found
        return found

    def run(self, argv, ok_rcs=(0,)):
        # bytes that are not UTF-8 (a garbled tool) become U+FFFD instead of lone surrogates in the facts
        try:
            rc, out, err = self.module.run_command(argv, environ_update={'LC_ALL': 'C'}, errors='replace',
                                                   handle_exceptions=False)
        except OSError as exc:  # found and executable, but the OS cannot start it
            rc, out, err = 127, '', 'cannot be started: %s' % (exc.strerror or exc)
        if rc not in ok_rcs:
            detail = (err.strip() or out.strip() or 'no output').splitlines()[-1]
            msg = '%s failed (rc=%d) - %s' % (' '.join(shlex.quote(a) for a in argv), rc, detail)
            self.errors.append(msg)
            self.module.warn(msg)
            return None
        return out


def hca_facts(runner, devices, flash_tool):
    hca = {}
    flashed = {}
    for name in sorted(devices):
        dev = devices[name]
        entry = dict((k, dev[k]) for k in HCA_KEYS if k in dev)
        hca[name] = entry
        pci = dev.get('pci_address')
        if not flash_tool or not pci or dev.get('virtual_function'):
            continue
        if not (name.startswith('mlx') or (dev.get('driver') or '').startswith('mlx')):
            continue
        card = dev.get('sys_image_guid') or pci
        if card not in flashed:
            out = runner.run([flash_tool, '-d', pci, 'q'])
            flashed[card] = parse_flint_query(out) if out is not None else None
        entry['flash_tool'] = '%s -d %s q' % (flash_tool, pci)
        if flashed[card] is not None:
            entry['flash'] = flashed[card]
    return hca


def fabricmanager_facts(runner, params):
    facts = {'version': None, 'service_state': None, 'log': None}
    exe = runner.find('nv-fabricmanager', params['fabricmanager_path'])
    if exe:
        out = runner.run([exe, '--version'])
        if out is not None:
            facts['version'] = parse_version(out)
    if params['fabricmanager_service']:
        systemctl = runner.find('systemctl', 'systemctl')
        if systemctl:
            # is-active: rc 0 active, 3 inactive/failed/unknown unit; stdout says which
            rc, out, dummy = runner.module.run_command([systemctl, 'is-active', params['fabricmanager_service']],
                                                       environ_update={'LC_ALL': 'C'}, errors='replace')
            state = out.strip().splitlines()
            facts['service_state'] = state[0] if state else None
    log = params['fabricmanager_log']
    if log and os.path.isfile(log):
        try:
            with open(log, 'rb') as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - LOG_TAIL_BYTES))
                data = f.read().decode('utf-8', 'replace')
            facts['log'] = parse_log(data)
        except (IOError, OSError) as exc:
            runner.module.warn('cannot read %s: %s' % (log, exc))
    return facts


def refuse_bad_input(module, p):
    """Fail naming the option before anything runs."""
    errors = ac.nul_errors(p)
    if not errors:
        errors += ac.root_dir_errors('sysfs_root', p['sysfs_root'])
        for opt in ('mstflint_path', 'flint_path', 'mlxup_path', 'ofed_info_path', 'fabricmanager_path'):
            if p[opt]:
                errors += ac.executable_errors(opt, p[opt])
        for i, name in enumerate(p['kernel_modules']):
            if not re.match(r'^[A-Za-z0-9_-]+$', name or ''):
                errors.append('kernel_modules[%d] must be a kernel module name (letters, digits, "_" and "-"), got %r'
                              % (i, name))
        service = p['fabricmanager_service']
        if service and (service.startswith('-') or not re.match(r'^[A-Za-z0-9@._:\\-]+$', service)):
            errors.append('fabricmanager_service must be a systemd unit name (or an empty string to skip), got %r'
                          % p['fabricmanager_service'])
        log = p['fabricmanager_log']
        if log and os.path.lexists(log) and not os.path.isfile(log):
            errors.append('fabricmanager_log %s is %s; fabricmanager_log must be a log file (or an empty string to skip)'
                          % (log, 'a directory' if os.path.isdir(log) else 'not a regular file'))
    ac.refuse(module, errors)


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
    p = module.params
    refuse_bad_input(module, p)
    runner = Runner(module)
    root = p['sysfs_root']

    flash_tool = None
    if p['query_flash']:
        flash_tool = runner.find('mstflint', p['mstflint_path']) or runner.find('flint', p['flint_path'])
    facts = {'hca': hca_facts(runner, collect(root), flash_tool)}

    facts['ofed'] = None
    ofed = runner.find('ofed_info', p['ofed_info_path'])
    if ofed:
        out = runner.run([ofed, '-s'])
        if out is not None:
            facts['ofed'] = parse_ofed_info_short(out)

    modules = {}
    for name in p['kernel_modules']:
        version = read_text(os.path.join(root, 'sys', 'module', name, 'version'))
        if version:
            modules[name] = version
    facts['kernel_modules'] = modules

    facts['fabricmanager'] = fabricmanager_facts(runner, p)

    facts['mlxup'] = None
    if p['mlxup_path']:
        mlxup = runner.find('mlxup', p['mlxup_path'])
        if mlxup:
            out = runner.run([mlxup, '--query'])
            if out is not None:
                facts['mlxup'] = parse_mlxup_query(out)

    facts['tools'] = runner.tools
    facts['errors'] = runner.errors
    if runner.errors and p['fail_on_error']:
        module.fail_json(msg='; '.join(runner.errors), ansible_facts=dict(firmware=facts))
    module.exit_json(changed=False, ansible_facts=dict(firmware=facts))


if __name__ == '__main__':
    main()
