#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: hca_firmware
short_description: Burn the wanted firmware on NVIDIA/Mellanox HCAs from a local firmware bundle
version_added: 0.4.0
description:
  - Makes the firmware of every NVIDIA/Mellanox HCA (ConnectX, BlueField) of the host the wanted version - one
    O(version) for every card, or O(versions) per PSID (board id) - from the images in O(bundle_dir).
  - Finds the cards in sysfs (every RDMA device named or driven C(mlx*) with a PCI function, one per adapter by
    C(sys_image_guid), virtual functions skipped), or takes O(devices). Queries each card's flash with
    C(mstflint -d BDF q) (or MFT's C(flint)).
  - A card whose flash and running firmware are the wanted version is left alone. A card whose flash is the wanted
    version but that still runs another one (the query prints C(FW Version(Running)) - burned, waiting for a reset)
    is not burned again; it is reported in RV(reboot_required), or reset with O(reset=mlxfwreset).
  - Any other card gets the image of the bundle whose own query (C(mstflint -i FILE q)) shows the card's PSID and
    the wanted version - images are identified by what they are, never by their file names. A card without such an
    image, an image of O(images) whose PSID differs from the card's, a downgrade without O(allow_downgrade) and a
    card whose PSID has no entry in O(versions) are refused, naming the PSID, the wanted version and what the bundle
    holds. Every card is planned and checked before the first burn - nothing is burned when one card cannot be done.
  - Burns with C(mstflint -d BDF -i IMAGE -y b) (C(flint) takes the same command line), then queries the card
    again - the flash must show the wanted version. A failed burn fails the module naming the card, the command and
    its output, and returns the cards burned before it in RV(burned).
  - With O(reset=mlxfwreset), runs C(mstfwreset -d BDF -y reset) (C(mlxfwreset) with O(tool=flint)) on each card
    that waits for a reset and queries it again - the card must run the wanted version. Use it only where the card
    and the host support a live firmware reset; the default O(reset=none) leaves the reboot to the caller.
  - On a host without such a card nothing is done - C(changed=false) and RV(skipped_reason).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.cluster.hardware_roots
attributes:
  check_mode:
    support: full
    details: Queries the cards and the bundle's images (read-only) and reports what would be burned or reset.
  diff_mode:
    support: full
    details: The flash and running firmware version of each card, before and after.
  platform:
    platforms: posix
options:
  version:
    description:
      - The firmware version every card must run, V(MAJOR.MINOR.SUBMINOR) (for example V(28.42.1000)).
      - Mutually exclusive with O(versions); one of them is required.
    type: str
  versions:
    description:
      - "The firmware version per PSID (board id), for example C({MT_0000000838: 28.42.1000, MT_0000000359:
        22.41.1000}). A card whose PSID has no entry is refused."
      - The lock key C(hca_firmware) of the collection's version lock is either form (O(version) or O(versions)).
    type: dict
  bundle_dir:
    description:
      - Directory holding the firmware images (C(.bin) files of NVIDIA's firmware downloads). Every regular file in
        it (not in subdirectories, not hidden) is queried with C(<tool> -i FILE q) when a card needs a burn; files
        the tool cannot read as an image are listed in the refusal when no image fits.
    type: path
    required: true
  images:
    description:
      - Optional PSID to image file (relative to O(bundle_dir), or absolute). A card of that PSID gets exactly this
        image; its own query must show the card's PSID and the wanted version, else the module refuses.
    type: dict
  devices:
    description:
      - PCI addresses of the cards to manage (one function per card is enough). Default - every NVIDIA/Mellanox
        RDMA device in sysfs, one per adapter, virtual functions skipped.
    type: list
    elements: str
  tool:
    description:
      - The flash tool - C(mstflint) (open source, in the distributions) or C(flint) (NVIDIA MFT).
    type: str
    choices: [mstflint, flint]
    default: mstflint
  tool_path:
    description:
      - Path of the flash tool, or a name looked up on C(PATH). Default - the name of O(tool).
    type: str
  reset:
    description:
      - V(none) - report a card that waits for a reset in RV(reboot_required) and RV(reboot_reason); the caller
        reboots.
      - V(mlxfwreset) - reset each such card with C(mstfwreset)/C(mlxfwreset) C(-d BDF -y reset) and check that it
        runs the wanted version.
    type: str
    choices: [none, mlxfwreset]
    default: none
  mlxfwreset_path:
    description:
      - Path of the reset tool, or a name looked up on C(PATH). Default - C(mstfwreset) with O(tool=mstflint),
        C(mlxfwreset) with O(tool=flint).
    type: str
  allow_downgrade:
    description:
      - Allow burning a version lower than the card's flash version.
    type: bool
    default: false
  timeout:
    description:
      - Seconds one burn (or one reset) may take before it is killed and the module fails. Queries get 120 seconds.
    type: int
    default: 1800
notes:
  - Needs root. Commands run with C(LC_ALL=C) as argument lists, never through a shell.
  - Bad input is refused before anything runs, naming the option - a version that is not V(MAJOR.MINOR.SUBMINOR), a
    key of O(versions) or O(images) that is not a PSID, both or neither of O(version) and O(versions), a
    O(bundle_dir) that is not a directory, an image of O(images) that is not a file, a device that is not a PCI
    address, a O(timeout) outside 1 second to 30 days, a NUL byte anywhere.
  - The burn is failsafe on the cards this is meant for (the previous image stays until the new one is complete),
    but a power loss during a burn is not tested here.
seealso:
  - module: gpufleet.cluster.fw_facts
  - name: mstflint - burning a firmware image
    description: NVIDIA's documentation of the burn command line.
    link: https://docs.nvidia.com/networking/display/mftv4261lts/mstflint+%E2%80%93+firmware+burning+tool
"""

EXAMPLES = r"""
- name: Every HCA on the lock's firmware, reboot decided by the caller
  become: true
  gpufleet.cluster.hca_firmware:
    version: "28.42.1000"
    bundle_dir: /srv/firmware/hca
  register: hca

- name: Reboot when a burned image waits for it
  ansible.builtin.reboot:
    msg: "{{ hca.reboot_reason }}"
  when: hca.reboot_required

- name: Two kinds of cards, MFT's flint, a live firmware reset where supported
  become: true
  gpufleet.cluster.hca_firmware:
    versions:
      MT_0000000838: "28.42.1000"
      MT_0000000359: "22.41.1000"
    bundle_dir: /srv/firmware/hca
    tool: flint
    reset: mlxfwreset

- name: What would be burned (no change)
  become: true
  gpufleet.cluster.hca_firmware:
    version: "28.42.1000"
    bundle_dir: /srv/firmware/hca
  check_mode: true
  diff: true
"""

RETURN = r"""
changed:
  description: Whether a card was (in check mode - would be) burned or reset.
  returned: always
  type: bool
cards:
  description:
    - One entry per card - C(pci) (the PCI function queried), C(devices) (its RDMA device names), C(psid),
      C(wanted), C(before) and C(after) (each C(flash) and C(running) version; C(running) equals C(flash) when no
      image waits for a reset; C(after) is what is expected in check mode, null when a card could not be queried
      after a failed burn), C(action) (C(none), C(burn), C(reset) - reset with mlxfwreset - or C(pending-reset) -
      burned before, waiting for a reboot) and C(image) (the image burned, or null).
  returned: always
  type: list
  elements: dict
  sample:
    - pci: "0000:3b:00.0"
      devices: [mlx5_0, mlx5_1]
      psid: MT_0000000228
      wanted: 20.36.1012
      before: {flash: 20.35.1012, running: 20.35.1012}
      after: {flash: 20.36.1012, running: 20.35.1012}
      action: burn
      image: /srv/firmware/hca/fw-ConnectX6-rel-20_36_1012.bin
reboot_required:
  description: Whether a card's flash holds firmware it does not run yet (a reset or reboot loads it).
  returned: always
  type: bool
reboot_reason:
  description:
    - The cards that wait for a reset, with their flash and running versions; empty when none.
    - "In check mode the cards that would be burned are named after C(check mode: HCA firmware would be burned, then
      wait for a reset or reboot:) - nothing is burned in check mode."
  returned: always
  type: str
  sample: "HCA firmware burned, waiting for a reset or reboot: 0000:3b:00.0 (PSID MT_0000000228): flash 20.36.1012, running 20.35.1012"
