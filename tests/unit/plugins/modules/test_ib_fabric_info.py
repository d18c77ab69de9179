# -*- coding: utf-8 -*-
"""ib_fabric_info module: tools that print the outputs RECORDED HERE on an ibsim fabric (tests/unit/fixtures/ibsim), the
HAND-MADE ibdiagnet db_csv, and - where Debian's ibsim-utils, opensm and infiniband-diags are installed - the real
tools against a live simulated fabric (also fabric_health's sminfo)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import fabric_health, ib_fabric_info

FIX = Path(__file__).resolve().parents[2] / 'fixtures'
IBSIM = FIX / 'ibsim'
DB = FIX / 'hand_made' / 'fabric' / 'ibdiagnet2-db_csv-fw-mixed-HANDMADE.db_csv'
HAND_TREE = FIX / 'hand_made' / 'fabric' / 'ndr-3hca-climbing-HANDMADE' / 'read2'


def printing(tmp_path, name, recording, rc=0):
    path = tmp_path / name
    path.write_text('#!/bin/sh\necho "$*" >> %s/%s.calls\ncat %s\nexit %d\n' % (tmp_path, name, recording, rc))
    path.chmod(0o755)
    return str(path)


def test_recorded_fabric_view(tmp_path, run_module):
    result = run_module(ib_fabric_info.main, {
        'ibswitches_path': printing(tmp_path, 'ibswitches', IBSIM / 'ibswitches.txt'),
        'iblinkinfo_path': printing(tmp_path, 'iblinkinfo', IBSIM / 'iblinkinfo-l.txt'),
        'ca': 'mlx5_0', 'ca_port': 1, 'min_width': '4X'})
    assert result.get('failed') is not True, result['msg']
    assert result['status'] == 'problems' and result['changed'] is False
    assert [s['desc'] for s in result['switches']] == ['spine01', 'leaf01'] and result['links_total'] == 75
    assert 'link gpu02 mlx5_0 port 1 -> leaf01 port 2 runs 1X 10 Gbps: could be 12X, width 1X below 4X' in result['problems']
    assert (tmp_path / 'iblinkinfo.calls').read_text() == '-l -C mlx5_0 -P 1\n'


def test_no_subnet_manager_ports_down(tmp_path, run_module):
    result = run_module(ib_fabric_info.main, {
        'ibswitches_path': printing(tmp_path, 'ibswitches', IBSIM / 'ibswitches-no-sm.txt'),
        'iblinkinfo_path': printing(tmp_path, 'iblinkinfo', IBSIM / 'iblinkinfo-l-no-sm.txt'),
        'fail_on_problems': True})
    assert result['failed'] is True and len(result['ports_down']) == 10
    assert 'port gpu02 mlx5_0 1 (to leaf01) is Initialize/LinkUp' in result['failures']


def test_firmware_view_from_db_csv_only(tmp_path, run_module):
    result = run_module(ib_fabric_info.main, {
        'ibswitches_path': str(tmp_path / 'absent'), 'iblinkinfo_path': str(tmp_path / 'absent'),
        'ibdiagnet_db_csv': str(DB)})
    assert result['status'] == 'problems'
    assert result['problems'] == ['switch firmware differs within MT_0000000838: 31.2012.1092 on 2 switch(es), '
                                  '31.2012.1000 on 1 switch(es) (MF0;leaf03:MQM9700/U1)']
    assert result['firmware']['groups']['MT_0000000839'] == {'31.2012.1092': ['MF0;spine01:MQM9790/U1']}


def test_tool_failure_is_a_failure(tmp_path, run_module):
    result = run_module(ib_fabric_info.main, {
        'ibswitches_path': printing(tmp_path, 'ibswitches', IBSIM / 'sminfo-no-sm.txt', rc=255),
        'iblinkinfo_path': printing(tmp_path, 'iblinkinfo', IBSIM / 'iblinkinfo-l.txt')})
    assert result['failed'] is True and result['status'] == 'fail'
    assert result['failures'][0].startswith('ibswitches exited with rc=255 (sminfo: iberror: failed: query); cmd: ')


def test_without_tools_skipped(tmp_path, run_module):
    result = run_module(ib_fabric_info.main, {'ibswitches_path': str(tmp_path / 'no-ibswitches'),
                                              'iblinkinfo_path': str(tmp_path / 'no-iblinkinfo')})
    assert result['skipped'] is True and result['msg'].startswith('skipped: infiniband-diags not installed')


# --- live: the real tools on a simulated fabric ---------------------------------------------------------

@pytest.fixture(scope='module')
def live_fabric(tmp_path_factory):
    """ibsim with tests/unit/fixtures/ibsim/fabric.net and OpenSM on it (about 2 s), ended after the module's tests."""
    for tool in ('ibsim', 'ibsim-run', 'opensm', 'ibswitches', 'iblinkinfo', 'sminfo'):
        if not shutil.which(tool, path=os.environ.get('PATH', '') + ':/usr/sbin:/usr/bin'):
            pytest.skip('%s not installed (Debian ibsim-utils, opensm, infiniband-diags; scripts/setup installs them)' % tool)
    tmp = tmp_path_factory.mktemp('ibsim')
    env = dict(os.environ, SIM_HOST='gpu01 mlx5_0', OSM_CACHE_DIR=str(tmp / 'osm'))
    (tmp / 'osm').mkdir()
    sim = subprocess.Popen(['ibsim', '-s', str(IBSIM / 'fabric.net')], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, cwd=str(tmp), env=env, start_new_session=True)
    time.sleep(0.5)
    sm = subprocess.Popen(['ibsim-run', 'opensm', '-p', '14', '-f', str(tmp / 'opensm.log')], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, cwd=str(tmp), env=env, start_new_session=True)
    wrappers = tmp / 'bin'
    wrappers.mkdir()
    for tool in ('ibswitches', 'iblinkinfo', 'sminfo'):
        (wrappers / tool).write_text('#!/bin/sh\nSIM_HOST="gpu01 mlx5_0" exec ibsim-run %s "$@"\n' % tool)
        # the simulator's CA is named ibsim0: this one maps the HCA name the module passes (-C mlx5_0)
        (wrappers / (tool + '-ibsim0')).write_text(
            '#!/bin/sh\nfor a; do shift; [ "$a" = mlx5_0 ] && a=ibsim0; set -- "$@" "$a"; done\n'
            'SIM_HOST="gpu01 mlx5_0" exec ibsim-run %s "$@"\n' % tool)
        for name in (tool, tool + '-ibsim0'):
            (wrappers / name).chmod(0o755)
    try:
        for dummy in range(40):
            out = subprocess.run([str(wrappers / 'iblinkinfo'), '-l'], capture_output=True, text=True, timeout=10,
                                 check=False).stdout
            if out.count('Active/  LinkUp') == 10:
                break
            time.sleep(0.25)
        else:
            pytest.fail('the simulated fabric did not come up: %s' % out[-500:])
        yield wrappers
    finally:
        for proc in (sm, sim):
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_live_fabric_view(live_fabric, run_module):
    result = run_module(ib_fabric_info.main, {'ibswitches_path': str(live_fabric / 'ibswitches'),
                                              'iblinkinfo_path': str(live_fabric / 'iblinkinfo'), 'min_width': '4X'})
    assert result.get('failed') is not True, result['msg']
    assert sorted(s['desc'] for s in result['switches']) == ['leaf01', 'spine01']
    assert [b['node_desc'] for b in result['links_below'] if 'width 1X below 4X' in b['reasons']] == ['gpu02 mlx5_0']
    assert result['ports_down'] == []


