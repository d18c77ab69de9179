# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection: would these sshd settings still let the current login in? (controller side)

``lockout_problems(login, settings)`` takes what ``gpufleet.cluster.ssh_login_facts`` read on the node (the
session's TCP connection, sshd's log line for it, the user's groups and authorized keys, the effective
``sshd -T``) and the settings about to be applied, and returns one message per way they would refuse this
login. sshd's own rules are followed (auth.c ``allowed_user``, match.c ``match_user``/``match_host_and_ip``,
addrmatch.c ``addr_match_list``): DenyUsers, AllowUsers, DenyGroups, AllowGroups in that order; ``user@host``
entries match the host part against the client address (addresses, CIDR via netaddr, ``*``/``?`` patterns,
``!`` negation) and, with UseDNS, its name. What cannot be decided is a problem too, never a pass.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    import netaddr
except ImportError:  # pragma: no cover - netaddr is a controller requirement (requirements.txt)
    netaddr = None

# sshd -T keyword per setting; settings given by the caller use the caller's names in messages.
KEYWORDS = {
    'allow_users': 'AllowUsers', 'allow_groups': 'AllowGroups', 'deny_users': 'DenyUsers', 'deny_groups': 'DenyGroups',
    'permit_root_login': 'PermitRootLogin', 'password_authentication': 'PasswordAuthentication',
    'kbd_interactive_authentication': 'KbdInteractiveAuthentication', 'pubkey_authentication': 'PubkeyAuthentication',
    'pubkey_accepted_algorithms': 'PubkeyAcceptedAlgorithms', 'ports': 'Port', 'listen_addresses': 'ListenAddress',
    'use_dns': 'UseDNS', 'authentication_methods': 'AuthenticationMethods', 'hostbased_authentication': 'HostbasedAuthentication',
}

# Key type (authorized_keys) -> signature algorithms a client may use with it (PubkeyAcceptedAlgorithms names).
_RSA = ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']
_RSA_CERT = ['rsa-sha2-512-cert-v01@openssh.com', 'rsa-sha2-256-cert-v01@openssh.com', 'ssh-rsa-cert-v01@openssh.com']
# sshd's log names key types in upper case (sshkey_type()); -> the authorized_keys names.
_LOG_TYPES = {
    'ED25519': ['ssh-ed25519'], 'RSA': ['ssh-rsa'], 'DSA': ['ssh-dss'],
    'ECDSA': ['ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'],
    'ED25519-SK': ['sk-ssh-ed25519@openssh.com'], 'ECDSA-SK': ['sk-ecdsa-sha2-nistp256@openssh.com'],
}


class SettingsError(ValueError):
    pass


def _yes(value):
    return str(value).strip().lower() in ('yes', 'true', '1', 'on')


def from_sshd_T(config):
    """The settings this check reads, from ``sshd -T`` output ({keyword: [values]})."""
    def words(key):
        return [w for v in config.get(key, []) for w in v.split()]

    def one(key, default=''):
        values = config.get(key) or [default]
        return values[0]

    algorithms = config.get('pubkeyacceptedalgorithms') or config.get('pubkeyacceptedkeytypes') or ['']
    return {
        'allow_users': words('allowusers'), 'allow_groups': words('allowgroups'),
        'deny_users': words('denyusers'), 'deny_groups': words('denygroups'),
        'permit_root_login': one('permitrootlogin', 'prohibit-password'),
        'password_authentication': _yes(one('passwordauthentication', 'yes')),
        'kbd_interactive_authentication': _yes(one('kbdinteractiveauthentication', 'yes')),
        'pubkey_authentication': _yes(one('pubkeyauthentication', 'yes')),
        'hostbased_authentication': _yes(one('hostbasedauthentication', 'no')),
        'pubkey_accepted_algorithms': [a for a in algorithms[0].split(',') if a],
        'ports': [int(p) for p in config.get('port', []) if p.isdigit()],
        'listen_addresses': config.get('listenaddress', []),
        'use_dns': _yes(one('usedns', 'no')),
        'authentication_methods': one('authenticationmethods', 'any'),
    }


# ------------------------------------------------------------------------- sshd's pattern matching
def match_pattern(text, pattern):
    """match.c match_pattern: ``*`` and ``?`` wildcards, the whole string."""
    regex = ''.join('.*' if c == '*' else '.' if c == '?' else re.escape(c) for c in pattern)
    return re.match('^%s$' % regex, text, re.DOTALL) is not None


