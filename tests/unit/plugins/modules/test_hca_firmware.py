# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hca_firmware end to end (module main() -> engine -> the one runner -> a stateful mstflint stand-in).

The stand-in (tests/fixtures/hand_made/hca_firmware/mstflint_standin_HANDMADE.py, labelled HANDMADE) prints its
queries in the layout of the recorded mstflint outputs of the bundled corpus (Apache-2.0, ironic-python-agent;
SOURCES.tsv) and keeps the cards' flash and running versions across calls and simulated reboots (a boot id file
of the test's own). The sysfs tree is the recorded mlx5_0 device (prometheus/procfs, Apache-2.0) placed in a
hand-made PCI layout, as in test_fw_facts.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import hca_firmware_engine as engine
from ansible_collections.gpufleet.cluster.plugins.module_utils import mlx_fw
from ansible_collections.gpufleet.cluster.plugins.modules import hca_firmware

UNIT = Path(__file__).resolve().parents[2]
REPO = UNIT.parents[1]
STANDIN = REPO / 'tests' / 'fixtures' / 'hand_made' / 'hca_firmware' / 'mstflint_standin_HANDMADE.py'
CORPUS_MLX = UNIT / 'fixtures' / 'corpus' / 'mlx_fw'
MLX5 = UNIT / 'fixtures' / 'corpus' / 'sysfs_infiniband' / 'procfs' / 'fixtures' / 'sys' / 'class' / 'infiniband' / 'mlx5_0'
CX6, CX6DX = 'MT_0000000228', 'MT_0000000359'
OLD, NEW, NEWER = '20.35.1012', '20.36.1012', '20.37.1012'


def build_tree(root, devices, vf=()):
    """``devices``: (ib name, pci address, sys_image_guid); the recorded mlx5_0 content in a hand-made PCI layout."""
    cls = root / 'sys' / 'class' / 'infiniband'
    cls.mkdir(parents=True)
    for name, pci, guid in devices:
        pdir = root / 'sys' / 'devices' / 'pci0000:00' / pci
        ibdev = pdir / 'infiniband' / name
        shutil.copytree(str(MLX5), str(ibdev))
        (ibdev / 'sys_image_guid').write_text(guid + '\n')
        os.symlink('../../../%s' % pci, str(ibdev / 'device'))
        if name in vf:
            os.symlink('../0000:3b:00.0', str(pdir / 'physfn'))
        os.symlink(os.path.relpath(str(ibdev), str(cls)), str(cls / name))
    return root


class Lab(object):
    """A host with cards: the sysfs tree, the stand-in behind wrappers named mstflint and mstfwreset, a bundle."""

    def __init__(self, tmp_path, cards):
        self.tmp = tmp_path
        self.state = tmp_path / 'standin' / 'mstflint.json'
        self.boot = tmp_path / 'boot_id'
        self.boot.write_text('boot-1\n')
        self.bundle = tmp_path / 'bundle'
        self.bundle.mkdir()
        self.root = build_tree(tmp_path / 'root', [(name, pci, guid) for name, pci, guid, dummy, dummy2 in cards],
                               vf=[c[0] for c in cards if c[3] is None])
        bindir = tmp_path / 'bin'
        bindir.mkdir()
        self.mstflint = self._wrapper(bindir / 'mstflint', '')
        self.fwreset = self._wrapper(bindir / 'mstfwreset', '--fwreset')
        for name, pci, guid, psid, version in cards:
            if psid:
                self('--standin-add', pci, psid, version, guid.replace(':', ''))

    def _wrapper(self, path, extra):
        path.write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real tool\nexec %s %s --state %s --boot-id-file %s %s "$@"\n'
                        % (sys.executable, STANDIN, self.state, self.boot, extra))
        path.chmod(0o755)
        return str(path)

    def __call__(self, *args):
        return subprocess.run([self.mstflint] + list(args), capture_output=True, text=True, check=False)

    def image(self, name, psid, version, planted=False):
        args = ['--standin-make-image', str(self.bundle / name), psid, version] + (['planted_failure'] if planted else [])
        assert self(*args).returncode == 0
        return str(self.bundle / name)

    def reboot(self):
        self.boot.write_text('boot-%d\n' % (int(self.boot.read_text().split('-')[1]) + 1))

    def calls(self):
        log = self.state.parent / 'calls.log'
        return [c for c in log.read_text().splitlines() if not c.startswith('--standin')] if log.exists() else []

    def burns(self):
        return [c for c in self.calls() if c.endswith(' -y b')]

    def args(self, **kw):
        out = dict(version=NEW, bundle_dir=str(self.bundle), sysfs_root=str(self.root), tool_path=self.mstflint,
                   mlxfwreset_path=self.fwreset)
        out.update(kw)
        return dict((k, v) for k, v in out.items() if v is not None)  # None: left out (as omit does in a task)


