# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kernel_boot end to end (module main() -> engine -> the one runner -> the boot loader and DKMS tools) on a
hand-made host tree: boot/ (vmlinuz-*, grub/grub.cfg, grub/grubenv), lib/modules/<release>/, proc/sys/kernel/osrelease
and etc/default/grub.

The tools are the HANDMADE stand-ins of tests/fixtures/hand_made/kernel_boot/ (grub-editenv, grub-reboot,
grub-set-default, grub2-reboot, grubby, dkms, modinfo: see its README), which keep their state in the tree and in a
JSON file; ``--standin-boot`` plays GRUB at power-on (next_entry once, else the saved default) so a "reboot" changes
the running release. Where grub-common and grub2-common are installed (``dpkg -s grub-common``), one test runs the
same flow with the REAL grub-editenv, grub-reboot and grub-set-default on the tree's grubenv.

grub.cfg: the header is the real output of Debian 12's /etc/grub.d/00_header (grub-common 2.06-13+deb12u2) with
GRUB_DEFAULT=saved or 0; the menu entries are typed by hand after the layout of its 10_linux."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import kernel_boot_engine as engine
from ansible_collections.gpufleet.cluster.plugins.modules import kernel_boot

REPO = Path(__file__).resolve().parents[4]
HAND = REPO / 'tests' / 'fixtures' / 'hand_made' / 'kernel_boot'
STANDIN = HAND / 'kernel_tools_standin_HANDMADE.py'
UUID = '0b7b1f7e-6d5f-4a3e-9a53-2c1b8f0e9d11'
OLD, NEW, NEWER = '6.1.0-27-amd64', '6.1.0-28-amd64', '6.1.0-29-amd64'
GPU_MODULES = ['nvidia', 'nvidia-uvm', 'nvidia-modeset']
OFED_IN_TREE = {'mlx5_core': 'drivers/net/ethernet/mellanox/mlx5/core', 'mlx5_ib': 'drivers/infiniband/hw/mlx5',
                'ib_core': 'drivers/infiniband/core'}
REQUIRED = ['nvidia', 'nvidia_uvm', 'mlx5_core', 'mlx5_ib', 'ib_core']
REAL_GRUB_TOOLS = ('/usr/bin/grub-editenv', '/usr/sbin/grub-reboot', '/usr/sbin/grub-set-default')
REAL_GRUB = all(os.access(p, os.X_OK) for p in REAL_GRUB_TOOLS)


def advanced(release):
    return 'gnulinux-advanced-%s>gnulinux-%s-advanced-%s' % (UUID, release, UUID)


