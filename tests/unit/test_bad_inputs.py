# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A permanent guard: one table of bad inputs for every module in plugins/modules.

Each row names a module, a setup (files, directories, FIFOs, symlinks, fake tools printing garbage, all in
the row's own temp tree), the parameters (``@T@`` stands for that tree) and the outcome that is right:

- ``refused``: the module fails (``fail_json``, or a failed action result) with a message naming ``option``;
- ``clean-failure``: the module fails with a message, and no Python traceback;
- ``no-change``: the module succeeds.

For every row the module must leave through ``exit_json``/``fail_json`` (an action plugin through a result or
AnsibleActionFail): any other exception, a result carrying ``exception``, or a hang (60 s) is a traceback. The
temp tree is snapshotted before and after (type, mode, size, mtime, content hash, link target of everything
in it) and must not change, whatever the outcome; for ``refused`` rows the fake tools must not have been run.
Every parameter that names a hardware root, a file or a tool points into the temp tree, so a module that
does not refuse what it should still cannot touch the host.

Totals are printed at the end of the session by ``pytest_terminal_summary`` in tests/unit/conftest.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import traceback
from collections import namedtuple
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest

from ansible.module_utils import _internal as module_utils_internal
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

UNIT = Path(__file__).resolve().parent
HAND = UNIT / 'fixtures' / 'hand_made'
CORPUS = UNIT / 'fixtures' / 'corpus'
SMI_XML = HAND / 'nvidia-smi-q-x-h100-mig-HANDMADE.xml'
IRQ_TREE = HAND / 'irq' / 'two-socket-mlx5-numa1-HANDMADE'
ROCE_TREE = HAND / 'roce' / 'cx6-roce-HANDMADE'
HANG_SECONDS = 60

MODULES = ('bond_facts', 'container_gpus', 'dcgm_diag', 'docker_daemon_json', 'fabric_health', 'file_set', 'fleet_compare', 'fw_facts',
           'gpu_burn', 'gpu_facts', 'gpu_firmware', 'gpu_settings', 'hca_firmware', 'ib_fabric_info', 'ib_port_facts',
           'irq_affinity', 'kernel_boot', 'nccl_bench',
           'nft_table', 'node_compare', 'node_facts',
           'p2p_bandwidth', 'pci_facts', 'pull_report', 'rdma_bw', 'roce_qos', 'slurm_node', 'ssh_login_facts')
ACTIONS = ('fleet_compare', 'node_compare', 'pull_report')  # action plugins (their plugins/modules file is documentation)

# Bytes no tool should print: not UTF-8, a NUL, control characters, half a UTF-8 sequence.
GARBAGE = b'\xff\xfe\x00garbage \x80\x81\x1b[2J ### | ? \xc3\x28 N/A -nan 1e999\n' * 16
ASCII_GARBAGE = b'#|?x:(--\nNaN N/A 1e999 - \t\t\n+-----+\n| x | y |\n'

Row = namedtuple('Row', 'module case setup params expect option')


def row(module, case, params, expect, option=None, setup=()):
    if not isinstance(setup, (tuple, list)):
        setup = (setup,)
    return Row(module, case, tuple(setup), params, expect, option)


# ---------------------------------------------------------------- setups (each gets the row's context)
def tool(name, out=b'', rc=0, args_out=None):
    """A fake program ``@T@/bin/<name>`` printing ``out`` (or ``args_out[word]`` when that word is an
    argument) and exiting ``rc``; every call is logged outside the snapshotted tree."""
    def _make(ctx):
        bindir = ctx.tree / 'bin'
        bindir.mkdir(exist_ok=True)
        cases = ''
        for word, text in sorted((args_out or {}).items()):
            data = bindir / ('%s.%s.out' % (name, re.sub(r'\W', '_', word)))
            data.write_bytes(text)
            cases += '  *" %s "*) cat "%s"; exit %d;;\n' % (word, data, rc)
        data = bindir / (name + '.out')
        data.write_bytes(out)
        path = bindir / name
        path.write_text('#!/bin/sh\necho "$0 $*" >> "%s"\ncase " $* " in\n%s  *) cat "%s";;\nesac\nexit %d\n'
                        % (ctx.calls, cases, data, rc))
        path.chmod(0o755)
    return _make


def not_executable(name):
    def _make(ctx):
        (ctx.tree / 'bin').mkdir(exist_ok=True)
        path = ctx.tree / 'bin' / name
        path.write_text('#!/bin/sh\necho "$0" >> "%s"\n' % ctx.calls)
        path.chmod(0o644)
    return _make


def exec_format_error(name):
    """Executable bits, but no #! and not a binary: the OS cannot start it (ENOEXEC)."""
    def _make(ctx):
        (ctx.tree / 'bin').mkdir(exist_ok=True)
        path = ctx.tree / 'bin' / name
        path.write_bytes(b'\x00\x01\x02 this is not a program\n')
        path.chmod(0o755)
    return _make


def file(rel, data=b''):
    def _make(ctx):
        path = ctx.tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return _make


def directory(rel):
    def _make(ctx):
        (ctx.tree / rel).mkdir(parents=True, exist_ok=True)
    return _make


def symlink(rel, target):
    def _make(ctx):
        path = ctx.tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target.replace('@T@', str(ctx.tree)), str(path))
    return _make


def fifo(rel):
    def _make(ctx):
        path = ctx.tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(str(path))
    return _make


def copy_tree(src, rel):
    def _make(ctx):
        shutil.copytree(str(src), str(ctx.tree / rel))
    return _make


def irq_tree(ctx):
    """The HANDMADE 2-socket tree with its PCI directories under their real names (0000:81:00.0)."""
    dst = ctx.tree / 'root'
    shutil.copytree(str(IRQ_TREE), str(dst))
    devices = dst / 'sys' / 'bus' / 'pci' / 'devices'
    for entry in sorted(devices.iterdir()):
        if re.match(r'^[0-9a-f]{4}_[0-9a-f]{2}_[0-9a-f]{2}\.[0-7]$', entry.name):
            entry.rename(devices / entry.name.replace('_', ':'))


def ib_tree(ctx):
    """A one-HCA sysfs tree (mlx5_0, port 1 ACTIVE at 400 Gb/s)."""
    dev = ctx.tree / 'root' / 'sys' / 'class' / 'infiniband' / 'mlx5_0'
    port = dev / 'ports' / '1'
    port.mkdir(parents=True)
    for name, text in (('fw_ver', '28.39.1002'), ('board_id', 'MT_0000000838'), ('node_type', '1: CA')):
        (dev / name).write_text(text + '\n')
    for name, text in (('state', '4: ACTIVE'), ('phys_state', '5: LinkUp'), ('rate', '400 Gb/sec (4X NDR)'),
                       ('link_layer', 'InfiniBand')):
        (port / name).write_text(text + '\n')


def pci_tree(ctx):
    dev = ctx.tree / 'root' / 'sys' / 'bus' / 'pci' / 'devices' / '0000:17:00.0'
    dev.mkdir(parents=True)
    for name, text in (('vendor', '0x10de'), ('device', '0x2330'), ('class', '0x030200'),
                       ('current_link_speed', '32.0 GT/s PCIe'), ('current_link_width', '16')):
        (dev / name).write_text(text + '\n')


def bond_tree(ctx):
    src = CORPUS / 'bonding' / 'telegraf-802.3ad-2x10G.txt'
    dst = ctx.tree / 'root' / 'proc' / 'net' / 'bonding'
    dst.mkdir(parents=True)
    shutil.copy(str(src), str(dst / 'bond0'))


def bond_tree_garbage_mtu(ctx):
    bond_tree(ctx)
    mtu = ctx.tree / 'root' / 'sys' / 'class' / 'net' / 'bond0'
    mtu.mkdir(parents=True)
    (mtu / 'mtu').write_bytes(ASCII_GARBAGE)


def net_file(rel='etc/net/a.network', data='[Match]\nName=eth1\n', mode=0o644):
    """A regular file with a fixed mode (file_set compares the mode too)."""
    def _make(ctx):
        file(rel, data)(ctx)
        (ctx.tree / rel).chmod(mode)
    return _make


def daemon_json(text='{\n  "log-level": "warn"\n}\n'):
    return file('etc/docker/daemon.json', text)


def docker_unit(ctx):
    unit = ctx.tree / 'sys' / 'lib' / 'systemd' / 'system' / 'docker.service'
    unit.parent.mkdir(parents=True)
    unit.write_text('[Service]\nExecStart=/usr/bin/dockerd --containerd=/run/containerd/containerd.sock\n')


# ---------------------------------------------------------------- the table
T = '@T@'
NUL = '\x00'
HUGE = 10 ** 12
NCCL_OK = CORPUS / 'nccl_tests' / 'superbench-allreduce-8xA100-40GB.txt'

# Parameters that keep every tool and root of a module inside the temp tree.
SAFE = {
    'fw_facts': dict(sysfs_root=T, mstflint_path=T + '/bin/absent-mstflint', flint_path=T + '/bin/absent-flint',
                     ofed_info_path=T + '/bin/absent-ofed_info', fabricmanager_path=T + '/bin/absent-fm',
                     fabricmanager_service='', fabricmanager_log=''),
    'node_facts': dict(sysfs_root=T, proc_root=T, nvidia_smi_path=T + '/bin/absent-nvidia-smi',
                       mstflint_path=T + '/bin/absent-mstflint', flint_path=T + '/bin/absent-flint',
                       ofed_info_path=T + '/bin/absent-ofed_info', fabricmanager_path=T + '/bin/absent-fm',
                       fabricmanager_service='', fabricmanager_log=''),
    'docker': dict(path=T + '/etc/docker/daemon.json', systemd_root=T, validate=False),
    'slurm': dict(scontrol_path=T + '/bin/scontrol', squeue_path=T + '/bin/squeue'),
    'irq': dict(device='0000:81:00.0', proc_root=T + '/root', sysfs_root=T + '/root',
                irqbalance_config=T + '/root/etc/irqbalance'),
    'roce': dict(interface='ens1f0np0', sysfs_root=T + '/root', configfs_root=T + '/root/configfs', tool='dcb',
                 dcb_path=T + '/bin/dcb', mlnx_qos_path=T + '/bin/mlnx_qos', persist_path=T + '/etc/roce.json'),
}
SLURM_NODE_LINE = (b'NodeName=gpu01 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 State=IDLE ThreadsPerCore=1 '
                   b'Partitions=gpu\n')
SLURM_TOOLS = (tool('scontrol', SLURM_NODE_LINE), tool('squeue', b''))


def fw(**kw):
    return dict(SAFE['fw_facts'], **kw)


def nfacts(**kw):
    return dict(SAFE['node_facts'], **kw)


def docker(**kw):
    return dict(SAFE['docker'], **kw)


def sshlogin(**kw):
    return dict({'user': 'root', 'proc_root': T + '/proc', 'sshd_path': T + '/bin/sshd', 'config_file': T + '/sshd_config',
                 'journalctl_path': T + '/bin/journalctl', 'auth_logs': [T + '/auth.log']}, **kw)


SSHD_TOOLS = (tool('sshd', b'port 22\nallowusers root\npermitrootlogin without-password\n'), tool('journalctl', b''),
              file('sshd_config', 'Port 22\n'), file('proc/net/tcp', '  sl  local_address rem_address   st\n'))


def fab(**kw):
    """fabric_health parameters inside the temp tree (no wait between the reads, sminfo from the tree)."""
    return dict({'sysfs_root': T + '/root', 'interval': 0, 'sminfo_path': T + '/bin/sminfo'}, **kw)


def ibf(**kw):
    """ib_fabric_info parameters inside the temp tree (its tools from the tree, never the host's)."""
    return dict({'ibswitches_path': T + '/bin/ibswitches', 'iblinkinfo_path': T + '/bin/iblinkinfo'}, **kw)


IBDIAG_TOOLS = (tool('ibswitches', b'Switch\t: 0x0000000000200005 ports 36 "leaf" base port 0 lid 9 lmc 0\n'),
                tool('iblinkinfo', b''))


def slurm(**kw):
    return dict(SAFE['slurm'], **dict({'name': 'gpu01'}, **kw))


def irq(**kw):
    return dict(SAFE['irq'], **kw)


def roce(**kw):
    return dict(SAFE['roce'], **kw)


A10G_XML = CORPUS / 'nvidia_smi' / 'xml-telegraf-A10G-515.xml'  # recorded (MIT, telegraf; SOURCES.tsv)


def gset(entry=None, **kw):
    """gpu_settings parameters inside the temp tree; ``entry`` is merged into one A10G settings entry."""
    base = dict(nvidia_smi_path=T + '/bin/nvidia-smi', persist_path=T + '/etc/gpu_settings.json',
                lock_record_path=T + '/run/locks.json',
                settings=[dict({'model': 'NVIDIA A10G', 'persistence_mode': True}, **(entry or {}))])
    return dict(base, **kw)