@pytest.fixture
def one_card(tmp_path):
    # mlx5_0/mlx5_1: two functions of one dual-port card (same sys_image_guid); mlx5_2: a virtual function
    lab = Lab(tmp_path, [('mlx5_0', '0000:3b:00.0', '043f:7203:00f0:4c46', CX6, OLD),
                         ('mlx5_1', '0000:3b:00.1', '043f:7203:00f0:4c46', CX6, OLD),
                         ('mlx5_2', '0000:3b:00.2', '043f:7203:00f0:4c47', None, None)])
    lab.image('fw-cx6-20.36.bin', CX6, NEW)
    lab.image('fw-cx6-20.35.bin', CX6, OLD)
    return lab


@pytest.fixture
def two_cards(tmp_path):
    return Lab(tmp_path, [('mlx5_0', '0000:3b:00.0', '043f:7203:00f0:4c46', CX6, OLD),
                          ('mlx5_1', '0000:86:00.0', 'b859:9f03:00f0:8018', CX6DX, '22.27.1016')])


# ---------------------------------------------------------------- the recordings and the stand-in's format
def test_image_query_is_read_by_the_device_parser(corpus_file):
    facts = mlx_fw.parse_flint_query(corpus_file('mlx_fw/ipa-mstflint-image-query-bin.txt').read_text())
    assert (facts['psid'], facts['fw_version']) == (CX6, NEW)
    assert facts['base_guid'] is None and facts['pending_reset'] is False and 'errors' not in facts


def test_standin_prints_the_recorded_layout(one_card):
    recorded = (CORPUS_MLX / 'ipa-mstflint-q-cx6-hdr-20.35.txt').read_text()
    assert one_card('-d', '0000:3b:00.0', 'q').stdout == recorded
    image = (CORPUS_MLX / 'ipa-mstflint-image-query-bin.txt').read_text()
    out = one_card('-i', str(one_card.bundle / 'fw-cx6-20.36.bin'), 'q').stdout
    # the recording's Product Version is rel-20_35_1012 although its FW Version is 20.36.1012 (as recorded)
    assert out == image.replace('rel-20_35_1012', 'rel-20_36_1012')


def test_standin_burn_pending_reboot(one_card):
    res = one_card('-d', '0000:3b:00.0', '-i', str(one_card.bundle / 'fw-cx6-20.36.bin'), '-y', 'b')
    assert res.returncode == 0 and 'New FW version:               20.36.1012' in res.stdout
    facts = mlx_fw.parse_flint_query(one_card('-d', '3b:00.0', 'q').stdout)
    assert (facts['fw_version'], facts['fw_version_running'], facts['pending_reset']) == (NEW, OLD, True)
    one_card.reboot()
    facts = mlx_fw.parse_flint_query(one_card('-d', '3b:00.0', 'q').stdout)
    assert facts['fw_version'] == NEW and 'fw_version_running' not in facts