bundle:
  description: The firmware images found in O(bundle_dir) - C(file), C(psid) and C(version) from each image's query.
  returned: when a card needed a burn (the bundle is read only then)
  type: list
  elements: dict
burned:
  description: PCI addresses of the cards burned before a burn or reset failed.
  returned: when a burn or reset failed
  type: list
  elements: str
skipped_reason:
  description: Why nothing was done on this host.
  returned: when the host has no NVIDIA/Mellanox HCA
  type: str
  sample: "no Mellanox/NVIDIA HCA: no RDMA device of a Mellanox/NVIDIA card with a PCI function in /sys/class/infiniband"
diff:
  description: Flash and running version per card (keyed by PCI address), before and after.
  returned: when changed or in diff mode
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import hca_firmware_engine as engine

ARGUMENT_SPEC = dict(
    version=dict(type="str"),
    versions=dict(type="dict"),
    bundle_dir=dict(type="path", required=True),
    images=dict(type="dict"),
    devices=dict(type="list", elements="str"),
    sysfs_root=dict(type="path", default="/"),
    tool=dict(type="str", choices=["mstflint", "flint"], default="mstflint"),
    tool_path=dict(type="str"),
    reset=dict(type="str", choices=["none", "mlxfwreset"], default="none"),
    mlxfwreset_path=dict(type="str"),
    allow_downgrade=dict(type="bool", default=False),
    timeout=dict(type="int", default=1800),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=[("version", "versions")],
                           required_one_of=[("version", "versions")], supports_check_mode=True)
    try:
        result = engine.run(module.params, module.check_mode, module._diff, lambda name: _runner.find(module, name))
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
