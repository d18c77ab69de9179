# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host state after ``site.yml`` on the embedded lab, read with pytest-testinfra (scripts/site-test runs it
after the second, changed=0 run):

    pytest tests/lab/test_site_state.py --hosts='ansible://gpu_nodes' --ansible-inventory=inventories/lab

What the roles promise is read back from each lab host itself: the sshd settings sshd really uses (``sshd -T``),
the host keys on disk, the service, the sysctl file and the values the kernel holds (in a container only the
keys of its network namespace are set now; the rest must be in the file), the acceptance tools (bench_tools) and
the node's Prometheus textfile. The expected values come from the roles' defaults and the lab inventory, not from
copies here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _defaults(role):
    return yaml.safe_load((ROOT / 'roles' / role / 'defaults' / 'main.yml').read_text())


SSH = _defaults('ssh_hardening')
SYSCTL = _defaults('sysctl_tuning')
ACCEPTANCE = _defaults('acceptance')
BENCH = yaml.safe_load((ROOT / 'roles' / 'bench_tools' / 'vars' / 'main.yml').read_text())
LAB_LOCK = yaml.safe_load((ROOT / 'inventories' / 'lab' / 'group_vars' / 'profile_lab_cpu.yml').read_text())['gpufleet_lock']


@pytest.fixture(scope='module')
def sshd_t(host):
    out = host.check_output('sshd -T -C user=root,host=localhost,addr=127.0.0.1')
    settings = {}
    for line in out.splitlines():
        key, dummy, value = line.partition(' ')
        settings.setdefault(key.lower(), []).append(value)
    return settings


def test_sshd_runs_and_starts_at_boot(host):
    ssh = host.service('ssh')
    assert ssh.is_running
    assert ssh.is_enabled or host.service('ssh.socket').is_enabled


def test_sshd_uses_the_hardened_settings(sshd_t):
    assert sshd_t['passwordauthentication'] == ['no']
    assert sshd_t['kbdinteractiveauthentication'] == ['no']
    assert sshd_t['permitemptypasswords'] == ['no']
    wanted_root = SSH['ssh_hardening_permit_root_login'].replace('prohibit-password', 'without-password')
    assert sshd_t['permitrootlogin'] == [wanted_root]
    ciphers = sshd_t['ciphers'][0].split(',')
    assert ciphers and not [c for c in ciphers if c.endswith('-cbc')], ciphers
    macs = sshd_t['macs'][0].split(',')
    assert macs and all('-etm@' in m for m in macs), macs
    kex = sshd_t['kexalgorithms'][0].split(',')
    assert not [k for k in kex if 'nistp' in k or k.endswith('sha1') or k == 'diffie-hellman-group14-sha256'], kex


def test_only_the_wanted_host_keys(host, sshd_t):
    wanted = ['/etc/ssh/ssh_host_%s_key' % t for t in SSH['ssh_hardening_host_key_types']]
    assert sorted(sshd_t['hostkey']) == sorted(wanted)
    for path in wanted:
        key = host.file(path)
        assert key.is_file and key.user == 'root' and key.mode == 0o600
    for weak in ('dsa', 'ecdsa'):
        assert not host.file('/etc/ssh/ssh_host_%s_key' % weak).exists
    rsa = host.check_output("ssh-keygen -l -f /etc/ssh/ssh_host_rsa_key.pub | cut -d' ' -f1")
    assert int(rsa) >= 3072


def test_the_hardening_drop_in_is_root_only(host):
    dropin = host.file('/etc/ssh/sshd_config.d/00-gpufleet-hardening.conf')
    assert dropin.is_file and dropin.user == 'root' and dropin.mode == 0o600
    first = [line for line in host.file('/etc/ssh/sshd_config').content_string.splitlines()
             if line.strip() and not line.lstrip().startswith('#')][0]
    assert re.match(r'(?i)include\s+/etc/ssh/sshd_config\.d/\*\.conf\s*$', first), first


