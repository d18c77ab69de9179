# -*- coding: utf-8 -*-
"""module_utils/ssh_login.py: the session's TCP connection, sshd's login line, authorized keys."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import ssh_login as sl

# sshd log lines as Debian 13's OpenSSH 10.0 (sshd-session) wrote them on a lab host of this project (recorded
# here, not from a cluster); the certificate and password forms follow sshd's auth.c format (hand-made).
JOURNAL = [
    'Accepted publickey for root from 10.254.77.1 port 51606 ssh2: ED25519 SHA256:/iMYXEVJ75+ENnWzSn2gnxz1khlB8NoIj6HENtqvzqQ',
    'pam_unix(sshd:session): session opened for user root(uid=0) by root(uid=0)',
    'Accepted password for deploy from 10.9.9.9 port 40000 ssh2',
    'Accepted keyboard-interactive/pam for deploy from ::ffff:10.9.9.9 port 40001 ssh2',
    'Accepted publickey for ops from 10.9.9.9 port 40002 ssh2: ED25519-CERT SHA256:abc ID ops (serial 1) CA ED25519 SHA256:def',
]
# /proc/net/tcp of the same lab host (recorded): the listener and the controller's session.
TCP = ('  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'
       '   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2893836 1 0 100 0 0 10 0\n'
       '   1: 964DFE0A:0016 014DFE0A:95F8 01 00000000:00000000 02:000AFC64 00000000     0        0 2911476 4 0 20 4 17 22 -1\n')


def test_accepted_line_of_exactly_this_connection():
    got = sl.parse_accepted(JOURNAL, '10.254.77.1', 51606)
    assert got == {'method': 'publickey', 'user': 'root', 'key_type': 'ED25519',
                   'fingerprint': 'SHA256:/iMYXEVJ75+ENnWzSn2gnxz1khlB8NoIj6HENtqvzqQ'}
    assert sl.parse_accepted(JOURNAL, '10.254.77.1', 51607) is None
    assert sl.parse_accepted(JOURNAL, '10.9.9.9', 40000)['method'] == 'password'
    assert sl.parse_accepted(JOURNAL, '10.9.9.9', 40001)['method'] == 'keyboard-interactive/pam'
    cert = sl.parse_accepted(JOURNAL, '10.9.9.9', 40002)
    assert (cert['key_type'], cert['fingerprint']) == ('ED25519-CERT', 'SHA256:abc')


def test_ipv4_mapped_addresses_compare_as_ipv4():
    assert sl.normalise_address('::ffff:10.9.9.9') == '10.9.9.9'
    assert sl.normalise_address('[2001:db8::1]') == '2001:db8::1'


def _proc(tmp_path, tree):
    """A hand-made proc tree: {pid: (comm, ppid, [socket inodes])}."""
    root = tmp_path / 'proc'
    (root / 'net').mkdir(parents=True)
    (root / 'net' / 'tcp').write_text(TCP)
    for pid, (comm, ppid, inodes) in tree.items():
        d = root / str(pid)
        (d / 'fd').mkdir(parents=True)
        (d / 'comm').write_text(comm + '\n')
        (d / 'stat').write_text('%d (%s) S %d 1 1 0 -1\n' % (pid, comm, ppid))
        for i, inode in enumerate(inodes):
            os.symlink('socket:[%s]' % inode, str(d / 'fd' / str(i + 3)))
        os.symlink('/dev/null', str(d / 'fd' / '0'))
    return str(root)


def test_connection_found_through_sudo(tmp_path):
    # python (module) <- sh <- sudo <- sshd-session: root@notty <- sshd-session: root [priv] <- sshd listener
    root = _proc(tmp_path, {200: ('python3', 199, []), 199: ('sh', 198, []), 198: ('sudo', 114, []),
                            114: ('sshd-session', 96, ['2911476']), 96: ('sshd-session', 62, ['2911476']),
                            62: ('sshd', 1, ['2893836'])})
    conn, pids = sl.find_connection(root, 200)
    assert conn == {'client_address': '10.254.77.1', 'client_port': 38392, 'server_address': '10.254.77.150',
                    'server_port': 22, 'pid': 114}
    assert pids == [114, 96, 62]


def test_no_sshd_above_is_no_connection(tmp_path):
    root = _proc(tmp_path, {300: ('python3', 299, []), 299: ('bash', 1, ['2911476'])})
    assert sl.find_connection(root, 300) == (None, [])


def test_a_listening_socket_is_not_a_session(tmp_path):
    root = _proc(tmp_path, {300: ('python3', 62, []), 62: ('sshd', 1, ['2893836'])})
    assert sl.find_connection(root, 300) == (None, [62])


def test_loop_in_the_tree_ends(tmp_path):
    root = _proc(tmp_path, {10: ('sh', 11, []), 11: ('sh', 10, [])})
    assert sl.find_connection(root, 10) == (None, [])


@pytest.mark.skipif(not shutil.which('ssh-keygen'), reason='ssh-keygen not installed')
@pytest.mark.parametrize('kind', ['ed25519', 'rsa', 'ecdsa'])
def test_fingerprints_equal_ssh_keygen(tmp_path, kind):
    key = tmp_path / 'k'
    subprocess.run(['ssh-keygen', '-q', '-t', kind, '-N', '', '-C', 'me@host', '-f', str(key)], check=True)
    want = subprocess.run(['ssh-keygen', '-l', '-E', 'sha256', '-f', str(key) + '.pub'], check=True,
                          capture_output=True, text=True).stdout.split()[1]
    line = (tmp_path / 'k.pub').read_text()
    assert sl.parse_public_key(line)[1] == want
    # with authorized_keys options, quoted spaces included
    auth = tmp_path / 'authorized_keys'
    auth.write_text('# comment\n\nfrom="10.0.0.1,10.0.0.2",command="echo a b" %s' % line)
    keys, problems = sl.authorized_keys([str(auth), str(tmp_path / 'absent')])
    assert problems == [] and [k['fingerprint'] for k in keys] == [want]


def test_damaged_key_lines_hold_no_key():
    assert sl.parse_public_key('ssh-ed25519 not-base64!!') is None
    # a blob whose embedded type differs from the line's type (hand-made)
    assert sl.parse_public_key('ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIE0= x') is None
    assert sl.parse_public_key('') is None


def test_unreadable_authorized_keys_is_reported(tmp_path):
    (tmp_path / 'dir').mkdir()
    keys, problems = sl.authorized_keys([str(tmp_path / 'dir')])
    assert keys == [] and len(problems) == 1


def test_keys_file_tokens_expand_like_sshd():
    assert sl.expand_keys_file('.ssh/authorized_keys', 'bob', '/home/bob', 1000) == '/home/bob/.ssh/authorized_keys'
    assert sl.expand_keys_file('/etc/ssh/keys/%u', 'bob', '/home/bob', 1000) == '/etc/ssh/keys/bob'
    assert sl.expand_keys_file('%h/.ssh/k_%U_%%', 'bob', '/home/bob', 1000) == '/home/bob/.ssh/k_1000_%'


def test_sshd_T_lines():
    assert sl.parse_sshd_T('port 22\nport 2222\nallowusers a@1.2.3.4\n') == {'port': ['22', '2222'], 'allowusers': ['a@1.2.3.4']}