class Host(object):
    """A hand-made Debian host: kernels, grub, DKMS with the NVIDIA driver's modules, the tools as wrappers."""

    def __init__(self, tmp_path, releases=(OLD,), running=OLD, default='saved', real_grub=False, dkms=True):
        self.tmp = tmp_path
        self.root = tmp_path / 'root'
        self.boot = self.root / 'boot'
        self.modules = self.root / 'lib' / 'modules'
        self.grubdir = self.boot / 'grub'
        self.grubdir.mkdir(parents=True)
        self.modules.mkdir(parents=True)
        (self.root / 'proc' / 'sys' / 'kernel').mkdir(parents=True)
        self.set_running(running)
        self.default_file = self.root / 'etc' / 'default' / 'grub'
        self.default_file.parent.mkdir(parents=True)
        self.default_file.write_text('# If you change this file, run \'update-grub\' afterwards to update\n'
                                     '# /boot/grub/grub.cfg.\n\nGRUB_DEFAULT=%s\nGRUB_TIMEOUT=5\n'
                                     'GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\n'
                                     'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n' % default)
        self.default = default
        self.state = tmp_path / 'standin' / 'dkms.json'
        self.state.parent.mkdir()
        self.state.write_text(json.dumps({'modules': [{'module': 'nvidia', 'version': '535.261.03',
                                                       'files': GPU_MODULES, 'installed': [], 'fails_on': []}],
                                          'broken_kernels': []}))
        self.bin = tmp_path / 'bin'
        self.bin.mkdir()
        self.tools = {}
        names = ['grub-reboot', 'grub-set-default', 'grub-editenv', 'grub2-reboot', 'grub2-editenv', 'grubby',
                 'modinfo'] + (['dkms'] if dkms else [])
        for name in names:
            self.tools[name] = self._wrapper(name)
        if real_grub:
            self.tools.update({'grub-reboot': '/usr/sbin/grub-reboot', 'grub-set-default': '/usr/sbin/grub-set-default',
                               'grub-editenv': '/usr/bin/grub-editenv'})
        self.standin_run('grub-editenv', str(self.grubdir / 'grubenv'), 'create', tool=self.tools['grub-editenv'])
        for rel in releases:
            self.install(rel)
        self.update_grub()

    def _wrapper(self, name):
        path = self.bin / name
        path.write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real %s\nexec %s %s --as %s --root %s --state %s "$@"\n'
                        % (name, sys.executable, STANDIN, name, self.root, self.state))
        path.chmod(0o755)
        return str(path)

    def standin_run(self, name, *args, tool=None):
        res = subprocess.run([tool or self.tools[name]] + list(args), capture_output=True, text=True, check=False)
        assert res.returncode == 0, res
        return res.stdout

    def set_running(self, release):
        (self.root / 'proc' / 'sys' / 'kernel' / 'osrelease').write_text(release + '\n')

    def running(self):
        return (self.root / 'proc' / 'sys' / 'kernel' / 'osrelease').read_text().strip()

    def install(self, release, headers=True, dkms_built=None):
        """A kernel package: vmlinuz, the in-tree OFED modules, modules.builtin, the headers (build/); DKMS builds
        its modules for it when ``dkms_built`` (default: only for the running kernel at set-up)."""
        (self.boot / ('vmlinuz-' + release)).write_text('HANDMADE TEST STAND-IN kernel image\n')
        tree = self.modules / release
        for name, rel in OFED_IN_TREE.items():
            path = tree / 'kernel' / rel / (name + '.ko.xz')
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('HANDMADE TEST STAND-IN kernel module\nvermagic=%s SMP preempt mod_unload modversions\n'
                            % release)
        (tree / 'modules.builtin').write_text('kernel/drivers/block/loop.ko\n')
        if headers:
            (tree / 'build' / 'include').mkdir(parents=True, exist_ok=True)
        if dkms_built is None:
            dkms_built = release == self.running()
        if dkms_built and 'dkms' in self.tools:
            self.standin_run('dkms', 'autoinstall', '-k', release)

    def update_grub(self):
        """The stand-in's update-grub: grub.cfg for the kernels in boot/ and etc/default/grub's GRUB_DEFAULT (the real
        00_header output, menu entries typed by hand after Debian 12's 10_linux)."""
        self.standin_run('update-grub', tool=self._wrapper('update-grub'))

    def grubenv(self):
        return dict(line.split('=', 1) for line in (self.grubdir / 'grubenv').read_text().splitlines()
                    if line and not line.startswith('#'))

    def dkms_state(self):
        return json.loads(self.state.read_text())

    def plant_build_failure(self, release):
        state = self.dkms_state()
        state['modules'][0]['fails_on'].append(release)
        self.state.write_text(json.dumps(state))

    def power_on(self):
        """GRUB at power-on (the stand-in's --standin-boot): the release it boots becomes the running one."""
        return self.standin_run('firmware', '--standin-boot', tool=self._wrapper('firmware'))

    def forget_calls(self):
        """The calls of the set-up are not the module's."""
        log = self.state.parent / 'calls.log'
        if log.exists():
            log.unlink()

    def calls(self, tool=None):
        log = self.state.parent / 'calls.log'
        lines = log.read_text().splitlines() if log.exists() else []
        return [c for c in lines if tool is None or c.startswith(tool + ' ')]

    def snapshot(self):
        out = {}
        for path in sorted(self.root.rglob('*')):
            out[str(path.relative_to(self.root))] = path.read_bytes() if path.is_file() else None
        return out

    def args(self, **kw):
        out = dict(release=NEW, required_modules=REQUIRED, boot_dir=str(self.boot), modules_dir=str(self.modules),
                   proc_root=str(self.root), grub_default_file=str(self.default_file),
                   grub_editenv_path=self.tools['grub-editenv'], grub_reboot_path=self.tools['grub-reboot'],
                   grub_set_default_path=self.tools['grub-set-default'], grubby_path=self.tools['grubby'],
                   dkms_path=self.tools.get('dkms', str(self.bin / 'absent-dkms')), modinfo_path=self.tools['modinfo'])
        out.update(kw)
        return dict((k, v) for k, v in out.items() if v is not None)


@pytest.fixture
def host(tmp_path):
    """Debian host running OLD (its default), with NEW installed by the kernel role - headers there, DKMS not built
    for it yet (the case where the package hooks did not build, or the driver came later)."""
    h = Host(tmp_path)
    h.standin_run('grub-set-default', '--boot-directory', str(h.boot), advanced(OLD))
    h.install(NEW)
    h.update_grub()
    h.forget_calls()
    return h


# ---------------------------------------------------------------- the stand-ins and the tree
def test_standin_grub_boots_saved_then_next_once(host):
    assert host.power_on().strip() == 'booted %s' % OLD
    host.standin_run('grub-reboot', '--boot-directory', str(host.boot), advanced(NEW))
    assert host.power_on().strip() == 'booted %s' % NEW
    assert host.grubenv()['next_entry'] == ''  # consumed, as 00_header's save_env next_entry leaves it
    assert host.power_on().strip() == 'booted %s' % OLD


def test_grub_cfg_parser_and_default_setting(host):
    tree = engine.parse_grub_cfg((host.grubdir / 'grub.cfg').read_text())
    assert [i['kind'] for i in tree] == ['menuentry', 'submenu'] and tree[0]['release'] == NEW
    assert engine.resolve_entry(tree, '')['release'] == NEW  # entry 0: the top entry, the newest kernel
    assert engine.resolve_entry(tree, '1>2')['release'] == OLD
    assert engine.resolve_entry(tree, 'Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux %s' % OLD
                                )['release'] == OLD
    assert engine.resolve_entry(tree, advanced(NEW))['index_path'] == [1, 0]
    assert engine.resolve_entry(tree, 'gnulinux-advanced-%s' % UUID) is None  # a submenu boots nothing
    chosen = engine.choose_entry(tree, OLD)
    assert engine.entry_spec(chosen) == advanced(OLD) and not chosen['recovery']
    assert engine.grub_default_setting(str(host.default_file)) == {
        'value': 'saved', 'file': str(host.default_file), 'line': 4, 'text': 'GRUB_DEFAULT=saved'}