# ---------------------------------------------------------------- the module
def test_check_burn_pending_reboot_running(one_card, run_module):
    # check mode with diff: what would be burned, nothing burned
    res = run_module(hca_firmware.main, dict(one_card.args(), _ansible_check_mode=True, _ansible_diff=True))
    assert res['changed'] and not res.get('failed'), res
    assert one_card.burns() == []
    card, = res['cards']
    assert card['pci'] == '0000:3b:00.0' and card['devices'] == ['mlx5_0', 'mlx5_1']  # one query per card, no VF
    assert card['action'] == 'burn' and card['image'] == str(one_card.bundle / 'fw-cx6-20.36.bin')
    assert card['before'] == {'flash': OLD, 'running': OLD} and card['after'] == {'flash': NEW, 'running': OLD}
    assert res['diff'] == {'before': {'0000:3b:00.0': {'flash': OLD, 'running': OLD}},
                           'after': {'0000:3b:00.0': {'flash': NEW, 'running': OLD}}}
    assert res['reboot_required'] is True
    # nothing was burned: the reason says what would happen, never "burned" (a rollout --check journals it)
    assert res['reboot_reason'] == ('check mode: HCA firmware would be burned, then wait for a reset or reboot: '
                                    '0000:3b:00.0 (PSID MT_0000000228): flash 20.36.1012, running 20.35.1012')
    assert sorted((i['psid'], i['version']) for i in res['bundle']) == [(CX6, OLD), (CX6, NEW)]
    assert [c for c in one_card.calls() if c.startswith('-d')] == ['-d 0000:3b:00.0 q']
    # apply: burned, the flash shows it, the card still runs the old firmware
    res = run_module(hca_firmware.main, one_card.args())
    assert res['changed'] and not res.get('failed'), res
    assert one_card.burns() == ['-d 0000:3b:00.0 -i %s -y b' % (one_card.bundle / 'fw-cx6-20.36.bin')]
    card, = res['cards']
    assert card['action'] == 'burn' and card['after'] == {'flash': NEW, 'running': OLD}
    assert res['reboot_required'] is True
    assert res['reboot_reason'] == ('HCA firmware burned, waiting for a reset or reboot: 0000:3b:00.0 (PSID '
                                    'MT_0000000228): flash 20.36.1012, running 20.35.1012')
    # again before the reboot: burned, pending reset - not burned again, the reboot is still required
    res = run_module(hca_firmware.main, one_card.args())
    assert not res['changed'] and res['cards'][0]['action'] == 'pending-reset' and res['reboot_required'], res
    assert len(one_card.burns()) == 1 and 'bundle' not in res
    # the reboot loads it: nothing to do, nothing required
    one_card.reboot()
    res = run_module(hca_firmware.main, dict(one_card.args(), _ansible_check_mode=True))
    assert not res['changed'] and not res['reboot_required'] and res['reboot_reason'] == ''
    assert res['cards'][0]['action'] == 'none' and res['cards'][0]['before'] == {'flash': NEW, 'running': NEW}


def test_check_mode_reason_tells_burned_from_would_burn(two_cards, run_module):
    # card 1 burned by an earlier run (pending reset), card 2 to burn: check mode names each for what it is
    two_cards.image('cx6.bin', CX6, NEW)
    two_cards.image('cx6dx.bin', CX6DX, '22.28.1002')
    versions = {CX6: NEW, CX6DX: '22.28.1002'}
    run_module(hca_firmware.main, two_cards.args(version=None, versions=versions, devices=['0000:3b:00.0']))
    res = run_module(hca_firmware.main, dict(two_cards.args(version=None, versions=versions), _ansible_check_mode=True))
    assert [c['action'] for c in res['cards']] == ['pending-reset', 'burn'] and res['reboot_required'], res
    assert len(two_cards.burns()) == 1
    assert res['reboot_reason'] == (
        'HCA firmware burned, waiting for a reset or reboot: 0000:3b:00.0 (PSID MT_0000000228): flash 20.36.1012, '
        'running 20.35.1012; check mode: HCA firmware would be burned, then wait for a reset or reboot: '
        '0000:86:00.0 (PSID MT_0000000359): flash 22.28.1002, running 22.27.1016')


def test_mlxfwreset_loads_the_burned_image(one_card, run_module):
    res = run_module(hca_firmware.main, one_card.args(reset='mlxfwreset'))
    assert res['changed'] and not res.get('failed'), res
    assert res['cards'][0]['after'] == {'flash': NEW, 'running': NEW} and not res['reboot_required']
    assert 'fwreset -d 0000:3b:00.0 -y reset' in one_card.calls()
    assert not run_module(hca_firmware.main, one_card.args(reset='mlxfwreset'))['changed']


def test_pending_reset_is_reset_with_mlxfwreset(one_card, run_module):
    run_module(hca_firmware.main, one_card.args())
    res = run_module(hca_firmware.main, dict(one_card.args(reset='mlxfwreset'), _ansible_check_mode=True))
    assert res['changed'] and res['cards'][0]['action'] == 'reset' and not res['reboot_required']
    assert not [c for c in one_card.calls() if c.startswith('fwreset')]
    res = run_module(hca_firmware.main, one_card.args(reset='mlxfwreset'))
    assert res['changed'] and res['cards'][0]['after'] == {'flash': NEW, 'running': NEW}
    assert len(one_card.burns()) == 1


