# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of gpufleet.cluster.file_set: a set of whole files (and the stale files of earlier runs) in one call.

``run(params, check_mode, diff, write)`` checks every option and every path on the host first (``Failure``
naming the option, nothing touched), then compares each file's bytes, mode, owner and group with the wanted
ones, and - not in check mode - writes what differs, fixes the attributes and removes the stale files, in that
order. ``write(path, text)`` is the one tie to Ansible: the atomic write of ``atomic_write.write_text`` (a temp
file in the same directory and ``atomic_move``; None or why it failed), so every file is either the old one
or the new one, never half written. A failure after the first change raises ``Failure`` with what was done.

Pure standard library (Python 3.8+) apart from the callback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import grp
import os
import pwd
import re
import stat

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure

KEYS = ('path', 'content', 'mode', 'owner', 'group')
DEFAULT_MODE = '0644'
MODE_RE = re.compile(r'^[0-7]{3,4}$')
GLOB_CHARS = ('*', '?', '[')
# ansible-core's default MAX_FILE_SIZE_FOR_DIFF: larger files get "diff skipped" as with the template module.
MAX_DIFF_BYTES = 104448
_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'), (stat.S_ISSOCK, 'a socket'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'))


def _kind(mode):
    for test, name in _KINDS:
        if test(mode):
            return name
    return 'not a regular file'


def _encode(text):
    # the bytes atomic_write.write_text writes for ``text``
    return text.encode('utf-8', 'surrogateescape')


def _path_shape(where, path, what='an absolute path of a file'):
    """Shape of an absolute path (no host access); NUL is reported by argcheck.nul_errors."""
    if not isinstance(path, str):
        return ['%s must be %s (a string), got %s' % (where, what, 'null' if path is None else type(path).__name__)]
    if path == '':
        return ['%s must be %s, got an empty string' % (where, what)]
    if '\x00' in path:
        return []
    if not path.startswith('/'):
        return ['%s must be %s (starting with /), got the relative path %s' % (where, what, ac._show(path))]
    if '..' in path.split('/'):
        return ['%s must not contain ".." components (allowed: %s without them), got %s' % (where, what, ac._show(path))]
    if path.endswith('/') or path.endswith('/.'):
        return ['%s must name a file, not a directory (no trailing "/"), got %s' % (where, ac._show(path))]
    return []


