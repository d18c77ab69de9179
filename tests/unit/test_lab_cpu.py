# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/lab's record_cpu: at `down`, a host's cgroup2 CPU time goes to the file GPUFLEET_CPU_LOG names (scripts/test
sets it per job for the cpu column of its table); nothing is written without the variable or without a cpu.stat. The
first test reads a real cgroup of this machine that a process burned CPU in (skipped where none can be made)."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import os
import subprocess
import sys
import uuid

import pytest


def cgroup2_mount():
    with open('/proc/self/mountinfo') as f:
        for line in f:
            pre, dummy, post = line.partition(' - ')
            if post.split()[:1] == ['cgroup2']:
                return pre.split()[4]
    return None


@pytest.fixture
def real_cgroup():
    """A cgroup2 cgroup of its own in which a child Python burned about 0.3 s of CPU, then exited."""
    mount = cgroup2_mount()
    path = os.path.join(mount, 'gpufleet-test-unit-%s' % uuid.uuid4().hex[:8]) if mount else None
    try:
        os.mkdir(path)
    except (OSError, TypeError):
        pytest.skip('no writable cgroup2 hierarchy here')
    burn = ('import os, sys, time\nopen(sys.argv[1], "w").write("%d\\n" % os.getpid())\n'
            't = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\n')
    # the child moves itself in before it burns, so all of its CPU is the cgroup's
    subprocess.run([sys.executable, '-c', burn, os.path.join(path, 'cgroup.procs')], check=True)
    yield path
    os.rmdir(path)


def test_a_real_cgroups_cpu_is_appended(repo_script, monkeypatch, tmp_path, real_cgroup):
    lab = repo_script('lab')
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: [real_cgroup])
    log = tmp_path / 'job.cpu'
    log.write_text('host other 7\n')
    monkeypatch.setenv('GPUFLEET_CPU_LOG', str(log))
    lab.record_cpu('node1')
    lines = log.read_text().splitlines()
    assert lines[0] == 'host other 7' and len(lines) == 2
    kind, name, usec = lines[1].split()
    assert (kind, name) == ('host', 'node1')
    assert 250000 <= int(usec) < 5000000  # the 0.3 s the child burned, and its start-up


def test_nothing_without_the_variable_or_a_cpu_stat(repo_script, monkeypatch, tmp_path):
    lab = repo_script('lab')
    v1, v2 = tmp_path / 'systemd' / 'node1', tmp_path / 'unified' / 'node1'  # the named v1 one has no cpu.stat
    v1.mkdir(parents=True)
    v2.mkdir(parents=True)
    (v2 / 'cpu.stat').write_text('usage_usec 1\n')
    log = tmp_path / 'job.cpu'
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: [str(v1), str(v2)])
    monkeypatch.delenv('GPUFLEET_CPU_LOG', raising=False)
    lab.record_cpu('node1')
    assert not log.exists()
    monkeypatch.setenv('GPUFLEET_CPU_LOG', str(log))
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: [str(v1)])
    lab.record_cpu('node1')
    assert not log.exists()
    monkeypatch.setattr(lab, 'host_cgroups', lambda name: [str(v1), str(v2)])
    lab.record_cpu('node1')
    assert log.read_text() == 'host node1 1\n'  # past the v1 hierarchy to the cgroup2 one


def test_instance_config_is_what_molecule_reads(tmp_path, repo_script):
    """`scripts/lab up ... --instance-config FILE` (molecule/_shared/create.yml and scripts/test's CI sequence): one
    entry per host in the platforms' order, the lab key, mode 0600, YAML-readable; an older file is replaced whole."""
    import yaml  # pylint: disable=import-outside-toplevel
    lab = repo_script('lab')
    path = tmp_path / 'state' / 'instance_config.yml'
    path.parent.mkdir()
    path.write_text('- {instance: stale, address: 10.254.77.9}\n' * 3)
    lab.write_instance_config(str(path), [('mol-b', '10.254.77.102'), ('mol-a', '10.254.77.101')])
    assert yaml.safe_load(path.read_text()) == [
        {'instance': 'mol-b', 'address': '10.254.77.102', 'user': 'root', 'port': 22, 'identity_file': lab.KEY},
        {'instance': 'mol-a', 'address': '10.254.77.101', 'user': 'root', 'port': 22, 'identity_file': lab.KEY}]
    assert os.stat(str(path)).st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ['instance_config.yml']  # no temporary file left