def test_missing_image_refused_before_any_burn(two_cards, run_module):
    two_cards.image('cx6.bin', CX6, NEW)
    two_cards.image('cx6dx-old.bin', CX6DX, '22.27.1016')
    (two_cards.bundle / 'README.txt').write_text('not an image\n')
    res = run_module(hca_firmware.main, two_cards.args(version=None, versions={CX6: NEW, CX6DX: '22.41.1000'}))
    assert res['failed'] and not res['changed']
    assert 'no image for PSID MT_0000000359 version 22.41.1000 (card 0000:86:00.0, flash 22.27.1016)' in res['msg']
    assert 'the bundle holds cx6.bin (MT_0000000228 20.36.1012), cx6dx-old.bin (MT_0000000359 22.27.1016)' in res['msg']
    assert 'README.txt: -E- Cannot open' in res['msg'] and res['msg'].endswith('nothing was burned')
    assert two_cards.burns() == []  # the first card has its image, and is not burned either
    assert [c['action'] for c in res['cards']] == ['burn', 'burn']


def test_version_for_a_psid_not_in_versions_refused(two_cards, run_module):
    two_cards.image('cx6.bin', CX6, NEW)
    res = run_module(hca_firmware.main, two_cards.args(version=None, versions={CX6: NEW}))
    assert res['failed'] and 'versions has no entry for PSID MT_0000000359 of card 0000:86:00.0' in res['msg']
    assert two_cards.burns() == []


def test_image_of_another_psid_refused(one_card, run_module):
    one_card.image('other.bin', CX6DX, NEW)
    res = run_module(hca_firmware.main, one_card.args(images={CX6: 'other.bin'}))
    assert res['failed'] and not res['changed']
    assert ("images.MT_0000000228: %s is an image for PSID MT_0000000359 (version 20.36.1012), not for card "
            "0000:3b:00.0 (PSID MT_0000000228)" % (one_card.bundle / 'other.bin')) in res['msg']
    assert one_card.burns() == []
    res = run_module(hca_firmware.main, one_card.args(images={CX6: 'fw-cx6-20.36.bin'}))
    assert res['changed'] and res['cards'][0]['image'] == str(one_card.bundle / 'fw-cx6-20.36.bin')


def test_downgrade_refused_unless_allowed(one_card, run_module):
    one_card.image('fw-cx6-20.34.bin', CX6, '20.34.1002')
    res = run_module(hca_firmware.main, one_card.args(version='20.34.1002'))
    assert res['failed'] and 'is a downgrade from the flash version 20.35.1012' in res['msg']
    assert 'allow_downgrade' in res['msg'] and one_card.burns() == []
    res = run_module(hca_firmware.main, one_card.args(version='20.34.1002', allow_downgrade=True))
    assert res['changed'] and res['cards'][0]['after']['flash'] == '20.34.1002'


def test_burn_failure_names_the_card_and_what_was_burned(two_cards, run_module):
    two_cards.image('cx6.bin', CX6, NEW)
    two_cards.image('cx6dx.bin', CX6DX, '22.41.1000', planted=True)
    res = run_module(hca_firmware.main, two_cards.args(version=None, versions={CX6: NEW, CX6DX: '22.41.1000'}))
    assert res['failed'] and res['changed'] and res['burned'] == ['0000:3b:00.0'], res
    msg = res['msg']
    assert msg.startswith('HCA firmware burn failed on 0000:86:00.0 (PSID MT_0000000359, flash 22.27.1016 -> 22.41.1000): ')
    assert '%s -d 0000:86:00.0 -i %s -y b exited with rc=1' % (two_cards.mstflint, two_cards.bundle / 'cx6dx.bin') in msg
    assert '-E- Burning FS4 image failed' in msg and 'PLANTED FAILURE' in msg
    assert msg.endswith('burned before this failure: 0000:3b:00.0')
    cards = dict((c['pci'], c) for c in res['cards'])
    assert cards['0000:3b:00.0']['after'] == {'flash': NEW, 'running': OLD}
    assert cards['0000:86:00.0']['after'] == {'flash': '22.27.1016', 'running': '22.27.1016'}
    assert res['reboot_required'] and '0000:3b:00.0 (PSID MT_0000000228): flash 20.36.1012, running 20.35.1012' in res['reboot_reason']


