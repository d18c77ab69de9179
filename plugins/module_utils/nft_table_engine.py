# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Engine of the nft_table module: one nftables table, owned as a whole, loaded with a timed rollback.

``present`` compares the wanted file with the persisted one and the live table (``nft -s list table``) with the
listing recorded after the last confirmed load; when they differ it checks the file (``nft -c -f``), keeps the
live table as it is now in a rollback file, arms a transient systemd timer that loads the rollback file after
``rollback_seconds``, and loads the new file (one transaction). ``confirmed`` (after the caller reconnected) stops
the timer, then persists the file and records the live listing. Nothing outside the table is read or changed.
Every command runs through ``_runner``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure

NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_]{0,31}$')
FAMILIES = ('inet', 'ip', 'ip6')
ROLLBACK_MIN, ROLLBACK_MAX = 10, 3600
# Top-level statements a table's file may hold (each must name this very table).
_TOP_RE = re.compile(r'^(?:(?:add|create|delete|destroy|flush)\s+)?table\s+(\S+)\s+(\S+)\s*(\{.*)?$')


def unit_name(family, name):
    return 'gpufleet-nft-rollback-%s-%s' % (family, name)


def _strip_comments(text):
    """``text`` without ``#`` comments (outside double quotes)."""
    out = []
    for line in text.splitlines():
        quoted, keep = False, []
        for ch in line:
            if ch == '"':
                quoted = not quoted
            elif ch == '#' and not quoted:
                break
            keep.append(ch)
        out.append(''.join(keep))
    return out


def scope_errors(content, family, name):
    """Top-level statements of ``content`` that are not about table ``family name`` (``flush ruleset``, another
    table, ``include``, ...): the file may only replace its own table."""
    errors, depth, quoted = [], 0, False
    for number, line in enumerate(_strip_comments(content), 1):
        start_depth = depth
        for ch in line:
            if ch == '"':
                quoted = not quoted
            elif not quoted and ch == '{':
                depth += 1
            elif not quoted and ch == '}':
                depth -= 1
        if depth < 0:
            errors.append('content line %d: a "}" closes nothing' % number)
            depth = 0
        if start_depth > 0:
            continue
        for statement in (s.strip() for s in line.split(';')):
            if not statement or statement.startswith('}'):
                continue
            match = _TOP_RE.match(statement)
            if not match:
                errors.append('content line %d: %r is not about table %s %s; the file may only declare, delete or '
                              'flush that table (no flush ruleset, include or other tables)'
                              % (number, statement[:60], family, name))
            elif (match.group(1), match.group(2)) != (family, name):
                errors.append('content line %d names table %s %s; only %s %s is managed here'
                              % (number, match.group(1), match.group(2), family, name))
    if depth != 0:
        errors.append('content has unbalanced braces')
    return errors


def param_errors(p):
    e = ac.nul_errors(p)
    if e:
        return e
    if not NAME_RE.match(p['name'] or ''):
        e.append('name must be 1..32 characters of A-Z a-z 0-9 _, starting with a letter, got %r' % (p['name'],))
    if p['rollback_seconds'] != 0:
        e.extend(ac.int_range('rollback_seconds', p['rollback_seconds'], ROLLBACK_MIN, ROLLBACK_MAX, 'seconds (or 0: '
                              'no rollback)'))
    e.extend(ac.timeout_range(p['timeout']))
    for key in ('path', 'state_dir'):
        if not p[key] or not os.path.isabs(p[key]):
            e.append('%s must be an absolute path, got %r' % (key, p[key]))
    if p['path'] and os.path.isabs(p['path']):
        why = atomic_write.file_problem(p['path'])
        if why:
            e.append('path: %s' % why)
    if p['state_dir'] and os.path.lexists(p['state_dir']) and not os.path.isdir(p['state_dir']):
        e.append('state_dir %s exists and is not a directory' % p['state_dir'])
    for key in ('nft_path', 'systemd_run_path', 'systemctl_path'):
        e.extend(ac.executable_errors(key, p[key]))
    if p['state'] == 'present':
        if not p['content'] or not p['content'].strip():
            e.append('content is required with state=present (the whole file: table %s %s { ... })'
                     % (p['family'], p['name']))
        elif not e:
            e.extend(scope_errors(p['content'], p['family'], p['name']))
    elif p['content'] is not None and p['state'] == 'absent':
        e.append('content is only for state=present')
    return e


def _read(path):
    try:
        with open(path, encoding='utf-8', errors='surrogateescape') as handle:
            return handle.read()
    except (IOError, OSError):
        return None


