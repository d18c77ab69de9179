# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

What the ssh_hardening role reads from sshd, in one place (formerly Jinja programs in the role's vars and
tasks). Pure functions:

- ``probe_facts(lines)``: the role's read-only probe (``roles/ssh_hardening/files/probe.sh``, "KEY VALUE"
  lines) as one dict: sshd's path and version, the algorithms ``ssh -Q`` lists per kind, the host keys, the
  small moduli count, what sshd_config holds, which files exist, the unit states, the client address and
  ``sshd -T``'s errors. A key the probe did not print gets the default the role has always used.
- ``algorithm_problems(facts, algorithm_vars, algorithms)``: the role's algorithm lists against what this
  OpenSSH supports (its validate step).
- ``config_lines(lines)`` and ``effective_mismatch(lines, expected, host_key_paths, sftp_line)``: ``sshd -T``
  output as {keyword: [value, ...]} and what in it differs from the hardening (its verify step).

Line rules (probe and ``sshd -T``): a line is KEY, one space, VALUE (no space: the value is empty); a key
that appears again adds a value, and where one value is wanted the first one counts. Keys the probe does not
print (and blank lines) are skipped. A line of a known key whose value does not have the fields the role
needs (``hostkey PATH BITS TYPE``, ``unit NAME ENABLED ACTIVE``, an integer count) raises ``ProbeError``
naming the line: the role would otherwise decide on a guess (e.g. regenerate an RSA key read as 0 bits).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Defaults when the probe did not print a key (no sshd installed yet, no ssh client, no sshd_config ...).
DEFAULT_SSHD = '/usr/sbin/sshd'
DEFAULT_VERSION = '0.0'
DEFAULT_CLIENT = '127.0.0.1'

# Algorithm kinds the role uses -> the probe key listing what the host supports (``ssh -Q``). Host key and
# user key algorithms both come from the signature list (``ssh -Q key-sig``).
ALGORITHM_KINDS = (('kex', 'kex'), ('cipher', 'cipher'), ('mac', 'mac'), ('hostkey', 'sig'), ('pubkey', 'sig'))
# "<key> present" lines -> the name under ``present``.
PRESENT_KEYS = ('banner_file', 'dropin_dir', 'socket_dropin')
_SCALARS = ('uid', 'sshd', 'version', 'first_directive', 'client')
_COUNTS = ('moduli_small', 'main_hostkey_lines')
_LISTS = ('kex', 'cipher', 'mac', 'sig', 'main_sftp', 'sshd_T_error')
KNOWN_KEYS = frozenset(_SCALARS + _COUNTS + _LISTS + PRESENT_KEYS + ('hostkey', 'unit'))

_SFTP_RE = re.compile(r'sftp\s')


class ProbeError(ValueError):
    """A probe line the role cannot use; the message quotes the line."""


def _lines(output):
    """``stdout_lines`` (a list) or the whole ``stdout`` (a str, split as Ansible splits it); None is no output."""
    if output is None:
        return []
    if isinstance(output, (bytes, bytearray)):
        output = output.decode('utf-8', 'replace')
    if isinstance(output, str):
        return output.splitlines()
    if not isinstance(output, (list, tuple)):
        raise ProbeError('probe output must be a list of lines or a string, not %s' % type(output).__name__)
    return [line if isinstance(line, str) else str(line) for line in output]


def config_lines(output):
    """"KEY VALUE" lines -> {KEY: [VALUE, ...]} in the order read (``sshd -T`` output, the probe's output)."""
    out = {}
    for line in _lines(output):
        key, dummy, value = line.partition(' ')
        out.setdefault(key, []).append(value)
    return out


def _count(key, value):
    if not re.match(r'^[0-9]+$', value):
        raise ProbeError('probe line %r: %s must be a whole number' % ('%s %s' % (key, value), key))
    return int(value)


def _host_key(value):
    """``PATH BITS TYPE`` (what ``ssh-keygen -l`` says of PATH); fields are counted from the right, so a path
    with a space stays whole."""
    fields = value.rsplit(None, 2)
    if len(fields) != 3 or not re.match(r'^[0-9]+$', fields[1]):
        raise ProbeError('probe line %r: want "hostkey PATH BITS TYPE" with BITS a whole number' % ('hostkey ' + value))
    return {'path': fields[0], 'bits': int(fields[1]), 'type': fields[2]}


def _unit(value):
    """``NAME ENABLED ACTIVE``; later fields are ignored (systemctl prints one word each)."""
    fields = value.split()
    if len(fields) < 3:
        raise ProbeError('probe line %r: want "unit NAME ENABLED ACTIVE"' % ('unit ' + value))
    return fields[0], {'enabled': fields[1], 'active': fields[2]}