def test_live_sminfo_in_fabric_health(live_fabric, tmp_path, run_module):
    root = tmp_path / 'root'
    shutil.copytree(str(HAND_TREE), str(root))
    # sminfo -C mlx5_0: the simulator has no such CA, and the real tool's own error is the failure
    result = run_module(fabric_health.main, {'sysfs_root': str(root), 'devices': ['mlx5_0'], 'interval': 0,
                                             'sminfo_path': str(live_fabric / 'sminfo')})
    (failure,) = result['failures']
    assert failure.startswith('mlx5_0/1: sminfo exited with rc=255 (') and 'mlx5_0' in failure.split(';')[0]
    assert failure.endswith('; cmd: %s -C mlx5_0 -P 1' % (live_fabric / 'sminfo'))
    result = run_module(fabric_health.main, {'sysfs_root': str(root), 'devices': ['mlx5_0'], 'interval': 0,
                                             'sminfo_path': str(live_fabric / 'sminfo-ibsim0')})
    # the simulated SM is MASTER at LID 3; the hand-made tree's port says sm_lid 1: named, never passed
    assert result['ports'][0]['sminfo']['state'] == 'MASTER' and result['ports'][0]['sminfo']['priority'] == 14
    assert result['failures'] == ['mlx5_0/1: sminfo reports the master SM at LID 3, the port at sm_lid 1']
    (root / 'sys/class/infiniband/mlx5_0/ports/1/sm_lid').write_text('0x3\n')
    result = run_module(fabric_health.main, {'sysfs_root': str(root), 'devices': ['mlx5_0'], 'interval': 0,
                                             'sminfo_path': str(live_fabric / 'sminfo-ibsim0')})
    assert result['status'] == 'pass', result['msg']
