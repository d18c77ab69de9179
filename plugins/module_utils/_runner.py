# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection: the one way its modules run a program.

An argv list (never a shell string) under ``LC_ALL=C``, in a process group of its own, bounded by an
optional timeout that ends the whole group (TERM, then KILL after 5 s); a program that is missing or that
the OS cannot start gives rc 127 and the OS error instead of an exception. ``find`` is the one executable
lookup (a path is checked as is, a name is looked up on PATH), ``failure`` the one failure message.

Pure standard library (Python 3.8+) apart from the AnsibleModule passed to ``find``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shlex
import signal
import subprocess
import time

# rc of a run that hit its timeout (its output so far is kept).
TIMEOUT_RC = -9
# rc of a program that could not be started (missing, not executable, no #!, wrong architecture).
START_RC = 127


class Failure(Exception):
    """An engine's failure: the module fails with ``msg``; ``result`` holds the other result keys (``changed`` at least)."""

    def __init__(self, msg, **result):
        Exception.__init__(self, msg)
        self.msg, self.result = msg, result


def cmdline(argv):
    """Shell-quoted command line for messages (the command itself always runs as an argv list)."""
    return ' '.join(shlex.quote(str(a)) for a in argv)


def find(module, name, opt_dirs=None):
    """Path of ``name`` or None: a name with a slash is checked as is (a regular file the caller may
    execute), a bare name is looked up on PATH and in ``opt_dirs``."""
    if not name:
        return None
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return module.get_bin_path(name, required=False, opt_dirs=list(opt_dirs or []))


def _kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (OSError, ProcessLookupError):
        pass


def start(argv, env_update=None, cwd=None, binary=False):
    """Start ``argv`` in its own process group with ``LC_ALL=C`` and ``env_update``; stdin is /dev/null,
    stdout/stderr are pipes (text with undecodable bytes replaced by U+FFFD, or bytes when ``binary``).
    Raises OSError when the program cannot be started."""
    env = dict(os.environ)
    env.update(env_update or {})
    env['LC_ALL'] = 'C'
    # AnsibleModule.run_command has no timeout and cannot leave a server running in the background
    # while the client runs (rdma_bw loopback), hence Popen with a process group of its own.
    text = {} if binary else dict(universal_newlines=True, errors='replace')
    return subprocess.Popen(  # pylint: disable=ansible-bad-function
        [str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        start_new_session=True, cwd=cwd, **text)


def finish(proc, timeout):
    """Wait for ``proc`` up to ``timeout`` seconds (None: no limit); on timeout end its whole process
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
    return rc, out, err, timed_out


def run(argv, timeout=None, env_update=None, cwd=None, binary=False):
    """Run ``argv`` bounded by ``timeout``. Returns a dict: rc, stdout, stderr, timed_out, elapsed
    (seconds), cmd (the quoted command line) and start_error (the OS error when the program could not be
    started, rc 127; else None)."""
    started = time.monotonic()
    empty = b'' if binary else ''
    try:
        proc = start(argv, env_update, cwd, binary)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return dict(rc=START_RC, stdout=empty, stderr=reason if not binary else reason.encode(), timed_out=False,
                    elapsed=0.0, cmd=cmdline(argv), start_error=reason)
    rc, out, err, timed_out = finish(proc, timeout)
    return dict(rc=rc, stdout=out or empty, stderr=err or empty, timed_out=timed_out,
                elapsed=round(time.monotonic() - started, 3), cmd=cmdline(argv), start_error=None)


def last_line(res):
    """The last line of stderr, else of stdout, else 'no output' (the line that usually says why)."""
    for stream in (res['stderr'], res['stdout']):
        if isinstance(stream, bytes):
            stream = stream.decode('utf-8', 'replace')
        lines = (stream or '').strip().splitlines()
        if lines:
            return lines[-1].strip()
    return 'no output'


def failure(res, timeout=None, ok_rcs=(0,)):
    """Why a run failed, without the command line (callers add it where they name it), or None:
    '... could not be started: ...', 'did not finish within timeout N s (killed)' or 'exited with rc=N (why)'."""
    if res.get('start_error'):
        return 'could not be started: %s' % res['start_error']
    if res['timed_out']:
        return 'did not finish within timeout %s s (killed)' % timeout
    if res['rc'] not in ok_rcs:
        return 'exited with rc=%s (%s)' % (res['rc'], last_line(res))
    return None


def rc_failure(rung, subject, res, timeout):
    """An acceptance rung's failure text for a run that did not end well, or None:
    '<rung>: <subject> exited with rc=N (why); cmd: ...'."""
    why = failure(res, timeout)
    if why is None:
        return None
    return '%s: %s %s; cmd: %s' % (rung, subject, why, res['cmd'])
