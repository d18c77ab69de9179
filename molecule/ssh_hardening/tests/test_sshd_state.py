# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ssh_hardening's real state on a stock Debian 12 (socket-activated sshd) and a stock Debian 13 lab host after
converge and the side effect (bad input, lockouts, a password Match block the role refused), read by molecule's
testinfra verifier: what a client sees from the controller (key login works, password and keyboard-interactive are
not offered, ssh-audit finds no failure-level algorithm), the configuration sshd really uses (``sshd -t``,
``sshd -T``), the host keys and moduli on disk, the units, and the lines of the user and of cloud-init that must
survive. Not what the role reported."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import subprocess
import sys
from pathlib import Path

import pytest

LAB_KEY = '/var/lib/gpufleet-lab/id_ed25519'
CLIENT_OPTS = ['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
               '-o', 'ConnectTimeout=10']
SSH_AUDIT = str(Path(sys.executable).parent / 'ssh-audit')
KEX = ['sntrup761x25519-sha512', 'sntrup761x25519-sha512@openssh.com', 'curve25519-sha256',
       'curve25519-sha256@libssh.org', 'diffie-hellman-group18-sha512', 'diffie-hellman-group16-sha512',
       'diffie-hellman-group-exchange-sha256']
CIPHERS = ['chacha20-poly1305@openssh.com', 'aes256-gcm@openssh.com', 'aes128-gcm@openssh.com', 'aes256-ctr',
           'aes192-ctr', 'aes128-ctr']
MACS = ['hmac-sha2-512-etm@openssh.com', 'hmac-sha2-256-etm@openssh.com', 'umac-128-etm@openssh.com']
HOST_KEY_ALGORITHMS = ['ssh-ed25519-cert-v01@openssh.com', 'ssh-ed25519', 'rsa-sha2-512-cert-v01@openssh.com',
                       'rsa-sha2-512', 'rsa-sha2-256-cert-v01@openssh.com', 'rsa-sha2-256']


@pytest.fixture(scope='module')
def lab(host):
    """The host's name and address from molecule's inventory; bookworm keeps sshd socket-activated (converge.yml)."""
    hostvars = host.ansible.get_variables()
    name = hostvars['inventory_hostname']
    return {'name': name, 'address': hostvars['ansible_host'], 'trixie': 'trixie' in name,
            'socket_activation': 'bookworm' in name}


@pytest.fixture(scope='module')
def client(lab):
    """Client side first: on the socket-activated host the first new connection starts ssh.service, which also
    recreates /run/sshd that sshd -t/-T need."""
    def ssh(*args):
        return subprocess.run(['ssh'] + list(args) + CLIENT_OPTS + ['root@' + lab['address'], 'true'],
                              capture_output=True, text=True, timeout=60, check=False)
    key = ssh('-i', LAB_KEY)
    password = ssh('-v', '-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password,keyboard-interactive')
    return {'key': key, 'password': password}


@pytest.fixture(scope='module')
def effective(host, client):
    assert client['key'].returncode == 0, client['key'].stderr
    out = host.check_output('/usr/sbin/sshd -T -C user=root,host=10.254.77.1,addr=10.254.77.1')
    settings = {}
    for line in out.splitlines():
        key, dummy, value = line.partition(' ')
        settings.setdefault(key, []).append(value)
    return settings


@pytest.fixture(scope='module')
def files(host, client):
    """Host keys, the smallest moduli group, the unit states and the user's lines, in one call."""
    assert client['key'].returncode == 0, client['key'].stderr
    script = r'''set -e
for f in /etc/ssh/ssh_host_*_key; do ssh-keygen -l -f "$f" | awk -v f="$f" '{print "hostkey", f, $1, $NF}'; done
awk '$1 !~ /^#/ && NF >= 7 {print "moduli", $5}' /etc/ssh/moduli | sort -n -k2 | head -1
for u in ssh.service ssh.socket; do echo "unit $u $(systemctl is-enabled $u || true) $(systemctl is-active $u || true)"; done
grep -c '^AcceptEnv MY_CLUSTER_VAR$' /etc/ssh/sshd_config | sed 's/^/user_line /'
grep -c '^PasswordAuthentication yes$' /etc/ssh/sshd_config.d/50-cloud-init.conf | sed 's/^/cloud_init /'
awk '!/^[[:space:]]*(#|$)/ {print "first", $0; exit}' /etc/ssh/sshd_config
'''
    return host.check_output('/bin/sh -c %s', script).splitlines()


