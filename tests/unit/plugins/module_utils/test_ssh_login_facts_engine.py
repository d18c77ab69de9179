# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ssh_login_facts' engine (module_utils/ssh_login_facts_engine.py) on its own: a stand-in module, a hand-made
proc tree and small scripts standing in for sshd -T and journalctl (run through _runner)."""

from __future__ import annotations

import os
import pwd

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import ssh_login as sl
from ansible_collections.gpufleet.cluster.plugins.module_utils import ssh_login_facts_engine as engine

from .stand_ins import Failed, StandInModule, script

ME = pwd.getpwuid(os.getuid())
ACCEPTED = 'Accepted publickey for %s from 10.254.77.1 port 38392 ssh2: ED25519 SHA256:abc' % ME.pw_name
# /proc/net/tcp: the listener, this session (10.254.77.1:38392 -> :22) and a port forward sshd opened
TCP = ('  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'
       '   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2893836 1 0 100 0 0 10 0\n'
       '   1: 964DFE0A:0016 014DFE0A:95F8 01 00000000:00000000 02:000AFC64 00000000     0        0 2911476 4 0 20 4 17 22 -1\n'
       '   2: 964DFE0A:B000 0A0A0A0A:1F90 01 00000000:00000000 02:000AFC64 00000000     0        0 2911477 4 0 20 4 17 22 -1\n')


def stand_in(tmp_path, bin_paths=None, **params):
    config = tmp_path / 'sshd_config'
    config.write_text('Port 22\n')
    defaults = dict(user=ME.pw_name, public_keys=[], resolve_hostname=False, config_file=str(config), sshd_path='sshd',
                    journalctl_path='journalctl', auth_logs=[], proc_root=str(tmp_path), pid=0)
    return StandInModule(params, defaults, bin_paths=bin_paths)


def tool(tmp_path, name, body):
    """A stand-in ``bin/name`` that logs its arguments to ``name.calls`` and runs ``body``."""
    return script(tmp_path / 'bin', name, body, calls=tmp_path / ('%s.calls' % name))


def proc(tmp_path, tree):
    """{pid: (comm, ppid, {fd: socket inode})} -> a proc root."""
    root = tmp_path / 'proc'
    (root / 'net').mkdir(parents=True)
    (root / 'net' / 'tcp').write_text(TCP)
    for pid, (comm, ppid, fds) in tree.items():
        d = root / str(pid)
        (d / 'fd').mkdir(parents=True)
        (d / 'comm').write_text(comm + '\n')
        (d / 'stat').write_text('%d (%s) S %d 1 1 0 -1\n' % (pid, comm, ppid))
        for fd, inode in fds.items():
            os.symlink('socket:[%s]' % inode, str(d / 'fd' / str(fd)))
    return str(root)


def test_the_client_socket_comes_before_a_forwarded_one(tmp_path):
    """Sockets are looked at in descriptor order (fd 3 before fd 10), as the kernel lists /proc/PID/fd."""
    root = proc(tmp_path, {200: ('bash', 114, {}), 114: ('sshd-session', 1, {10: '2911477', 3: '2911476'})})
    conn, pids = sl.find_connection(root, 200)
    assert conn['client_address'] == '10.254.77.1' and conn['client_port'] == 38392 and pids == [114]


def test_gather_a_session(tmp_path):
    keys = tmp_path / 'keys'
    keys.write_text('')
    root = proc(tmp_path, {200: ('bash', 114, {}), 114: ('sshd-session', 1, {3: '2911476'})})
    sshd = tool(tmp_path, 'sshd', 'printf "port 22\\npasswordauthentication no\\nauthorizedkeysfile %s\\n'
                                  'ciphers aes256-gcm@openssh.com\\n"' % keys)
    journalctl = tool(tmp_path, 'journalctl', 'echo "%s"' % ACCEPTED)
    module = stand_in(tmp_path, proc_root=root, pid=200, bin_paths={'sshd': sshd, 'journalctl': journalctl})
    login = engine.gather(module)
    assert login['connection']['pid'] == 114 and login['notes'] == []
    assert login['auth'] == {'method': 'publickey', 'user': ME.pw_name, 'key_type': 'ED25519',
                             'fingerprint': 'SHA256:abc', 'source': 'journal'}
    assert login['config'] == {'port': ['22'], 'passwordauthentication': ['no'], 'authorizedkeysfile': [str(keys)]}
    assert (tmp_path / 'sshd.calls').read_text().split() == [
        '-T', '-f', module.params['config_file'], '-C',
        'user=%s,host=10.254.77.1,addr=10.254.77.1,laddr=10.254.77.150,lport=22' % ME.pw_name]
    assert (tmp_path / 'journalctl.calls').read_text().split() == ['--no-pager', '-o', 'cat', '_PID=114']


def test_auth_log_when_the_journal_has_nothing(tmp_path):
    log = tmp_path / 'auth.log'
    log.write_text('noise\n%s\n' % ACCEPTED)
    root = proc(tmp_path, {200: ('bash', 114, {}), 114: ('sshd', 1, {3: '2911476'})})
    sshd = tool(tmp_path, 'sshd', 'echo "port 22"')
    journalctl = tool(tmp_path, 'journalctl', 'exit 1')
    login = engine.gather(stand_in(tmp_path, proc_root=root, pid=200, auth_logs=[str(log)],
                                   bin_paths={'sshd': sshd, 'journalctl': journalctl}))
    assert login['auth']['source'] == str(log)


def test_no_session_is_a_note(tmp_path):
    root = proc(tmp_path, {300: ('python3', 1, {})})
    sshd = tool(tmp_path, 'sshd', 'echo "port 22"')
    login = engine.gather(stand_in(tmp_path, proc_root=root, pid=300, bin_paths={'sshd': sshd}))
    assert login['connection'] is None and login['auth'] is None
    assert login['notes'] == ['no sshd process with an established TCP connection above pid 300: not an SSH session']


def test_sshd_T_failure_names_the_command(tmp_path):
    root = proc(tmp_path, {300: ('python3', 1, {})})
    sshd = tool(tmp_path, 'sshd', 'echo "line 3: Bad configuration option: Bogus" >&2; exit 255')
    module = stand_in(tmp_path, proc_root=root, pid=300, sshd_path=sshd)
    with pytest.raises(Failed) as exc:
        engine.gather(module)
    assert exc.value.args[0]['msg'] == ('%s -T -f %s fails, so its effective configuration cannot be checked: line 3: '
                                        'Bad configuration option: Bogus' % (sshd, module.params['config_file']))


@pytest.mark.parametrize('params,option', [({'user': ' '}, 'user'), ({'user': 'a,b'}, 'user'), ({'pid': -1}, 'pid'),
                                           ({'sshd_path': 'no-such-sshd'}, 'sshd_path'),
                                           ({'user': 'gf-no-such-user'}, 'user')])
def test_bad_input_is_refused(tmp_path, params, option):
    sshd = tool(tmp_path, 'sshd', 'echo "port 22"')
    with pytest.raises(Failed) as exc:
        engine.gather(stand_in(tmp_path, bin_paths={'sshd': sshd}, **params))
    assert exc.value.args[0]['msg'].startswith(option)


def test_journal_lines_without_journalctl_or_pids():
    assert engine.journal_lines(None, [1]) == [] and engine.journal_lines('/bin/true', []) == []
