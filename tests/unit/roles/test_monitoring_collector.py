# -*- coding: utf-8 -*-
"""roles/monitoring_node/files/gpufleet_textfile_collector.py: the node-side textfile collectors.

The collector reads RDMA ports with the collection's own sysfs_ib.py: the role ships byte-for-byte copies of
plugins/module_utils/sysfs_ib.py and _sysfs.py (pinned here; regenerate with
``cp plugins/module_utils/{sysfs_ib,_sysfs}.py roles/monitoring_node/files/module_utils/``) and the tests run the
program against the role's copies. The IB tree is node_exporter's recorded fixture (corpus, Apache-2.0)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FILES = ROOT / 'roles' / 'monitoring_node' / 'files'
PROGRAM = FILES / 'gpufleet_textfile_collector.py'
LIB = FILES / 'module_utils'
IB_TREE = ROOT / 'tests' / 'unit' / 'fixtures' / 'corpus' / 'sysfs_infiniband' / 'node_exporter'


@pytest.mark.parametrize('name', ['sysfs_ib.py', '_sysfs.py'])
def test_role_copies_are_the_module_utils(name):
    assert (LIB / name).read_bytes() == (ROOT / 'plugins' / 'module_utils' / name).read_bytes(), \
        'cp plugins/module_utils/%s roles/monitoring_node/files/module_utils/' % name


def run(tmp_path, collector, **cfg):
    out = tmp_path / 'textfile'
    out.mkdir(exist_ok=True)
    config = dict({'format': 'gpufleet.monitoring/1', 'textfile_dir': str(out)}, **cfg)
    (tmp_path / 'collectors.json').write_text(json.dumps(config))
    res = subprocess.run([sys.executable, str(PROGRAM), '--config', str(tmp_path / 'collectors.json'),
                          '--lib', str(LIB), collector], capture_output=True, text=True, timeout=60, check=False)
    prom = out / ('gpufleet_%s.prom' % collector)
    return res, prom.read_text() if prom.exists() else None


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition text (the collector writes simple label values)."""
    got = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        series, value = line.rsplit(' ', 1)
        name, dummy, rest = series.partition('{')
        labels = frozenset(tuple(kv.split('=', 1)) for kv in rest.rstrip('}').split('",') if kv) if rest else frozenset()
        labels = frozenset((k, v.strip('"')) for k, v in labels)
        got[(name, labels)] = float(value)
    return got


def value(text, name, **labels):
    for (n, lbl), v in samples(text).items():
        if n == name and set(labels.items()) <= set(lbl):
            return v
    return None


def test_ib_reads_the_recorded_tree(tmp_path):
    res, text = run(tmp_path, 'ib', sysfs_root=str(IB_TREE), expected_rate_gbps=100)
    assert res.returncode == 0, res.stderr
    assert value(text, 'gpufleet_ib_port_active', device='mlx4_0', port='1') == 1
    assert value(text, 'gpufleet_ib_port_state', device='mlx4_0', port='1') == 4
    assert value(text, 'gpufleet_ib_port_phys_linkup', device='mlx4_0', port='1') == 1
    assert value(text, 'gpufleet_ib_port_rate_gbps', device='mlx4_0', port='1') == 40
    assert value(text, 'gpufleet_ib_port_expected_rate_gbps', device='mlx4_0', port='1') == 100
    assert value(text, 'gpufleet_ib_port_stat_total', device='mlx4_0', port='1', counter='link_downed',
                 source='counters') == 0
    assert value(text, 'gpufleet_ib_port_rate_gbps', device='i40iw0', port='1') == 10
    assert value(text, 'gpufleet_textfile_collector_ok', collector='ib') == 1
    assert abs(value(text, 'gpufleet_textfile_collector_last_run_timestamp_seconds', collector='ib') - time.time()) < 60


def test_ib_counter_that_climbs_and_device_filter(tmp_path):
    root = tmp_path / 'root'
    shutil.copytree(str(IB_TREE), str(root))
    counters = root / 'sys' / 'class' / 'infiniband' / 'mlx4_0' / 'ports' / '1' / 'counters'
    seen = []
    for n in (0, 7, 19):
        (counters / 'symbol_error').write_text('%d\n' % n)
        res, text = run(tmp_path, 'ib', sysfs_root=str(root), ib_devices=['mlx4_0'])
        assert res.returncode == 0, res.stderr
        seen.append(value(text, 'gpufleet_ib_port_stat_total', device='mlx4_0', port='1', counter='symbol_error'))
        assert value(text, 'gpufleet_ib_port_active', device='i40iw0') is None
    assert seen == [0, 7, 19]


def test_ib_without_rdma_devices(tmp_path):
    res, text = run(tmp_path, 'ib', sysfs_root=str(tmp_path / 'empty'))
    assert res.returncode == 0
    assert value(text, 'gpufleet_ib_port_active') is None
    assert value(text, 'gpufleet_textfile_collector_ok', collector='ib') == 1