def test_sysctls_in_the_file_and_in_the_kernel(host):
    conf = host.file(SYSCTL['sysctl_tuning_file'])
    assert conf.is_file and conf.user == 'root'
    text = conf.content_string
    settable = [re.compile(p) for p in SYSCTL['sysctl_tuning_container_settable']]
    in_container = host.run('systemd-detect-virt --container').rc == 0
    wanted = dict((key, ' '.join(str(value).split())) for key, value in SYSCTL['sysctl_tuning_defaults'].items())
    for key, want in wanted.items():
        assert re.search(r'(?m)^%s\s*=\s*%s\s*$' % (re.escape(key), re.escape(want)), text), (key, want)
    # what the kernel holds, read in one call (sysctl prints "key = value" in the order asked)
    now = [key for key in wanted if not in_container or any(p.search(key) for p in settable)]
    assert now, 'no sysctl to read back'
    got = dict(line.split(' = ', 1) for line in host.check_output('sysctl -- %s' % ' '.join(now)).splitlines())
    assert dict((key, ' '.join(got.get(key, '').split())) for key in now) == dict((key, wanted[key]) for key in now)


REPLAY_DIR = '/var/lib/gpufleet-standin/replay'
GPU_RUNGS = {'dcgm_diag', 'gpu_burn', 'p2p_bandwidth', 'nccl_bench'}
HCA_RUNGS = {'fabric_health', 'rdma_bw'}


@pytest.fixture(scope='module')
def replayed(host):
    """True on the lab's GPU node on replays (tests/lab/replay-harness.yml gave it recorded outputs)."""
    return host.file(REPLAY_DIR + '/dcgmi.json').exists


def test_the_node_reports_its_acceptance_to_prometheus(host, replayed):
    """No GPU on the lab hosts: every rung is reported skipped and the node verdict is absent (never a pass). The
    GPU node on replays: its four GPU rungs passed with their figures, the HCA rungs skipped (no HCA), node passed."""
    prom = host.file(ACCEPTANCE['acceptance_textfile_dir'] + '/gpufleet_acceptance.prom')
    assert prom.is_file and prom.user == 'root'
    text = prom.content_string
    skipped = dict(re.findall(r'(?m)^gpufleet_acceptance_rung_skipped\{[^}]*rung="(\w+)"[^}]*\} (\S+)$', text))
    passed = dict(re.findall(r'(?m)^gpufleet_acceptance_rung_pass\{[^}]*rung="(\w+)"[^}]*\} (\S+)$', text))
    figures = dict(re.findall(r'(?m)^gpufleet_acceptance_rung_figure\{[^}]*rung="(\w+)"[^}]*\} (\S+)$', text))
    node = re.findall(r'(?m)^gpufleet_acceptance_node_pass\{[^}]*\} (\S+)$', text)
    if replayed:
        assert passed == dict.fromkeys(GPU_RUNGS, '1'), text[:1200]
        assert set(skipped) == HCA_RUNGS and set(skipped.values()) == {'1'}, skipped
        assert set(figures) == GPU_RUNGS, figures
        assert node == ['1'], text[:1200]
        return
    assert set(skipped) == GPU_RUNGS | HCA_RUNGS, text[:800]
    assert set(skipped.values()) == {'1'}, skipped
    assert not node, 'a node with no rung run must not pass'
    assert not passed