def _same_key(path):
    """Two spellings of one file give one key: the real directory and the name."""
    return (os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _mode(where, value):
    if value is None:
        value = DEFAULT_MODE
    if isinstance(value, bool) or not isinstance(value, str):
        if isinstance(value, int) and not isinstance(value, bool):
            return None, ['%s must be an octal mode in quotes such as "0644", got the number %d (YAML reads an unquoted '
                          '0644 as the number 420; write mode: "0644")' % (where, value)]
        return None, ['%s must be an octal mode string such as "0644", got %s' % (where, type(value).__name__)]
    if not MODE_RE.match(value):
        return None, ['%s must be 3 or 4 octal digits such as "0644" or "0755" (no symbolic modes), got %s'
                      % (where, ac._show(value))]
    return int(value, 8), []


def _ident(where, value, kind):
    """uid/gid of an owner or group given by name or number; None when not set."""
    if value is None:
        return None, []
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None, ['%s must be a %s name or a numeric id, got %s' % (where, kind, type(value).__name__)]
    text = str(value)
    if text.isdigit():
        return int(text), []
    if text == '' or text.startswith('-'):
        return None, ['%s must be a %s name or a numeric id >= 0, got %s' % (where, kind, ac._show(value))]
    try:
        return (pwd.getpwnam(text).pw_uid if kind == 'user' else grp.getgrnam(text).gr_gid), []
    except KeyError:
        return None, ['%s %s is not a %s on this host (allowed: an existing %s name or a numeric id)'
                      % (where, ac._show(text), kind, kind)]


def check_files(files):
    """(entries, errors): each valid entry of ``files`` with its bytes, mode, uid/gid and current state."""
    entries, errors, seen = [], [], {}
    if not isinstance(files, list):
        return [], ['files must be a list of dicts with path and content, got %s' % type(files).__name__]
    for i, item in enumerate(files):
        where = 'files[%d]' % i
        if not isinstance(item, dict):
            errors.append('%s must be a dict with path and content, got %s' % (where, type(item).__name__))
            continue
        bad = []
        unknown = sorted(str(k) for k in item if k not in KEYS)
        if unknown:
            bad.append('%s has unknown key(s) %s; allowed: %s' % (where, ', '.join(unknown), ', '.join(KEYS)))
        for key in ('path', 'content'):
            if key not in item:
                bad.append('%s.%s is required' % (where, key))
        if 'path' in item:
            bad += _path_shape(where + '.path', item['path'])
        if 'content' in item and not isinstance(item['content'], str):
            bad.append('%s.content must be a string (the whole text of the file), got %s'
                       % (where, 'null' if item['content'] is None else type(item['content']).__name__))
        mode, mode_errors = _mode(where + '.mode', item.get('mode'))
        uid, uid_errors = _ident(where + '.owner', item.get('owner'), 'user')
        gid, gid_errors = _ident(where + '.group', item.get('group'), 'group')
        bad += mode_errors + uid_errors + gid_errors
        if bad:
            errors += bad
            continue
        try:
            data = _encode(item['content'])
        except UnicodeEncodeError as exc:
            errors.append('%s.content cannot be written as UTF-8 (%s); it must be text' % (where, exc.reason))
            continue
        path = item['path']
        entry = dict(path=path, where=where, data=data, mode=mode, uid=uid, gid=gid)
        problem = _host_problem(entry)
        if problem:
            errors.append(problem)
            continue
        key = _same_key(path)
        if key in seen:
            errors.append('%s.path %s is the same file as %s.path; each file may be listed once'
                          % (where, ac._show(path), seen[key]))
            continue
        seen[key] = where
        entry['key'] = key
        entries.append(entry)
    return entries, errors


def _host_problem(entry):
    """Why the file cannot be managed as it is on the host (None when it can); sets entry['stat']."""
    where, path = entry['where'] + '.path', entry['path']
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        what = 'is not a directory' if os.path.lexists(parent) else 'does not exist (file_set creates no directories)'
        return '%s %s cannot be written: its directory %s %s' % (where, path, parent, what)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return '%s %s cannot be examined: %s' % (where, path, exc.strerror or exc)
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            return ('%s %s is a symlink; file_set writes regular files only (writing through the link would change '
                    'another file, replacing it would drop the link): give the path of the file itself, or remove '
                    'the link' % (where, path))
        if not stat.S_ISREG(st.st_mode):
            return '%s %s is %s; it must be a regular file or not exist' % (where, path, _kind(st.st_mode))
    entry['stat'] = st
    return None


def check_remove(patterns):
    """(patterns, errors): each pattern split into its directory and glob."""
    out, errors = [], []
    for i, pattern in enumerate(patterns or []):
        where = 'remove[%d]' % i
        shape = _path_shape(where, pattern, 'an absolute glob pattern')
        if shape or '\x00' in pattern:
            errors += shape
            continue
        directory, glob = os.path.dirname(pattern), os.path.basename(pattern)
        if any(c in directory for c in GLOB_CHARS):
            errors.append('%s %s has a glob in its directory part %s; only the last component may hold * ? [ ] '
                          '(for example /etc/systemd/network/10-x-*.network)' % (where, ac._show(pattern), directory))
            continue
        if os.path.lexists(directory) and not os.path.isdir(directory):
            errors.append('%s %s: %s is not a directory' % (where, ac._show(pattern), directory))
            continue
        out.append(dict(where=where, pattern=pattern, directory=directory, glob=glob))
    return out, errors


def stale_files(patterns, keep):
    """Existing regular files (not symlinks) matching ``patterns`` whose key is not in ``keep``, sorted.
    A name starting with "." matches only a glob that starts with "." (as in the shell)."""
    found = {}
    for p in patterns:
        if not os.path.isdir(p['directory']):
            continue
        try:
            names = os.listdir(p['directory'])
        except OSError as exc:
            raise Failure('%s %s: cannot list %s: %s' % (p['where'], p['pattern'], p['directory'], exc.strerror or exc),
                          changed=False)
        for name in names:
            if name.startswith('.') and not p['glob'].startswith('.'):
                continue
            if not fnmatch.fnmatchcase(name, p['glob']):
                continue
            path = os.path.join(p['directory'], name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and _same_key(path) not in keep:
                found.setdefault(_same_key(path), path)
    return sorted(found.values())


def _read(path, where):
    try:
        with open(path, 'rb') as handle:
            return handle.read()
    except OSError as exc:
        raise Failure('%s %s cannot be read: %s' % (where, path, exc.strerror or exc), changed=False)


def _text_diff(header, before, after, removed=False):
    out = dict(before_header=header, after_header='%s (removed)' % header if removed else header)
    if before is not None and b'\x00' in before:
        out['dst_binary'] = 1
    elif before is not None and len(before) > MAX_DIFF_BYTES:
        out['dst_larger'] = MAX_DIFF_BYTES
    elif len(after) > MAX_DIFF_BYTES:
        out['src_larger'] = MAX_DIFF_BYTES
    else:
        out['before'] = (before or b'').decode('utf-8', 'replace')
        out['after'] = after.decode('utf-8', 'replace')
    return out


def _attrs(st, mode, uid, gid):
    """(before, after) of the attributes that differ."""
    before, after = {}, {}
    if stat.S_IMODE(st.st_mode) != mode:
        before['mode'], after['mode'] = '%04o' % stat.S_IMODE(st.st_mode), '%04o' % mode
    if uid is not None and st.st_uid != uid:
        before['owner'], after['owner'] = st.st_uid, uid
    if gid is not None and st.st_gid != gid:
        before['group'], after['group'] = st.st_gid, gid
    return before, after


def plan(entries, stale, want_diff):
    """Per file what to do ('write', 'fix' or None), and the diff list."""
    diff = []
    for e in entries:
        st = e['stat']
        current = None if st is None else _read(e['path'], e['where'] + '.path')
        attrs_before, attrs_after = ({}, {}) if st is None else _attrs(st, e['mode'], e['uid'], e['gid'])
        e['action'] = 'write' if current != e['data'] else ('fix' if attrs_after else None)
        if want_diff and e['action'] == 'write':
            diff.append(_text_diff(e['path'], current, e['data']))
        if want_diff and attrs_after:
            attrs_before['path'] = attrs_after['path'] = e['path']
            diff.append(dict(before_header='%s (attributes)' % e['path'], after_header='%s (attributes)' % e['path'],
                             before=attrs_before, after=attrs_after))
    if want_diff:
        for path in stale:
            data = _read(path, 'remove')
            if data:
                diff.append(_text_diff(path, data, b'', removed=True))
            else:  # an empty file: no text shows the removal
                diff.append(dict(before_header=path, after_header='%s (removed)' % path,
                                 before=dict(path=path, state='file'), after=dict(path=path, state='absent')))
    return diff


def _set_attrs(e):
    """None, or why the mode/owner could not be set."""
    try:
        os.chmod(e['path'], e['mode'])
        if e['uid'] is not None or e['gid'] is not None:
            os.chown(e['path'], -1 if e['uid'] is None else e['uid'], -1 if e['gid'] is None else e['gid'])
    except OSError as exc:
        return 'its mode/owner could not be set: %s' % (exc.strerror or exc)
    return None


def run(params, check_mode, want_diff, write):
    """The module result, or ``Failure`` (before any change: ``changed`` false; after: what was done)."""
    errors = ac.nul_errors(params)
    if errors:
        raise Failure('; '.join(errors), changed=False)
    entries, errors = check_files(params.get('files'))
    patterns, remove_errors = check_remove(params.get('remove'))
    errors += remove_errors
    if errors:
        raise Failure('; '.join(errors), changed=False)
    stale = stale_files(patterns, set(e['key'] for e in entries))
    diff = plan(entries, stale, want_diff)
    done = dict(written=[], fixed=[], removed=[],
                unchanged=[e['path'] for e in entries if e['action'] is None])
    todo_write = [e for e in entries if e['action'] == 'write']
    todo_fix = [e for e in entries if e['action'] == 'fix']
    if check_mode:
        done.update(written=[e['path'] for e in todo_write], fixed=[e['path'] for e in todo_fix], removed=stale)
    else:
        for e in entries:
            why = None
            if e['action'] == 'write':
                # the write (atomic_write.write_text), then the mode and owner (as ansible.builtin.copy does: a new
                # file has the writer's 0644 for the moment between the rename and the chmod)
                why = write(e['path'], e['data'].decode('utf-8', 'surrogateescape'))
                if not why:
                    done['written'].append(e['path'])
                    why = _set_attrs(e)
            elif e['action'] == 'fix':
                why = _set_attrs(e)
                if not why:
                    done['fixed'].append(e['path'])
            if why:
                _partial(done, '%s.path %s: %s' % (e['where'], e['path'], why), e['path'])
        for path in stale:
            try:
                os.unlink(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                _partial(done, 'remove: %s cannot be removed: %s' % (path, exc.strerror or exc), path)
            done['removed'].append(path)
    result = dict(done, changed=bool(done['written'] or done['fixed'] or done['removed']))
    if want_diff:
        result['diff'] = diff
    return result


def _partial(done, why, path):
    changed = bool(done['written'] or done['fixed'] or done['removed'])
    so_far = ('; done before it: written %s, attributes fixed %s, removed %s' % (done['written'], done['fixed'],
                                                                                 done['removed'])
              if changed else '; nothing was changed before it')
    raise Failure('%s%s. Every file is whole (the old or the new content, never a part); the files after %s are '
                  'untouched' % (why, so_far, path), changed=changed, failed_path=path, **done)