def test_dkms_status_both_formats():
    text = ('nvidia/535.261.03, 6.1.0-28-amd64, x86_64: installed\nmlnx-ofed-kernel/24.10.OFED.24.10.1.1.4.1: added\n'
            'nvidia, 535.104.05, 5.15.0-86-generic, x86_64: installed (WARNING! Diff between built and installed module!)\n'
            'garbage line\n')
    got = engine.parse_dkms_status(text)
    assert [(e['module'], e['version'], e['kernel'], e['status']) for e in got] == [
        ('nvidia', '535.261.03', '6.1.0-28-amd64', 'installed'),
        ('mlnx-ofed-kernel', '24.10.OFED.24.10.1.1.4.1', None, 'added'),
        ('nvidia', '535.104.05', '5.15.0-86-generic', 'installed')]
    assert engine.dkms_missing(got, '6.1.0-28-amd64') == ['mlnx-ofed-kernel/24.10.OFED.24.10.1.1.4.1']


# ---------------------------------------------------------------- the module
def test_converged_nothing_to_do(tmp_path, run_module):
    h = Host(tmp_path)
    h.standin_run('grub-set-default', '--boot-directory', str(h.boot), advanced(OLD))
    h.forget_calls()
    before = h.snapshot()
    res = run_module(kernel_boot.main, dict(h.args(release=OLD), _ansible_diff=True))
    assert not res.get('failed') and res['changed'] is False, res
    assert (res['running'], res['default'], res['next'], res['reboot_required']) == (OLD, OLD, None, False)
    assert res['actions'] == [] and res['reboot_reason'] == ''
    assert all(m['status'] == 'ok' for m in res['modules'].values()), res['modules']
    assert res['modules']['nvidia']['detail'].startswith('vermagic %s ' % OLD)
    assert res['diff'] == {'before': {'running': OLD, 'default': OLD, 'next': None},
                           'after': {'running': OLD, 'default': OLD, 'next': None}}
    assert h.snapshot() == before and h.calls('grub-reboot') == h.calls('grub-set-default') == []


def _new_kernel_flow(host, run_module):
    # check mode: the DKMS build and the one-time entry are planned, nothing changes
    before = host.snapshot()
    res = run_module(kernel_boot.main, dict(host.args(), _ansible_check_mode=True, _ansible_diff=True))
    assert res['changed'] and not res.get('failed'), res
    planned = [shlex.split(a)[1:] for a in res['actions']]
    assert planned == [['autoinstall', '-k', NEW], ['--boot-directory', str(host.boot), advanced(NEW)]]
    assert res['diff'] == {'before': {'running': OLD, 'default': OLD, 'next': None},
                           'after': {'running': OLD, 'default': OLD, 'next': NEW}}
    assert res['modules']['nvidia']['status'] == 'missing' and res['dkms']['missing_before'] == ['nvidia/535.261.03']
    assert host.snapshot() == before and not host.calls('dkms autoinstall')
    # apply: DKMS builds for NEW, the modules are verified, NEW boots next once; the default stays OLD
    res = run_module(kernel_boot.main, host.args())
    assert res['changed'] and not res.get('failed'), res
    assert all(m['status'] == 'ok' for m in res['modules'].values()), res['modules']
    assert res['modules']['nvidia_uvm']['path'] == str(host.modules / NEW / 'updates' / 'dkms' / 'nvidia-uvm.ko.xz')
    assert (res['default'], res['next'], res['reboot_required']) == (OLD, NEW, True)
    assert res['reboot_reason'] == ('kernel %s is installed and verified and boots next, once (running %s; the permanent '
                                    'default stays %s until the node runs %s)' % (NEW, OLD, OLD, NEW))
    env = host.grubenv()
    assert env['next_entry'] == advanced(NEW) and env['saved_entry'] == advanced(OLD)
    # again before the reboot: nothing to do, the reboot is still required
    res = run_module(kernel_boot.main, host.args())
    assert not res['changed'] and res['reboot_required'] and res['actions'] == [], res
    # the reboot boots NEW (once); the run after it makes NEW the permanent default
    assert host.power_on().strip() == 'booted %s' % NEW
    res = run_module(kernel_boot.main, dict(host.args(), _ansible_diff=True))
    assert res['changed'] and not res['reboot_required'] and res['reboot_reason'] == '', res
    assert res['diff'] == {'before': {'running': NEW, 'default': OLD, 'next': None},
                           'after': {'running': NEW, 'default': NEW, 'next': None}}
    assert host.grubenv()['saved_entry'] == advanced(NEW)
    res = run_module(kernel_boot.main, host.args())
    assert not res['changed'] and (res['default'], res['next']) == (NEW, None), res
    assert host.power_on().strip() == 'booted %s' % NEW


def test_new_kernel_verified_boots_next_then_becomes_default(host, run_module):
    _new_kernel_flow(host, run_module)
    assert len(host.calls('grub-reboot')) == 1 and len(host.calls('grub-set-default')) == 1


@pytest.mark.skipif(not REAL_GRUB, reason='grub-common/grub2-common not installed (dpkg -s grub-common)')
def test_new_kernel_flow_with_the_real_grub_tools(tmp_path, run_module):
    h = Host(tmp_path, real_grub=True)
    subprocess.run(['/usr/sbin/grub-set-default', '--boot-directory', str(h.boot), advanced(OLD)], check=True)
    h.install(NEW)
    h.update_grub()
    h.forget_calls()
    raw = (h.grubdir / 'grubenv').read_bytes()
    assert len(raw) == 1024 and raw.startswith(b'# GRUB Environment Block\n# WARNING: Do not edit')  # written by the real tool
    _new_kernel_flow(h, run_module)
    assert h.calls('grub-reboot') == []  # the real ones ran, not the stand-ins