def match_pattern_list(text, patterns, lower=False):
    """match.c match_pattern_list: 1 positive, -1 a negated entry matched, 0 none."""
    got = 0
    for entry in patterns.split(','):
        neg = entry.startswith('!')
        entry = entry[1:] if neg else entry
        if lower:
            entry = entry.lower()
        if match_pattern(text, entry):
            if neg:
                return -1
            got = 1
    return got


def _cidr(entry):
    """netaddr network of an address or CIDR entry; None when the entry is not an address; raises
    SettingsError when it is an address with host bits set past the mask (sshd: inconsistent mask)."""
    if not re.match(r'^[0-9a-fA-F:.]+(/\d{1,3})?$', entry) or not re.search(r'[.:]', entry):
        return None
    try:
        net = netaddr.IPNetwork(entry)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None
    if '/' in entry and net.ip != net.network:
        raise SettingsError('%s has host bits set past its mask (sshd: inconsistent mask length)' % entry)
    return net


def addr_match_list(address, patterns):
    """addrmatch.c addr_match_list: 1 match, -1 negated match, 0 none; SettingsError for a bad entry."""
    ret = 0
    for entry in patterns.split(','):
        neg = entry.startswith('!')
        entry = entry[1:] if neg else entry
        if not entry:
            raise SettingsError('empty entry in host pattern %r' % patterns)
        net = _cidr(entry)
        if net is not None:
            hit = address is not None and netaddr.IPAddress(address) in net if _is_ip(address) else False
        else:
            hit = address is not None and match_pattern(address, entry)
        if hit:
            if neg:
                return -1
            ret = 1
    return ret


def _is_ip(text):
    try:
        netaddr.IPAddress(text)
        return True
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return False


def match_user(user, host, address, pattern):
    """match.c match_user: the user part by wildcard, the host part (after the last @) by address and name."""
    if '@' not in pattern:
        return match_pattern(user, pattern)
    user_part, host_part = pattern.rsplit('@', 1)
    if not match_pattern(user, user_part):
        return False
    addr_hit = addr_match_list(address, host_part)  # raises SettingsError like sshd's -2
    if host is None or address is None or addr_hit == -1:
        return False
    name_hit = match_pattern_list(host.lower(), host_part, lower=True)
    if name_hit == -1:
        return False
    return name_hit == 1 or addr_hit == 1


def _needs_name(pattern):
    """A host part that could only match a DNS name (letters other than hex-in-address patterns)."""
    if '@' not in pattern:
        return False
    host_part = pattern.rsplit('@', 1)[1]
    return any(_cidr(e.lstrip('!')) is None and re.search(r'[g-zG-Z]', e) for e in host_part.split(','))


# ------------------------------------------------------------------------------------ the checks
def _name(names, key):
    return names.get(key) or KEYWORDS[key]


def _access_problems(login, s, names, address, host):
    out = []
    user, groups = login['user'], login.get('groups') or []
    where = '%s from %s' % (user, address) if address else user
    for key in ('deny_users', 'allow_users'):
        for pattern in s.get(key) or []:
            if '@' in pattern and address is None:
                return out + ['%s entry %r has a host part, but the address this session comes from is unknown; '
                              'the check cannot decide it' % (_name(names, key), pattern)]
            if s.get('use_dns') and host is None and _needs_name(pattern):
                return out + ['%s entry %r needs the client\'s DNS name (UseDNS yes), which could not be looked up; '
                              'the check cannot decide it' % (_name(names, key), pattern)]
    try:
        denied = [p for p in s.get('deny_users') or [] if match_user(user, host or address, address, p)]
        allow = s.get('allow_users') or []
        allowed = [p for p in allow if match_user(user, host or address, address, p)]
    except SettingsError as exc:
        return out + ['%s/%s: %s' % (_name(names, 'allow_users'), _name(names, 'deny_users'), exc)]
    if denied:
        out.append('%s %s matches the login %s (entries %s); sshd would refuse it'
                   % (_name(names, 'deny_users'), s['deny_users'], where, denied))
    if allow and not allowed:
        out.append('%s %s does not match the login %s; sshd would refuse it. Add %r (or its address range)'
                   % (_name(names, 'allow_users'), allow, where, '%s@%s' % (user, address) if address else user))
    deny_g = [g for g in groups for p in s.get('deny_groups') or [] if match_pattern(g, p)]
    if deny_g:
        out.append('%s %s matches the group(s) %s of the login user %s; sshd would refuse it'
                   % (_name(names, 'deny_groups'), s['deny_groups'], sorted(set(deny_g)), user))
    allow_g = s.get('allow_groups') or []
    if allow_g and not [g for g in groups for p in allow_g if match_pattern(g, p)]:
        out.append('%s %s matches none of the groups of the login user %s (%s); sshd would refuse it'
                   % (_name(names, 'allow_groups'), allow_g, user, ', '.join(groups) or 'none'))
    return out