def probe_facts(output):
    """The probe's lines as the dict the role decides on (see the module docstring for the line rules).

    Keys: ``uid`` (str or None), ``sshd_present``, ``sshd``, ``version``, ``supported`` ({kex, cipher, mac,
    hostkey, pubkey: [names]}), ``host_keys`` ([{path, bits, type}] in probe order), ``moduli_small``,
    ``first_directive``, ``main_hostkey_lines``, ``main_sftp`` ([lines]), ``present`` ({banner_file,
    dropin_dir, socket_dropin: bool}), ``units`` ({name: {enabled, active}}, a later line for the same unit
    wins), ``client``, ``sshd_t_errors`` ([lines])."""
    raw = {}
    host_keys = []
    units = {}
    for line in _lines(output):
        key, dummy, value = line.partition(' ')
        if key not in KNOWN_KEYS:
            continue
        if key == 'hostkey':
            host_keys.append(_host_key(value))
        elif key == 'unit':
            name, state = _unit(value)
            units[name] = state
        elif key in _COUNTS:
            raw.setdefault(key, []).append(_count(key, value))
        else:
            raw.setdefault(key, []).append(value)

    def first(key, default):
        return raw[key][0] if key in raw else default

    return {
        'uid': first('uid', None),
        'sshd_present': 'sshd' in raw,
        'sshd': first('sshd', DEFAULT_SSHD),
        'version': first('version', DEFAULT_VERSION),
        'supported': dict((kind, list(raw.get(key, []))) for kind, key in ALGORITHM_KINDS),
        'host_keys': host_keys,
        'moduli_small': first('moduli_small', 0),
        'first_directive': first('first_directive', ''),
        'main_hostkey_lines': first('main_hostkey_lines', 0),
        'main_sftp': raw.get('main_sftp', []),
        'present': dict((key, key in raw) for key in PRESENT_KEYS),
        'units': units,
        'client': first('client', DEFAULT_CLIENT),
        'sshd_t_errors': raw.get('sshd_T_error', []),
    }


def _text(value):
    return value if isinstance(value, str) else str(value)


def algorithm_problems(facts, algorithm_vars, algorithms):
    """The role's algorithm lists against what this OpenSSH supports. ``algorithm_vars``: [{var, kind, value}]
    (the public variable, its kind, the user's list); ``algorithms``: {kind: effective list}. A user list must
    be fully supported (it is used verbatim); a recommended list must keep at least one entry. A kind the
    probe listed nothing for (no ssh client) is not checked."""
    if not isinstance(facts, dict):
        raise ProbeError('the probe facts must be a dict (the result of sshd_probe_facts)')
    version = _text(facts.get('version', DEFAULT_VERSION))
    supported_all = facts.get('supported') or {}
    out = []
    for item in algorithm_vars or []:
        if not isinstance(item, dict) or 'var' not in item or 'kind' not in item:
            raise ProbeError('each algorithm variable must be a dict with var, kind and value, not %r' % (item,))
        supported = supported_all.get(item['kind']) or []
        if not supported:
            continue
        bad = [a for a in item.get('value') or [] if a not in supported]
        if bad:
            out.append('%s contains entries OpenSSH %s on this host does not support: %s. Supported here: %s.'
                       % (item['var'], version, ', '.join(_text(a) for a in bad), ', '.join(supported)))
        elif not (algorithms or {}).get(item['kind']):
            out.append('None of the recommended %s entries is supported by OpenSSH %s here; set %s from: %s'
                       % (item['var'], version, item['var'], ', '.join(supported)))
    return out


def effective_mismatch(output, expected, host_key_paths, sftp_line):
    """What in ``sshd -T`` output differs from the hardening: each ``expected`` keyword (lower case) whose
    values, joined by a space, are not the wanted text (``<unset>`` when sshd printed none); HostKey files
    other than ``host_key_paths``; the sftp subsystem other than ``sftp_line`` (``Subsystem sftp ...``, empty
    when disabled). One message each, in that order."""
    eff = config_lines(output)
    out = []
    for key, want in (expected or {}).items():
        have = ' '.join(eff.get(key, ['<unset>']))
        if have != want:
            out.append('%s is %s, want %s' % (key, have, _text(want)))
    paths = list(host_key_paths or [])
    extra = []
    for path in eff.get('hostkey', []):
        if path not in paths and path not in extra:
            extra.append(path)
    if extra:
        out.append('extra HostKey ' + ', '.join(extra))
    sftp = next((v for v in eff.get('subsystem', []) if _SFTP_RE.match(v)), '')
    sftp_line = sftp_line or ''
    if sftp.split() != sftp_line.split()[1:]:
        out.append('subsystem is %s, want %s' % (sftp or '<unset>', sftp_line or '<none>'))
    return out