def test_module_that_dkms_cannot_build_is_refused_nothing_changed(host, run_module):
    host.plant_build_failure(NEW)
    grubenv = (host.grubdir / 'grubenv').read_bytes()
    res = run_module(kernel_boot.main, host.args())
    assert res['failed'] and res['changed'] is False, res  # the build failed: DKMS installed nothing
    msg = res['msg']
    assert msg.startswith('kernel %s refused, no boot entry was changed: nvidia: missing (no nvidia.ko* under %s and '
                          'not in modules.builtin); nvidia_uvm: missing' % (NEW, host.modules / NEW))
    assert "and DKMS modules not installed for %s: nvidia/535.261.03 after %s autoinstall -k %s exited with rc=11" % (
        NEW, host.tools['dkms'], NEW) in msg
    assert 'Error! Bad return status for module build on kernel: %s (x86_64)' % NEW in msg
    assert 'Consult /var/lib/dkms/nvidia/535.261.03/build/make.log for more information.' in msg
    assert 'One or more modules failed to install during autoinstall' in msg
    assert (host.grubdir / 'grubenv').read_bytes() == grubenv
    assert host.calls('grub-reboot') == [] and res['dkms']['status_before'] == ''


def test_without_dkms_a_missing_module_is_refused_before_any_command(tmp_path, run_module):
    h = Host(tmp_path, releases=(OLD, NEW), dkms=False)
    res = run_module(kernel_boot.main, h.args(required_modules=['mlx5_core', 'nvidia']))
    assert res['failed'] and not res['changed']
    assert res['msg'] == ('kernel %s refused, no boot entry was changed: nvidia: missing (no nvidia.ko* under %s and '
                          'not in modules.builtin) and DKMS is not installed (no dkms on PATH)' % (NEW, h.modules / NEW))
    assert h.calls('grub-reboot') == []


def test_module_built_for_another_release_is_refused(host, run_module):
    stale = host.modules / NEW / 'updates' / 'dkms' / 'nvidia.ko.xz'
    stale.parent.mkdir(parents=True)
    shutil.copy(str(host.modules / OLD / 'updates' / 'dkms' / 'nvidia.ko.xz'), str(stale))
    res = run_module(kernel_boot.main, host.args(dkms='never'))
    assert res['failed'] and ('nvidia: wrong-release (%s was built for %s (modinfo vermagic: %s SMP preempt mod_unload '
                              'modversions), not %s)' % (stale, OLD, OLD, NEW)) in res['msg'], res
    assert 'DKMS is not used (dkms: never)' in res['msg'] and host.calls('dkms autoinstall') == []


@pytest.mark.parametrize('where', ['file', 'grub.d'])
def test_grub_default_not_saved_is_refused_naming_the_line(tmp_path, run_module, where):
    h = Host(tmp_path, releases=(OLD,), default='saved')
    h.install(NEW, dkms_built=True)
    h.update_grub()
    if where == 'file':
        h.default_file.write_text(h.default_file.read_text().replace('GRUB_DEFAULT=saved', 'GRUB_DEFAULT=0'))
        line, path, text = 4, h.default_file, 'GRUB_DEFAULT=0'
    else:  # an override in /etc/default/grub.d wins (the last one read)
        path = Path(str(h.default_file) + '.d') / '50-cloudimg-settings.cfg'
        path.parent.mkdir()
        path.write_text('# Cloud image settings\nexport GRUB_DEFAULT="1>2"\n')
        line, text = 2, 'export GRUB_DEFAULT="1>2"'
    before = h.snapshot()
    res = run_module(kernel_boot.main, h.args(release=OLD if where == 'file' else NEW))
    assert res['failed'] and not res['changed'], res
    assert res['msg'].startswith("GRUB_DEFAULT is '%s': %s line %d (%s); the permanent default can only be set with "
                                 "GRUB_DEFAULT=saved - change that one line to GRUB_DEFAULT=saved and run update-grub"
                                 % ('0' if where == 'file' else '1>2', path, line, text)), res['msg']
    assert h.snapshot() == before and h.calls('grub-reboot') == h.calls('grub-set-default') == []


def test_grub_default_0_that_boots_the_release_is_left_alone(tmp_path, run_module):
    # GRUB_DEFAULT=0: entry 0 boots the newest kernel; when that is the wanted one and it runs, nothing is due
    h = Host(tmp_path, releases=(OLD, NEW), running=NEW, default='0')
    res = run_module(kernel_boot.main, h.args())
    assert not res.get('failed') and not res['changed'] and res['default'] == NEW, res
    assert res['grub_default']['value'] == '0'


def test_saved_but_grub_cfg_not_regenerated_is_refused(tmp_path, run_module):
    h = Host(tmp_path, releases=(OLD, NEW), default='0')
    h.standin_run('dkms', 'autoinstall', '-k', NEW)
    h.default_file.write_text(h.default_file.read_text().replace('GRUB_DEFAULT=0', 'GRUB_DEFAULT=saved'))
    res = run_module(kernel_boot.main, h.args(release=OLD))
    assert res['failed'] and 'does not use it (no set default="${saved_entry}"): run update-grub' in res['msg'], res


