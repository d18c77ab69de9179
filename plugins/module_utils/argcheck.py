# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of module options that ``argument_spec`` cannot express: NUL bytes in text, integer ranges,
environment dicts, root directories and executable paths.

Each check returns a list of messages (empty when the value is fine); every message starts with the
option's name and says what is allowed, so a module can refuse bad input with one ``fail_json`` before
it runs or changes anything (``refuse``). Pure standard library (Python 3.8+), no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

import os
import stat

# Upper bound of every ``timeout`` option, in seconds (30 days): longer is a typo, and far larger values
# overflow the OS timers the runners use.
MAX_TIMEOUT = 30 * 24 * 3600


def _show(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def nul_errors(params, skip=()):
    """Options of ``params`` (but those in ``skip``, checked elsewhere) holding a NUL byte in a string, a
    list item or a dict key or value. NUL cannot be passed to a command, a path or the environment."""
    errors = []
    for name in sorted(params):
        if name not in skip and not name.startswith('_'):
            errors.extend(_nul_in(params.get(name), name))
    return errors


def _nul_in(value, where):
    if isinstance(value, str):
        if '\x00' in value:
            return ['%s contains a NUL byte (%s); text options cannot hold NUL' % (where, _show(value))]
        return []
    if isinstance(value, (list, tuple)):
        out = []
        for i, item in enumerate(value):
            out.extend(_nul_in(item, '%s[%d]' % (where, i)))
        return out
    if isinstance(value, dict):
        out = []
        for key in sorted(value, key=str):
            if isinstance(key, str) and '\x00' in key:
                out.append('%s has a key with a NUL byte (%s); keys cannot hold NUL' % (where, _show(key)))
                continue
            out.extend(_nul_in(value[key], '%s.%s' % (where, key)))
        return out
    return []


def int_range(name, value, low, high=None, unit=''):
    """``name`` must be an integer from ``low`` to ``high`` (no upper bound when None); None is not set."""
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        unit = ' %s' % unit if unit else ''
        if high is None:
            return ['%s must be an integer >= %d%s, got %s' % (name, low, unit, _show(value))]
        return ['%s must be an integer from %d to %d%s, got %s' % (name, low, high, unit, _show(value))]
    return []


def timeout_range(value, name='timeout'):
    """A ``timeout`` option: 1 second to 30 days."""
    return int_range(name, value, 1, MAX_TIMEOUT, 'seconds')


def option_name(params, name, aliases=None):
    """How a message names option ``name``: ``alias (alias of name)`` when the caller set it by an alias
    (``aliases`` maps alias to option, ``AnsibleModule.aliases``; the alias stays in ``params``), so the
    message names what the caller wrote; else ``name``."""
    for alias in sorted(aliases or {}):
        if aliases[alias] == name and alias in params:
            return '%s (alias of %s)' % (alias, name)
    return name


def min_number(name, value, low=0.0):
    """A threshold: a finite number >= ``low``; None is not set."""
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) \
            or value in (float('inf'), float('-inf')) or value < low:
        return ['%s must be a finite number >= %s, got %s' % (name, low, _show(value))]
    return []


def env_errors(env, name='env'):
    """An environment dict: names non-empty without ``=`` or NUL, values text or numbers without NUL."""
    if env is None:
        return []
    if not isinstance(env, dict):
        return ['%s must be a dict of variable names to values, got %s' % (name, type(env).__name__)]
    errors = []
    for key in sorted(env, key=str):
        value = env[key]
        if not isinstance(key, str) or not key:
            errors.append('%s: variable names must be non-empty strings, got %s' % (name, _show(key)))
            continue
        if '=' in key or '\x00' in key:
            errors.append('%s: variable name %s must not contain "=" or a NUL byte (allowed: any other '
                          'characters, for example NCCL_IB_HCA)' % (name, _show(key)))
            continue
        if isinstance(value, (dict, list, tuple)) or value is None:
            errors.append('%s.%s must be a string or a number, got %s' % (name, key,
                                                                          'null' if value is None else type(value).__name__))
        elif '\x00' in str(value):
            errors.append('%s.%s contains a NUL byte (%s); values cannot hold NUL' % (name, key, _show(value)))
    return errors


def word_errors(name, value, allow_empty=False):
    """A word passed to a command as one argument (a host, a device, a test name): not empty (unless
    ``allow_empty``), not starting with ``-`` (it would be read as an option), no whitespace or NUL."""
    if value is None:
        return []
    if not isinstance(value, str):
        return ['%s must be a string, got %s' % (name, type(value).__name__)]
    if value == '':
        return [] if allow_empty else ['%s must not be empty' % name]
    if value.startswith('-') or any(c.isspace() or c == '\x00' for c in value):
        return ['%s must be one word that does not start with "-" (no spaces, tabs or NUL), got %s'
                % (name, _show(value))]
    return []


def root_dir_errors(name, value):
    """A hardware root (``sysfs_root``, ``proc_root``): an existing directory."""
    if value is None:
        return []
    if value == '':
        return ['%s must be a directory (default /), got an empty string' % name]
    if '\x00' in value:
        return []  # reported by nul_errors
    if not os.path.isdir(value):
        what = 'does not exist' if not os.path.lexists(value) else 'is not a directory'
        return ['%s must be an existing directory (default /); %s %s' % (name, value, what)]
    return []


def executable_errors(name, value):
    """An executable given as a path (a name with ``/``) that exists must be an executable regular file;
    a name looked up on PATH, or a path that does not exist, is left to the module's own lookup."""
    if value is None:
        return []
    if value == '':
        return ['%s must be a program name or path, got an empty string' % name]
    if '\x00' in value or os.sep not in value or not os.path.lexists(value):
        return []
    try:
        st = os.stat(value)
    except OSError as exc:
        return ['%s %s cannot be used: %s' % (name, value, exc.strerror or exc)]
    if stat.S_ISDIR(st.st_mode):
        return ['%s %s is a directory; %s must be an executable file' % (name, value, name)]
    if not stat.S_ISREG(st.st_mode):
        return ['%s %s is not a regular file; %s must be an executable file' % (name, value, name)]
    if not os.access(value, os.X_OK):
        return ['%s %s exists but is not executable (mode %04o); %s must be an executable file'
                % (name, value, stat.S_IMODE(st.st_mode), name)]
    return []


def refuse(module, errors, **extra):
    """``fail_json`` with every message when there is any (nothing was run or changed)."""
    if errors:
        module.fail_json(msg='; '.join(errors), **extra)