def gfw(**kw):
    """gpu_firmware parameters inside the temp tree: the recorded A10G (94.02.75.00.01) asked for another VBIOS."""
    return dict(dict(vbios={'NVIDIA A10G': '94.02.75.00.1A'}, images={'NVIDIA A10G': 'a10g.img'}, bundle_dir=T + '/bundle',
                     command=[T + '/bin/gpu-flash', '--bus', '{pci}', '--image', '{image}'],
                     nvidia_smi_path=T + '/bin/nvidia-smi', state_path=T + '/var/gpu-firmware.json',
                     boot_id_path=T + '/boot_id'), **kw)


GFW_TOOLS = (tool('nvidia-smi', A10G_XML.read_bytes()), tool('gpu-flash'), file('boot_id', 'boot-1\n'), directory('bundle'))


MLX_Q = (CORPUS / 'mlx_fw' / 'ipa-mstflint-q-cx6-hdr-20.35.txt').read_bytes()  # recorded (Apache-2.0; SOURCES.tsv)


def hca(**kw):
    """hca_firmware parameters inside the temp tree (hca_pci_tree's sysfs and bundle, the fake tools)."""
    return dict(dict(version='20.36.1012', bundle_dir=T + '/bundle', sysfs_root=T + '/root',
                     tool_path=T + '/bin/mstflint', mlxfwreset_path=T + '/bin/mstfwreset'), **kw)


def hca_no(name, **kw):
    """hca() without the option ``name``."""
    return dict((k, v) for k, v in hca(**kw).items() if k != name)


def hca_pci_tree(ctx):
    """One mlx5 card at 0000:3b:00.0 (PSID MT_0000000228, hand-made sysfs layout) and an empty bundle."""
    pdir = ctx.tree / 'root' / 'sys' / 'devices' / 'pci0000:00' / '0000:3b:00.0'
    ibdev = pdir / 'infiniband' / 'mlx5_0'
    ibdev.mkdir(parents=True)
    for name, text in (('fw_ver', '20.35.1012'), ('board_id', 'MT_0000000228'), ('sys_image_guid', '043f:7203:00f0:4c46')):
        (ibdev / name).write_text(text + '\n')
    os.symlink('../../../0000:3b:00.0', str(ibdev / 'device'))
    cls = ctx.tree / 'root' / 'sys' / 'class' / 'infiniband'
    cls.mkdir(parents=True)
    os.symlink(os.path.relpath(str(ibdev), str(cls)), str(cls / 'mlx5_0'))
    (ctx.tree / 'bundle').mkdir(exist_ok=True)


HCA_TOOLS = (hca_pci_tree, tool('mstflint', MLX_Q))


A100X8_LIST = (UNIT / 'fixtures' / 'excerpts' / 'nvidia_smi' / 'list-L-8xA100-80GB-superbench.txt').read_bytes()  # recorded (MIT)


def ctr(**kw):
    """container_gpus parameters with docker, podman and the host's nvidia-smi inside the temp tree."""
    return dict(dict(image='registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04', docker_path=T + '/bin/docker',
                     podman_path=T + '/bin/podman', nvidia_smi_path=T + '/bin/nvidia-smi'), **kw)


CTR_TOOLS = (tool('nvidia-smi', A100X8_LIST), tool('docker', A100X8_LIST), tool('podman', A100X8_LIST))


PULL_RESULT = {'format': 'gpufleet.pull-result/1', 'kind': 'drift', 'mode': 'check', 'node': 'n1', 'settings': [],
               'consequences': [], 'check': {'messages': []}, 'fleet': None, 'status': 'clean'}


def pull(**kw):
    params = {'results': T + '/res', 'dest': T + '/../out', 'expected': ['n1', 'n2']}
    params.update(kw)
    return params


GOOD_FACTS = {'nvidia_gpu': {'executable': '/usr/bin/nvidia-smi', 'driver_version': '550.127.08', 'count': 1,
                             'gpus': [{'index': 0, 'name': 'NVIDIA H100 80GB HBM3', 'vbios_version': '96.00.99.00.01'}]},
              'infiniband': {'mlx5_0': {'fw_ver': '28.39.1002', 'board_id': 'MT_0000000838',
                                        'ports': {'1': {'state': 'ACTIVE', 'rate_gbps': 400}}}}}


KB_CFG = """set default="${saved_entry}"
menuentry 'Debian GNU/Linux' $menuentry_id_option 'gnulinux-simple-x' {
\tlinux\t/boot/vmlinuz-6.1.0-28-amd64 root=/dev/sda1 ro
}
submenu 'Advanced options for Debian GNU/Linux' $menuentry_id_option 'gnulinux-advanced-x' {
\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-28-amd64' $menuentry_id_option 'gnulinux-6.1.0-28-amd64-advanced-x' {
\t\tlinux\t/boot/vmlinuz-6.1.0-28-amd64 root=/dev/sda1 ro
\t}
\tmenuentry 'Debian GNU/Linux, with Linux 6.1.0-27-amd64' $menuentry_id_option 'gnulinux-6.1.0-27-amd64-advanced-x' {
\t\tlinux\t/boot/vmlinuz-6.1.0-27-amd64 root=/dev/sda1 ro
\t}
}
"""  # hand-made, in the layout of Debian 12's grub-mkconfig output
KB_ENV = ('# GRUB Environment Block\nsaved_entry=gnulinux-advanced-x>gnulinux-6.1.0-27-amd64-advanced-x\n').ljust(1024, '#')


def kb(**kw):
    """kernel_boot parameters with every root and tool inside the temp tree (kb_tree: running 6.1.0-27, 28 installed)."""
    return dict(dict(release='6.1.0-28-amd64', boot_dir=T + '/boot', modules_dir=T + '/lib/modules', proc_root=T,
                     grub_default_file=T + '/etc/default/grub', grub_editenv_path=T + '/bin/grub-editenv',
                     grub_reboot_path=T + '/bin/grub-reboot', grub_set_default_path=T + '/bin/grub-set-default',
                     grubby_path=T + '/bin/grubby', dkms_path=T + '/bin/dkms', modinfo_path=T + '/bin/modinfo'), **kw)


KB_TREE = (file('proc/sys/kernel/osrelease', '6.1.0-27-amd64\n'), file('boot/vmlinuz-6.1.0-27-amd64', 'k'),
           file('boot/vmlinuz-6.1.0-28-amd64', 'k'), directory('lib/modules/6.1.0-27-amd64'),
           directory('lib/modules/6.1.0-28-amd64'), file('boot/grub/grub.cfg', KB_CFG), file('boot/grub/grubenv', KB_ENV),
           file('etc/default/grub', 'GRUB_DEFAULT=saved\n'), tool('grub-editenv'), tool('grub-reboot'),
           tool('grub-set-default'), tool('dkms'), tool('modinfo'))


def nftp(**kw):
    """nft_table parameters: tools in the temp tree; the state directory beside it (outside the snapshot), so a
    row that gets as far as staging its candidate cannot touch the tree either."""
    return dict(dict(name='gpufleet', content=NFT_OK, path=T + '/etc/nftables.d/gpufleet.nft', state_dir=T + '/../nft-state',
                     nft_path=T + '/bin/nft', systemd_run_path=T + '/bin/systemd-run', systemctl_path=T + '/bin/systemctl',
                     rollback_seconds=30), **kw)


NFT_OK = 'table inet gpufleet\ndelete table inet gpufleet\ntable inet gpufleet {\n}\n'


def nft_no_table(ctx):
    """An nft that has no such table (what nft prints then) and accepts every file."""
    (ctx.tree / 'bin').mkdir(exist_ok=True)
    path = ctx.tree / 'bin' / 'nft'
    path.write_text('#!/bin/sh\necho "$0 $*" >> "%s"\ncase "$*" in *list*) echo "Error: No such file or directory" >&2; '
                    'exit 1;; esac\nexit 0\n' % ctx.calls)
    path.chmod(0o755)


NFT_TOOLS = (nft_no_table, tool('systemctl', b'inactive\n', rc=3), tool('systemd-run'))