def test_key_login_works_and_only_publickey_is_offered(client):
    assert client['key'].returncode == 0, client['key'].stderr
    password = client['password']
    offered = [ln for ln in password.stderr.splitlines() if 'Authentications that can continue' in ln]
    assert password.returncode == 255 and offered, (password.returncode, password.stderr[-2000:])
    assert all(ln.endswith('can continue: publickey') for ln in offered), offered


def test_sshd_accepts_its_whole_configuration(host, client):
    assert client['key'].returncode == 0
    result = host.run('/usr/sbin/sshd -t')
    assert result.rc == 0, result.stderr


def test_the_effective_settings(effective, lab):
    single = dict((key, values[0]) for key, values in effective.items())
    assert single['passwordauthentication'] == 'no'
    assert single['kbdinteractiveauthentication'] == 'no'
    assert single['permitrootlogin'] == 'without-password'
    assert single['x11forwarding'] == 'no'
    assert single['kexalgorithms'].split(',') == (['mlkem768x25519-sha256'] if lab['trixie'] else []) + KEX
    assert single['ciphers'].split(',') == CIPHERS
    assert single['macs'].split(',') == MACS
    assert single['hostkeyalgorithms'].split(',') == HOST_KEY_ALGORITHMS
    assert single['banner'] == '/etc/ssh/gpufleet-banner'
    assert effective['subsystem'].count('sftp internal-sftp') == 1
    # the user's own AcceptEnv line (prepare.yml) kept once, beside Debian's LANG LC_*
    assert effective['acceptenv'].count('MY_CLUSTER_VAR') == 1, effective['acceptenv']
    assert sorted(effective['hostkey']) == ['/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_rsa_key']


def test_only_ed25519_and_rsa_3072_host_keys_and_strong_moduli(files):
    keys = [line.split() for line in files if line.startswith('hostkey ')]
    assert sorted(k[3] for k in keys) == ['(ED25519)', '(RSA)'], keys
    assert [int(k[2]) for k in keys if k[3] == '(RSA)'][0] >= 3072, keys
    moduli = [line.split() for line in files if line.startswith('moduli ')]
    assert moduli and int(moduli[0][1]) >= 3071, moduli


def test_the_users_and_cloud_inits_lines_survive_and_include_comes_first(files):
    assert 'user_line 1' in files
    assert 'cloud_init 1' in files
    assert 'first Include /etc/ssh/sshd_config.d/*.conf' in files


def test_ssh_service_and_socket_as_configured(files, lab):
    units = [line for line in files if line.startswith('unit ')]
    if lab['socket_activation']:
        assert units == ['unit ssh.service disabled active', 'unit ssh.socket enabled active']
    else:
        assert units == ['unit ssh.service enabled active', 'unit ssh.socket disabled inactive']


def test_ssh_audit_finds_no_failure_level_algorithm(lab):
    audit = subprocess.run([SSH_AUDIT, '-j', '--skip-rate-test', lab['address']], capture_output=True, text=True,
                           timeout=120, check=False)
    assert audit.returncode in (0, 1, 2), (audit.returncode, audit.stdout[-2000:], audit.stderr[-2000:])  # 3: failures
    report = json.loads(audit.stdout)
    algorithms = report['kex'] + report['key'] + report['enc'] + report['mac']
    failed = [a['algorithm'] for a in algorithms if 'fail' in a.get('notes', {})]
    assert not failed, failed
    assert sorted(a['algorithm'] for a in report['key']) == ['rsa-sha2-256', 'rsa-sha2-512', 'ssh-ed25519']