def test_devices_limits_the_cards(two_cards, run_module):
    two_cards.image('cx6.bin', CX6, NEW)
    res = run_module(hca_firmware.main, two_cards.args(devices=['3b:00.0']))
    assert res['changed'] and [c['pci'] for c in res['cards']] == ['3b:00.0'] and res['cards'][0]['devices'] == ['mlx5_0']
    assert two_cards.burns() == ['-d 3b:00.0 -i %s -y b' % (two_cards.bundle / 'cx6.bin')]


def test_no_hca_is_skipped(tmp_path, run_module):
    (tmp_path / 'bundle').mkdir()
    res = run_module(hca_firmware.main, dict(version=NEW, bundle_dir=str(tmp_path / 'bundle'), sysfs_root=str(tmp_path),
                                             tool_path=str(tmp_path / 'absent')))
    assert not res['changed'] and res['cards'] == [] and res['skipped_reason'].startswith('no Mellanox/NVIDIA HCA')


def test_missing_tool_is_named(one_card, run_module):
    res = run_module(hca_firmware.main, one_card.args(tool_path=None, tool='flint'))
    assert res['failed'] and res['msg'] == ('tool_path: flint not found (not on PATH); install NVIDIA MFT (flint, '
                                            'mlxfwreset), or use tool: mstflint')
    res = run_module(hca_firmware.main, one_card.args(reset='mlxfwreset', mlxfwreset_path=str(one_card.tmp / 'nope')))
    assert res['failed'] and res['msg'].startswith('mlxfwreset_path: %s not found (not an executable file)'
                                                   % (one_card.tmp / 'nope'))
    assert one_card.burns() == []


def test_failed_query_changes_nothing(one_card, run_module):
    res = run_module(hca_firmware.main, one_card.args(devices=['0000:af:00.0']))
    assert res['failed'] and not res['changed']
    assert 'querying the HCA firmware: %s -d 0000:af:00.0 q exited with rc=1' % one_card.mstflint in res['msg']
    assert '-E- Cannot open Device: 0000:af:00.0' in res['msg']


@pytest.mark.parametrize('params, words', [
    (dict(version='20.36'), 'version must be a firmware version MAJOR.MINOR.SUBMINOR'),
    (dict(version=None, versions={'mt_0000000228': NEW}), "versions has the key 'mt_0000000228', which is not a PSID"),
    (dict(version=None, versions={CX6: '20.36.x'}), 'versions.MT_0000000228 must be a firmware version'),
    (dict(version=None, versions={}), 'versions must be a non-empty dict'),
    (dict(versions={CX6: NEW}), 'version and versions are mutually exclusive'),
    (dict(version=None), 'one of version or versions is required'),
    (dict(devices=['3b:00']), 'devices[0] must be a PCI address'),
    (dict(timeout=0), 'timeout must be an integer from 1'),
])
def test_input_problems_name_the_option(one_card, params, words):
    p = dict(one_card.args(), images=None, devices=None, tool='mstflint', reset='none', allow_downgrade=False,
             timeout=1800, versions=None)
    p.update(params)
    problems = engine.input_problems(p)
    assert len(problems) == 1 and words in problems[0], problems


def test_adhoc_check_mode(one_card, run_adhoc):
    rc, res = run_adhoc('hca_firmware', one_card.args(), check=True)
    assert rc == 0 and res['changed'] is True and res['cards'][0]['action'] == 'burn'
    assert one_card.burns() == []


def test_standin_run_dir_boot(tmp_path):
    """--run-dir (the fleet lab's nspawn hosts, whose kernel boot_id never changes): a directory under /run that is
    empty after every boot holds the stand-in's own boot id."""
    run = tmp_path / 'run'
    base = [sys.executable, str(STANDIN), '--state', str(tmp_path / 's.json'), '--run-dir', str(run)]

    def tool(*args):
        return subprocess.run(base + list(args), capture_output=True, text=True, check=True).stdout

    tool('--standin-add', '3b:00.0', CX6, OLD)
    tool('--standin-make-image', str(tmp_path / 'new.bin'), CX6, NEW)
    tool('-d', '3b:00.0', '-i', str(tmp_path / 'new.bin'), '-y', 'b')
    assert 'FW Version(Running):   20.35.1012' in tool('-d', '3b:00.0', 'q')
    shutil.rmtree(str(run))  # the reboot
    out = tool('-d', '3b:00.0', 'q')
    assert 'FW Version:            20.36.1012' in out and 'Running' not in out
