# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/lab's record_cpu: at `down`, a host's cgroup2 CPU time goes to the file GPUFLEET_CPU_LOG names (scripts/test
sets it per job for the cpu column of its table); nothing is written without the variable or without a cpu.stat."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import importlib.machinery
import importlib.util
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_lab(monkeypatch, tmp_path):
    monkeypatch.setenv('GPUFLEET_LAB_DIR', str(tmp_path / 'lab'))
    loader = importlib.machinery.SourceFileLoader('lab_cpu_under_test', os.path.join(REPO, 'scripts', 'lab'))
    spec = importlib.util.spec_from_loader('lab_cpu_under_test', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def cgroups(tmp_path, usage):
    """A named v1 hierarchy (no cpu.stat) and a cgroup2 one whose cpu.stat says ``usage`` microseconds."""
    v1, v2 = tmp_path / 'systemd' / 'node1', tmp_path / 'unified' / 'node1'
    v1.mkdir(parents=True)
    v2.mkdir(parents=True)
    (v2 / 'cpu.stat').write_text('usage_usec %d\nuser_usec 1\nsystem_usec 2\n' % usage)
    return [str(v1), str(v2)]


def test_the_hosts_cpu_is_appended(monkeypatch, tmp_path):
    lab = load_lab(monkeypatch, tmp_path)
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: cgroups(tmp_path, 2500000))
    log = tmp_path / 'job.cpu'
    log.write_text('host other 7\n')
    monkeypatch.setenv('GPUFLEET_CPU_LOG', str(log))
    lab.record_cpu('node1')
    assert log.read_text() == 'host other 7\nhost node1 2500000\n'


def test_nothing_without_the_variable_or_a_cpu_stat(monkeypatch, tmp_path):
    lab = load_lab(monkeypatch, tmp_path)
    log = tmp_path / 'job.cpu'
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: cgroups(tmp_path, 1))
    monkeypatch.delenv('GPUFLEET_CPU_LOG', raising=False)
    lab.record_cpu('node1')
    assert not log.exists()
    monkeypatch.setenv('GPUFLEET_CPU_LOG', str(log))
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: [str(tmp_path / 'systemd' / 'node1')])
    lab.record_cpu('node1')
    assert not log.exists()
