# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: drift
type: aggregate
short_description: Records every setting a run changes (or would change) per host, for the drift report
version_added: 0.1.0
author: gpufleet maintainers (@gpufleet)
description:
  - Used by C(playbooks/drift.yml). For each host, every task that reports C(changed) - in check mode, what
    would change - with its role, module, and the C(--diff) before/after when the module gives one. Handlers
    are recorded apart, as consequences (a restart is not a setting).
  - Active only for a playbook named C(drift.yml) or when C(GPUFLEET_DRIFT_REPORT) is set; silent otherwise, so
    it may stay enabled in C(ansible.cfg).
  - Writes C(drift-changes.json) into the report directory after every recorded change, so the playbook's last
    play can read it. The file is emptied when the playbook starts. Each write goes to a new temporary file with a
    random name in the same directory that then replaces the report, so no symlink planted in the directory is followed.
  - Tasks on C(localhost) (the report plays) and tasks tagged C(drift_ignore) are not recorded.
requirements:
  - enable it (C(callbacks_enabled = gpufleet.cluster.drift) in C(ansible.cfg), or C(ANSIBLE_CALLBACKS_ENABLED))
options:
  report_dir:
    description: Directory of C(drift-changes.json). Default C(build/drift) next to the playbooks' directory.
    type: path
    env:
      - name: GPUFLEET_DRIFT_DIR
"""

import difflib
import json
import os
import tempfile

from ansible.playbook.handler import Handler
from ansible.plugins.callback import CallbackBase

MAX_DIFF = 4000


def _short(text):
    text = '' if text is None else str(text)
    return text if len(text) <= MAX_DIFF else text[:MAX_DIFF] + '\n... (%d more characters)' % (len(text) - MAX_DIFF)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _diffs(result):
    """Before/after pairs from a result (``diff`` is a dict or a list of dicts; loops nest them in results)."""
    out = []
    items = [result] + [r for r in result.get('results') or [] if isinstance(r, dict) and r.get('changed')]
    for item in items:
        diff = item.get('diff')
        for d in diff if isinstance(diff, list) else [diff] if isinstance(diff, dict) else []:
            if not isinstance(d, dict):
                continue
            if 'prepared' in d:
                out.append({'prepared': _short(d['prepared'])})
            elif 'before' in d or 'after' in d:
                path = d.get('before_header') or d.get('after_header')
                before, after = d.get('before'), d.get('after')
                if isinstance(before, str) and isinstance(after, str):
                    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), 'before', 'after', lineterm='')
                    out.append({'path': path, 'unified': _short('\n'.join(lines))})
                else:
                    out.append({'path': path, 'before': _short(before), 'after': _short(after)})
    return out


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'gpufleet.cluster.drift'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super(CallbackModule, self).__init__(display=display)
        self.active = False
        self.path = None
        self.data = None

    def v2_playbook_on_start(self, playbook):
        name = os.path.basename(getattr(playbook, '_file_name', '') or '')
        self.active = name == 'drift.yml' or bool(os.environ.get('GPUFLEET_DRIFT_REPORT'))
        if not self.active:
            return
        report_dir = None
        try:
            report_dir = self.get_option('report_dir')
        except KeyError:
            report_dir = None
        if not report_dir:
            base = os.path.dirname(os.path.abspath(getattr(playbook, '_file_name', 'x')))
            report_dir = os.path.join(os.path.dirname(base), 'build', 'drift')
        self.path = os.path.join(report_dir, 'drift-changes.json')
        self.data = {'playbook': name, 'hosts': {}, 'consequences': {}}
        self._write()

    def _write(self):
        """Replace the report atomically through a new temp file in the same directory: mkstemp creates it with
        O_EXCL under a random name, so a symlink or file planted at a predictable name is never followed."""
        directory = os.path.dirname(self.path)
        if not os.path.isdir(directory):
            os.makedirs(directory)
        fd, tmp = tempfile.mkstemp(prefix='.drift-changes.', suffix='.tmp', dir=directory)
        try:
            with os.fdopen(fd, 'w') as f:
                json.dump(self.data, f, indent=1, sort_keys=True)
            os.chmod(tmp, 0o644 & ~_umask())  # what open() would have given; mkstemp makes 0600
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise

    def v2_runner_on_ok(self, result):
        if not self.active or not result._result.get('changed'):
            return
        host = result._host.get_name()
        task = result._task
        if host in ('localhost', '127.0.0.1') or 'drift_ignore' in (task.tags or []):
            return
        if result._result.get('_ansible_delegated_vars') and \
                result._result['_ansible_delegated_vars'].get('ansible_host') in ('localhost', '127.0.0.1'):
            return
        role = task._role.get_name() if task._role else None
        entry = {
            'task': task.get_name(),
            'role': role,
            'kind': role or task.action,
            'action': task.action,
            'diff': _diffs(result._result),
        }
        bucket = 'consequences' if isinstance(task, Handler) else 'hosts'
        self.data[bucket].setdefault(host, []).append(entry)
        self._write()
