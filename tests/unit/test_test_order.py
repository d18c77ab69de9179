# -*- coding: utf-8 -*-
"""scripts/test orders its jobs longest first by the walls of the last run of the same tier on this machine.

A job of one name does other work in `full` (site on four lab hosts, molecule's whole sequences), so each tier keeps
its own record (job-walls.tsv for CI, job-walls-full.tsv for full) and a `full` run does not reorder the next CI run.
`GPUFLEET_TEST_DRY=1` prints the order and runs nothing (no setup, no jobs).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _order(cache_dir, *args):
    env = dict(os.environ, GPUFLEET_CACHE_DIR=str(cache_dir), GPUFLEET_TEST_DRY='1')
    out = subprocess.run(['bash', str(REPO_ROOT / 'scripts' / 'test'), *args], cwd=REPO_ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    return [line for line in out if not line.startswith('cpu reference')]


def test_each_tier_orders_by_its_own_walls(tmp_path):
    (tmp_path / 'job-walls.tsv').write_text('900\tunit\n10\tdocs\n')
    (tmp_path / 'job-walls-full.tsv').write_text('5\tunit\n700\tdocs\n')
    ci, full = _order(tmp_path), _order(tmp_path, 'full')
    assert ci.index('unit') < ci.index('docs'), ci
    assert full.index('docs') < full.index('unit'), full


def test_full_without_its_own_record_orders_by_ci(tmp_path):
    (tmp_path / 'job-walls.tsv').write_text('900\tunit\n10\tdocs\n')
    full = _order(tmp_path, 'full')
    assert full.index('unit') < full.index('docs'), full
    (tmp_path / 'job-walls.tsv').write_text('10\tunit\n900\tdocs\n')
    full = _order(tmp_path, 'full')
    assert full.index('docs') < full.index('unit'), full


def test_dry_run_records_nothing(tmp_path):
    _order(tmp_path)
    _order(tmp_path, 'full')
    assert not list(tmp_path.iterdir())


def _cgroup2_root():
    for line in Path('/proc/self/mountinfo').read_text().splitlines():
        left, right = (line.split(' - ', 1) + [''])[:2]
        if right.split()[:1] == ['cgroup2']:
            return Path(left.split()[4])
    return None


def test_dry_run_leaves_the_job_cgroups_alone(tmp_path):
    """A real run's job cgroup is empty between its mkdir and the job's move into it, and between the job's end and
    the read of its CPU time: the dry run the unit tier makes inside a real run must not sweep it away."""
    root = _cgroup2_root()
    probe = root / 'gpufleet-test' / ('dry-run-probe-%d' % os.getpid()) if root else None
    try:
        probe.mkdir(parents=True, exist_ok=True)
    except (AttributeError, OSError):
        pytest.skip('no writable cgroup2 hierarchy')
    try:
        _order(tmp_path)
        assert probe.is_dir(), 'the dry run removed an empty job cgroup'
    finally:
        if probe.is_dir():
            probe.rmdir()