def test_kernel_that_does_not_boot_falls_back_to_the_old_default(host, run_module):
    res = run_module(kernel_boot.main, host.args())
    assert res['next'] == NEW
    state = host.dkms_state()
    state['broken_kernels'] = [NEW]
    host.state.write_text(json.dumps(state))
    assert host.power_on().startswith('HANG: kernel %s' % NEW)
    assert host.power_on().strip() == 'booted %s' % OLD  # the power cycle: next_entry was used up, the default is OLD
    res = run_module(kernel_boot.main, dict(host.args(), _ansible_check_mode=True))
    assert (res['running'], res['default'], res['reboot_required']) == (OLD, OLD, True), res
    assert host.grubenv()['saved_entry'] == advanced(OLD)


def test_make_default_now(host, run_module):
    res = run_module(kernel_boot.main, host.args(make_default='now'))
    assert res['changed'] and (res['default'], res['next'], res['reboot_required']) == (NEW, None, True), res
    assert 'boots by default (running %s; the permanent default is %s)' % (OLD, NEW) in res['reboot_reason']
    assert host.grubenv()['saved_entry'] == advanced(NEW) and host.calls('grub-reboot') == []


def test_manage_boot_false_verifies_only(host, run_module):
    res = run_module(kernel_boot.main, host.args(manage_boot=False))
    assert res['changed'] and res['reboot_required'] and host.calls('dkms autoinstall'), res
    assert res['actions'] == ['%s autoinstall -k %s' % (host.tools['dkms'], NEW)] and res['next'] is None
    assert 'is not set to boot' in res['reboot_reason'] and 'next_entry' not in host.grubenv()


def test_stale_one_time_entry_of_another_kernel_is_cleared(tmp_path, run_module):
    h = Host(tmp_path, releases=(OLD, NEWER))
    h.standin_run('grub-set-default', '--boot-directory', str(h.boot), advanced(OLD))
    h.standin_run('grub-reboot', '--boot-directory', str(h.boot), advanced(NEWER))
    res = run_module(kernel_boot.main, h.args(release=OLD))
    assert res['changed'] and (res['next_before'], res['next']) == (NEWER, None), res
    assert res['actions'] == ['%s %s unset next_entry' % (h.tools['grub-editenv'], h.grubdir / 'grubenv')]
    assert 'next_entry' not in h.grubenv()


def test_release_not_installed_is_refused(host, run_module):
    res = run_module(kernel_boot.main, host.args(release=NEWER))
    assert res['failed'] and res['msg'].startswith('kernel %s is not installed: %s is missing; installed: %s, %s'
                                                   % (NEWER, host.boot / ('vmlinuz-' + NEWER), OLD, NEW)), res
    assert host.calls() == [c for c in host.calls() if 'autoinstall -k %s' % NEWER not in c]


def test_no_boot_entry_for_the_release_is_refused(host, run_module):
    host.install(NEWER, dkms_built=True)  # no update-grub after it
    res = run_module(kernel_boot.main, host.args(release=NEWER))
    assert res['failed'] and ('kernel %s has no boot entry in %s (menu entries boot %s, %s); run update-grub'
                              % (NEWER, host.grubdir / 'grub.cfg', OLD, NEW)) in res['msg'], res


def _el_host(tmp_path):
    """An EL 9 host: BLS entries in boot/loader/entries, grub2/grubenv, grubby and grub2-reboot (stand-ins)."""
    old, new = '5.14.0-427.13.1.el9_4.x86_64', '5.14.0-503.14.1.el9_5.x86_64'
    h = Host(tmp_path, releases=(), running=old)
    shutil.rmtree(str(h.grubdir))
    (h.boot / 'grub2').mkdir()
    h.standin_run('grub2-editenv', str(h.boot / 'grub2' / 'grubenv'), 'create')
    entries = h.boot / 'loader' / 'entries'
    entries.mkdir(parents=True)
    for rel in (old, new):
        (h.boot / ('vmlinuz-' + rel)).write_text('HANDMADE TEST STAND-IN kernel image\n')
        (h.modules / rel / 'build').mkdir(parents=True)
        (entries / ('a98618aa1631441dbb52c75a50834a0a-%s.conf' % rel)).write_text(
            'title Rocky Linux (%s) 9.4 (Blue Onyx)\nversion %s\nlinux /vmlinuz-%s\ninitrd /initramfs-%s.img\n'
            'options root=/dev/mapper/rl-root ro\ngrub_users $grub_users\ngrub_arg --unrestricted\ngrub_class rocky\n'
            % (rel, rel, rel, rel))
    h.standin_run('dkms', 'autoinstall', '-k', old)
    h.standin_run('grubby', '--set-default=/boot/vmlinuz-%s' % old)
    h.default_file.write_text('GRUB_TIMEOUT=5\nGRUB_DISTRIBUTOR="$(sed \'s, release .*$,,g\' /etc/system-release)"\n'
                              'GRUB_DEFAULT=saved\nGRUB_DISABLE_SUBMENU=true\nGRUB_ENABLE_BLSCFG=true\n')
    return h, old, new


def test_grubby_flow_on_el(tmp_path, run_module):
    h, old, new = _el_host(tmp_path)
    args = h.args(release=new, required_modules=['nvidia', 'nvidia_uvm'], grub_editenv_path=h.tools['grub2-editenv'],
                  grub_reboot_path=h.tools['grub2-reboot'])
    res = run_module(kernel_boot.main, args)
    assert res['changed'] and res['bootloader'] == 'grubby' and not res.get('failed'), res
    assert res['entry'] == 'a98618aa1631441dbb52c75a50834a0a-%s' % new and (res['default'], res['next']) == (old, new)
    assert h.calls('grub2-reboot') == ['grub2-reboot --boot-directory %s a98618aa1631441dbb52c75a50834a0a-%s'
                                       % (h.boot, new)]
    assert h.power_on().strip() == 'booted %s' % new
    res = run_module(kernel_boot.main, args)
    assert res['changed'] and res['default'] == new and not res['reboot_required'], res
    assert h.calls('grubby')[-1] == 'grubby --set-default %s' % (h.boot / ('vmlinuz-' + new))
    assert not run_module(kernel_boot.main, args)['changed']


