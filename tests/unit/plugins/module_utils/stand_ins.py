# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins the engine tests share: a module object in place of AnsibleModule, the dict _runner.run returns,
and small shell scripts in place of the tools an engine runs.

The tests in this directory import it as a sibling (``from .stand_ins import ...``): the directory is a
package (``__init__.py``), so this works with pytest's default import mode, with and without ``-n``."""

from __future__ import annotations

import copy
import os
import shlex
from pathlib import Path


class Failed(Exception):
    """What ``StandInModule.fail_json`` raises; ``args[0]`` is the result dict, ``msg`` included."""


class StandInModule(object):
    """What the engines use of an AnsibleModule: ``params`` (``defaults`` updated with ``params``),
    ``check_mode``, ``_diff``, ``aliases``, ``warn`` (collected in ``warnings``), ``fail_json`` (raises Failed),
    ``get_bin_path`` (looks the bare name up in ``bin_paths``) and ``atomic_move``."""

    def __init__(self, params=None, defaults=None, check_mode=False, diff=False, bin_paths=None):
        self.params = copy.deepcopy(defaults or {})
        self.params.update(params or {})
        self.check_mode = check_mode
        self._diff = diff
        self.aliases = {}
        self.bin_paths = dict(bin_paths or {})
        self.warnings = []

    def warn(self, msg):
        self.warnings.append(msg)

    def fail_json(self, msg, **kwargs):
        raise Failed(dict(kwargs, msg=msg))

    def get_bin_path(self, name, required=False, opt_dirs=None):  # pylint: disable=unused-argument
        if required and name not in self.bin_paths:
            self.fail_json(msg='Failed to find required executable "%s"' % name)
        return self.bin_paths.get(name)

    def atomic_move(self, src, dest, unsafe_writes=False):  # pylint: disable=unused-argument
        os.rename(src, dest)


def run_result(stdout='', stderr='', rc=0, timed_out=False, elapsed=1.0, cmd='', start_error=None):
    """A dict as _runner.run returns it for one finished (or timed out, or unstartable) command."""
    return dict(rc=rc, stdout=stdout, stderr=stderr, timed_out=timed_out, elapsed=elapsed, cmd=cmd,
                start_error=start_error)


def script(directory, name, body, calls=None):
    """An executable ``directory/name`` (the directory is made if missing) standing in for a tool: a shell
    script that appends its arguments as one line to the file ``calls`` (when given), then runs ``body``.
    Returns its path as a str."""
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    log = 'echo "$*" >> %s\n' % shlex.quote(str(calls)) if calls else ''
    path.write_text('#!/bin/sh\n%s%s\n' % (log, body))
    path.chmod(0o755)
    return str(path)


def unstartable(directory, name, data=b'\x00\x01 not a program\n'):
    """An executable ``directory/name`` the OS cannot start (``data`` is no program). Returns its path as a str."""
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o755)
    return str(path)