ROWS = [
    # ------------------------------------------------------------ ssh_login_facts (hand-made trees and tools)
    row('ssh_login_facts', 'type confusion: user a list', sshlogin(user=['root']), 'refused', 'user', SSHD_TOOLS),
    row('ssh_login_facts', 'empty user', sshlogin(user=''), 'refused', 'user', SSHD_TOOLS),
    row('ssh_login_facts', 'user with a comma (would add -C match keys)', sshlogin(user='root,addr=1.2.3.4'), 'refused', 'user',
        SSHD_TOOLS),
    row('ssh_login_facts', 'NUL in user', sshlogin(user='root' + NUL), 'refused', 'user', SSHD_TOOLS),
    row('ssh_login_facts', 'unknown user', sshlogin(user='gf-no-such-user'), 'refused', 'user', SSHD_TOOLS),
    row('ssh_login_facts', 'proc_root does not exist', sshlogin(proc_root=T + '/nowhere'), 'refused', 'proc_root', SSHD_TOOLS),
    row('ssh_login_facts', 'proc_root is a file', sshlogin(proc_root=T + '/sshd_config'), 'refused', 'proc_root', SSHD_TOOLS),
    row('ssh_login_facts', 'sshd_path is a directory', sshlogin(sshd_path=T + '/bin'), 'refused', 'sshd_path', SSHD_TOOLS),
    row('ssh_login_facts', 'sshd_path not executable', sshlogin(sshd_path=T + '/bin/sshd-noexec'), 'refused', 'sshd_path',
        SSHD_TOOLS + (not_executable('sshd-noexec'),)),
    row('ssh_login_facts', 'pid negative', sshlogin(pid=-1), 'refused', 'pid', SSHD_TOOLS),
    row('ssh_login_facts', 'pid huge', sshlogin(pid=HUGE), 'refused', 'pid', SSHD_TOOLS),
    row('ssh_login_facts', 'config_file is a directory', sshlogin(config_file=T + '/bin'), 'refused', 'config_file', SSHD_TOOLS),
    row('ssh_login_facts', 'sshd -T fails', sshlogin(sshd_path=T + '/bin/sshd-bad'), 'clean-failure', None,
        SSHD_TOOLS + (tool('sshd-bad', b'/etc/ssh/sshd_config line 3: Bad configuration option: Bogus\n', rc=255),)),
    row('ssh_login_facts', 'garbage sshd -T output and TCP table', sshlogin(sshd_path=T + '/bin/sshd-garbage'), 'no-change', None,
        SSHD_TOOLS[1:3] + (tool('sshd-garbage', GARBAGE), file('proc/net/tcp', GARBAGE), file('proc/net/tcp6', ASCII_GARBAGE))),
    # ------------------------------------------------------------ bond_facts
    row('bond_facts', 'type confusion: proc_root a list', {'proc_root': [T]}, 'refused', 'proc_root'),
    row('bond_facts', 'empty proc_root', {'proc_root': ''}, 'refused', 'proc_root'),
    row('bond_facts', 'NUL in proc_root', {'proc_root': T + NUL}, 'refused', 'proc_root'),
    row('bond_facts', 'path traversal ../ to a good tree', {'proc_root': T + '/root/proc/../'}, 'no-change',
        setup=bond_tree),
    row('bond_facts', 'proc_root is a file', {'proc_root': T + '/f'}, 'refused', 'proc_root', file('f', 'x')),
    row('bond_facts', 'proc_root does not exist', {'proc_root': T + '/nowhere'}, 'refused', 'proc_root'),
    row('bond_facts', 'directory where a bond file is expected', {'proc_root': T + '/root'}, 'no-change',
        setup=directory('root/proc/net/bonding/bond0')),
    row('bond_facts', 'garbage: non-UTF-8 bonding file', {'proc_root': T + '/root'}, 'refused', 'proc_root',
        file('root/proc/net/bonding/bond0', b'Bonding Mode: \xff\xfe' + GARBAGE)),
    row('bond_facts', 'garbage: ASCII noise bonding file', {'proc_root': T + '/root'}, 'no-change',
        setup=file('root/proc/net/bonding/bond0', ASCII_GARBAGE)),
    row('bond_facts', 'huge: a 4 MiB bonding file', {'proc_root': T + '/root'}, 'no-change',
        setup=file('root/proc/net/bonding/bond0', b'Slave Interface: eth0\nMII Status: up\n' * 120000)),
    row('bond_facts', 'unknown option', {'proc_root': T, 'bogus': 1}, 'refused', 'bogus'),
    row('bond_facts', 'type confusion: expected a string', {'proc_root': T, 'expected': 'bond0'}, 'refused', 'expected'),
    row('bond_facts', 'expected entry without members', {'proc_root': T, 'expected': [{'name': 'bond0', 'mode': '802.3ad'}]},
        'refused', 'members'),
    row('bond_facts', 'expected mode unknown', {'proc_root': T, 'expected': [{'name': 'b', 'mode': 'lacp', 'members': ['e']}]},
        'refused', 'mode'),
    row('bond_facts', 'expected name climbs out of sysfs', {'proc_root': T, 'sysfs_root': T,
        'expected': [{'name': '../../etc', 'mode': '802.3ad', 'members': ['e'], 'mtu': 9000}]}, 'refused', 'expected[0].name'),
    row('bond_facts', 'expected mtu not a number', {'proc_root': T, 'expected': [{'name': 'b', 'mode': '802.3ad',
        'members': ['e'], 'mtu': 'jumbo'}]}, 'refused', 'mtu'),
    row('bond_facts', 'sysfs_root does not exist', {'proc_root': T, 'sysfs_root': T + '/nowhere'}, 'refused', 'sysfs_root'),
    row('bond_facts', 'garbage sysfs mtu of an expected bond', {'proc_root': T + '/root', 'sysfs_root': T + '/root',
        'expected': [{'name': 'bond0', 'mode': '802.3ad', 'members': ['eth0'], 'mtu': 9000}]}, 'no-change',
        setup=bond_tree_garbage_mtu),

    # ------------------------------------------------------------ container_gpus
    row('container_gpus', 'empty image', ctr(image=''), 'refused', 'image', CTR_TOOLS),
    row('container_gpus', 'image that is an option', ctr(image='--privileged'), 'refused', 'image', CTR_TOOLS),
    row('container_gpus', 'NUL in image', ctr(image='cuda' + NUL), 'refused', 'image', CTR_TOOLS),
    row('container_gpus', 'podman with docker --gpus', ctr(runtime='podman', mode='gpus'), 'refused', 'mode', CTR_TOOLS),
    row('container_gpus', 'unknown mode', ctr(mode='all'), 'refused', 'mode', CTR_TOOLS),
    row('container_gpus', 'expected_gpus zero', ctr(expected_gpus=0), 'refused', 'expected_gpus', CTR_TOOLS),
    row('container_gpus', 'type confusion: expected_gpus text', ctr(expected_gpus='eight'), 'refused', 'expected_gpus',
        CTR_TOOLS),
    row('container_gpus', 'timeout huge', ctr(timeout=HUGE), 'refused', 'timeout', CTR_TOOLS),
    row('container_gpus', 'docker_path is a directory', ctr(docker_path=T + '/bin'), 'refused', 'docker_path', CTR_TOOLS),
    row('container_gpus', 'nvidia_smi_path not executable', ctr(nvidia_smi_path=T + '/bin/smi-noexec'), 'refused',
        'nvidia_smi_path', CTR_TOOLS + (not_executable('smi-noexec'),)),
    row('container_gpus', 'empty run_args item', ctr(run_args=['--security-opt=label=disable', ' ']), 'refused',
        'run_args[1]', CTR_TOOLS),
    row('container_gpus', 'oci_runtime with a space', ctr(oci_runtime='nvidia runc'), 'refused', 'oci_runtime', CTR_TOOLS),
    row('container_gpus', 'garbage: host nvidia-smi prints non-UTF-8', ctr(nvidia_smi_path=T + '/bin/smi-garbage'),
        'clean-failure', setup=CTR_TOOLS + (tool('smi-garbage', GARBAGE),)),
    row('container_gpus', 'garbage: the container prints ASCII noise, path with ../', ctr(docker_path=T + '/bin/../bin/dk'),
        'clean-failure', setup=CTR_TOOLS + (tool('dk', ASCII_GARBAGE),)),
    row('container_gpus', 'docker the OS cannot start', ctr(docker_path=T + '/bin/docker-bad'), 'clean-failure',
        setup=CTR_TOOLS + (exec_format_error('docker-bad'),)),
    row('container_gpus', 'no nvidia-smi: skipped, no GPU', ctr(nvidia_smi_path=T + '/bin/absent-nvidia-smi'), 'no-change',
        setup=CTR_TOOLS),

    # ------------------------------------------------------------ dcgm_diag
    row('dcgm_diag', 'empty level', {'executable': T + '/bin/dcgmi', 'level': ''}, 'refused', 'level',
        tool('dcgmi')),
    row('dcgm_diag', 'zero level', {'executable': T + '/bin/dcgmi', 'level': '0'}, 'refused', 'level',
        tool('dcgmi')),
    row('dcgm_diag', 'huge level', {'executable': T + '/bin/dcgmi', 'level': str(HUGE)}, 'refused', 'level',
        tool('dcgmi')),
    row('dcgm_diag', 'level that is an option', {'executable': T + '/bin/dcgmi', 'level': '--help'}, 'refused',
        'level', tool('dcgmi')),
    row('dcgm_diag', 'NUL in level', {'executable': T + '/bin/dcgmi', 'level': '1' + NUL}, 'refused', 'level',
        tool('dcgmi')),
    row('dcgm_diag', 'negative GPU id', {'executable': T + '/bin/dcgmi', 'gpus': [-1]}, 'refused', 'gpus',
        tool('dcgmi')),
    row('dcgm_diag', 'type confusion: GPU id text', {'executable': T + '/bin/dcgmi', 'gpus': ['zero']}, 'refused',
        'gpus', tool('dcgmi')),
    row('dcgm_diag', 'timeout zero', {'executable': T + '/bin/dcgmi', 'timeout': 0}, 'refused', 'timeout',
        tool('dcgmi')),
    row('dcgm_diag', 'timeout negative', {'executable': T + '/bin/dcgmi', 'timeout': -5}, 'refused', 'timeout',
        tool('dcgmi')),
    row('dcgm_diag', 'timeout huge', {'executable': T + '/bin/dcgmi', 'timeout': HUGE}, 'refused', 'timeout',
        tool('dcgmi')),
    row('dcgm_diag', 'executable is a directory', {'executable': T + '/bin'}, 'refused', 'executable',
        directory('bin')),
    row('dcgm_diag', 'executable not executable', {'executable': T + '/bin/dcgmi'}, 'refused', 'executable',
        not_executable('dcgmi')),
    row('dcgm_diag', 'parameter that is an option', {'executable': T + '/bin/dcgmi', 'parameters': ['--x']},
        'refused', 'parameters', tool('dcgmi')),
    row('dcgm_diag', 'empty host', {'executable': T + '/bin/dcgmi', 'host': ''}, 'refused', 'host', tool('dcgmi')),
    row('dcgm_diag', 'garbage output, path with ../', {'executable': T + '/bin/../bin/dcgmi'}, 'clean-failure',
        setup=tool('dcgmi', GARBAGE)),
    row('dcgm_diag', 'garbage ASCII output as text', {'executable': T + '/bin/dcgmi', 'output_format': 'text'},
        'clean-failure', setup=tool('dcgmi', ASCII_GARBAGE)),

    # ------------------------------------------------------------ docker_daemon_json
    row('docker_daemon_json', 'empty path', docker(path='', config={'debug': True}), 'refused', 'path'),
    row('docker_daemon_json', 'path is a directory', docker(path=T + '/etc/docker', config={'debug': True}),
        'refused', 'path', directory('etc/docker')),
    row('docker_daemon_json', 'NUL in path', docker(path=T + '/d.json' + NUL, config={'debug': True}), 'refused',
        'path'),
    row('docker_daemon_json', 'path is a FIFO', docker(path=T + '/etc/docker/daemon.json', config={'debug': True}),
        'refused', 'path', fifo('etc/docker/daemon.json')),
    row('docker_daemon_json', 'path is a symlink loop', docker(config={'debug': True}), 'refused', 'path',
        (directory('etc/docker'), symlink('etc/docker/daemon.json', '@T@/etc/docker/daemon.json'))),
    row('docker_daemon_json', 'type confusion: config a number', docker(config=12), 'refused', 'config',
        daemon_json()),
    row('docker_daemon_json', 'config not JSON', docker(config='{"debug": tru'), 'refused', 'config', daemon_json()),
    row('docker_daemon_json', 'config nested 5000 deep', docker(config='{"a":' * 5000 + '1' + '}' * 5000),
        'refused', 'config', daemon_json()),
    row('docker_daemon_json', 'NUL in a config key', docker(config={'de' + NUL + 'bug': True}), 'refused', 'config',
        daemon_json()),
    row('docker_daemon_json', 'null value under present', docker(config={'debug': None}), 'refused', 'config',
        daemon_json()),
    row('docker_daemon_json', 'path traversal ../ to the same content',
        docker(path=T + '/etc/docker/../docker/daemon.json', config={'log-level': 'warn'}), 'no-change',
        setup=daemon_json()),
    row('docker_daemon_json', 'existing file not UTF-8', docker(config={'debug': True}), 'clean-failure',
        setup=daemon_json(b'{"a": "\xff"}')),
    row('docker_daemon_json', 'drop-in that is a directory',
        docker(config={'hosts': ['fd://']}, systemd_root=T + '/sys'), 'refused',
        'systemd_root', (daemon_json(), docker_unit, directory('sys/lib/systemd/system/docker.service.d/x.conf'))),
    row('docker_daemon_json', 'empty systemd_root', docker(systemd_root='', config={'debug': True}), 'refused',
        'systemd_root', daemon_json()),
    row('docker_daemon_json', 'dockerd_path is a directory',
        docker(config={'debug': True}, validate=True, dockerd_path=T + '/bin'),
        'refused', 'dockerd_path', (daemon_json(), directory('bin'))),
    row('docker_daemon_json', 'dockerd prints garbage and fails',
        docker(config={'debug': True}, validate=True, dockerd_path=T + '/bin/dockerd'),
        'clean-failure', setup=(daemon_json(), tool('dockerd', GARBAGE, rc=1))),

    # ------------------------------------------------------------ file_set (every row leaves the tree as it was)
    row('file_set', 'type confusion: files a string', {'files': T + '/etc/net/a.network'}, 'refused', 'files',
        net_file()),
    row('file_set', 'type confusion: content a list', {'files': [{'path': T + '/etc/net/a.network', 'content': ['x']}]},
        'refused', 'files', net_file()),
    row('file_set', 'type confusion: mode a number (unquoted 0644)',
        {'files': [{'path': T + '/etc/net/a.network', 'content': 'x', 'mode': 420}]}, 'refused', 'files', net_file()),
    row('file_set', 'unknown key in a file', {'files': [{'path': T + '/etc/net/a.network', 'content': 'x', 'src': 'y'}]},
        'refused', 'files', net_file()),
    row('file_set', 'empty path', {'files': [{'path': '', 'content': 'x'}]}, 'refused', 'files', net_file()),
    row('file_set', 'empty files and nothing to remove', {'files': [], 'remove': [T + '/etc/net/*.netdev']}, 'no-change',
        setup=net_file()),
    row('file_set', 'NUL in path', {'files': [{'path': T + '/etc/net/a.network' + NUL, 'content': 'x'}]}, 'refused',
        'files', net_file()),
    row('file_set', 'NUL in a remove pattern', {'files': [], 'remove': [T + '/etc/net/*' + NUL]}, 'refused', 'remove',
        net_file()),
    row('file_set', 'relative path', {'files': [{'path': 'etc/net/a.network', 'content': 'x'}]}, 'refused', 'files',
        net_file()),
    row('file_set', 'path traversal ../', {'files': [{'path': T + '/etc/net/../net/a.network', 'content': 'x'}]},
        'refused', 'files', net_file()),
    row('file_set', 'duplicate path (two spellings)', {'files': [{'path': T + '/etc/net/b.network', 'content': 'x'},
        {'path': T + '/etc/net/./b.network', 'content': 'y'}]}, 'refused', 'files', net_file()),
    row('file_set', 'path is a directory', {'files': [{'path': T + '/etc/net', 'content': 'x'}]}, 'refused', 'files',
        net_file()),
    row('file_set', 'path is a symlink', {'files': [{'path': T + '/etc/net/l.network', 'content': 'x'}]}, 'refused',
        'files', (net_file(), symlink('etc/net/l.network', '@T@/etc/net/a.network'))),
    row('file_set', 'path is a FIFO', {'files': [{'path': T + '/etc/net/f.network', 'content': 'x'}]}, 'refused',
        'files', (net_file(), fifo('etc/net/f.network'))),
    row('file_set', 'parent is a file', {'files': [{'path': T + '/etc/net/a.network/x', 'content': 'x'}]}, 'refused',
        'files', net_file()),
    row('file_set', 'bad mode', {'files': [{'path': T + '/etc/net/a.network', 'content': 'x', 'mode': 'rw-r--r--'}]},
        'refused', 'files', net_file()),
    row('file_set', 'relative remove pattern', {'files': [], 'remove': ['*.network']}, 'refused', 'remove', net_file()),
    row('file_set', 'glob in the directory part of a remove pattern', {'files': [], 'remove': [T + '/etc/*/a.network']},
        'refused', 'remove', net_file()),
    row('file_set', 'remove pattern under a file', {'files': [], 'remove': [T + '/etc/net/a.network/*']}, 'refused',
        'remove', net_file()),
    row('file_set', 'unknown option', {'files': [], 'bogus': 1}, 'refused', 'bogus'),
    row('file_set', 'file as wanted, pattern matching it', {'files': [{'path': T + '/etc/net/a.network',
        'content': '[Match]\nName=eth1\n'}], 'remove': [T + '/etc/net/*.network']}, 'no-change', setup=net_file()),

    # ------------------------------------------------------------ pull_report (action; writes only into dest, outside
    # the tree, and every row fails before writing)
    row('pull_report', 'results not a directory', pull(results=T + '/nope'), 'refused', 'results'),
    row('pull_report', 'results a file', pull(), 'refused', 'results', file('res', GARBAGE)),
    row('pull_report', 'results a FIFO', pull(), 'refused', 'results', fifo('res')),
    row('pull_report', 'dest relative', pull(dest='out'), 'refused', 'dest', directory('res')),
    row('pull_report', 'dest a file', pull(dest=T + '/res/n1.json'), 'refused', 'dest', file('res/n1.json', '{}')),
    row('pull_report', 'expected empty', pull(expected=[]), 'refused', 'expected', directory('res')),
    row('pull_report', 'expected a dict', pull(expected={'n1': 1}), 'refused', 'expected', directory('res')),
    row('pull_report', 'max_age 0', pull(max_age=0), 'refused', 'max_age', directory('res')),
    row('pull_report', 'max_age a word', pull(max_age='soon'), 'refused', 'max_age', directory('res')),
    row('pull_report', 'template missing', pull(template=T + '/none.j2'), 'refused', 'template', directory('res')),
    row('pull_report', 'check and apply results mixed', pull(), 'refused', 'results',
        (file('res/n1.json', json.dumps(PULL_RESULT)),
         file('res/n2.json', json.dumps(dict(PULL_RESULT, node='n2', mode='apply'))))),

    # ------------------------------------------------------------ fleet_compare (action)
    row('fleet_compare', 'type confusion: hosts a string', {'hosts': 'gpu01'}, 'refused', 'hosts'),
    row('fleet_compare', 'host facts a string', {'hosts': {'gpu01': 'garbage'}}, 'refused', 'hosts'),
    row('fleet_compare', 'hca_match not a regex', {'hosts': {'a': GOOD_FACTS}, 'hca_match': '(mlx5'}, 'refused',
        'hca_match'),
    row('fleet_compare', 'empty hca_match', {'hosts': {'a': GOOD_FACTS}, 'hca_match': ''}, 'no-change'),
    row('fleet_compare', 'NUL in hca_match', {'hosts': {'a': GOOD_FACTS}, 'hca_match': 'mlx5' + NUL}, 'no-change'),
    row('fleet_compare', 'unknown item', {'hosts': {'a': GOOD_FACTS}, 'items': ['bios']}, 'refused', 'items'),
    row('fleet_compare', 'ports a string', {'hosts': {'a': {'infiniband': {'mlx5_0': {'ports': 'x'}}}}}, 'refused',
        'hosts'),
    row('fleet_compare', 'versions.hca_firmware a string', {'hosts': {'a': {'versions': {'hca_firmware': 'x'}}}},
        'refused', 'hosts'),
    row('fleet_compare', 'profile a list', {'hosts': {'a': GOOD_FACTS}, 'profiles': {'a': ['x']}}, 'refused',
        'profiles'),
    row('fleet_compare', 'path traversal ../ as a profile name',
        {'hosts': {'a': GOOD_FACTS}, 'profiles': {'a': '../../etc/passwd'}}, 'no-change'),
    row('fleet_compare', 'huge: 2000 hosts', {'hosts': dict(('gpu%04d' % i, GOOD_FACTS) for i in range(2000))},
        'no-change'),
    row('fleet_compare', 'garbage versions from a broken tool',
        {'hosts': {'a': {'nvidia_gpu': {'driver_version': '\ufffd\ufffdgarbage'}},
                   'b': {'nvidia_gpu': {'driver_version': 'N/A'}}}}, 'clean-failure'),

    # ------------------------------------------------------------ fw_facts
    row('fw_facts', 'empty sysfs_root', fw(sysfs_root=''), 'refused', 'sysfs_root'),
    row('fw_facts', 'NUL in sysfs_root', fw(sysfs_root=T + NUL), 'refused', 'sysfs_root'),
    row('fw_facts', 'sysfs_root is a file', fw(sysfs_root=T + '/f'), 'refused', 'sysfs_root', file('f')),
    row('fw_facts', 'path traversal in kernel_modules', fw(kernel_modules=['../../../etc']), 'refused',
        'kernel_modules'),
    row('fw_facts', 'empty kernel module name', fw(kernel_modules=['']), 'refused', 'kernel_modules'),
    row('fw_facts', 'type confusion: kernel module a dict', fw(kernel_modules=[{'a': 1}]), 'refused',
        'kernel_modules'),
    row('fw_facts', 'mstflint_path is a directory', fw(mstflint_path=T + '/bin'), 'refused', 'mstflint_path',
        directory('bin')),
    row('fw_facts', 'fabricmanager_log is a directory', fw(fabricmanager_log=T + '/log'), 'refused',
        'fabricmanager_log', directory('log')),
    row('fw_facts', 'fabricmanager_service an option', fw(fabricmanager_service='--now'), 'refused',
        'fabricmanager_service'),
    row('fw_facts', 'garbage ofed_info output', fw(ofed_info_path=T + '/bin/ofed_info'), 'no-change',
        setup=tool('ofed_info', GARBAGE)),
    row('fw_facts', 'garbage and rc 1 with fail_on_error', fw(ofed_info_path=T + '/bin/ofed_info',
                                                              fail_on_error=True), 'clean-failure',
        setup=tool('ofed_info', GARBAGE, rc=1)),
    row('fw_facts', 'huge: 5000 kernel modules', fw(kernel_modules=['m%d' % i for i in range(5000)]), 'no-change'),

    # ------------------------------------------------------------ gpu_burn
    row('gpu_burn', 'duration zero', {'executable': T + '/bin/gpu_burn', 'duration': 0}, 'refused', 'duration',
        tool('gpu_burn')),
    row('gpu_burn', 'duration negative', {'executable': T + '/bin/gpu_burn', 'duration': -60}, 'refused', 'duration',
        tool('gpu_burn')),
    row('gpu_burn', 'duration huge', {'executable': T + '/bin/gpu_burn', 'duration': HUGE}, 'refused', 'duration',
        tool('gpu_burn')),
    row('gpu_burn', 'type confusion: duration text', {'executable': T + '/bin/gpu_burn', 'duration': 'long'},
        'refused', 'duration', tool('gpu_burn')),
    row('gpu_burn', 'timeout zero', {'executable': T + '/bin/gpu_burn', 'timeout': 0}, 'refused', 'timeout',
        tool('gpu_burn')),
    row('gpu_burn', 'empty executable', {'executable': ''}, 'refused', 'executable'),
    row('gpu_burn', 'NUL in executable', {'executable': T + '/bin/gpu_burn' + NUL}, 'refused', 'executable'),
    row('gpu_burn', 'executable is a directory', {'executable': T + '/bin'}, 'refused', 'executable',
        directory('bin')),
    row('gpu_burn', 'chdir is a file', {'executable': T + '/bin/gpu_burn', 'chdir': T + '/bin/gpu_burn'}, 'refused',
        'chdir', tool('gpu_burn')),
    row('gpu_burn', 'memory not a size', {'executable': T + '/bin/gpu_burn', 'memory': 'lots'}, 'refused', 'memory',
        tool('gpu_burn')),
    row('gpu_burn', 'garbage output, path with ../', {'executable': T + '/bin/../bin/gpu_burn', 'duration': 1},
        'clean-failure', setup=tool('gpu_burn', GARBAGE)),
    row('gpu_burn', 'executable the OS cannot start', {'executable': T + '/bin/gpu_burn', 'duration': 1},
        'clean-failure', setup=exec_format_error('gpu_burn')),

    # ------------------------------------------------------------ gpu_facts
    row('gpu_facts', 'empty executable', {'executable': ''}, 'refused', 'executable'),
    row('gpu_facts', 'NUL in executable', {'executable': T + '/bin/nvidia-smi' + NUL}, 'refused', 'executable'),
    row('gpu_facts', 'executable is a directory', {'executable': T + '/bin'}, 'refused', 'executable',
        directory('bin')),
    row('gpu_facts', 'executable not executable', {'executable': T + '/bin/nvidia-smi'}, 'refused', 'executable',
        not_executable('nvidia-smi')),
    row('gpu_facts', 'type confusion: topology text', {'executable': T + '/bin/nvidia-smi', 'topology': 'maybe'},
        'refused', 'topology', tool('nvidia-smi')),
    row('gpu_facts', 'garbage: non-UTF-8 output', {'executable': T + '/bin/nvidia-smi'}, 'clean-failure',
        setup=tool('nvidia-smi', GARBAGE)),
    row('gpu_facts', 'garbage ASCII output', {'executable': T + '/bin/nvidia-smi'}, 'clean-failure',
        setup=tool('nvidia-smi', ASCII_GARBAGE)),
    row('gpu_facts', 'garbage topo -m after good XML, path with ../',
        {'executable': T + '/bin/../bin/nvidia-smi'}, 'no-change',
        setup=tool('nvidia-smi', GARBAGE, args_out={'-x': SMI_XML.read_bytes()})),
    row('gpu_facts', 'executable the OS cannot start', {'executable': T + '/bin/nvidia-smi'}, 'clean-failure',
        setup=exec_format_error('nvidia-smi')),
    row('gpu_facts', 'huge: 8 MiB of output that is not XML', {'executable': T + '/bin/nvidia-smi'}, 'clean-failure',
        setup=tool('nvidia-smi', b'<nvidia_smi_log><gpu id="' + b'9' * (8 << 20) + b'\n')),

    # ------------------------------------------------------------ gpu_firmware
    row('gpu_firmware', 'vbios not five hex pairs', gfw(vbios='94.02'), 'refused', 'vbios', GFW_TOOLS),
    row('gpu_firmware', 'type confusion: vbios a list', gfw(vbios=['94.02.75.00.1A']), 'refused', 'vbios', GFW_TOOLS),
    row('gpu_firmware', 'vbios an empty dict', gfw(vbios={}, images={}), 'refused', 'vbios', GFW_TOOLS),
    row('gpu_firmware', 'type confusion: a version a float', gfw(vbios={'NVIDIA A10G': 94.02}), 'refused', 'vbios',
        GFW_TOOLS),
    row('gpu_firmware', 'images for a model vbios does not list', gfw(images={'NVIDIA A1OG': 'a.img'}), 'refused',
        'images', GFW_TOOLS),
    row('gpu_firmware', 'a placeholder the scope does not have', gfw(scope='node'), 'refused', 'command', GFW_TOOLS),
    row('gpu_firmware', 'format-string attribute access', gfw(command=[T + '/bin/gpu-flash', '{image.__class__}']),
        'refused', 'command', GFW_TOOLS),
    row('gpu_firmware', 'command[0] an option', gfw(command=['-rf', '{image}']), 'refused', 'command', GFW_TOOLS),
    row('gpu_firmware', 'NUL in command', gfw(command=[T + '/bin/gpu-flash', '{image}' + NUL]), 'refused', 'command',
        GFW_TOOLS),
    row('gpu_firmware', 'command[0] is a directory', gfw(command=[T + '/bin', '{image}']), 'refused', 'command',
        GFW_TOOLS),
    row('gpu_firmware', 'pending_pattern not a regular expression', gfw(pending_pattern='(reboot'), 'refused',
        'pending_pattern', GFW_TOOLS),
    row('gpu_firmware', 'state_path relative', gfw(state_path='var/x.json'), 'refused', 'state_path', GFW_TOOLS),
    row('gpu_firmware', 'state_path is a directory', gfw(state_path=T + '/bundle'), 'refused', 'state_path', GFW_TOOLS),
    row('gpu_firmware', 'timeout zero', gfw(timeout=0), 'refused', 'timeout', GFW_TOOLS),
    row('gpu_firmware', 'scope not a choice', gfw(scope='rack'), 'refused', 'scope', GFW_TOOLS),
    # Read-only runs: nvidia-smi runs, the update tool never does.
    row('gpu_firmware', 'no image in the bundle: refused before any update', gfw(), 'clean-failure',
        setup=GFW_TOOLS),
    row('gpu_firmware', 'a record of garbage: refused before any update', gfw(state_path=T + '/var/g.json'),
        'clean-failure', setup=GFW_TOOLS + (file('bundle/a10g.img', b'x'), file('var/g.json', GARBAGE))),
    row('gpu_firmware', 'garbage: non-UTF-8 nvidia-smi output', gfw(), 'clean-failure',
        setup=(tool('nvidia-smi', GARBAGE), file('boot_id', 'b'))),
    row('gpu_firmware', 'nvidia-smi the OS cannot start', gfw(), 'clean-failure', setup=exec_format_error('nvidia-smi')),
    row('gpu_firmware', 'no nvidia-smi: skipped, no GPU', gfw(nvidia_smi_path=T + '/bin/absent'), 'no-change'),
    row('gpu_firmware', 'No devices were found', gfw(), 'no-change', setup=tool('nvidia-smi', b'No devices were found\n', rc=6)),
    row('gpu_firmware', 'up to date: nothing to do, the record of garbage unread',
        gfw(vbios='94.02.75.00.01', state_path=T + '/var/g.json'), 'no-change',
        setup=GFW_TOOLS + (file('var/g.json', GARBAGE),)),

    # ------------------------------------------------------------ gpu_settings
    row('gpu_settings', 'empty nvidia_smi_path', gset(nvidia_smi_path=''), 'refused', 'nvidia_smi_path'),
    row('gpu_settings', 'NUL in nvidia_smi_path', gset(nvidia_smi_path=T + '/bin/nvidia-smi' + NUL), 'refused',
        'nvidia_smi_path'),
    row('gpu_settings', 'nvidia_smi_path is a directory', gset(nvidia_smi_path=T + '/bin'), 'refused', 'nvidia_smi_path',
        directory('bin')),
    row('gpu_settings', 'type confusion: power_limit_w text', gset({'power_limit_w': 'lots'}), 'refused', 'power_limit_w',
        tool('nvidia-smi')),
    row('gpu_settings', 'power_limit_w negative', gset({'power_limit_w': -300}), 'refused', 'power_limit_w',
        tool('nvidia-smi')),
    row('gpu_settings', 'huge power_limit_w', gset({'power_limit_w': HUGE}), 'refused', 'power_limit_w', tool('nvidia-smi')),
    row('gpu_settings', 'compute_mode not a choice', gset({'compute_mode': 'Exclusive_Thread'}), 'refused', 'compute_mode',
        tool('nvidia-smi')),
    row('gpu_settings', 'locked_clocks min above max', gset({'locked_clocks': {'min_mhz': 1500, 'max_mhz': 1200}}),
        'refused', 'locked_clocks', tool('nvidia-smi')),
    row('gpu_settings', 'path traversal as a MIG profile', gset({'mig': {'enabled': True, 'instances': ['../../x']}}),
        'refused', 'instances', tool('nvidia-smi')),
    row('gpu_settings', 'unknown key (typo)', gset({'powr_limit_w': 250}), 'refused', 'powr_limit_w', tool('nvidia-smi')),
    row('gpu_settings', 'model twice', gset(settings=[{'model': 'NVIDIA A10G'}, {'model': 'NVIDIA A10G'}]), 'refused',
        'model', tool('nvidia-smi')),
    row('gpu_settings', 'persist_path is a directory', gset(persist_path=T + '/etc'), 'refused', 'persist_path',
        (directory('etc'), tool('nvidia-smi'))),
    row('gpu_settings', 'persist_path relative', gset(persist_path='etc/gpu.json'), 'refused', 'persist_path',
        tool('nvidia-smi')),
    # The GPU's own limits are known only after reading -q -x (a read-only run), so these refusals run the tool:
    # clean failures naming the option, nothing changed.
    row('gpu_settings', 'power limit above what the recorded A10G allows', gset({'power_limit_w': 301}), 'clean-failure',
        setup=tool('nvidia-smi', A10G_XML.read_bytes())),
    row('gpu_settings', 'MIG on the recorded A10G (not MIG-capable)', gset({'mig': {'enabled': True}}), 'clean-failure',
        setup=tool('nvidia-smi', A10G_XML.read_bytes())),
    row('gpu_settings', 'garbage: non-UTF-8 output', gset(), 'clean-failure', setup=tool('nvidia-smi', GARBAGE)),
    row('gpu_settings', 'garbage ASCII output, path with ../', gset(nvidia_smi_path=T + '/bin/../bin/nvidia-smi'),
        'clean-failure', setup=tool('nvidia-smi', ASCII_GARBAGE)),
    row('gpu_settings', 'nvidia-smi the OS cannot start', gset(), 'clean-failure', setup=exec_format_error('nvidia-smi')),
    row('gpu_settings', 'no nvidia-smi: skipped, no GPU', gset(nvidia_smi_path=T + '/bin/absent-nvidia-smi'), 'no-change'),
    row('gpu_settings', 'No devices were found', gset(), 'no-change',
        setup=tool('nvidia-smi', b'No devices were found\n', rc=6)),

    # ------------------------------------------------------------ hca_firmware
    row('hca_firmware', 'version not MAJOR.MINOR.SUBMINOR', hca(version='20.36'), 'refused', 'version', HCA_TOOLS),
    row('hca_firmware', 'version and versions both', hca(versions={'MT_0000000228': '20.36.1012'}), 'refused',
        'version', HCA_TOOLS),
    row('hca_firmware', 'neither version nor versions', hca_no('version'), 'refused', 'version', HCA_TOOLS),
    row('hca_firmware', 'path traversal as a PSID', hca_no('version', versions={'../../etc/x': '20.36.1012'}), 'refused',
        'versions', HCA_TOOLS),
    row('hca_firmware', 'type confusion: a version a float', hca_no('version', versions={'MT_0000000228': 20.36}),
        'refused', 'versions', HCA_TOOLS),
    row('hca_firmware', 'type confusion: versions a list', hca_no('version', versions=['20.36.1012']), 'refused',
        'versions', HCA_TOOLS),
    row('hca_firmware', 'bundle_dir is a file', hca(bundle_dir=T + '/f'), 'refused', 'bundle_dir',
        HCA_TOOLS + (file('f'),)),
    row('hca_firmware', 'bundle_dir does not exist', hca(bundle_dir=T + '/nowhere'), 'refused', 'bundle_dir', HCA_TOOLS),
    row('hca_firmware', 'NUL in bundle_dir', hca(bundle_dir=T + '/bundle' + NUL), 'refused', 'bundle_dir', HCA_TOOLS),
    row('hca_firmware', 'images entry not a file', hca(images={'MT_0000000228': '../../etc/passwd-nope'}), 'refused',
        'images', HCA_TOOLS),
    row('hca_firmware', 'a device that is an option', hca(devices=['-y']), 'refused', 'devices', HCA_TOOLS),
    row('hca_firmware', 'timeout zero', hca(timeout=0), 'refused', 'timeout', HCA_TOOLS),
    row('hca_firmware', 'huge timeout', hca(timeout=HUGE), 'refused', 'timeout', HCA_TOOLS),
    row('hca_firmware', 'tool_path is a directory', hca(tool_path=T + '/bin'), 'refused', 'tool_path', HCA_TOOLS),
    row('hca_firmware', 'tool not a choice', hca(tool='mlxburn'), 'refused', 'tool', HCA_TOOLS),
    row('hca_firmware', 'sysfs_root is a file', hca(sysfs_root=T + '/f'), 'refused', 'sysfs_root',
        HCA_TOOLS + (file('f'),)),
    # Read-only runs: the cards' and the images' queries run, nothing is burned.
    row('hca_firmware', 'no HCA: skipped', hca(sysfs_root=T), 'no-change', setup=(directory('bundle'), tool('mstflint'))),
    row('hca_firmware', 'up to date: nothing to do', hca(version='20.35.1012'), 'no-change', setup=HCA_TOOLS),
    row('hca_firmware', 'garbage: non-UTF-8 query output', hca(), 'clean-failure',
        setup=(hca_pci_tree, tool('mstflint', GARBAGE))),
    row('hca_firmware', 'mstflint the OS cannot start', hca(), 'clean-failure',
        setup=(hca_pci_tree, exec_format_error('mstflint'))),
    row('hca_firmware', 'no mstflint on a host with an HCA', hca(tool_path=T + '/bin/absent-mstflint'), 'clean-failure',
        setup=hca_pci_tree),
    row('hca_firmware', 'a bundle of garbage: refused before any burn', hca(), 'clean-failure',
        setup=(hca_pci_tree, file('bundle/fw.bin', GARBAGE), tool('mstflint', GARBAGE, args_out={'-d': MLX_Q}))),

    # ------------------------------------------------------------ ib_port_facts
    row('ib_port_facts', 'empty sysfs_root', {'sysfs_root': ''}, 'refused', 'sysfs_root'),
    row('ib_port_facts', 'NUL in sysfs_root', {'sysfs_root': T + NUL}, 'refused', 'sysfs_root'),
    row('ib_port_facts', 'type confusion: sysfs_root a list', {'sysfs_root': [T]}, 'refused', 'sysfs_root'),
    row('ib_port_facts', 'sysfs_root is a file', {'sysfs_root': T + '/f'}, 'refused', 'sysfs_root', file('f')),
    row('ib_port_facts', 'path traversal ../ to a good tree', {'sysfs_root': T + '/root/sys/../'}, 'no-change',
        setup=ib_tree),
    row('ib_port_facts', 'directory where a port file is expected', {'sysfs_root': T + '/root'}, 'no-change',
        setup=(ib_tree, directory('root/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data/x'))),
    row('ib_port_facts', 'garbage: non-UTF-8 sysfs files', {'sysfs_root': T + '/root'}, 'no-change',
        setup=(ib_tree, file('root/sys/class/infiniband/mlx5_0/ports/1/rate', GARBAGE),
               file('root/sys/class/infiniband/mlx5_0/fw_ver', GARBAGE))),
    row('ib_port_facts', 'huge counter value and negative port', {'sysfs_root': T + '/root'}, 'no-change',
        setup=(ib_tree, file('root/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data', '9' * 4000),
               directory('root/sys/class/infiniband/mlx5_0/ports/-1'))),
    row('ib_port_facts', 'symlink loop as a device', {'sysfs_root': T + '/root'}, 'no-change',
        setup=(ib_tree, symlink('root/sys/class/infiniband/mlx5_9', 'mlx5_9'))),

    # ------------------------------------------------------------ fabric_health
    row('fabric_health', 'empty sysfs_root', fab(sysfs_root=''), 'refused', 'sysfs_root'),
    row('fabric_health', 'NUL in a device name', fab(devices=['mlx5_0' + NUL]), 'refused', 'devices', ib_tree),
    row('fabric_health', 'negative interval', fab(interval=-1), 'refused', 'interval', ib_tree),
    row('fabric_health', 'huge interval', fab(interval=HUGE), 'refused', 'interval', ib_tree),
    row('fabric_health', 'type confusion: max_growth a list', fab(max_growth=['symbol_error']), 'refused', 'max_growth',
        ib_tree),
    row('fabric_health', 'negative growth threshold', fab(max_growth={'symbol_error': -1}), 'refused', 'max_growth',
        ib_tree),
    row('fabric_health', 'counter name with a path', fab(max_growth={'../../etc/passwd': 0}), 'refused', 'max_growth',
        ib_tree),
    row('fabric_health', 'device that reads as an option', fab(devices=['-C']), 'refused', 'devices', ib_tree),
    row('fabric_health', 'unknown width', fab(min_width='3X'), 'refused', 'min_width', ib_tree),
    row('fabric_health', 'sminfo_path is a directory', fab(sminfo_path=T + '/bin'), 'refused', 'sminfo_path',
        (ib_tree, directory('bin'))),
    row('fabric_health', 'no HCA: skipped', fab(sysfs_root=T), 'no-change'),
    row('fabric_health', 'garbage: non-UTF-8 counter and sm_lid', fab(), 'clean-failure',
        setup=(ib_tree, file('root/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error', GARBAGE),
               file('root/sys/class/infiniband/mlx5_0/ports/1/sm_lid', GARBAGE))),
    row('fabric_health', 'garbage: sminfo prints noise', fab(), 'clean-failure',
        setup=(ib_tree, file('root/sys/class/infiniband/mlx5_0/ports/1/sm_lid', '0x1\n'), tool('sminfo', GARBAGE))),
    row('fabric_health', 'sminfo the OS cannot start', fab(), 'clean-failure',
        setup=(ib_tree, file('root/sys/class/infiniband/mlx5_0/ports/1/sm_lid', '0x1\n'), exec_format_error('sminfo'))),

    # ------------------------------------------------------------ ib_fabric_info
    row('ib_fabric_info', 'empty ibswitches_path', ibf(ibswitches_path=''), 'refused', 'ibswitches_path'),
    row('ib_fabric_info', 'NUL in ca', ibf(ca='mlx5_0' + NUL), 'refused', 'ca'),
    row('ib_fabric_info', 'ca that reads as an option', ibf(ca='-D'), 'refused', 'ca', IBDIAG_TOOLS),
    row('ib_fabric_info', 'zero ca_port', ibf(ca_port=0), 'refused', 'ca_port', IBDIAG_TOOLS),
    row('ib_fabric_info', 'timeout zero', ibf(timeout=0), 'refused', 'timeout', IBDIAG_TOOLS),
    row('ib_fabric_info', 'unknown width', ibf(min_width='5X'), 'refused', 'min_width', IBDIAG_TOOLS),
    row('ib_fabric_info', 'type confusion: lane speed a word', ibf(min_lane_gbps='fast'), 'refused', 'min_lane_gbps',
        IBDIAG_TOOLS),
    row('ib_fabric_info', 'firmware version a word', ibf(expect_switch_fw='latest'), 'refused', 'expect_switch_fw',
        IBDIAG_TOOLS),
    row('ib_fabric_info', 'db_csv is a directory', ibf(ibdiagnet_db_csv=T + '/d'), 'refused', 'ibdiagnet_db_csv',
        directory('d')),
    row('ib_fabric_info', 'db_csv is a FIFO', ibf(ibdiagnet_db_csv=T + '/fifo'), 'refused', 'ibdiagnet_db_csv',
        (fifo('fifo'),) + IBDIAG_TOOLS),
    row('ib_fabric_info', 'no infiniband-diags, no db_csv: skipped', ibf(), 'no-change'),
    row('ib_fabric_info', 'garbage: tools print noise', ibf(), 'clean-failure',
        setup=(tool('ibswitches', GARBAGE), tool('iblinkinfo', ASCII_GARBAGE))),
    row('ib_fabric_info', 'tool fails (no umad port)', ibf(), 'clean-failure',
        setup=(tool('ibswitches', b'ibwarn: [1] mad_rpc_open_port: can not open port\n', rc=255), tool('iblinkinfo', b''))),
    row('ib_fabric_info', 'garbage db_csv and no db_csv file', ibf(ibdiagnet_db_csv=T + '/db.csv'), 'clean-failure',
        setup=file('db.csv', GARBAGE)),
    row('ib_fabric_info', 'db_csv missing', ibf(ibdiagnet_db_csv=T + '/absent.db_csv'), 'clean-failure'),

    # ------------------------------------------------------------ irq_affinity (another change hardens it now)
    row('irq_affinity', 'empty device', irq(device=''), 'refused', 'device', irq_tree),
    row('irq_affinity', 'path traversal in device', irq(device='../../../../etc'), 'refused', 'device', irq_tree),
    row('irq_affinity', 'NUL in interface', dict((k, v) for k, v in irq(interface='ens1f0' + NUL).items()
                                                 if k != 'device'), 'refused', 'interface', irq_tree),
    row('irq_affinity', 'negative cpu', irq(policy='explicit', cpus=['-1']), 'refused', 'cpus', irq_tree),
    row('irq_affinity', 'huge cpu range', irq(policy='explicit', cpus=['0-%d' % HUGE]), 'refused', 'cpus', irq_tree),
    row('irq_affinity', 'type confusion: reserved cpu a word', irq(reserved_cpus=['eight']), 'refused',
        'reserved_cpus', irq_tree),
    row('irq_affinity', 'irq_name_regex not a regex', irq(irq_name_regex='(mlx5'), 'refused', 'irq_name_regex',
        irq_tree),
    row('irq_affinity', 'proc_root is a file', irq(proc_root=T + '/f'), 'refused', 'proc_root',
        (irq_tree, file('f'))),
    row('irq_affinity', 'empty sysfs_root', irq(sysfs_root=''), 'refused', 'sysfs_root', irq_tree),
    row('irq_affinity', 'irqbalance_config is a directory', irq(irqbalance='ban', irqbalance_config=T + '/conf'),
        'refused', 'irqbalance_config', (irq_tree, directory('conf'))),
    row('irq_affinity', 'garbage: /proc/interrupts not UTF-8', irq(), 'clean-failure',
        setup=(irq_tree, file('root/proc/interrupts', GARBAGE))),

    # ------------------------------------------------------------ nft_table
    row('nft_table', 'name with a space', nftp(name='gpu fleet'), 'refused', 'name', NFT_TOOLS),
    row('nft_table', 'name that looks like an option', nftp(name='-x'), 'refused', 'name', NFT_TOOLS),
    row('nft_table', 'NUL in content', nftp(content=NFT_OK + NUL), 'refused', 'content', NFT_TOOLS),
    row('nft_table', 'content flushes the whole ruleset', nftp(content='flush ruleset\n' + NFT_OK), 'refused', 'content',
        NFT_TOOLS),
    row('nft_table', 'content defines another table', nftp(content=NFT_OK + 'table ip nat {\n}\n'), 'refused', 'content',
        NFT_TOOLS),
    row('nft_table', 'content includes a file', nftp(content='include "/etc/passwd"\n'), 'refused', 'content', NFT_TOOLS),
    row('nft_table', 'content with unbalanced braces', nftp(content='table inet gpufleet {\n'), 'refused', 'content',
        NFT_TOOLS),
    row('nft_table', 'no content with state present', nftp(content=None), 'refused', 'content', NFT_TOOLS),
    row('nft_table', 'type confusion: content a list', nftp(content=['table inet gpufleet {', '}']), 'refused', 'content',
        NFT_TOOLS),
    row('nft_table', 'rollback_seconds too short to reconnect', nftp(rollback_seconds=3), 'refused', 'rollback_seconds',
        NFT_TOOLS),
    row('nft_table', 'huge rollback_seconds', nftp(rollback_seconds=HUGE), 'refused', 'rollback_seconds', NFT_TOOLS),
    row('nft_table', 'relative path', nftp(path='etc/gpufleet.nft'), 'refused', 'path', NFT_TOOLS),
    row('nft_table', 'path is a directory', nftp(path=T + '/bin'), 'refused', 'path', NFT_TOOLS),
    row('nft_table', 'state_dir is a file', nftp(state_dir=T + '/bin/nft'), 'refused', 'state_dir', NFT_TOOLS),
    row('nft_table', 'timeout zero', nftp(timeout=0), 'refused', 'timeout', NFT_TOOLS),
    row('nft_table', 'nft_path is a directory', nftp(nft_path=T + '/bin'), 'refused', 'nft_path', NFT_TOOLS),
    row('nft_table', 'content for state absent', nftp(state='absent'), 'refused', 'content', NFT_TOOLS),
    # Tools that fail or print garbage, and converged hosts.
    row('nft_table', 'nft is not installed', nftp(nft_path=T + '/bin/absent-nft'), 'clean-failure'),
    row('nft_table', 'garbage: nft list prints non-UTF-8 bytes and fails', nftp(), 'clean-failure',
        setup=(tool('nft', GARBAGE, rc=2), tool('systemctl', b'inactive\n', rc=3), tool('systemd-run'))),
    row('nft_table', 'nft the OS cannot start', nftp(), 'clean-failure',
        setup=(exec_format_error('nft'), tool('systemctl', b'inactive\n', rc=3))),
    row('nft_table', 'nft fails every call (rc 1)', nftp(), 'clean-failure',
        setup=(tool('nft', b'Error: syntax error\n', rc=1), tool('systemctl', b'inactive\n', rc=3), tool('systemd-run'))),
    row('nft_table', 'absent: no table, no file', nftp(state='absent', content=None), 'no-change', setup=NFT_TOOLS),
    row('nft_table', 'confirmed: nothing pending', nftp(state='confirmed', content=None), 'no-change', setup=NFT_TOOLS),
    # ------------------------------------------------------------ kernel_boot
    row('kernel_boot', 'release with a space', kb(release='6.1.0-28 amd64'), 'refused', 'release', KB_TREE),
    row('kernel_boot', 'path traversal as a release', kb(release='../../../etc/passwd'), 'refused', 'release', KB_TREE),
    row('kernel_boot', 'release with a slash', kb(release='6.1/0-28'), 'refused', 'release', KB_TREE),
    row('kernel_boot', 'empty release', kb(release=''), 'refused', 'release', KB_TREE),
    row('kernel_boot', 'NUL in release', kb(release='6.1.0-28-amd64' + NUL), 'refused', 'release', KB_TREE),
    row('kernel_boot', 'type confusion: release a list', kb(release=['6.1.0-28-amd64']), 'refused', 'release', KB_TREE),
    row('kernel_boot', 'a module path, not a module name', kb(required_modules=['updates/dkms/nvidia.ko']), 'refused',
        'required_modules', KB_TREE),
    row('kernel_boot', 'a carried module given as a path', kb(carry_modules=['../../nvidia']), 'refused', 'carry_modules',
        KB_TREE),
    row('kernel_boot', 'type confusion: carry_modules a dict', kb(carry_modules={'nvidia': 1}), 'refused',
        'carry_modules', KB_TREE),
    row('kernel_boot', 'a module name that is an option', kb(required_modules=['-r']), 'refused', 'required_modules',
        KB_TREE),
    row('kernel_boot', 'unknown bootloader', kb(bootloader='systemd-boot'), 'refused', 'bootloader', KB_TREE),
    row('kernel_boot', 'unknown make_default', kb(make_default='later'), 'refused', 'make_default', KB_TREE),
    row('kernel_boot', 'timeout zero', kb(timeout=0), 'refused', 'timeout', KB_TREE),
    row('kernel_boot', 'huge timeout', kb(timeout=HUGE), 'refused', 'timeout', KB_TREE),
    row('kernel_boot', 'boot_dir is a file', kb(boot_dir=T + '/boot/vmlinuz-6.1.0-27-amd64'), 'refused', 'boot_dir',
        KB_TREE),
    row('kernel_boot', 'grub_default_file relative', kb(grub_default_file='etc/default/grub'), 'refused',
        'grub_default_file', KB_TREE),
    row('kernel_boot', 'dkms_path is a directory', kb(dkms_path=T + '/bin'), 'refused', 'dkms_path', KB_TREE),
    row('kernel_boot', 'unknown scope', kb(scope='image'), 'refused', 'scope', KB_TREE),
    row('kernel_boot', 'trial build (scope dkms) without the headers installed', kb(scope='dkms'), 'clean-failure',
        setup=KB_TREE),
    row('kernel_boot', 'sources outside the trial (scope all)', kb(sources=[T + '/src/nvidia-570.133.20']), 'refused',
        'sources', KB_TREE + (file('src/nvidia-570.133.20/dkms.conf', 'PACKAGE_NAME="nvidia"\nPACKAGE_VERSION="570.133.20"\n'),)),
    row('kernel_boot', 'a source tree given as a relative path', kb(scope='dkms', sources=['usr/src/nvidia-570.133.20']),
        'refused', 'sources', KB_TREE),
    row('kernel_boot', 'a source tree without dkms.conf', kb(scope='dkms', sources=[T + '/lib/modules']), 'refused',
        'sources', KB_TREE),
    row('kernel_boot', 'type confusion: sources a dict', kb(scope='dkms', sources={'nvidia': '570'}), 'refused',
        'sources', KB_TREE),
    row('kernel_boot', 'dkms.conf whose version the shell computes', kb(scope='dkms', sources=[T + '/src/nv']),
        'clean-failure', setup=KB_TREE + (directory('lib/modules/6.1.0-28-amd64/build'),
                                          file('src/nv/dkms.conf', 'PACKAGE_NAME=nvidia\nPACKAGE_VERSION=$(cat VERSION)\n'))),
    row('kernel_boot', 'garbage dkms.conf (non-UTF-8 bytes)', kb(scope='dkms', sources=[T + '/src/nv']),
        'clean-failure', setup=KB_TREE + (directory('lib/modules/6.1.0-28-amd64/build'), file('src/nv/dkms.conf', GARBAGE))),
    # Read-only runs (a refusal after reading; nothing is changed) and a converged host.
    row('kernel_boot', 'garbage: dkms status of non-UTF-8 bytes, a module missing', kb(required_modules=['nvidia']),
        'clean-failure', setup=KB_TREE + (tool('dkms', GARBAGE),)),
    row('kernel_boot', 'garbage: modinfo prints noise for a module file', kb(required_modules=['mlx5_core']),
        'clean-failure', setup=KB_TREE + (file('lib/modules/6.1.0-28-amd64/kernel/mlx5_core.ko', 'x'),
                                          tool('modinfo', ASCII_GARBAGE))),
    row('kernel_boot', 'garbage grub.cfg: no boot entry', kb(), 'clean-failure',
        setup=KB_TREE + (file('boot/grub/grub.cfg', GARBAGE),)),
    row('kernel_boot', 'no osrelease under proc_root', kb(proc_root=T + '/boot'), 'clean-failure', setup=KB_TREE),
    row('kernel_boot', 'dkms the OS cannot start', kb(required_modules=['nvidia']), 'clean-failure',
        setup=KB_TREE + (exec_format_error('dkms'),)),
    row('kernel_boot', 'converged: running and default, nothing to do', kb(release='6.1.0-27-amd64'), 'no-change',
        setup=KB_TREE),

    # ------------------------------------------------------------ nccl_bench
    row('nccl_bench', 'env name with =', {'executable': T + '/bin/nccl', 'env': {'A=B': '1'}}, 'refused', 'env',
        tool('nccl')),
    row('nccl_bench', 'NUL in an env name', {'executable': T + '/bin/nccl', 'env': {'A' + NUL: '1'}}, 'refused',
        'env', tool('nccl')),
    row('nccl_bench', 'NUL in an env value', {'executable': T + '/bin/nccl', 'env': {'A': '1' + NUL}}, 'refused',
        'env', tool('nccl')),
    row('nccl_bench', 'type confusion: env value a dict', {'executable': T + '/bin/nccl', 'env': {'A': {'b': 1}}},
        'refused', 'env', tool('nccl')),
    row('nccl_bench', 'timeout zero', {'executable': T + '/bin/nccl', 'timeout': 0}, 'refused', 'timeout',
        tool('nccl')),
    row('nccl_bench', 'timeout huge', {'executable': T + '/bin/nccl', 'timeout': HUGE}, 'refused', 'timeout',
        tool('nccl')),
    row('nccl_bench', 'zero ranks per host', {'executable': T + '/bin/nccl', 'ranks_per_host': 0}, 'refused',
        'ranks_per_host', tool('nccl')),
    row('nccl_bench', 'empty begin_size', {'executable': T + '/bin/nccl', 'begin_size': ''}, 'refused', 'begin_size',
        tool('nccl')),
    row('nccl_bench', 'begin above end', {'executable': T + '/bin/nccl', 'begin_size': '8G', 'end_size': '8'},
        'refused', 'begin_size', tool('nccl')),
    row('nccl_bench', 'host that is an option', {'executable': 'x', 'launcher': 'mpirun', 'hosts': ['-oProxy=x'],
                                                 'launcher_executable': T + '/bin/mpirun'},
        'refused', 'hosts', tool('mpirun')),
    row('nccl_bench', 'executable is a directory', {'executable': T + '/bin'}, 'refused', 'executable',
        directory('bin')),
    row('nccl_bench', 'garbage output, path with ../', {'executable': T + '/bin/../bin/nccl'}, 'clean-failure',
        setup=tool('nccl', GARBAGE)),
    row('nccl_bench', 'negative threshold', {'executable': T + '/bin/nccl', 'min_busbw_gbytes_per_s': -1.0}, 'refused',
        'min_busbw_gbytes_per_s', tool('nccl', NCCL_OK.read_bytes())),
    row('nccl_bench', 'negative threshold by its deprecated name', {'executable': T + '/bin/nccl', 'min_busbw': -1.0},
        'refused', 'min_busbw', tool('nccl', NCCL_OK.read_bytes())),

    # ------------------------------------------------------------ node_compare (action)
    row('node_compare', 'type confusion: expected a string', {'facts': {}, 'expected': 'gpus=8x'}, 'refused',
        'expected'),
    row('node_compare', 'negative GPU count', {'facts': GOOD_FACTS, 'expected': {'gpus': -1}}, 'refused',
        'expected'),
    row('node_compare', 'hca_match not a regex', {'facts': GOOD_FACTS, 'expected': {'hca_match': '['}}, 'refused',
        'expected'),
    row('node_compare', 'empty expectation value', {'facts': GOOD_FACTS, 'expected': {'gpu_model': ''}}, 'refused',
        'expected'),
    row('node_compare', 'huge GPU count', {'facts': GOOD_FACTS, 'expected': {'gpus': HUGE}}, 'clean-failure'),
    row('node_compare', 'GPU facts a string', {'facts': {'nvidia_gpu': 'garbage'}, 'expected': {'gpus': 8}},
        'refused', 'facts'),
    row('node_compare', 'a port a string', {'facts': {'infiniband': {'mlx5_0': {'ports': {'1': 'x'}}}},
                                            'expected': {'hcas': 1}}, 'refused', 'facts'),
    row('node_compare', 'path traversal ../ as label', {'facts': GOOD_FACTS, 'expected': {'gpus': 1},
                                                        'label': '../../etc/passwd'}, 'no-change'),
    row('node_compare', 'NUL in an expected version', {'facts': GOOD_FACTS, 'fail_on_deviation': False,
                                                       'expected': {'kernel': '6.8' + NUL}}, 'no-change'),
    row('node_compare', 'garbage ibv_devinfo output', {'facts': dict(GOOD_FACTS, ibv_devinfo='\ufffd\x00 #|?x\n'),
                                                       'expected': {'ib_mtu': 4096}}, 'clean-failure'),

    # ------------------------------------------------------------ node_facts
    row('node_facts', 'empty subset', nfacts(subset=[]), 'refused', 'subset'),
    row('node_facts', 'unknown subset', nfacts(subset=['pci', 'gpus']), 'refused', 'subset'),
    row('node_facts', 'empty sysfs_root', nfacts(sysfs_root=''), 'refused', 'sysfs_root'),
    row('node_facts', 'NUL in proc_root', nfacts(proc_root=T + NUL), 'refused', 'proc_root'),
    row('node_facts', 'proc_root is a file', nfacts(proc_root=T + '/f'), 'refused', 'proc_root', file('f')),
    row('node_facts', 'vendor not hex', nfacts(vendors=['nvidia']), 'refused', 'vendors'),
    row('node_facts', 'nvidia_smi_path is a directory', nfacts(nvidia_smi_path=T + '/bin'), 'refused',
        'nvidia_smi_path', directory('bin')),
    row('node_facts', 'path traversal in kernel_modules', nfacts(kernel_modules=['../../../etc']), 'refused',
        'kernel_modules'),
    row('node_facts', 'garbage: non-UTF-8 nvidia-smi output', nfacts(subset=['gpu'], nvidia_smi_path=T + '/bin/nvidia-smi'),
        'clean-failure', setup=tool('nvidia-smi', GARBAGE)),
    row('node_facts', 'garbage: non-UTF-8 bonding file', nfacts(subset=['bonding'], proc_root=T + '/root'), 'refused',
        'proc_root', setup=file('root/proc/net/bonding/bond0', GARBAGE)),
    row('node_facts', 'garbage ofed_info and rc 1 with fail_on_error',
        nfacts(subset=['firmware'], ofed_info_path=T + '/bin/ofed_info', fail_on_error=True), 'clean-failure',
        setup=tool('ofed_info', GARBAGE, rc=1)),
    row('node_facts', 'every subset, roots through ../, garbage sysfs files',
        nfacts(sysfs_root=T + '/root/sys/../', proc_root=T + '/root/proc/../'), 'no-change',
        setup=(pci_tree, ib_tree, bond_tree, file('root/sys/class/infiniband/mlx5_0/fw_ver', GARBAGE),
               file('root/sys/bus/pci/devices/0000:17:00.0/current_link_width', '9' * 5000))),

    # ------------------------------------------------------------ p2p_bandwidth
    row('p2p_bandwidth', 'timeout zero', {'executable': T + '/bin/p2p', 'timeout': 0}, 'refused', 'timeout',
        tool('p2p')),
    row('p2p_bandwidth', 'timeout negative', {'executable': T + '/bin/p2p', 'timeout': -3}, 'refused', 'timeout',
        tool('p2p')),
    row('p2p_bandwidth', 'timeout huge', {'executable': T + '/bin/p2p', 'timeout': HUGE}, 'refused', 'timeout',
        tool('p2p')),
    row('p2p_bandwidth', 'empty executable', {'executable': ''}, 'refused', 'executable'),
    row('p2p_bandwidth', 'executable is a directory', {'executable': T + '/bin'}, 'refused', 'executable',
        directory('bin')),
    row('p2p_bandwidth', 'empty test case', {'executable': T + '/bin/p2p', 'tool': 'nvbandwidth', 'testcases': ['']},
        'refused', 'testcases', tool('p2p')),
    row('p2p_bandwidth', 'negative threshold', {'executable': T + '/bin/p2p', 'min_gbytes_per_s': -1.0}, 'refused',
        'min_gbytes_per_s', tool('p2p')),
    row('p2p_bandwidth', 'negative threshold by its deprecated name', {'executable': T + '/bin/p2p', 'min_gbps': -1.0},
        'refused', 'min_gbps', tool('p2p')),
    row('p2p_bandwidth', 'zero expected GPUs', {'executable': T + '/bin/p2p', 'expected_gpus': 0}, 'refused',
        'expected_gpus', tool('p2p')),
    row('p2p_bandwidth', 'type confusion: threshold text', {'executable': T + '/bin/p2p', 'min_gbytes_per_s': 'fast'},
        'refused', 'min_gbytes_per_s', tool('p2p')),
    row('p2p_bandwidth', 'NUL in args', {'executable': T + '/bin/p2p', 'args': ['--x' + NUL]}, 'refused', 'args',
        tool('p2p')),
    row('p2p_bandwidth', 'garbage output, path with ../', {'executable': T + '/bin/../bin/p2p'}, 'clean-failure',
        setup=tool('p2p', GARBAGE)),

    # ------------------------------------------------------------ pci_facts
    row('pci_facts', 'empty sysfs_root', {'sysfs_root': ''}, 'refused', 'sysfs_root'),
    row('pci_facts', 'NUL in sysfs_root', {'sysfs_root': T + NUL}, 'refused', 'sysfs_root'),
    row('pci_facts', 'sysfs_root is a file', {'sysfs_root': T + '/f'}, 'refused', 'sysfs_root', file('f')),
    row('pci_facts', 'vendor not hex', {'sysfs_root': T, 'vendors': ['nvidia']}, 'refused', 'vendors'),
    row('pci_facts', 'empty vendor', {'sysfs_root': T, 'vendors': ['']}, 'refused', 'vendors'),
    row('pci_facts', 'type confusion: vendor a boolean', {'sysfs_root': T, 'vendors': [True]}, 'refused', 'vendors'),
    row('pci_facts', 'path traversal ../ to a good tree', {'sysfs_root': T + '/root/sys/../'}, 'no-change',
        setup=pci_tree),
    row('pci_facts', 'directory where the vendor file is expected', {'sysfs_root': T + '/root', 'vendors': []},
        'no-change', setup=(pci_tree, directory('root/sys/bus/pci/devices/0000:18:00.0/vendor'))),
    row('pci_facts', 'garbage: non-UTF-8 and huge link width', {'sysfs_root': T + '/root'}, 'no-change',
        setup=(pci_tree, file('root/sys/bus/pci/devices/0000:17:00.0/current_link_width', '9' * 5000),
               file('root/sys/bus/pci/devices/0000:17:00.0/current_link_speed', GARBAGE))),

    # ------------------------------------------------------------ rdma_bw
    row('rdma_bw', 'timeout zero', {'executable': T + '/bin/ib_write_bw', 'timeout': 0}, 'refused', 'timeout',
        tool('ib_write_bw')),
    row('rdma_bw', 'timeout negative', {'executable': T + '/bin/ib_write_bw', 'timeout': -1}, 'refused', 'timeout',
        tool('ib_write_bw')),
    row('rdma_bw', 'zero ib_port', {'executable': T + '/bin/ib_write_bw', 'ib_port': 0}, 'refused', 'ib_port',
        tool('ib_write_bw')),
    row('rdma_bw', 'huge TCP port', {'executable': T + '/bin/ib_write_bw', 'port': 70000}, 'refused', 'port',
        tool('ib_write_bw')),
    row('rdma_bw', 'negative size', {'executable': T + '/bin/ib_write_bw', 'size': -1}, 'refused', 'size',
        tool('ib_write_bw')),
    row('rdma_bw', 'type confusion: qps text', {'executable': T + '/bin/ib_write_bw', 'qps': 'many'}, 'refused',
        'qps', tool('ib_write_bw')),
    row('rdma_bw', 'empty device', {'executable': T + '/bin/ib_write_bw', 'device': ''}, 'refused', 'device',
        tool('ib_write_bw')),
    row('rdma_bw', 'NUL in device', {'executable': T + '/bin/ib_write_bw', 'device': 'mlx5_0' + NUL}, 'refused',
        'device', tool('ib_write_bw')),
    row('rdma_bw', 'server that is an option', {'executable': T + '/bin/ib_write_bw', 'role': 'client',
                                                'server': '-h'}, 'refused', 'server', tool('ib_write_bw')),
    row('rdma_bw', 'negative server_start_delay', {'executable': T + '/bin/ib_write_bw', 'server_start_delay': -1},
        'refused', 'server_start_delay', tool('ib_write_bw')),
    row('rdma_bw', 'negative threshold', {'executable': T + '/bin/ib_write_bw', 'min_gbits_per_s': -1.0}, 'refused',
        'min_gbits_per_s', tool('ib_write_bw')),
    row('rdma_bw', 'negative threshold by its deprecated name', {'executable': T + '/bin/ib_write_bw', 'min_gbps': -1.0},
        'refused', 'min_gbps', tool('ib_write_bw')),
    row('rdma_bw', 'executable is a directory', {'executable': T + '/bin'}, 'refused', 'executable',
        directory('bin')),
    row('rdma_bw', 'loopback with a non-executable file', {'executable': T + '/bin/ib_write_bw'}, 'refused',
        'executable', not_executable('ib_write_bw')),
    row('rdma_bw', 'loopback with a file the OS cannot start', {'executable': T + '/bin/ib_write_bw'},
        'clean-failure', setup=exec_format_error('ib_write_bw')),
    row('rdma_bw', 'garbage output, path with ../', {'executable': T + '/bin/../bin/ib_write_bw',
                                                     'server_start_delay': 0.2}, 'clean-failure',
        setup=tool('ib_write_bw', GARBAGE)),

    # ------------------------------------------------------------ roce_qos (another change hardens it now)
    row('roce_qos', 'empty interface', roce(interface=''), 'refused', 'interface', (copy_tree(ROCE_TREE, 'root'),
                                                                                    tool('dcb'))),
    row('roce_qos', 'path traversal in interface', roce(interface='../../../etc'), 'refused', 'interface',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'NUL in interface', roce(interface='ens1f0np0' + NUL), 'refused', 'interface',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'dscp too large', roce(dscp=64), 'refused', 'dscp', (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'dscp negative', roce(dscp=-1), 'refused', 'dscp', (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'port zero', roce(port=0, dscp=26), 'refused', 'port',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'huge roce_tos', roce(roce_tos=HUGE), 'refused', 'roce_tos',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'tc_bw not summing to 100', roce(tc_bw=[200, 0, 0, 0, 0, 0, 0, 0], tc_tsa=['ets'] * 8), 'refused',
        'tc_bw', (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'type confusion: prio_tc words', roce(prio_tc=['x'] * 8), 'refused', 'prio_tc',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'persist_path is a directory', roce(persist_path=T + '/etc', dscp=26), 'refused', 'persist_path',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'), directory('etc'))),
    row('roce_qos', 'empty sysfs_root', roce(sysfs_root='', dscp=26), 'refused', 'sysfs_root',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'path traversal in a DCQCN parameter', roce(dcqcn_np={'../../../../x': 1}), 'refused', 'dcqcn_np',
        (copy_tree(ROCE_TREE, 'root'), tool('dcb'))),
    row('roce_qos', 'garbage dcb output', roce(trust='dscp'), 'clean-failure',
        setup=(copy_tree(ROCE_TREE, 'root'), tool('dcb', GARBAGE))),

    # ------------------------------------------------------------ slurm_node
    row('slurm_node', 'empty name', slurm(name=''), 'refused', 'name', SLURM_TOOLS),
    row('slurm_node', 'name that is an option', slurm(name='-a'), 'refused', 'name', SLURM_TOOLS),
    row('slurm_node', 'hostlist as name', slurm(name='gpu[01-04]'), 'refused', 'name', SLURM_TOOLS),
    row('slurm_node', 'NUL in name', slurm(name='gpu01' + NUL), 'refused', 'name', SLURM_TOOLS),
    row('slurm_node', 'timeout zero', slurm(wait_idle=True, timeout=0), 'refused', 'timeout', SLURM_TOOLS),
    row('slurm_node', 'timeout negative', slurm(timeout=-1), 'refused', 'timeout', SLURM_TOOLS),
    row('slurm_node', 'timeout huge', slurm(timeout=HUGE), 'refused', 'timeout', SLURM_TOOLS),
    row('slurm_node', 'poll_interval zero', slurm(poll_interval=0), 'refused', 'poll_interval', SLURM_TOOLS),
    row('slurm_node', 'type confusion: state a number', slurm(state=3), 'refused', 'state', SLURM_TOOLS),
    row('slurm_node', 'empty reason to drain', slurm(state='drain', reason=''), 'refused', 'reason', SLURM_TOOLS),
    row('slurm_node', 'scontrol_path is a directory', slurm(scontrol_path=T + '/bin'), 'refused', 'scontrol_path',
        SLURM_TOOLS),
    row('slurm_node', 'garbage scontrol output, path with ../', slurm(scontrol_path=T + '/bin/../bin/scontrol'),
        'clean-failure', setup=(tool('scontrol', GARBAGE), tool('squeue', b''))),
    row('slurm_node', 'garbage squeue output', slurm(), 'clean-failure',
        setup=(tool('scontrol', SLURM_NODE_LINE), tool('squeue', GARBAGE))),
]


def _row_id(r):
    return '%s-%s' % (r.module, re.sub(r'[^A-Za-z0-9]+', '_', r.case).strip('_'))


def _param(r):
    return pytest.param(r, id=_row_id(r))


# ---------------------------------------------------------------- running a row
class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang('no exit within %d s' % HANG_SECONDS)


def _substitute(value, tree):
    if isinstance(value, str):
        return value.replace(T, str(tree))
    if isinstance(value, list):
        return [_substitute(v, tree) for v in value]
    if isinstance(value, dict):
        return dict((_substitute(k, tree), _substitute(v, tree)) for k, v in value.items())
    return value


def _import(module):
    kind = 'action' if module in ACTIONS else 'modules'
    return __import__('ansible_collections.gpufleet.cluster.plugins.%s.%s' % (kind, module), fromlist=['x'])


def _run_module(module, params, capsys):
    """('exit'|'fail'|'traceback', result or traceback text) of main() with ``params``."""
    main = _import(module).main
    called = []
    real_exit, real_fail = basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json

    def spy_exit(self, **kwargs):
        called.append('exit')
        return real_exit(self, **kwargs)

    def spy_fail(self, msg, **kwargs):
        called.append('fail')
        return real_fail(self, msg, **kwargs)

    capsys.readouterr()
    # The invocation is logged as on a systemd target (journald takes any text). Without a journal ansible-core
    # falls back to syslog, which fails a NUL byte itself ("Failed to log to syslog (embedded null character)")
    # before the module's code runs - clean, but naming no option; the table tests the modules' own checks.
    with patch_module_args(params), mock.patch.object(basic.AnsibleModule, 'exit_json', spy_exit), \
            mock.patch.object(basic.AnsibleModule, 'fail_json', spy_fail), \
            mock.patch.object(basic.AnsibleModule, '_log_to_syslog', lambda self, msg: None):
        try:
            main()
        except SystemExit:
            pass
        except BaseException:  # pylint: disable=broad-except
            return 'traceback', traceback.format_exc()
        else:
            return 'traceback', 'main() returned without exit_json/fail_json'
    out = capsys.readouterr().out
    if not called:
        return 'traceback', 'exited without exit_json/fail_json: %s' % out[-2000:]
    try:
        result = json.loads(out)
    except ValueError:
        return 'traceback', 'output is not one JSON result: %r' % out[-2000:]
    if result.get('exception'):
        return 'traceback', result['exception']
    return ('fail' if called[-1] == 'fail' else 'exit'), result


def _run_action(module, params):
    # controller code, imported here: importing it marks the process as the controller, which must not leak
    # into the module rows (module warnings would go to the controller's display instead of the result)
    from ansible.errors import AnsibleActionFail
    from ansible.playbook.task import Task
    plugin = _import(module)
    task = Task()
    task.args = params
    task.action = 'gpufleet.cluster.' + module
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    action = plugin.ActionModule(task, connection, None, None, None, None)
    action._load_name = 'gpufleet.cluster.' + module  # set by the plugin loader in a real run
    try:
        result = action.run(task_vars={'inventory_hostname': 'node01'})
    except AnsibleActionFail as exc:  # ansible turns it into a failed result (argument spec errors)
        return 'fail', {'failed': True, 'msg': str(exc.message)}
    except BaseException:  # pylint: disable=broad-except
        return 'traceback', traceback.format_exc()
    try:
        json.dumps(result)
    except (TypeError, ValueError) as exc:
        return 'traceback', 'result is not JSON: %s' % exc
    return ('fail' if result.get('failed') else 'exit'), result


def snapshot(tree):
    """Everything under ``tree`` (never following links, never opening FIFOs or devices)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(tree)):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            entry = [stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid]
            if stat.S_ISLNK(st.st_mode):
                entry.append(os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                with open(path, 'rb') as handle:
                    entry += [st.st_size, st.st_mtime_ns, hashlib.sha256(handle.read()).hexdigest()]
            out[os.path.relpath(path, str(tree))] = tuple(entry)
    return out


def classify(r, kind, result):
    if kind == 'traceback':
        return 'traceback'
    if kind == 'fail':
        msg = str(result.get('msg') or '')
        if not msg.strip():
            return 'failure without a message'
        if r.expect == 'refused' and re.search(r'(?<![A-Za-z0-9])%s(?![A-Za-z0-9])' % re.escape(r.option), msg):
            return 'refused'
        return 'clean-failure'
    return 'no-change'


@pytest.fixture(scope='session')
def tally(request):
    counts = getattr(request.config, '_gpufleet_bad_input_tally', None)
    if counts is None:
        counts = dict(tried=0, refused=0, clean_failure=0, no_change=0, traceback=0, changed=0, other=0)
        request.config._gpufleet_bad_input_tally = counts  # read by pytest_terminal_summary in conftest.py
    return counts


@pytest.mark.parametrize('r', [_param(r) for r in ROWS])
def test_bad_input(r, tmp_path, capsys, monkeypatch, tally):
    # a module runs in a process of its own on the target, an action plugin on the controller
    monkeypatch.setattr(module_utils_internal, 'is_controller', r.module in ACTIONS)
    tree = tmp_path / 'tree'
    tree.mkdir()
    calls = tmp_path / 'calls.log'  # outside the snapshot: fake tools log their calls here
    ctx = SimpleNamespace(tree=tree, calls=calls)
    for step in r.setup:
        step(ctx)
    params = _substitute(r.params, tree)
    monkeypatch.setenv('PATH', '%s:/usr/bin:/bin' % (tree / 'bin'))
    monkeypatch.chdir(str(tmp_path))
    before = snapshot(tree)

    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_SECONDS)
    try:
        if r.module in ACTIONS:
            kind, result = _run_action(r.module, params)
        else:
            kind, result = _run_module(r.module, params, capsys)
    except Hang:
        kind, result = 'traceback', 'hang: no exit within %d s' % HANG_SECONDS
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)

    after = snapshot(tree)
    outcome = classify(r, kind, result)
    changed = before != after
    tally['tried'] += 1
    tally['changed'] += changed
    key = {'refused': 'refused', 'clean-failure': 'clean_failure', 'no-change': 'no_change',
           'traceback': 'traceback'}.get(outcome, 'other')
    tally[key] += 1

    detail = result if isinstance(result, str) else (result.get('msg') if isinstance(result, dict) else result)
    assert outcome != 'traceback', 'traceback:\n%s' % detail
    assert not changed, 'the temp tree changed: %s' % sorted(
        set(k for k in set(before) | set(after) if before.get(k) != after.get(k)))
    assert outcome == r.expect, 'expected %s (option %s), got %s: %s' % (r.expect, r.option, outcome, detail)
    if r.expect == 'refused' and r.setup and calls.exists():
        pytest.fail('refused, but only after running a tool: %s' % calls.read_text())
    if r.expect == 'no-change':
        assert not result.get('changed'), result


def test_every_module_has_eight_rows():
    names = sorted(p.stem for p in (UNIT.parents[1] / 'plugins' / 'modules').glob('*.py') if p.stem != '__init__')
    assert names == sorted(MODULES)
    counts = dict((m, sum(1 for r in ROWS if r.module == m)) for m in MODULES)
    assert all(n >= 8 for n in counts.values()), counts
    ids = [_row_id(r) for r in ROWS]
    assert len(ids) == len(set(ids)), 'duplicate row ids'