@pytest.mark.parametrize('params, words', [
    (dict(release='6.1.0-28 amd64'), 'release must be a kernel release as uname -r prints it'),
    (dict(release='../../etc/6.1'), 'release must be a kernel release'),
    (dict(release='6.1/0'), 'release must be a kernel release'),
    (dict(required_modules=['nvidia.ko']), 'required_modules[0] must be a kernel module name'),
    (dict(required_modules=['drivers/nvidia']), 'required_modules[0] must be a kernel module name'),
    (dict(bootloader='systemd-boot'), 'bootloader must be one of auto, grub, grubby'),
    (dict(make_default='later'), 'make_default must be one of after_verify, now'),
    (dict(grub_default_file='etc/default/grub'), 'grub_default_file must be an absolute path of a file'),
    (dict(timeout=0), 'timeout must be an integer from 1'),
])
def test_input_problems_name_the_option(host, params, words):
    p = dict(host.args(), bootloader='auto', make_default='after_verify', dkms='auto', manage_boot=True, timeout=3600)
    p.update(params)
    problems = engine.input_problems(p)
    assert len(problems) == 1 and words in problems[0], problems


def test_adhoc_check_mode(host, run_adhoc):
    rc, res = run_adhoc('kernel_boot', host.args(), check=True)
    assert rc == 0 and res['changed'] is True and res['next'] == NEW, res
    assert host.calls('grub-reboot') == [] and host.calls('dkms autoinstall') == []


def test_carry_modules_the_running_kernel_has_are_required(host, run_module):
    # OLD runs with DKMS's nvidia modules and in-tree mlx5_core; ib_foo it does not have; modules.builtin's loop counts
    res = run_module(kernel_boot.main, host.args(required_modules=[], dkms='never',
                                                 carry_modules=['nvidia', 'nvidia-uvm', 'mlx5_core', 'ib_foo', 'loop']))
    assert res['failed'] and res['carried_modules'] == ['nvidia', 'nvidia-uvm', 'mlx5_core', 'loop'], res
    assert 'nvidia: missing' in res['msg'] and 'nvidia-uvm: missing' in res['msg'] and 'ib_foo' not in res['msg'], res
    assert sorted(res['modules']) == ['loop', 'mlx5_core', 'nvidia', 'nvidia-uvm'], res['modules']
    assert res['modules']['mlx5_core']['status'] == 'ok' and host.calls('grub-reboot') == []
    # given in both lists (- and _ alike): checked once
    res = run_module(kernel_boot.main, host.args(required_modules=['mlx5_core'], carry_modules=['mlx5-core', 'nvidia']))
    assert not res.get('failed') and sorted(res['modules']) == ['mlx5_core', 'nvidia'], res


# ---------------------------------------------------------------- scope dkms: the trial before the image
def _headers_only(tmp_path, extra_modules=()):
    """Running OLD (its default, DKMS built for it), NEW's headers installed and nothing else of NEW - the kernel
    role's state between its headers and its image. ``extra_modules``: more DKMS modules, built for OLD when their
    ``installed`` says so."""
    h = Host(tmp_path)
    state = h.dkms_state()
    state['modules'] += list(extra_modules)
    h.state.write_text(json.dumps(state))
    h.standin_run('grub-set-default', '--boot-directory', str(h.boot), advanced(OLD))
    (h.modules / NEW / 'build' / 'include').mkdir(parents=True)
    h.forget_calls()
    return h


GDRDRV = {'module': 'gdrdrv', 'version': '2.4.4', 'files': ['gdrdrv'], 'installed': [OLD], 'fails_on': []}


def test_trial_builds_with_the_headers_only_and_touches_no_boot_entry(tmp_path, run_module):
    h = _headers_only(tmp_path)
    before = h.snapshot()
    res = run_module(kernel_boot.main, h.args(scope='dkms'))
    assert not res.get('failed') and res['changed'] is True and res['scope'] == 'dkms', res
    assert res['dkms']['missing_before'] == ['nvidia/535.261.03'] and res['actions'] == [
        '%s autoinstall -k %s' % (h.tools['dkms'], NEW)], res
    assert NEW in h.dkms_state()['modules'][0]['installed']
    assert (h.modules / NEW / 'updates' / 'dkms' / 'nvidia.ko.xz').is_file()
    assert 'reboot_required' not in res and 'default' not in res, res
    changed = [k for k, v in h.snapshot().items() if before.get(k, 'absent') != v]
    assert all(k.startswith('lib/modules/%s/updates' % NEW) for k in changed), changed   # no grubenv, no vmlinuz
    assert h.calls('grub-reboot') == h.calls('grub-set-default') == []
    again = run_module(kernel_boot.main, h.args(scope='dkms'))
    assert again['changed'] is False and again['actions'] == [], again


