#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kernel_boot
short_description: Boot an installed kernel release next, after its driver and OFED modules are verified for it
version_added: 0.4.0
description:
  - Makes the kernel O(release) (as C(uname -r) prints it) the one the host boots, in a way a kernel that does not
    boot cannot keep - it boots next, once, and becomes the permanent default only once it runs.
  - Reads the running release (C(<proc_root>/proc/sys/kernel/osrelease)), the installed ones (C(<boot_dir>/vmlinuz-*)
    with a module tree C(<modules_dir>/<release>)) and the boot loader's default and one-time entry - GRUB on
    Debian/Ubuntu (C(saved_entry) and C(next_entry) of C(<boot_dir>/grub/grubenv), resolved through the menu of
    C(<boot_dir>/grub/grub.cfg)), or grubby on EL (C(grubby --default-kernel), C(grubby --info=ALL),
    C(<boot_dir>/grub2/grubenv)).
  - Verifies the release before any boot entry changes. Every module of O(required_modules), and of O(carry_modules)
    those the running release has, needs a file under
    C(<modules_dir>/<release>) (or a line in its C(modules.builtin)) built for that release (C(modinfo -F vermagic
    FILE) when modinfo is there; EL's C(weak-updates/) links are kABI builds of another release and are taken as
    they are). With DKMS installed (O(dkms=auto)) every DKMS module (the newest version of each in C(dkms status))
    must be C(installed) for the release too - the NVIDIA driver's and DOCA-OFED's kernel modules are DKMS modules.
    What is missing is built first with C(dkms autoinstall -k RELEASE); a module that is still missing or built for
    another release is refused, naming the module, C(dkms status -k RELEASE) and the end of the autoinstall output
    (which names the build's C(make.log)). No boot entry changes then.
  - Then, with O(make_default=after_verify) (the default), a release that does not run yet boots next, once
    (C(grub-reboot --boot-directory BOOT_DIR ENTRY), C(grub2-reboot) on EL) and RV(reboot_required) says why; the
    permanent default (C(grub-set-default --boot-directory BOOT_DIR ENTRY), C(grubby --set-default
    /boot/vmlinuz-RELEASE) on EL) is set when the release runs - the run after the reboot. Should the new kernel not
    come up, the next power cycle boots the old default. With O(make_default=now) the permanent default is set at
    once.
  - The GRUB entry is the release's own one (Debian's "Advanced options" submenu, by menu ids), never a recovery
    entry nor the top entry whose kernel moves to the newest one installed.
  - C(grub-set-default) and C(grub-reboot) only work with C(GRUB_DEFAULT=saved) in C(/etc/default/grub) (and a
    grub.cfg generated since). When the default has to change and it is not C(saved), the module refuses naming the
    file, the line and what to change; it never rewrites C(/etc/default/grub).
  - The running release is the default release - nothing to do (C(changed=false)). A one-time entry of another
    kernel left in grubenv is cleared (C(grub-editenv GRUBENV unset next_entry)).
  - With O(scope=dkms) the module is the trial build before the kernel's image is installed, when only its headers
    are (C(<modules_dir>/<release>/build)) - every DKMS module is built for the release (C(dkms autoinstall -k
    RELEASE)), no boot loader is read and no image is needed. When one does not build, what this call installed for the
    release is removed again (C(dkms remove -m MODULE -v VERSION -k RELEASE), for modules installed for another
    kernel too) and the release is refused, naming the module, C(dkms status -k RELEASE) and the end of the
    autoinstall output. The role C(gpufleet.cluster.kernel) runs it between the headers and the image and removes
    the headers again on a refusal, so a kernel the driver cannot build for changes nothing.
  - O(sources) extends the trial to module versions not installed yet - the new driver of a rollout that moves the
    driver and the kernel together. Each DKMS source tree is built for the release first, in a scratch DKMS tree of its
    own (C(dkms add -m M -v V --sourcetree S --dkmstree T), C(dkms build ... -k RELEASE --kernelsourcedir
    <modules_dir>/<release>/build), the options of Debian's dkms 3.0), removed afterwards - the host's DKMS never
    changes; one that does not build refuses the release, naming module, version, source tree and the end of its
    C(make.log). The installed version of a module that O(sources) replaces then need not build for the release.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads and verifies (module files, C(dkms status), C(modinfo)); the DKMS builds (also of O(sources)) and the
      boot entry changes are only planned and listed in RV(actions).
  diff_mode:
    support: full
    details: The running, default and next release, before and after.
  platform:
    platforms: posix
options:
  release:
    description:
      - The kernel release to boot, as C(uname -r) prints it (V(6.1.0-28-amd64), V(5.15.0-125-generic),
        V(5.14.0-427.13.1.el9_4.x86_64)) - the version lock's C(kernel). It must be installed.
    type: str
    required: true
  required_modules:
    description:
      - Kernel modules that must exist for O(release) before it may boot, for example V([nvidia, nvidia_uvm]) and the
        OFED ones V([mlx5_core, mlx5_ib, ib_core]). C(-) and C(_) are alike, as for modprobe.
    type: list
    elements: str
    default: []
  carry_modules:
    description:
      - Kernel modules that must exist for O(release) when the running release has them (a file under
        C(<modules_dir>/<running release>), or a line in its C(modules.builtin)) - the GPU driver's and the OFED stack's,
        for example V([nvidia, nvidia_uvm, nvidia_modeset, mlx5_core, mlx5_ib, ib_core]). They join
        O(required_modules); RV(carried_modules) lists those the running release has.
    type: list
    elements: str
    default: []
  dkms:
    description:
      - V(auto) - when C(dkms) is installed, every DKMS module must be installed for O(release); missing ones are
        built with C(dkms autoinstall -k RELEASE) first. V(never) - DKMS is not asked or run.
    type: str
    choices: [auto, never]
    default: auto
  bootloader:
    description:
      - V(grub) - GRUB 2 with C(grub-reboot)/C(grub-set-default) (Debian, Ubuntu). V(grubby) - EL's grubby (BLS
        entries) with C(grub2-reboot) for the one-time boot. V(auto) - V(grub) when C(<boot_dir>/grub/grub.cfg) exists,
        else V(grubby) when grubby is installed.
    type: str
    choices: [auto, grub, grubby]
    default: auto
  make_default:
    description:
      - V(after_verify) - boot O(release) next, once; make it the permanent default when it runs (the run after the
        reboot). V(now) - make it the permanent default at once.
    type: str
    choices: [after_verify, now]
    default: after_verify
  scope:
    description:
      - V(all) - verify the installed release (its module files and DKMS) and manage its boot entry.
      - V(dkms) - the trial build before the image is installed - DKMS only, undone on a failure (see the
        description); the boot options are ignored.
    type: str
    choices: [all, dkms]
    default: all
  sources:
    description:
      - DKMS source trees (absolute paths of directories with a C(dkms.conf) whose C(PACKAGE_NAME) and
        C(PACKAGE_VERSION) are literal values, such as C(/usr/src/nvidia-570.133.20) extracted from the new driver's
        DKMS package) to build for the release before anything is installed for it. Only with O(scope=dkms).
    type: list
    elements: path
    default: []
  manage_boot:
    description:
      - V(false) - verify (and build with DKMS) only; the boot entries are read and reported, not changed. For a
        caller that installs more packages (a new driver) before it sets the boot entry.
    type: bool
    default: true
  boot_dir:
    description:
      - Directory of the kernel images and of C(grub/) (C(grub2/) on EL). A hand-made tree in tests.
    type: path
    default: /boot
  modules_dir:
    description:
      - Directory of the module trees, one per release.
    type: path
    default: /lib/modules
  proc_root:
    description:
      - Directory under which C(proc/sys/kernel/osrelease) is read. A hand-made tree in tests.
    type: path
    default: /
  grub_default_file:
    description:
      - The file with C(GRUB_DEFAULT); C(<grub_default_file>.d/*.cfg) is read after it, as grub-mkconfig does.
    type: path
    default: /etc/default/grub
  grub_editenv_path:
    description:
      - Path of C(grub-editenv) (C(grub2-editenv) with grubby), or a name looked up on C(PATH).
    type: str
  grub_reboot_path:
    description:
      - Path of C(grub-reboot) (C(grub2-reboot) with grubby), or a name looked up on C(PATH).
    type: str
  grub_set_default_path:
    description:
      - Path of C(grub-set-default), or a name looked up on C(PATH).
    type: str
  grubby_path:
    description:
      - Path of C(grubby), or a name looked up on C(PATH).
    type: str
  dkms_path:
    description:
      - Path of C(dkms), or a name looked up on C(PATH); not found - DKMS is not used.
    type: str
  modinfo_path:
    description:
      - Path of C(modinfo), or a name looked up on C(PATH); not found - the module files are checked without their
        vermagic.
    type: str
  timeout:
    description:
      - Seconds C(dkms autoinstall) may take before it is killed and the release refused.
    type: int
    default: 3600
notes:
  - Needs root. Commands run with C(LC_ALL=C) as argument lists, never through a shell.
  - Bad input is refused before anything runs, naming the option - a release with spaces, slashes or that does not
    start with a digit, a required module name that is not a module name (a path, C(.ko)), an unknown O(bootloader),
    O(make_default) or O(dkms), a root that is not a directory, a tool path that is not an executable file, a
    O(timeout) outside 1 second to 30 days, a NUL byte anywhere.
  - DKMS modules that will never build for the release (an old module left registered) must be removed with
    C(dkms remove MODULE/VERSION --all); the refusal names them.
  - Package installation is not done here - the role C(gpufleet.cluster.kernel) installs the image and headers from
    the host's sources first.
seealso:
  - name: GRUB manual - grub-reboot
    description: The one-time boot entry (next_entry) and the need for GRUB_DEFAULT=saved.
    link: https://www.gnu.org/software/grub/manual/grub/html_node/Invoking-grub_002dreboot.html
  - name: Oracle Linux - about the GRUB 2 boot loader
    description: grub2-set-default for all reboots, grub2-reboot for the next reboot only.
    link: https://docs.oracle.com/en/operating-systems/oracle-linux/8/boot/boot-AbouttheGRUB2Bootloader.html
"""

EXAMPLES = r"""
- name: Boot the lock's kernel next, once, after the driver's modules are there for it
  become: true
  gpufleet.cluster.kernel_boot:
    release: "{{ gpufleet_lock.kernel }}"
    required_modules: [nvidia, nvidia_uvm, mlx5_core, mlx5_ib, ib_core]
  register: kernel

- name: Reboot into it
  become: true
  ansible.builtin.reboot:
    msg: "{{ kernel.reboot_reason }}"
  when: kernel.reboot_required

- name: After the reboot - the kernel runs, make it the permanent default
  become: true
  gpufleet.cluster.kernel_boot:
    release: "{{ gpufleet_lock.kernel }}"
    required_modules: [nvidia, nvidia_uvm]

- name: Trial build - the headers only are installed; a driver that does not build refuses the kernel
  become: true
  gpufleet.cluster.kernel_boot:
    release: 6.1.0-28-amd64
    scope: dkms

- name: Trial build of the driver a rollout is about to install (its DKMS source extracted from the package)
  become: true
  gpufleet.cluster.kernel_boot:
    release: 6.1.0-28-amd64
    scope: dkms
    sources: [/tmp/nvidia-570/usr/src/nvidia-570.133.20]

- name: What would change (no DKMS build, no boot entry change)
  become: true
  gpufleet.cluster.kernel_boot:
    release: 5.14.0-427.13.1.el9_4.x86_64
    bootloader: grubby
  check_mode: true
  diff: true
"""

RETURN = r"""
changed:
  description: Whether DKMS built modules or a boot entry changed (in check mode - would).
  returned: always
  type: bool
release:
  description: The wanted release.
  returned: when the input was valid
  type: str
  sample: 6.1.0-28-amd64
running:
  description: The running release.
  returned: when it could be read
  type: str
  sample: 6.1.0-27-amd64
installed:
  description: The installed releases (an image in O(boot_dir) and a module tree in O(modules_dir)).
  returned: when the running release could be read
  type: list
  elements: str
bootloader:
  description: The boot loader used - C(grub) or C(grubby).
  returned: when the release is installed
  type: str
entry:
  description: The boot entry of O(release) - GRUB menu ids joined by C(>), or the BLS id with grubby.
  returned: when the release is installed
  type: str
  sample: gnulinux-advanced-0b7b1f7e-6d5f-4a3e-9a53-2c1b8f0e9d11>gnulinux-6.1.0-28-amd64-advanced-0b7b1f7e-6d5f-4a3e-9a53-2c1b8f0e9d11
default:
  description: The release the default entry boots, after this run (check mode - would).
  returned: on success
  type: str
next:
  description: The release of the one-time entry, after this run; null when there is none.
  returned: on success
  type: str
default_before:
  description: The release the default entry booted before this run.
  returned: on success
  type: str
next_before:
  description: The release of the one-time entry before this run; null when there was none.
  returned: on success
  type: str
carried_modules:
  description:
    - The modules of O(carry_modules) the running release has, required for O(release) too.
  returned: when the release is installed
  type: list
  elements: str
  sample: [nvidia, nvidia_uvm, mlx5_core]
modules:
  description:
    - Per required module - C(status) (C(ok), C(missing), C(wrong-release)), C(path) (its file, C((builtin)), or null)
      and C(detail) (the vermagic, or why it does not fit).
  returned: when the release is installed
  type: dict
  sample:
    nvidia:
      status: ok
      path: /lib/modules/6.1.0-28-amd64/updates/dkms/nvidia.ko.xz
      detail: vermagic 6.1.0-28-amd64 SMP preempt mod_unload modversions
scope:
  description: V(dkms) for the trial build.
  returned: with O(scope=dkms)
  type: str
dkms:
  description:
    - C(used) (whether dkms was found and asked), C(missing_before) (DKMS modules not installed for the release before
      the build), C(status_before) and C(status_after) (C(dkms status -k RELEASE)), C(output) (the end of the
      autoinstall output).
    - With O(scope=dkms) also C(undone) (MODULE/VERSION built for the release by a failed trial and removed again) and
      C(left) (those that could not be removed, or were built for no other kernel), and C(sources) (per O(sources)
      tree - C(module), C(version), C(path), C(built) (null in check mode), C(why) and C(log), the end of its
      C(make.log), when it did not build).
  returned: when the release is installed, and with O(scope=dkms)
  type: dict
actions:
  description: The commands run to change something (in check mode - that would be run), in order.
  returned: on success and after a failed change
  type: list
  elements: str
  sample: ["/usr/sbin/grub-reboot --boot-directory /boot 'gnulinux-advanced-0b7b...>gnulinux-6.1.0-28-amd64-advanced-0b7b...'"]
reboot_required:
  description: Whether the release does not run yet (a reboot boots it, or - with O(manage_boot=false) - is needed).
  returned: on success with O(scope=all)
  type: bool
reboot_reason:
  description: Why a reboot is required, naming the release, the running one and the default; empty when none is.
  returned: on success
  type: str
  sample: >-
    kernel 6.1.0-28-amd64 is installed and verified and boots next, once (running 6.1.0-27-amd64; the permanent
    default stays 6.1.0-27-amd64 until the node runs 6.1.0-28-amd64)
grub_default:
  description: The GRUB_DEFAULT in force - C(value), C(file), C(line) (null when no line sets it) and C(text).
  returned: on success
  type: dict
default_note:
  description: Why the reported default is entry 0 (GRUB's fallback when the saved entry is not in grub.cfg).
  returned: when the saved default is not in the menu
  type: str
diff:
  description: The running, default and next release, before and after.
  returned: when changed or in diff mode
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import kernel_boot_engine as engine

ARGUMENT_SPEC = dict(
    release=dict(type="str", required=True),
    required_modules=dict(type="list", elements="str", default=[]),
    carry_modules=dict(type="list", elements="str", default=[]),
    dkms=dict(type="str", choices=["auto", "never"], default="auto"),
    bootloader=dict(type="str", choices=["auto", "grub", "grubby"], default="auto"),
    make_default=dict(type="str", choices=["after_verify", "now"], default="after_verify"),
    manage_boot=dict(type="bool", default=True),
    scope=dict(type="str", choices=["all", "dkms"], default="all"),
    sources=dict(type="list", elements="path", default=[]),
    boot_dir=dict(type="path", default="/boot"),
    modules_dir=dict(type="path", default="/lib/modules"),
    proc_root=dict(type="path", default="/"),
    grub_default_file=dict(type="path", default="/etc/default/grub"),
    grub_editenv_path=dict(type="str"),
    grub_reboot_path=dict(type="str"),
    grub_set_default_path=dict(type="str"),
    grubby_path=dict(type="str"),
    dkms_path=dict(type="str"),
    modinfo_path=dict(type="str"),
    timeout=dict(type="int", default=3600),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = engine.run(module.params, module.check_mode, module._diff, lambda name: _runner.find(module, name))
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
