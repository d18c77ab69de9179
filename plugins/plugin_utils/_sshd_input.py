# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

The ssh_hardening role's input rules that are not types (its argument specs hold those) and its moduli
rewrite, in one place (formerly Jinja loops in the role's tasks). Pure functions:

- ``input_problems(pattern_lists, extra_settings, managed_keywords)``: user/group pattern lists with empty or
  blank entries, extra settings that set a keyword the role manages, extra settings whose keyword or value
  would break the drop-in's lines.
- ``moduli_without_small(text, min_bits)``: /etc/ssh/moduli without the groups smaller than ``min_bits``
  (the probe counts the same groups, see roles/ssh_hardening/files/probe.sh).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re


class InputError(Exception):
    """The filter was called with the wrong shapes (the role's argument specs rule this out)."""


_PATTERN = re.compile(r'^\S+$')
_BAD_KEY = re.compile(r'[\r\n\x00\s]|^$')
_BAD_VALUE = re.compile(r'[\r\n\x00]')


def input_problems(pattern_lists, extra_settings, managed_keywords):
    """Messages naming each variable that cannot be written into the drop-in as given; [] when all can.
    ``pattern_lists``: {variable name: list of sshd patterns}; ``extra_settings``: the user's
    ssh_hardening_extra_settings; ``managed_keywords``: lower-case keywords the role sets itself."""
    if not isinstance(pattern_lists, dict) or not isinstance(extra_settings, dict):
        raise InputError('the pattern lists and ssh_hardening_extra_settings must be dicts')
    out = []
    for name in sorted(pattern_lists):
        values = pattern_lists[name]
        if not isinstance(values, list):
            raise InputError('%s must be a list' % name)
        bad = [v for v in values if not isinstance(v, str) or not _PATTERN.match(v)]
        if bad:
            out.append("%s has empty entries or entries with whitespace: %s. Each entry is one sshd pattern such as "
                       "'alice', 'ops-*' or 'alice@10.0.0.*'." % (name, json.dumps(bad)))
    managed = set(k.lower() for k in managed_keywords or [])
    clash = [k for k in extra_settings if k.lower() in managed]
    if clash:
        out.append('ssh_hardening_extra_settings sets %s, which the role sets from its own ssh_hardening_* variables '
                   '(or, for Subsystem/Include/Match, must not be in the drop-in); use those variables instead.'
                   % ', '.join(clash))
    broken = [k for k in extra_settings if _BAD_KEY.search(k)]
    broken += [k for k, v in extra_settings.items() if isinstance(v, str) and _BAD_VALUE.search(v) and k not in broken]
    if broken:
        out.append('ssh_hardening_extra_settings %s holds a line break or NUL; each entry is one sshd keyword with a '
                   'one-line value (a line break would smuggle further directives into the drop-in).'
                   % ', '.join(repr(k) if _BAD_KEY.search(k) else k for k in broken))
    return out


def moduli_without_small(text, min_bits):
    """``text`` (/etc/ssh/moduli) without the groups whose size field (the fifth, the prime's bits minus one)
    is below ``min_bits - 1``; comments and lines that are not groups are kept. Ends with a newline."""
    try:
        floor = int(min_bits) - 1
    except (TypeError, ValueError):
        raise InputError('ssh_hardening_moduli_min_bits must be a whole number, got %r' % (min_bits,))
    keep = []
    for line in (text or '').splitlines():
        fields = line.split()
        if line.startswith('#') or len(fields) < 7:
            keep.append(line)
            continue
        try:
            size = int(fields[4])
        except ValueError:
            size = 0  # Jinja's int filter made a non-number 0: such a line was dropped, as it still is
        if size >= floor:
            keep.append(line)
    return '\n'.join(keep) + '\n' if keep else ''
