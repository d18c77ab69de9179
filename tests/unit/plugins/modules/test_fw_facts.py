# -*- coding: utf-8 -*-
"""fw_facts module: recorded mlx5 sysfs tree placed in a hand-made PCI layout, stand-in tools that
print recorded outputs (mstflint q, nv-fabricmanager --version, mlxup) and the recorded FM log."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import fw_facts

MLX5 = 'sysfs_infiniband/procfs/fixtures/sys/class/infiniband/mlx5_0'
NO_FM = {'fabricmanager_service': '', 'fabricmanager_log': '', 'fabricmanager_path': '', 'ofed_info_path': ''}


def script(path, body):
    path.write_text('#!/bin/sh\necho "$0 $@" >> %s\n%s\n' % (shlex.quote(str(path.parent / 'calls.log')), body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def cat(path, rc=0):
    return 'cat %s; exit %d' % (shlex.quote(str(path)), rc)


def build_tree(corpus, root, devices, vf=()):
    """``devices``: (ib name, pci address, sys_image_guid); hand-made PCI layout, recorded mlx5_0 content."""
    cls = root / 'sys' / 'class' / 'infiniband'
    cls.mkdir(parents=True)
    for name, pci, guid in devices:
        pdir = root / 'sys' / 'devices' / 'pci0000:00' / pci
        ibdev = pdir / 'infiniband' / name
        shutil.copytree(str(corpus / MLX5), str(ibdev))
        (ibdev / 'sys_image_guid').write_text(guid + '\n')
        os.symlink('../../../%s' % pci, str(ibdev / 'device'))
        if name in vf:
            os.symlink('../0000:3b:00.0', str(pdir / 'physfn'))
        os.symlink(os.path.relpath(str(ibdev), str(cls)), str(cls / name))
    mod = root / 'sys' / 'module' / 'mlx5_core'
    mod.mkdir(parents=True)
    (mod / 'version').write_text('5.8-1.0.1\n')  # hand-made value
    return root


@pytest.fixture
def tree(corpus, tmp_path):
    # mlx5_0/mlx5_1: two functions of one dual-port card (same sys_image_guid); mlx5_2: a VF
    return build_tree(corpus, tmp_path / 'root', [
        ('mlx5_0', '0000:3b:00.0', '0c42:a103:0016:054c'),
        ('mlx5_1', '0000:3b:00.1', '0c42:a103:0016:054c'),
        ('mlx5_2', '0000:3b:00.2', '0c42:a103:0016:054d'),
    ], vf=('mlx5_2',))


def test_flash_query_once_per_adapter_and_skips_vf(corpus, tmp_path, tree, run_module):
    tools = tmp_path / 'bin'
    tools.mkdir()
    mstflint = script(tools / 'mstflint', cat(corpus / 'mlx_fw/ipa-mstflint-q-cx6-hdr-20.35.txt'))
    args = dict(NO_FM, sysfs_root=str(tree), mstflint_path=mstflint)
    result = run_module(fw_facts.main, args)
    assert result['changed'] is False
    fw = result['ansible_facts']['firmware']
    assert sorted(fw['hca']) == ['mlx5_0', 'mlx5_1', 'mlx5_2']
    for name in ('mlx5_0', 'mlx5_1'):
        hca = fw['hca'][name]
        assert hca['fw_ver'] == '14.28.2006' and hca['board_id'] == 'SM_2001000001034'  # sysfs (recorded)
        assert hca['flash']['fw_version'] == '20.35.1012' and hca['flash']['psid'] == 'MT_0000000228'
        assert hca['flash']['pxe_version'] == '3.6.804' and hca['flash']['uefi_version'] == '14.28.15'
    assert fw['hca']['mlx5_0']['pci_address'] == '0000:3b:00.0'
    assert 'flash' not in fw['hca']['mlx5_2']  # virtual function
    assert (tools / 'calls.log').read_text().splitlines() == ['%s -d 0000:3b:00.0 q' % mstflint]
    assert fw['kernel_modules'] == {'mlx5_core': '5.8-1.0.1'}
    assert fw['tools']['mstflint'] == mstflint and fw['errors'] == []


def test_flint_fallback_and_failure_is_reported(corpus, tmp_path, tree, run_module):
    tools = tmp_path / 'bin'
    tools.mkdir()
    flint = script(tools / 'flint', 'echo "-E- Cannot open Device: 0000:3b:00.0. No such file or directory"; exit 1')
    args = dict(NO_FM, sysfs_root=str(tree), mstflint_path=str(tools / 'absent'), flint_path=flint)
    result = run_module(fw_facts.main, args)
    assert 'failed' not in result
    fw = result['ansible_facts']['firmware']
    assert fw['tools']['mstflint'] is None and fw['tools']['flint'] == flint
    assert 'flash' not in fw['hca']['mlx5_0']
    assert fw['errors'] == ['%s -d 0000:3b:00.0 q failed (rc=1) - -E- Cannot open Device: 0000:3b:00.0. '
                            'No such file or directory' % flint]
    assert 'Cannot open Device' in json.dumps(result['warnings'])

    result = run_module(fw_facts.main, dict(args, fail_on_error=True))
    assert result['failed'] is True
    assert '%s -d 0000:3b:00.0 q failed (rc=1)' % flint in result['msg']


def test_ofed_fabricmanager_mlxup(corpus, corpus_file, tmp_path, tree, run_module):
    tools = tmp_path / 'bin'
    tools.mkdir()
    args = dict(
        sysfs_root=str(tree), query_flash=False, fabricmanager_service='',
        # hand-written in the documented 'ofed_info -s' format (no recorded output in the corpus)
        ofed_info_path=script(tools / 'ofed_info', 'echo "MLNX_OFED_LINUX-5.8-1.0.1.1:"'),
        fabricmanager_path=script(tools / 'nv-fabricmanager', cat(corpus_file('fabricmanager/nv-fabricmanager-version-580.txt'))),
        fabricmanager_log=str(corpus / 'fabricmanager/gpud-fabricmanager-535.161.08-nvswitch-errors.log'),
        mlxup_path=script(tools / 'mlxup', cat(corpus_file('mlx_fw/cx7-mlxup-query.txt'))),
    )
    fw = run_module(fw_facts.main, args)['ansible_facts']['firmware']
    assert fw['ofed'] == {'raw': 'MLNX_OFED_LINUX-5.8-1.0.1.1', 'distribution': 'MLNX_OFED_LINUX',
                          'version': '5.8-1.0.1.1', 'flavor': 'MLNX_OFED'}
    assert fw['fabricmanager']['version'] == '580.159.03'
    assert fw['fabricmanager']['log']['version'] == '535.161.08'
    assert len(fw['fabricmanager']['log']['nvswitch_errors']) == 9
    assert fw['fabricmanager']['service_state'] is None
    assert fw['mlxup'][0]['fw_version_running'] == '28.46.3048' and fw['mlxup'][0]['pending_reset'] is True
    assert 'flash' not in fw['hca']['mlx5_0'] and fw['errors'] == []


def test_service_state_from_systemctl(tmp_path, run_module, monkeypatch):
    tools = tmp_path / 'bin'
    tools.mkdir()
    script(tools / 'systemctl', 'echo inactive; exit 3')
    monkeypatch.setenv('PATH', str(tools))
    args = dict(sysfs_root=str(tmp_path), fabricmanager_log='', fabricmanager_path='', ofed_info_path='')
    fw = run_module(fw_facts.main, args)['ansible_facts']['firmware']
    assert fw['fabricmanager']['service_state'] == 'inactive'
    assert fw['hca'] == {} and fw['errors'] == []


def test_adhoc_end_to_end(corpus, tmp_path, tree, run_adhoc):
    tools = tmp_path / 'bin'
    tools.mkdir()
    mstflint = script(tools / 'mstflint', cat(corpus / 'mlx_fw/ipa-mstflint-q-cx6-hdr-20.35.txt'))
    rc, result = run_adhoc('fw_facts', dict(NO_FM, sysfs_root=str(tree), mstflint_path=mstflint), check=True)
    assert rc == 0 and result['changed'] is False
    hca = result['ansible_facts']['firmware']['hca']
    assert hca['mlx5_1']['flash']['fw_version'] == '20.35.1012'
    assert hca['mlx5_1']['flash']['base_guid'] == '043f720300f04c46'