def _key_algorithms(key_type):
    if key_type == 'ssh-rsa':
        return _RSA
    if key_type == 'ssh-rsa-cert-v01@openssh.com':
        return _RSA_CERT
    return [key_type]


def _accepted(key_types, accepted):
    return [a for t in key_types for a in _key_algorithms(t) if any(match_pattern(a, p) for p in accepted)]


def _root_problem(login, s, names, method):
    if login['user'] != 'root':
        return []
    prl = str(s.get('permit_root_login', 'prohibit-password')).replace('without-password', 'prohibit-password')
    if prl == 'no':
        return ['%s=no refuses root, the user this session logged in as' % _name(names, 'permit_root_login')]
    if prl == 'forced-commands-only':
        return ['%s=forced-commands-only lets root run only the forced command of its key, not Ansible\'s modules'
                % _name(names, 'permit_root_login')]
    if prl == 'prohibit-password' and method not in ('publickey', 'hostbased', 'gssapi-with-mic', None):
        return ['%s=%s refuses root by %s, the method this session logged in with; use a key for root or '
                'set it to yes' % (_name(names, 'permit_root_login'), s.get('permit_root_login'), method)]
    return []


def _auth_problems(login, s, names):
    auth = login.get('auth') or None
    if auth and auth.get('user') not in (None, login['user']):
        auth = None  # the session is another user's (ssh_hardening_login_user names someone else): no proof for this one
    akeys = login.get('authorized_keys') or []
    accepted = s.get('pubkey_accepted_algorithms') or []
    config = login.get('config') or {}
    key_by_fp = {k['fingerprint']: k for k in akeys}
    external = [v for k in ('authorizedkeyscommand', 'trustedusercakeys') for v in config.get(k, []) if v and v != 'none']

    if auth:
        method = auth.get('method') or ''
        base = method.split('/')[0]
        out = _root_problem(login, s, names, base)
        if base == 'publickey':
            if not s.get('pubkey_authentication', True):
                out.append('%s=no refuses the key this session logged in with' % _name(names, 'pubkey_authentication'))
            key = key_by_fp.get(auth.get('fingerprint'))
            if key:
                types = [key['type']]
            else:
                log_type = (auth.get('key_type') or '').upper()
                cert = log_type.endswith('-CERT')
                types = [t + '-cert-v01@openssh.com' if cert and '@' not in t else
                         t.replace('@openssh.com', '-cert-v01@openssh.com') if cert else t
                         for t in _LOG_TYPES.get(log_type[:-5] if cert else log_type, [])]
                if not external:
                    out.append('the key this session logged in with (%s %s) is in none of %s\'s authorized_keys files'
                               ' and no AuthorizedKeysCommand/TrustedUserCAKeys is set'
                               % (auth.get('key_type'), auth.get('fingerprint'), login['user']))
            if accepted and types and not _accepted(types, accepted):
                out.append('%s (%s) does not accept the key this session logged in with (%s %s)'
                           % (_name(names, 'pubkey_accepted_algorithms'), ','.join(accepted), ', '.join(types),
                              auth.get('fingerprint')))
        elif base == 'password':
            if not s.get('password_authentication'):
                out.append('%s=no refuses the password this session logged in with; install a key for %s first'
                           % (_name(names, 'password_authentication'), login['user']))
        elif base == 'keyboard-interactive':
            if not s.get('kbd_interactive_authentication'):
                out.append('%s=no refuses keyboard-interactive, the method this session logged in with'
                           % _name(names, 'kbd_interactive_authentication'))
        elif base == 'hostbased' and not s.get('hostbased_authentication'):
            out.append('HostbasedAuthentication no refuses hostbased, the method this session logged in with')
        methods = str(s.get('authentication_methods') or 'any')
        if methods != 'any' and not any(all(m.split(':')[0] == base for m in chain.split(','))
                                        for chain in methods.split()):
            out.append('%s %s needs methods beyond %s, the one this session logged in with'
                       % (_name(names, 'authentication_methods'), methods, base))
        return out

    # sshd's log has no line for this connection: fall back on the controller's keys (key file, agent).
    mine = [k for k in login.get('public_keys') or [] if k['fingerprint'] in key_by_fp]
    usable = [k for k in mine if not accepted or _accepted([k['type']], accepted)]
    if usable and s.get('pubkey_authentication', True):
        return _root_problem(login, s, names, 'publickey')
    # No key proven: a password login is the only way left, which needs passwords kept on (and root allowed them).
    if s.get('password_authentication') or s.get('kbd_interactive_authentication'):
        return _root_problem(login, s, names, 'password')
    return ['%s=no, and no key login of %s can be proven: sshd\'s log has no line for this session (%s) and none of the '
            'controller\'s keys (%d given) is an authorized key of %s of a type %s accepts. Give the public key Ansible '
            'logs in with (ssh_hardening_login_public_keys), install one, or keep passwords on'
            % (_name(names, 'password_authentication'), login['user'],
               '; '.join(login.get('notes') or []) or 'no log line', len(login.get('public_keys') or []),
               login['user'], _name(names, 'pubkey_accepted_algorithms'))]