def record(path, **doc):
    path.write_text(json.dumps(dict({'format': 'gpufleet.status/1'}, **doc)))


def test_status_missing_records_are_reported_missing(tmp_path):
    (tmp_path / 'status').mkdir()
    res, text = run(tmp_path, 'status', status_dir=str(tmp_path / 'status'), expected_gpus=8)
    assert res.returncode == 0, res.stderr
    assert value(text, 'gpufleet_acceptance_record_present') == 0
    assert value(text, 'gpufleet_drift_record_present') == 0
    assert value(text, 'gpufleet_acceptance_last_pass') is None
    assert value(text, 'gpufleet_node_expected_gpus') == 8


def test_status_records(tmp_path):
    status = tmp_path / 'status'
    status.mkdir()
    record(status / 'acceptance.json', kind='acceptance', written_unix=1764140000, status='failed',
           rungs=[{'rung': 'gpu_facts', 'device': None, 'status': 'pass'},
                  {'rung': 'rdma_bw', 'device': 'mlx5_0', 'status': 'fail'},
                  {'rung': 'gpu_burn', 'device': None, 'status': 'skipped'}])
    record(status / 'drift.json', kind='drift', written_unix=1764150000, drift=True, differences=3)
    res, text = run(tmp_path, 'status', status_dir=str(status))
    assert res.returncode == 0, res.stderr
    assert value(text, 'gpufleet_acceptance_last_run_timestamp_seconds') == 1764140000
    assert value(text, 'gpufleet_acceptance_last_pass') == 0
    assert value(text, 'gpufleet_acceptance_last_rung_pass', rung='rdma_bw', device='mlx5_0') == 0
    assert value(text, 'gpufleet_acceptance_last_rung_pass', rung='gpu_facts', device='') == 1
    assert value(text, 'gpufleet_acceptance_last_rung_pass', rung='gpu_burn') is None
    assert value(text, 'gpufleet_drift_detected') == 1
    assert value(text, 'gpufleet_drift_differences') == 3
    assert value(text, 'gpufleet_drift_last_run_timestamp_seconds') == 1764150000


@pytest.mark.parametrize('content', ['{not json', '{"format": "gpufleet.status/1", "kind": "drift"}',
                                     '{"format": "other/1", "kind": "acceptance", "written_unix": 1}'])
def test_status_unreadable_record_fails_the_collector(tmp_path, content):
    status = tmp_path / 'status'
    status.mkdir()
    (status / 'acceptance.json').write_text(content)
    res, text = run(tmp_path, 'status', status_dir=str(status))
    assert res.returncode == 1
    assert 'acceptance.json' in res.stderr
    assert value(text, 'gpufleet_textfile_collector_ok', collector='status') == 0
    assert value(text, 'gpufleet_acceptance_record_present') == 0


def test_fs(tmp_path):
    res, text = run(tmp_path, 'fs', filesystems=[{'path': '/', 'max_used_percent': 85},
                                                 {'path': str(tmp_path), 'max_used_percent': 50}])
    assert res.returncode == 0, res.stderr
    st = os.statvfs('/')
    assert value(text, 'gpufleet_filesystem_mounted', mountpoint='/') == 1
    assert value(text, 'gpufleet_filesystem_size_bytes', mountpoint='/') == st.f_blocks * st.f_frsize
    assert 0 <= value(text, 'gpufleet_filesystem_used_ratio', mountpoint='/') <= 1
    assert value(text, 'gpufleet_filesystem_used_threshold_ratio', mountpoint='/') == 0.85
    assert value(text, 'gpufleet_filesystem_mounted', mountpoint=str(tmp_path)) == 0
    assert value(text, 'gpufleet_filesystem_used_ratio', mountpoint=str(tmp_path)) is None


@pytest.mark.parametrize('cfg', ['[]', '{"format": "gpufleet.monitoring/1"}', 'nope',
                                 '{"format": "gpufleet.monitoring/1", "textfile_dir": "/x", "filesystems": [{"path": "/"}]}'])
def test_bad_config_exits_2_and_writes_nothing(tmp_path, cfg):
    (tmp_path / 'c.json').write_text(cfg)
    res = subprocess.run([sys.executable, str(PROGRAM), '--config', str(tmp_path / 'c.json'), '--lib', str(LIB), 'fs'],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2
    assert 'c.json' in res.stderr and 'Traceback' not in res.stderr


def test_written_atomically_and_valid_exposition(tmp_path):
    res, text = run(tmp_path, 'ib', sysfs_root=str(IB_TREE))
    assert res.returncode == 0
    assert sorted(os.listdir(str(tmp_path / 'textfile'))) == ['gpufleet_ib.prom']  # no temporary file left
    from tests.unit.roles.test_monitoring_rules import promtool  # pylint: disable=import-outside-toplevel
    tool = promtool()
    if not tool:
        pytest.skip('promtool not found')
    check = subprocess.run([tool, 'check', 'metrics'], input=text, capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stdout + check.stderr  # parses, and passes promtool's naming lint
