# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pure helpers of the acceptance-test parsers and modules (nccl_bench, rdma_bw, dcgm_diag,
gpu_burn, p2p_bandwidth): size parsing, launcher prefix stripping, number conversion and threshold
checks that treat a missing figure as a failure. Running the tools is module_utils/_runner.py's job:
nothing here starts a process, so the parsers import no runner.

Pure standard library (Python 3.8+), no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

# Line prefixes added by launchers and log collectors, stripped before parsing:
#   OpenMPI --tag-output  '[1,0]<stdout>:'     srun --label  '0: ' / '12: '
#   pdsh / clush / mpirun --output-filename style 'node-01: '
_PREFIX_RES = (
    re.compile(r'^\[\d+,\d+\]<std(?:out|err)>:\s?'),
    re.compile(r'^\s{0,4}\d{1,6}:\s'),
    re.compile(r'^[A-Za-z][A-Za-z0-9_.\-]{0,62}:\s'),
)
_SIZE_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$', re.IGNORECASE)
_SIZE_MULT = {'': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3, 'T': 1024 ** 4}


def parse_size(value):
    """``8``, ``'128M'``, ``'8G'``, ``'1KB'`` -> bytes (K/M/G/T are powers of 1024 as in nccl-tests).
    Returns None for None; raises ValueError for anything else."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    match = _SIZE_RE.match(str(value))
    if not match:
        raise ValueError('not a size: %r (use bytes or a number with K, M, G or T)' % (value,))
    return int(float(match.group(1)) * _SIZE_MULT[match.group(2).upper()])


def strip_prefix(line):
    """Remove launcher prefixes (OpenMPI tag-output, srun --label, 'host: ') from one line.
    Several stacked prefixes are removed; a line with none is returned unchanged."""
    for dummy in range(3):
        for rx in _PREFIX_RES:
            match = rx.match(line)
            if match:
                line = line[match.end():]
                break
        else:
            return line
    return line


def to_float(text):
    """Float or None for ``N/A``, ``-``, ``nan`` and non-numbers."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    if math.isnan(value) or math.isinf(value):
        return None
    return value


def to_int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def fmt(value, digits=2):
    if value is None:
        return 'missing'
    if isinstance(value, float):
        return ('%.' + str(digits) + 'f') % value
    return str(value)


def check_min(failures, rung, subject, figure, value, threshold, unit, cmd):
    """Append a failure when ``threshold`` is set and ``value`` is below it or missing.
    Returns True when the figure passed (or no threshold was set)."""
    if threshold is None:
        return True
    if value is None:
        failures.append('%s: %s on %s is missing (threshold %s %s); cmd: %s'
                        % (rung, figure, subject, fmt(threshold), unit, cmd))
        return False
    if value < threshold:
        failures.append('%s: %s on %s = %s %s < threshold %s %s; cmd: %s'
                        % (rung, figure, subject, fmt(value), unit, fmt(threshold), unit, cmd))
        return False
    return True


def check_max(failures, rung, subject, figure, value, threshold, unit, cmd):
    """Like check_min for figures that must stay at or below ``threshold`` (latency)."""
    if threshold is None:
        return True
    if value is None:
        failures.append('%s: %s on %s is missing (threshold %s %s); cmd: %s'
                        % (rung, figure, subject, fmt(threshold), unit, cmd))
        return False
    if value > threshold:
        failures.append('%s: %s on %s = %s %s > threshold %s %s; cmd: %s'
                        % (rung, figure, subject, fmt(value), unit, fmt(threshold), unit, cmd))
        return False
    return True


def tail(text, lines=40):
    """Last ``lines`` lines of ``text`` (output of 1000-rank runs is large; the result keeps a tail)."""
    if not text:
        return []
    return text.splitlines()[-lines:]


def check_output(failures, rung, subject, cmd, complete=True, missing='', malformed=None, limit=3):
    """Append failures for an output that is not whole: ``complete`` False (``missing`` says what did not
    follow, e.g. the closing lines) and ``malformed`` rows (listed, at most ``limit``). A cut or garbled run
    is never accepted, with or without thresholds. Returns True when the output passed."""
    ok = True
    if not complete:
        failures.append('%s: output on %s is incomplete: %s (cut off or garbled output is not accepted); cmd: %s'
                        % (rung, subject, missing or 'the closing lines are missing', cmd))
        ok = False
    malformed = list(malformed or [])
    if malformed:
        shown = ', '.join(repr(line[:120]) for line in malformed[:limit])
        more = ' and %d more' % (len(malformed) - limit) if len(malformed) > limit else ''
        failures.append('%s: %d malformed row(s) on %s: %s%s (garbled output is not accepted); cmd: %s'
                        % (rung, len(malformed), subject, shown, more, cmd))
        ok = False
    return ok


def not_run(check_mode, exe, rung, name, what, cmd, **extra):
    """The result of a rung that does not run, or None when it runs: in check mode it is skipped (nothing is
    run, ``failures`` empty); without an executable it fails with 'executable not found'. ``name`` is the
    executable as given, ``what`` what the check-mode message calls it, ``extra`` keys both results carry."""
    if check_mode:
        return dict(changed=False, skipped=True, cmd=cmd, failures=[], msg='skipped: check mode, %s not run' % what,
                    **extra)
    if exe is None:
        return dict(msg='%s: %s not found on PATH; cmd: %s' % (rung, name, cmd), cmd=cmd,
                    failures=['executable not found'], **extra)
    return None