def parse_listen(entry, ports):
    """ListenAddress forms -> [(address or None for a name, port)]: addr, addr:port, [v6]:port, v6; an
    ``rdomain`` suffix is ignored."""
    entry = entry.split()[0] if entry.split() else ''
    match = re.match(r'^\[([^\]]+)\](?::(\d+))?$', entry)
    if match:
        addr, port = match.group(1), match.group(2)
    elif entry.count(':') == 1:
        addr, port = entry.split(':')
    else:
        addr, port = entry, None
    addr = addr if _is_ip(addr) else None
    return [(addr, int(port))] if port else [(addr, p) for p in ports]


def _listen_problems(login, s, names):
    conn = login.get('connection')
    if not conn:
        return []
    ports = [int(p) for p in s.get('ports') or [22]]
    server, port = conn['server_address'], int(conn['server_port'])
    listen = s.get('listen_addresses') or []
    if listen:
        bindings = [b for entry in listen for b in parse_listen(str(entry), ports)]
    else:
        bindings = [('0.0.0.0', p) for p in ports] + [('::', p) for p in ports]
    if any(a is None and p == port for a, p in bindings):
        names_ = [e for e in listen if parse_listen(str(e), ports)[0][0] is None]
        return ['%s %s holds host names; the check cannot tell whether sshd would still listen on %s port %d, '
                'which this session connects to: use addresses' % (_name(names, 'listen_addresses'), names_, server, port)]
    version = netaddr.IPAddress(server).version if _is_ip(server) else 4
    wildcard = '0.0.0.0' if version == 4 else '::'
    if any(p == port and a is not None and (a == wildcard or (_is_ip(a) and netaddr.IPAddress(a) == netaddr.IPAddress(server)))
           for a, p in bindings):
        return []
    if port not in ports and not [b for b in bindings if b[1] == port]:
        return ['%s %s leaves out port %d, the one this session connects to (at %s); sshd would stop listening there'
                % (_name(names, 'ports'), ports, port, server)]
    return ['%s %s does not cover %s port %d, where this session connects; sshd would stop listening there'
            % (_name(names, 'listen_addresses'), listen, server, port)]


def lockout_problems(login, settings=None, names=None, check_listen=True, need_connection=True):
    """Messages, one per way ``settings`` (None: the effective sshd -T in ``login``) would refuse this login."""
    if netaddr is None:
        raise SettingsError('the ssh_lockout_problems filter needs the Python library netaddr on the controller (pip install netaddr)')
    if not isinstance(login, dict) or 'user' not in login:
        raise SettingsError('ssh_lockout_problems needs the login dict ssh_login_facts returns')
    names = dict(names or {})
    s = from_sshd_T(login.get('config') or {}) if settings is None else dict(settings)
    conn = login.get('connection')
    if conn is None and need_connection:
        return ['cannot find this session\'s SSH connection on the node (%s); the lockout check cannot decide '
                'whether the login keeps working' % ('; '.join(login.get('notes') or []) or 'no sshd above it')]
    if conn is None:
        return []
    address = conn['client_address']
    host = login.get('hostname') or (address if not s.get('use_dns') else None)
    out = _access_problems(login, s, names, address, host)
    out += _auth_problems(login, s, names)
    if check_listen:
        out += _listen_problems(login, s, names)
    return out