class Table(object):
    """The commands one call needs, bound to its tools and timeout."""

    def __init__(self, p, find, mover):
        self.p, self.find, self.mover = p, find, mover
        self.family, self.name = p['family'], p['name']
        self.unit = unit_name(self.family, self.name)
        base = os.path.join(p['state_dir'], '%s-%s' % (self.family, self.name))
        self.listing_file, self.candidate, self.rollback_file, self.marker = (
            base + '.listing', base + '.candidate.nft', base + '.rollback.nft', base + '.rolled-back')
        self.nft = self._tool('nft_path', 'nft', 'nftables')
        self._systemctl = None

    def _tool(self, key, default, package):
        wanted = self.p[key] or default
        path = self.find(wanted)
        if path is None:
            raise Failure('%s %s not found (install %s, or set %s)' % (key, wanted, package, key), changed=False)
        return path

    def run(self, argv, ok_rcs=(0,), changed=False):
        res = _runner.run(argv, timeout=self.p['timeout'])
        why = _runner.failure(res, self.p['timeout'], ok_rcs)
        if why:
            raise Failure('%s %s' % (res['cmd'], why), changed=changed, stderr=res['stderr'])
        return res

    @property
    def systemctl(self):
        if self._systemctl is None:
            self._systemctl = self._tool('systemctl_path', 'systemctl', 'systemd')
        return self._systemctl

    def live(self):
        """``nft -s list table`` (stateless: no counter values), or None when the table does not exist."""
        res = _runner.run([self.nft, '-s', 'list', 'table', self.family, self.name], timeout=self.p['timeout'])
        if res['rc'] != 0 and not res['timed_out'] and not res['start_error'] and \
                re.search(r'No such file or directory|does not exist', res['stderr']):
            return None
        why = _runner.failure(res, self.p['timeout'])
        if why:
            raise Failure('%s %s' % (res['cmd'], why), changed=False, stderr=res['stderr'])
        return res['stdout']

    def pending(self):
        res = _runner.run([self.systemctl, 'is-active', self.unit + '.timer'], timeout=self.p['timeout'])
        return res['stdout'].strip() in ('active', 'activating')

    def write(self, path, text, changed):
        why = atomic_write.write_text(self.mover, path, text)
        if why:
            raise Failure('could not write %s: %s' % (path, why), changed=changed)

    def record(self):
        self.write(self.listing_file, self.live() or '', True)


class _Mover(object):
    """The part of AnsibleModule atomic_write needs, without one (the engine runs without a module in tests)."""

    @staticmethod
    def atomic_move(src, dest, unsafe_writes=False):
        os.rename(src, dest)


def _diff(before, after, path, note=None):
    header = path + ((' (%s)' % note) if note else '')
    return {'before': before or '', 'after': after or '', 'before_header': header, 'after_header': path}


def present(p, check_mode, t):
    content = p['content'] if p['content'].endswith('\n') else p['content'] + '\n'
    if os.path.exists(t.rollback_file) and t.pending():
        raise Failure('a rollback of table %s %s is pending (%s.timer, armed by a run that was not confirmed): it '
                      'restores the table as it was before that run. Wait until it has fired, or confirm that run '
                      'with state=confirmed' % (t.family, t.name, t.unit), changed=False)
    live, persisted, recorded = t.live(), _read(p['path']), _read(t.listing_file)
    notes = []
    if persisted != content:
        notes.append('file differs' if persisted is not None else 'file missing')
    if live is None:
        notes.append('table not loaded')
    elif recorded != live:
        notes.append('live table differs from the last load' if recorded is not None else 'live table not loaded by '
                     'this module')
    result = {'changed': bool(notes), 'pending': False, 'path': p['path'], 'reasons': notes,
              'rollback_unit': t.unit + '.timer' if p['rollback_seconds'] else None}
    if p['_diff']:
        result['diff'] = _diff(persisted, content, p['path'], ', '.join(notes) if notes else None)
    if not notes or check_mode:
        return result
    os.makedirs(p['state_dir'], mode=0o700, exist_ok=True)
    t.write(t.candidate, content, False)
    check = _runner.run([t.nft, '-c', '-f', t.candidate], timeout=p['timeout'])
    if _runner.failure(check, p['timeout']):
        why = check['stderr'].strip() or _runner.failure(check, p['timeout'])
        raise Failure('nft -c refused the new ruleset, nothing was loaded: %s' % why, changed=False,
                      stderr=check['stderr'])
    rollback = 'table %s %s\ndelete table %s %s\n%s' % (t.family, t.name, t.family, t.name, live or '')
    t.write(t.rollback_file, rollback, False)
    if os.path.exists(t.marker):
        os.unlink(t.marker)
    if p['rollback_seconds']:
        t.run([t.systemctl, 'reset-failed', t.unit + '.service', t.unit + '.timer'], ok_rcs=(0, 1, 5))
        script = '%s -f "$1" && date +%%s.%%N > "$2"' % _sh_quote(t.nft)
        t.run([t._tool('systemd_run_path', 'systemd-run', 'systemd'), '--unit', t.unit, '--collect',
               '--description', 'gpufleet: put table %s %s back as it was (no confirm came)' % (t.family, t.name),
               '--on-active', '%ds' % p['rollback_seconds'], '--timer-property', 'AccuracySec=100ms',
               '/bin/sh', '-c', script, 'rollback', t.rollback_file, t.marker])
        result['rollback_at'] = round(time.time() + p['rollback_seconds'], 3)
    loaded = _runner.run([t.nft, '-f', t.candidate], timeout=p['timeout'])
    if _runner.failure(loaded, p['timeout']):
        if p['rollback_seconds']:
            t.run([t.systemctl, 'stop', t.unit + '.timer'], ok_rcs=(0, 5))
        raise Failure('nft -f %s failed, the table is as it was: %s' % (t.candidate, loaded['stderr'].strip()),
                      changed=False, stderr=loaded['stderr'])
    result['loaded_at'] = round(time.time(), 3)
    if p['rollback_seconds']:
        result['pending'] = True
    else:
        _persist(p, t, content)
    return result