def test_the_ladder_ran_the_installed_tools_on_replays(host, replayed):
    """The GPU node on replays: the ladder ran the programs bench_tools installed from the local repository (their
    lab replay hook logged each call), with the ladder's arguments, and the site report has the recorded figures
    against their thresholds."""
    if not replayed:
        pytest.skip('not the GPU node on replays (tests/lab/replay-inventory.yml)')
    owners = {'/usr/bin/dcgmi': 'datacenter-gpu-manager', '/usr/bin/gpu_burn': 'gpu-burn',
              '/usr/bin/p2pBandwidthLatencyTest': 'cuda-samples-p2p', '/usr/bin/all_reduce_perf': 'nccl-tests'}
    for path, package in owners.items():
        assert host.check_output('dpkg -S %s' % path).split(':')[0] == package, path
    calls = {}
    for program in ('dcgmi', 'gpu_burn', 'p2pBandwidthLatencyTest', 'all_reduce_perf'):
        log = host.file('%s/%s.calls.log' % (REPLAY_DIR, program))
        assert log.exists, '%s was never run' % program
        calls[program] = [json.loads(line)['argv'] for line in log.content_string.splitlines() if line.strip()]
    # two real runs of site.yml (check mode runs no rung): each ran every program once, dcgmi twice (the module's
    # output: auto asks for JSON, and the recording is the text table it then asks for)
    assert calls['dcgmi'] == [['diag', '-r', '2', '-j'], ['diag', '-r', '2']] * 2, calls['dcgmi']
    assert all(len(calls[p]) == 2 for p in ('gpu_burn', 'p2pBandwidthLatencyTest', 'all_reduce_perf')), calls
    assert '-tc' in calls['gpu_burn'][-1] and calls['gpu_burn'][-1][-1] == '1', calls['gpu_burn']
    nccl = calls['all_reduce_perf'][-1]
    assert nccl[nccl.index('-g') + 1] == '8', nccl
    report = json.loads((ROOT / 'build' / 'reports' / 'acceptance-report.json').read_text())
    name = host.backend.get_hostname()
    node = report['nodes'][name]
    rungs = dict((r['rung'], r) for r in node['rungs'])
    assert node['status'] == 'passed', node
    assert [rungs[r]['status'] for r in ('dcgm_diag', 'gpu_burn', 'p2p_bandwidth', 'nccl_bench')] == ['pass'] * 4, node
    assert rungs['gpu_burn']['figure'] == 16890.0 and rungs['gpu_burn']['threshold_origin'] == 'baseline:A100-SXM4'
    assert rungs['nccl_bench']['figure'] == 235.26 and rungs['p2p_bandwidth']['threshold_origin'] == 'inventory'
    assert rungs['fabric_health']['status'] == rungs['rdma_bw']['status'] == 'skipped', node


def test_the_acceptance_tools_are_installed_pinned_and_held(host):
    """bench_tools: every program the ladder runs is executable, the packages the lab lock pins are at their version
    and held, and DCGM's host engine is neither enabled nor running on these GPU-less hosts."""
    tools = _defaults('bench_tools')['bench_tools_tools']
    paths = [path for tool in tools for path in BENCH['__bench_tools_executables_default'][tool]]
    assert paths, 'no program to look for'
    # every program in one call: type and mode of what the path resolves to
    out = host.run('stat -L -c "%%n|%%F|%%a" -- %s' % ' '.join(paths))
    found = dict((name, (kind, int(mode, 8))) for name, kind, mode in (line.split('|') for line in out.stdout.splitlines()))
    for path in paths:
        kind, mode = found.get(path, ('missing', 0))
        assert kind == 'regular file' and mode & 0o111, (path, kind, oct(mode), out.stderr)
    packages = {'gpu_burn': 'gpu-burn', 'cuda_samples': 'cuda-samples-p2p', 'nccl_tests': 'nccl-tests',
                'dcgm': 'datacenter-gpu-manager'}
    for key, version in LAB_LOCK.items():
        if version is None:
            continue
        row = host.check_output("dpkg-query -W -f '${Version} ${db:Status-Abbrev}' %s" % packages[key])
        got, status = row.split(' ', 1)
        assert re.match(r'^([0-9]+:)?%s(-[^-]+)?$' % re.escape(str(version)), got), (key, got, version)
        assert status.startswith('hi'), (key, status)
    assert 'Pin-Priority: 1001' in host.file('/etc/apt/preferences.d/gpufleet-bench-tools.pref').content_string
    dcgm = host.service('nvidia-dcgm')
    assert not dcgm.is_enabled and not dcgm.is_running
