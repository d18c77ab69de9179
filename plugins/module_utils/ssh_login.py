# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the current SSH login reached this node, read on the node (ssh_login_facts).

- ``find_connection``: walks the process tree from a pid up to the sshd process that holds the TCP
  connection (through sudo/su, which clear SSH_CONNECTION) and reads both ends from /proc/net/tcp{,6}.
- ``parse_accepted``: sshd's ``Accepted METHOD for USER from ADDR port PORT ssh2[: TYPE SHA256:...]`` log
  line for exactly that connection (journal or auth.log), which names the method and the key in use.
- ``authorized_keys``: the type and SHA256 fingerprint of every key in a user's authorized_keys files, with
  AuthorizedKeysFile tokens expanded as sshd does.
- ``parse_sshd_T``: ``sshd -T`` output as {keyword: [value, ...]}.

The decision (would the new settings still let this login in?) is made on the controller by the
``gpufleet.cluster.ssh_lockout_problems`` filter. Pure standard library.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import hashlib
import os
import re
import socket
import struct

from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs

# A key line of authorized_keys: optional options, then type, base64 blob, optional comment.
_KEY_TYPE_RE = re.compile(r'^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)'
                          r'(-cert-v01@openssh\.com)?$')
_ACCEPTED_RE = re.compile(r'Accepted (?P<method>\S+) for (?P<user>\S+) from (?P<addr>\S+) port (?P<port>\d+)'
                          r'(?: ssh2)?(?:: (?P<key_type>\S+) (?P<fingerprint>SHA256:\S+|MD5:\S+))?')
TCP_ESTABLISHED = '01'
# sshd -T keywords that decide whether a login gets in (the rest of sshd -T is not returned).
LOGIN_KEYWORDS = frozenset((
    'allowusers', 'allowgroups', 'denyusers', 'denygroups', 'permitrootlogin', 'passwordauthentication',
    'kbdinteractiveauthentication', 'challengeresponseauthentication', 'pubkeyauthentication', 'hostbasedauthentication',
    'pubkeyacceptedalgorithms', 'pubkeyacceptedkeytypes', 'authenticationmethods', 'authorizedkeysfile',
    'authorizedkeyscommand', 'trustedusercakeys', 'port', 'listenaddress', 'usedns', 'usepam', 'permitemptypasswords'))


def fingerprint(blob):
    """OpenSSH's SHA256 fingerprint of a key blob (bytes)."""
    return 'SHA256:' + base64.b64encode(hashlib.sha256(blob).digest()).decode('ascii').rstrip('=')