def test_trial_that_fails_is_undone_and_refuses_the_kernel(tmp_path, run_module):
    h = _headers_only(tmp_path, [dict(GDRDRV)])
    h.standin_run('dkms', 'autoinstall', '-k', OLD)     # gdrdrv is built for the running kernel, as on a node
    h.plant_build_failure(NEW)
    h.forget_calls()
    before = h.snapshot()
    res = run_module(kernel_boot.main, h.args(scope='dkms'))
    assert res['failed'] and res['changed'] is False, res
    msg = res['msg']
    assert msg.startswith('kernel %s refused before its image is installed: DKMS modules not installed for %s: '
                          'nvidia/535.261.03 after %s autoinstall -k %s exited with rc=11' % (NEW, NEW, h.tools['dkms'],
                                                                                              NEW)), msg
    assert 'Consult /var/lib/dkms/nvidia/535.261.03/build/make.log for more information.' in msg
    # gdrdrv did build for NEW in that autoinstall: removed again, named
    assert msg.endswith('; undone (built for %s by this run): gdrdrv/2.4.4' % NEW), msg
    assert res['dkms']['undone'] == ['gdrdrv/2.4.4'] and res['dkms']['left'] == [], res
    assert h.calls('dkms remove') == ['dkms remove -m gdrdrv -v 2.4.4 -k %s' % NEW], h.calls()
    state = {m['module']: m['installed'] for m in h.dkms_state()['modules']}
    assert state == {'nvidia': [OLD], 'gdrdrv': [OLD]}, state
    # the tree as it was - no module file for NEW, grubenv untouched - but for the empty directories the build made
    # (the kernel role removes lib/modules/NEW with the headers when it was not there before)
    after = h.snapshot()
    assert {k: v for k, v in after.items() if k not in before} == {
        'lib/modules/%s/updates' % NEW: None, 'lib/modules/%s/updates/dkms' % NEW: None}
    assert {k: v for k, v in after.items() if k in before} == before


def test_trial_names_a_module_it_cannot_undo(tmp_path, run_module):
    # gdrdrv registered ("added") but built for no kernel: removing its only build would unregister it - left, named
    h = _headers_only(tmp_path, [dict(GDRDRV, installed=[])])
    h.plant_build_failure(NEW)
    res = run_module(kernel_boot.main, h.args(scope='dkms'))
    assert res['failed'] and res['changed'] is True, res
    assert res['dkms']['left'] == ['gdrdrv/2.4.4'] and h.calls('dkms remove') == [], res
    assert ('left installed for %s (built for no other kernel, or the removal failed - remove with dkms remove -m '
            'MODULE -v VERSION -k %s): gdrdrv/2.4.4' % (NEW, NEW)) in res['msg']


def test_trial_without_the_headers_is_refused_before_any_command(tmp_path, run_module):
    h = _headers_only(tmp_path)
    shutil.rmtree(str(h.modules / NEW / 'build'))
    res = run_module(kernel_boot.main, h.args(scope='dkms'))
    assert res['failed'] and res['changed'] is False, res
    assert res['msg'] == ('kernel %s: its headers are not installed (%s is missing) and the DKMS trial build needs '
                          'them: install linux-headers-%s (kernel-devel-%s on EL) first; nothing was changed'
                          % (NEW, h.modules / NEW / 'build', NEW, NEW))
    assert h.calls() == []


def test_trial_in_check_mode_builds_nothing(tmp_path, run_adhoc):
    h = _headers_only(tmp_path)
    rc, res = run_adhoc('kernel_boot', h.args(scope='dkms'), check=True)
    assert rc == 0 and res['changed'] is True and res['dkms']['missing_before'] == ['nvidia/535.261.03'], res
    assert h.calls('dkms autoinstall') == [] and NEW not in h.dkms_state()['modules'][0]['installed']


# ---------------------------------------------------------------- scope dkms with sources: the new driver's trial
NEW_DRIVER = '570.133.20'


def _source_tree(tmp_path, name='nvidia', version=NEW_DRIVER, make='true'):
    """A HAND-MADE DKMS source tree in the layout of a driver's DKMS package (usr/src/<name>-<version>/dkms.conf)."""
    src = tmp_path / 'pkg' / 'usr' / 'src' / ('%s-%s' % (name, version))
    src.mkdir(parents=True)
    (src / 'dkms.conf').write_text('PACKAGE_NAME="%s"\nPACKAGE_VERSION="%s"\nMAKE[0]="%s"\nCLEAN="true"\n'
                                   'BUILT_MODULE_NAME[0]="%s"\nDEST_MODULE_LOCATION[0]="/updates/dkms"\n'
                                   'AUTOINSTALL="yes"\n' % (name, version, make, name))
    return src


@pytest.fixture
def scratch_tmp(tmp_path, monkeypatch):
    """The module's scratch trees go to a directory of the test's own, so the test sees that none is left."""
    tmp = tmp_path / 'tmp'
    tmp.mkdir()
    monkeypatch.setattr('tempfile.tempdir', str(tmp))
    return tmp


