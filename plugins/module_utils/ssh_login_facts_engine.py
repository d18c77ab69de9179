# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the ``ssh_login_facts`` module: refuse bad input, find the session's TCP connection, run
``sshd -T`` and ``journalctl`` through _runner, read the user's keys and sshd's log line of this login.

``gather(module)`` returns the ``login`` dict; the parsing and the /proc walk live in module_utils/ssh_login.py
(pure, starts no process). Standard library apart from the AnsibleModule passed in (``params``,
``get_bin_path`` through _runner.find, ``fail_json``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd
import socket

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import ssh_login as sl

LOG_TAIL = 8 * 1024 * 1024
SSHD_DIRS = ('/usr/sbin', '/usr/local/sbin')


def groups(entry):
    """Names of the groups of a pwd entry, primary first (a gid without a name as its number)."""
    names = []
    for gid in [entry.pw_gid] + [g for g in os.getgrouplist(entry.pw_name, entry.pw_gid) if g != entry.pw_gid]:
        try:
            names.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            names.append(str(gid))
    return names


def hostname(address):
    """The name sshd's UseDNS would use: reverse lookup confirmed by a forward lookup, else the address."""
    try:
        name = socket.gethostbyaddr(address)[0].lower()
        addrs = {sl.normalise_address(i[4][0]) for i in socket.getaddrinfo(name, None)}
    except (OSError, UnicodeError):
        return address
    return name if address in addrs else address


def journal_lines(journalctl, pids):
    """Journal lines of the sshd processes ``pids``; [] without journalctl, pids, or when it fails."""
    if not journalctl or not pids:
        return []
    res = runner.run([journalctl, '--no-pager', '-o', 'cat'] + ['_PID=%d' % p for p in pids])
    return res['stdout'].splitlines() if res['rc'] == 0 else []


def log_lines(path):
    """Lines of the last LOG_TAIL bytes of a log file; [] when it cannot be read."""
    try:
        with open(path, 'rb') as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - LOG_TAIL))
            return handle.read().decode('utf-8', 'replace').splitlines()
    except OSError:
        return []


def refuse_bad_input(module, p):
    """Fail naming the option before anything runs; returns the sshd to run."""
    errors = ac.nul_errors(p) or ac.root_dir_errors('proc_root', p['proc_root'])
    if not errors and not p['user'].strip():
        errors = ['user must be a user name, got an empty string']
    if not errors and any(ch in p['user'] for ch in ',=\n\r\t '):
        errors = ['user must be a plain user name without spaces, commas or "=", got %r' % p['user']]
    errors += ac.int_range('pid', p['pid'], 0, 2 ** 22)
    if not errors and not os.path.isfile(p['config_file']):
        errors = ['config_file %s is not a file' % p['config_file']]
    sshd = None if errors else runner.find(module, p['sshd_path'], SSHD_DIRS)
    if not errors and not sshd:
        errors = ['sshd_path: no executable %r found (in PATH, /usr/sbin, /usr/local/sbin)' % p['sshd_path']]
    ac.refuse(module, errors)
    return sshd


def sshd_config(module, sshd, config_file, entry, connection):
    """The login keywords of ``sshd -T`` for this user and connection; fails when sshd -T fails."""
    client = connection['client_address'] if connection else None
    spec = 'user=%s,host=%s,addr=%s' % (entry.pw_name, client or '127.0.0.1', client or '127.0.0.1')
    if connection:
        spec += ',laddr=%s,lport=%d' % (connection['server_address'], connection['server_port'])
    res = runner.run([sshd, '-T', '-f', config_file, '-C', spec])
    if res['rc'] != 0:
        module.fail_json(msg='%s -T -f %s fails, so its effective configuration cannot be checked: %s'
                             % (sshd, config_file, (res['stderr'] or res['stdout']).strip()[-2000:]))
    return dict((k, v) for k, v in sl.parse_sshd_T(res['stdout']).items() if k in sl.LOGIN_KEYWORDS)


def login_auth(module, connection, sshd_pids, notes):
    """sshd's record of how ``connection`` logged in ({method, user, key_type, fingerprint, source}) from the
    journal, else from auth_logs; None (and a note) when no line names it."""
    p = module.params
    client = connection['client_address']
    auth = sl.parse_accepted(journal_lines(runner.find(module, p['journalctl_path']), sshd_pids), client,
                             connection['client_port'])
    if auth:
        auth['source'] = 'journal'
    for path in p['auth_logs'] if not auth else []:
        auth = sl.parse_accepted(log_lines(path), client, connection['client_port'])
        if auth:
            auth['source'] = path
            break
    if not auth:
        notes.append('no sshd log line names the connection from %s port %d (journal of pids %s, %s)'
                     % (client, connection['client_port'], sshd_pids, ', '.join(p['auth_logs'])))
    return auth


def gather(module):
    """The ``login`` dict of ssh_login_facts for ``module.params``; fails (fail_json) on bad input, an
    unknown user or a failing ``sshd -T``."""
    p = module.params
    sshd = refuse_bad_input(module, p)
    try:
        entry = pwd.getpwnam(p['user'])
    except KeyError:
        module.fail_json(msg='user: %r does not exist on this host; sshd refuses unknown users' % p['user'])
    notes = []
    connection, sshd_pids = sl.find_connection(p['proc_root'], p['pid'] or os.getpid())
    client = connection['client_address'] if connection else None
    config = sshd_config(module, sshd, p['config_file'], entry, connection)

    files = []
    for value in config.get('authorizedkeysfile', []):
        for token in value.split():
            if token != 'none':
                files.append(sl.expand_keys_file(token, entry.pw_name, entry.pw_dir, entry.pw_uid))
    akeys, problems = sl.authorized_keys(files)
    notes.extend(problems)

    auth = None
    if connection:
        auth = login_auth(module, connection, sshd_pids, notes)
    else:
        notes.append('no sshd process with an established TCP connection above pid %d: not an SSH session'
                     % (p['pid'] or os.getpid()))

    public = []
    for line in p['public_keys']:
        parsed = sl.parse_public_key(line)
        if parsed:
            public.append({'type': parsed[0], 'fingerprint': parsed[1], 'comment': parsed[2]})

    name = None
    if client and (p['resolve_hostname'] or config.get('usedns') == ['yes']):
        name = hostname(client)

    return {'user': entry.pw_name, 'uid': entry.pw_uid, 'home': entry.pw_dir, 'groups': groups(entry),
            'connection': connection, 'auth': auth, 'authorized_keys': akeys, 'public_keys': public,
            'hostname': name, 'config': config, 'notes': notes}
