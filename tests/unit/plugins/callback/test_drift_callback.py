# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift callback's report file: written through a fresh temp file, never through a planted symlink."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from ansible.module_utils import _internal as module_utils_internal


@pytest.fixture(autouse=True)
def controller_flag(monkeypatch):
    """The callback imports controller code, which marks the process as the controller; put the flag back
    after each test so later module tests are not affected."""
    monkeypatch.setattr(module_utils_internal, 'is_controller', module_utils_internal.is_controller)


def _callback(report_dir):
    from ansible_collections.gpufleet.cluster.plugins.callback import drift
    cb = drift.CallbackModule()
    cb.get_option = lambda name: str(report_dir) if name == 'report_dir' else None
    return cb


def test_symlink_at_old_tmp_name_is_not_followed(tmp_path):
    report = tmp_path / 'report'
    report.mkdir()
    victim = tmp_path / 'victim.txt'
    victim.write_text('keep me\n')
    before = (victim.read_bytes(), os.stat(victim).st_mtime_ns)
    planted = report / 'drift-changes.json.tmp'  # the fixed name the callback used to open for writing
    planted.symlink_to(victim)

    cb = _callback(report)
    cb.v2_playbook_on_start(SimpleNamespace(_file_name=str(tmp_path / 'playbooks' / 'drift.yml')))

    assert (victim.read_bytes(), os.stat(victim).st_mtime_ns) == before
    assert planted.is_symlink() and os.readlink(planted) == str(victim)  # left alone
    data = json.loads((report / 'drift-changes.json').read_text())
    assert data == {'playbook': 'drift.yml', 'hosts': {}, 'consequences': {}}
    assert not (report / 'drift-changes.json').is_symlink()
    leftovers = sorted(p.name for p in report.iterdir())
    assert leftovers == ['drift-changes.json', 'drift-changes.json.tmp']  # no temp file left behind


def test_report_replaced_not_written_through_symlink(tmp_path):
    report = tmp_path / 'report'
    report.mkdir()
    victim = tmp_path / 'victim.json'
    victim.write_text('{"x": 1}\n')
    (report / 'drift-changes.json').symlink_to(victim)
    cb = _callback(report)
    cb.v2_playbook_on_start(SimpleNamespace(_file_name='drift.yml'))
    assert victim.read_text() == '{"x": 1}\n'
    assert not (report / 'drift-changes.json').is_symlink()
    assert oct(os.stat(report / 'drift-changes.json').st_mode & 0o777) == oct(0o644 & ~_umask())


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