def test_trial_builds_the_new_driver_in_a_scratch_tree_and_changes_nothing(tmp_path, run_module, scratch_tmp):
    h = _headers_only(tmp_path)
    src = _source_tree(tmp_path)
    before = h.snapshot()
    res = run_module(kernel_boot.main, h.args(scope='dkms', sources=[str(src)]))
    assert not res.get('failed') and res['changed'] is False, res
    assert res['dkms']['sources'] == [{'module': 'nvidia', 'version': NEW_DRIVER, 'path': str(src), 'built': True,
                                       'why': '', 'log': ''}], res
    dkms = h.tools['dkms']
    assert res['actions'] == [
        '%s add -m nvidia -v %s --sourcetree %s --dkmstree %s' % (dkms, NEW_DRIVER, '<scratch>/source', '<scratch>/dkms'),
        '%s build -m nvidia -v %s -k %s --kernelsourcedir %s --sourcetree <scratch>/source --dkmstree <scratch>/dkms'
        % (dkms, NEW_DRIVER, NEW, h.modules / NEW / 'build')], res
    # the installed nvidia 535 is the version the new one replaces: it need not build for NEW, nothing was autoinstalled
    assert res['dkms']['missing_before'] == [] and h.calls('dkms autoinstall') == [], res
    assert h.snapshot() == before and h.dkms_state()['modules'][0]['installed'] == [OLD]
    assert list(scratch_tmp.iterdir()) == [] and (src / 'dkms.conf').is_file()


def test_trial_refuses_a_kernel_the_new_driver_does_not_build_for(tmp_path, run_module, scratch_tmp):
    h = _headers_only(tmp_path, [dict(GDRDRV)])
    state = h.dkms_state()
    state['source_fails_on'] = {'nvidia/%s' % NEW_DRIVER: [NEW]}    # PLANTED
    h.state.write_text(json.dumps(state))
    src = _source_tree(tmp_path)
    before = h.snapshot()
    res = run_module(kernel_boot.main, h.args(scope='dkms', sources=[str(src)]))
    assert res['failed'] and res['changed'] is False, res
    assert res['msg'].startswith(
        'kernel %s refused before its image is installed: nvidia/%s (DKMS source %s, the version this run installs) '
        'does not build for %s: build exited with rc=10 (Consult <scratch>/dkms/nvidia/%s/build/make.log for more '
        'information.): ' % (NEW, NEW_DRIVER, src, NEW, NEW_DRIVER)), res['msg']
    assert 'Consult <scratch>/dkms/nvidia/%s/build/make.log for more information.' % NEW_DRIVER in res['msg']
    assert res['msg'].endswith('build log: DKMS make.log for nvidia-%s for kernel %s (x86_64) | HANDMADE TEST STAND-IN '
                               'build: error: PLANTED build failure for this kernel; nothing was changed'
                               % (NEW_DRIVER, NEW)), res['msg']
    # refused before the installed modules were built for NEW (gdrdrv would have been): nothing to undo
    assert h.calls('dkms autoinstall') == [] and h.calls('dkms status') == [], h.calls()
    assert h.snapshot() == before and list(scratch_tmp.iterdir()) == []


def test_trial_of_sources_in_check_mode_builds_nothing(tmp_path, run_adhoc):
    h = _headers_only(tmp_path)
    src = _source_tree(tmp_path)
    rc, res = run_adhoc('kernel_boot', h.args(scope='dkms', sources=[str(src)]), check=True)
    assert rc == 0 and res['changed'] is False, res
    assert res['dkms']['sources'][0]['built'] is None and h.calls('dkms add') == h.calls('dkms build') == [], res


def _real_dkms():
    found = os.environ.get('GPUFLEET_DKMS')
    if not found:
        cached = sorted(Path(os.environ.get('GPUFLEET_DKMS_CACHE', '/var/cache/gpufleet/dkms')).glob('*/usr/sbin/dkms'))
        found = str(cached[-1]) if cached else None
    return found


@pytest.mark.skipif(not _real_dkms(), reason="Debian's dkms script is not extracted (scripts/setup does it)")
@pytest.mark.parametrize('kernel_ok', [True, False], ids=['builds', 'does-not-build'])
def test_trial_of_sources_with_the_real_dkms(tmp_path, run_module, scratch_tmp, kernel_ok):
    """Debian's dkms 3.0.10 itself (extracted by scripts/setup) runs the trial's add and build. Its own tree (status,
    autoinstall) is a directory of the test's, never this machine's /var/lib/dkms; the HAND-MADE source tree's make
    step fails for the one kernel it is told to (no compiler runs)."""
    h = _headers_only(tmp_path)
    system = tmp_path / 'var-lib-dkms'
    system.mkdir()
    wrapper = h.bin / 'real-dkms'
    wrapper.write_text('#!/bin/sh\ncase " $* " in *" --dkmstree "*) exec %s "$@" ;; esac\n'
                       'exec %s "$@" --dkmstree %s\n' % (_real_dkms(), _real_dkms(), system))
    wrapper.chmod(0o755)
    fail_for = 'never' if kernel_ok else NEW
    src = _source_tree(tmp_path, make="sh ./build.sh ${kernelver}")
    (src / 'build.sh').write_text('echo "HAND-MADE build for $1"\n[ "$1" = "%s" ] && { echo "error: no such '
                                  'symbol (HAND-MADE)"; exit 2; }\necho built > nvidia.ko\n' % fail_for)
    res = run_module(kernel_boot.main, h.args(scope='dkms', sources=[str(src)], dkms_path=str(wrapper)))
    assert list(scratch_tmp.iterdir()) == [] and list(system.iterdir()) == [], res
    if kernel_ok:
        assert not res.get('failed') and res['dkms']['sources'][0]['built'] is True, res
        return
    assert res['failed'] and res['changed'] is False, res
    assert 'does not build for %s: build exited with rc=10' % NEW in res['msg'], res['msg']
    assert 'Bad return status for module build on kernel: %s' % NEW in res['msg'], res['msg']
    assert 'error: no such symbol (HAND-MADE)' in res['dkms']['sources'][0]['log'], res