def _persist(p, t, content):
    t.write(p['path'], content, True)
    t.record()
    for path in (t.rollback_file, t.candidate):
        if os.path.exists(path):
            os.unlink(path)


def _sh_quote(text):
    return "'%s'" % text.replace("'", "'\\''")


def confirmed(p, check_mode, t):
    """Stop the rollback timer and persist what was loaded. Not pending and nothing left to persist: no change."""
    pending = t.pending()
    result = {'changed': pending, 'pending': pending, 'path': p['path'], 'rollback_unit': t.unit + '.timer'}
    if not pending:
        rolled = _read(t.marker)
        if rolled is not None:
            raise Failure('no rollback is pending for table %s %s: it fired at %s and put the table back as it was '
                          'before the load (the confirm came too late)' % (t.family, t.name, rolled.strip()),
                          changed=False, rolled_back_at=float(rolled.strip() or 0))
        if os.path.exists(t.rollback_file):
            raise Failure('no rollback is pending for table %s %s, but the last load was never confirmed (%s '
                          'remains); run state=present again' % (t.family, t.name, t.rollback_file), changed=False)
        return result
    if check_mode:
        return result
    t.run([t.systemctl, 'stop', t.unit + '.timer'], ok_rcs=(0, 5))
    rolled = _read(t.marker)
    if rolled is not None:
        raise Failure('the rollback of table %s %s fired at %s, before the confirm: the table is back as it was'
                      % (t.family, t.name, rolled.strip()), changed=False, rolled_back_at=float(rolled.strip() or 0))
    content = _read(t.candidate)
    if content is None:
        raise Failure('the loaded file %s is gone; run state=present again' % t.candidate, changed=True)
    _persist(p, t, content)
    result['pending'] = False
    return result


def absent(p, check_mode, t):
    live, persisted = t.live(), _read(p['path'])
    changed = live is not None or persisted is not None
    result = {'changed': changed, 'pending': False, 'path': p['path'], 'rollback_unit': None}
    if p['_diff']:
        result['diff'] = _diff(persisted, '', p['path'], 'table loaded' if live is not None else None)
    if not changed or check_mode:
        return result
    if live is not None:
        t.run([t.nft, 'delete', 'table', t.family, t.name])
    for path in (p['path'], t.listing_file, t.candidate, t.rollback_file):
        if os.path.exists(path):
            os.unlink(path)
    return result


def run(params, check_mode, diff, find, mover=None):
    """The module's work; raises Failure (the module fails with its message). ``mover``: the AnsibleModule (its
    ``atomic_move`` writes the files)."""
    p = dict(params)
    p['_diff'] = diff
    if p['path'] is None and p.get('name'):
        p['path'] = '/etc/nftables.d/%s.nft' % p['name']
    errors = param_errors(p)
    if errors:
        raise Failure('; '.join(errors), changed=False)
    t = Table(p, find, mover or _Mover())
    return {'present': present, 'confirmed': confirmed, 'absent': absent}[p['state']](p, check_mode, t)