def parse_public_key(line):
    """(type, fingerprint, comment) of one public key line (with or without authorized_keys options), or
    None when the line holds no key."""
    line = line.strip()
    if not line or line.startswith('#'):
        return None
    fields = _split_options(line)
    for i, field in enumerate(fields[:-1]):
        if _KEY_TYPE_RE.match(field):
            try:
                blob = base64.b64decode(fields[i + 1].encode('ascii'), validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                return None
            # The blob starts with its own type name; a mismatch is a damaged or forged line.
            if len(blob) < 4:
                return None
            (size,) = struct.unpack('>I', blob[:4])
            if blob[4:4 + size].decode('ascii', 'replace') != field:
                return None
            return field, fingerprint(blob), ' '.join(fields[i + 2:])
    return None


def _split_options(line):
    """Split an authorized_keys line on whitespace outside double quotes (options may quote spaces)."""
    out, cur, quoted = [], [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        if ch in ' \t' and not quoted:
            if cur:
                out.append(''.join(cur))
                cur = []
            continue
        cur.append(ch)
    if cur:
        out.append(''.join(cur))
    return out


def expand_keys_file(token, user, home, uid):
    """AuthorizedKeysFile token -> absolute path (%h %u %U %% expanded, relative to home)."""
    out, i = [], 0
    while i < len(token):
        ch = token[i]
        if ch == '%' and i + 1 < len(token):
            nxt = token[i + 1]
            out.append({'h': home, 'u': user, 'U': str(uid), '%': '%'}.get(nxt, '%' + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    path = ''.join(out)
    if path.startswith('~/'):
        path = os.path.join(home, path[2:])
    return path if path.startswith('/') else os.path.join(home, path)


def authorized_keys(files):
    """[{file, type, fingerprint, comment}] for every key in the files that exist (unreadable ones are
    reported in ``problems``); returns (keys, problems)."""
    keys, problems = [], []
    for path in files:
        try:
            with open(path, 'rb') as handle:
                data = handle.read(4 * 1024 * 1024)
        except FileNotFoundError:
            continue
        except (IsADirectoryError, PermissionError, OSError) as exc:
            problems.append('%s: %s' % (path, exc.strerror or exc))
            continue
        for raw in data.decode('utf-8', 'replace').splitlines():
            parsed = parse_public_key(raw)
            if parsed:
                keys.append({'file': path, 'type': parsed[0], 'fingerprint': parsed[1], 'comment': parsed[2]})
    return keys, problems


def parse_sshd_T(text):
    """``sshd -T`` lines -> {keyword: [value, ...]} (keywords as sshd prints them, lower case)."""
    out = {}
    for line in text.splitlines():
        key, dummy, value = line.strip().partition(' ')
        if key:
            out.setdefault(key.lower(), []).append(value.strip())
    return out


def parse_accepted(lines, address, port):
    """The last ``Accepted ...`` record of the connection from ``address``:``port`` in log lines, as
    {method, user, key_type, fingerprint}, or None."""
    found = None
    for line in lines:
        if 'Accepted ' not in line:
            continue
        match = _ACCEPTED_RE.search(line)
        if match and match.group('port') == str(port) and _same_address(match.group('addr'), address):
            found = {'method': match.group('method'), 'user': match.group('user'),
                     'key_type': match.group('key_type'), 'fingerprint': match.group('fingerprint')}
    return found


def _same_address(a, b):
    return normalise_address(a) == normalise_address(b)


def normalise_address(addr):
    """An IPv4-mapped IPv6 address as sshd shows it (plain IPv4); others in their canonical text form."""
    addr = (addr or '').strip('[]')
    try:
        packed = socket.inet_pton(socket.AF_INET6, addr)
    except (OSError, ValueError):
        return addr
    if packed[:12] == b'\x00' * 10 + b'\xff\xff':
        return socket.inet_ntop(socket.AF_INET, packed[12:])
    return socket.inet_ntop(socket.AF_INET6, packed)


# ---------------------------------------------------------------- the TCP connection of this session
def _hex_address(text, family):
    """/proc/net/tcp{,6} 'HEXADDR:HEXPORT' -> (address text, port)."""
    addr_hex, port_hex = text.split(':')
    raw = binascii.unhexlify(addr_hex)
    # The kernel prints each 32-bit word in host order (little-endian here).
    words = b''.join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return normalise_address(socket.inet_ntop(family, words)), int(port_hex, 16)


def tcp_sockets(proc_root):
    """{inode: (state, local, remote)} of the TCP sockets in the node's network namespace."""
    out = {}
    for name, family in (('tcp', socket.AF_INET), ('tcp6', socket.AF_INET6)):
        try:
            with open(os.path.join(proc_root, 'net', name), 'rb') as handle:
                lines = handle.read().decode('ascii', 'replace').splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            try:
                local = _hex_address(fields[1], family)
                remote = _hex_address(fields[2], family)
            except (ValueError, binascii.Error, OSError):
                continue
            out[fields[9]] = (fields[3], local, remote)
    return out


def _ppid(proc_root, pid):
    stat = _sysfs.read_text(os.path.join(proc_root, str(pid), 'stat'))
    if stat is None:
        return None
    # comm may hold spaces and parentheses: the fields after the last ')' are fixed.
    rest = stat.rsplit(')', 1)[-1].split()
    try:
        return int(rest[1])
    except (IndexError, ValueError):
        return None


def _comm(proc_root, pid):
    return _sysfs.read_text(os.path.join(proc_root, str(pid), 'comm')) or ''


def _socket_inodes(proc_root, pid):
    fd_dir = os.path.join(proc_root, str(pid), 'fd')
    out = []
    # in descriptor order, as the kernel lists /proc/PID/fd (the client's socket before any forwarded one)
    for name in sorted(_sysfs.listdir(fd_dir), key=lambda n: (len(n), n)):
        try:
            target = os.readlink(os.path.join(fd_dir, name))
        except OSError:
            continue
        match = re.match(r'^socket:\[(\d+)\]$', target)
        if match:
            out.append(match.group(1))
    return out


def find_connection(proc_root, pid):
    """Walk from ``pid`` up to the first sshd process holding an established TCP connection.

    Returns ({client_address, client_port, server_address, server_port, pid}, sshd_pids), the first None
    when no ancestor is an sshd with such a socket (a local connection, or a tree we cannot read);
    ``sshd_pids`` are the sshd processes above ``pid`` (one of them logged the login)."""
    sockets = tcp_sockets(proc_root)
    found, sshd_pids, seen = None, [], set()
    while pid and pid > 1 and pid not in seen and len(seen) < 256:
        seen.add(pid)
        if _comm(proc_root, pid).startswith('sshd'):
            sshd_pids.append(pid)
            for inode in [] if found else _socket_inodes(proc_root, pid):
                entry = sockets.get(inode)
                if entry and entry[0] == TCP_ESTABLISHED:
                    (server, server_port), (client, client_port) = entry[1], entry[2]
                    found = {'client_address': client, 'client_port': client_port, 'server_address': server,
                             'server_port': server_port, 'pid': pid}
                    break
        pid = _ppid(proc_root, pid)
    return found, sshd_pids
