# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared plumbing of the acceptance-test modules (nccl_bench, rdma_bw, dcgm_diag, gpu_burn,
p2p_bandwidth): a bounded runner for argv lists, command-line quoting, size parsing, launcher
prefix stripping and threshold checks that treat a missing figure as a failure.

Pure standard library (Python 3.8+), no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re
import shlex
import signal
import subprocess
import time

# Output of a killed or timed-out tool is kept; rc is this value when the timeout hit.
TIMEOUT_RC = -9

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


def cmdline(argv):
    """Shell-quoted command line for messages (the command itself always runs as an argv list)."""
    return ' '.join(shlex.quote(str(a)) for a in argv)


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


def _kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (OSError, ProcessLookupError):
        pass


def start(argv, env_update=None, cwd=None):
    """Start ``argv`` (a list, never a shell string) in its own process group with ``LC_ALL=C`` and
    ``env_update``; stdout/stderr are pipes."""
    env = dict(os.environ)
    env.update(env_update or {})
    env['LC_ALL'] = 'C'
    # AnsibleModule.run_command has no timeout and cannot leave a server running in the background
    # while the client runs (rdma_bw loopback), hence Popen with a process group of its own.
    return subprocess.Popen(  # pylint: disable=ansible-bad-function
        [str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        start_new_session=True, universal_newlines=True, errors='replace', cwd=cwd)


def finish(proc, timeout):
    """Wait for ``proc`` up to ``timeout`` seconds (None: no limit); on timeout kill its whole process
    group (TERM, then KILL after 5 s). Returns ``(rc, stdout, stderr, timed_out)``."""
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            _kill_group(proc, signal.SIGKILL)
            out, err = proc.communicate()
    if timed_out:  # children left behind by a launcher that exited are ended too
        _kill_group(proc, signal.SIGKILL)
    rc = TIMEOUT_RC if timed_out else proc.returncode
    return rc, out or '', err or '', timed_out


def run(argv, timeout=None, env_update=None, cwd=None):
    """Run ``argv`` bounded by ``timeout``; returns a dict with rc, stdout, stderr, timed_out, elapsed
    (seconds) and cmd (the quoted command line). A missing executable gives rc 127 and the OS error."""
    started = time.monotonic()
    try:
        proc = start(argv, env_update, cwd)
    except OSError as exc:
        return dict(rc=127, stdout='', stderr=str(exc), timed_out=False, elapsed=0.0, cmd=cmdline(argv))
    rc, out, err, timed_out = finish(proc, timeout)
    return dict(rc=rc, stdout=out, stderr=err, timed_out=timed_out,
                elapsed=round(time.monotonic() - started, 3), cmd=cmdline(argv))


def rc_failure(rung, subject, res, timeout):
    """Failure text for a non-zero exit or a timeout, or None."""
    if res['timed_out']:
        return '%s: %s did not finish within timeout %s s (killed); cmd: %s' % (rung, subject, timeout, res['cmd'])
    if res['rc'] != 0:
        detail = (res['stderr'].strip().splitlines() or res['stdout'].strip().splitlines() or ['no output'])[-1]
        return '%s: %s exited with rc=%s (%s); cmd: %s' % (rung, subject, res['rc'], detail, res['cmd'])
    return None


def find_executable(module, name):
    """Path of ``name`` (a path is checked as is, a name looked up on PATH), or None."""
    if os.sep in name:
        if os.path.isfile(name) and os.access(name, os.X_OK):
            return name
        return None
    return module.get_bin_path(name, required=False)


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
