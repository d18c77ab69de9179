# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of pull mode: the nodes' results merged into the fleet drift report (documentation:
plugins/modules/pull_report.py; logic: plugins/plugin_utils/_pull.py, _drift.py, _hwcheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile
import time

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._hwcheck import FLEET_DEFAULT_ITEMS, FLEET_ITEMS, fleet_compare

TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'playbooks', 'templates', 'drift.md.j2')

ARGUMENT_SPEC = dict(
    results=dict(type='path', required=True),
    dest=dict(type='path', required=True),
    expected=dict(type='list', elements='str', required=True),
    run_id=dict(type='str'),
    max_age=dict(type='int'),
    template=dict(type='path', default=TEMPLATE),
)


def _write(path, text):
    """Replace ``path`` through a new temporary file in its directory; returns whether the content changed."""
    data = text.encode('utf-8')
    try:
        with open(path, 'rb') as f:
            if f.read() == data:
                return False
    except (IOError, OSError):
        pass
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp  # nothing runs on the target
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        result['changed'] = False
        problems = []
        if args['max_age'] is not None and args['max_age'] <= 0:
            problems.append('max_age must be a number of seconds above 0, got %d' % args['max_age'])
        if not os.path.isabs(args['dest']):
            problems.append('dest must be an absolute directory path, got %s' % args['dest'])
        elif os.path.exists(args['dest']) and not os.path.isdir(args['dest']):
            problems.append('dest %s is not a directory' % args['dest'])
        if not os.path.isfile(args['template']):
            problems.append('template %s is not a file' % args['template'])
        if not args['expected'] or not all(isinstance(h, str) and h for h in args['expected']):
            problems.append('expected must list the nodes that must report (host names), got %r' % (args['expected'][:5],))
        if problems:
            result.update(failed=True, msg='pull_report: ' + '; '.join(problems))
            return result
        try:
            merged = _pull.merge_results(_pull.read_results(args['results']), expected=args['expected'],
                                         run_id=args['run_id'], max_age=args['max_age'], now=time.time())
            fleet = merged['fleet']
            deviations = []
            if fleet['hosts']:
                items = [i for i in fleet['items'] if i in FLEET_ITEMS] or list(FLEET_DEFAULT_ITEMS)
                dummy, deviations = fleet_compare(fleet['hosts'], fleet['profiles'], items)
            report = _pull.drift_report(merged, deviations)
        except ValueError as exc:
            result.update(failed=True, msg='pull_report: %s' % exc)
            return result
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            # a result shape the checks do not know yet: a clean failure, never a traceback
            result.update(failed=True, msg='pull_report: cannot merge the results (malformed result?): %s: %s'
                          % (type(exc).__name__, exc))
            return result
        try:
            with open(args['template']) as f:
                template_text = f.read()
        except (IOError, OSError) as exc:
            result.update(failed=True, msg='pull_report: cannot read template %s: %s' % (args['template'], exc))
            return result
        texts = {
            'drift.json': json.dumps(report, indent=4, sort_keys=True, separators=(',', ': ')) + '\n',
            'drift.md': _pull.render_drift_md(template_text, report),
        }
        changed = []
        if self._task.check_mode:
            for name, text in sorted(texts.items()):
                path = os.path.join(args['dest'], name)
                try:
                    with open(path, 'rb') as f:
                        same = f.read() == text.encode('utf-8')
                except (IOError, OSError):
                    same = False
                if not same:
                    changed.append(path)
        else:
            try:
                if not os.path.isdir(args['dest']):
                    os.makedirs(args['dest'], 0o755)
                for name, text in sorted(texts.items()):
                    path = os.path.join(args['dest'], name)
                    if _write(path, text):
                        changed.append(path)
            except (IOError, OSError) as exc:
                result.update(failed=True, msg='pull_report: cannot write the report into %s: %s'
                              % (args['dest'], exc.strerror or exc))
                return result
        pull = report['pull']
        result.update(
            changed=bool(changed), written=changed, mode=report['mode'], drift=report['drift'],
            drifted_nodes=report['drifted_nodes'], unchecked=report['unchecked'], summary=report['summary'],
            pull=pull, nodes=len(report['nodes']),
            msg='%s; %d of %s node(s) reported' % ('; '.join(pull['findings']) or 'no drift', pull['reported'],
                                                   pull['expected']))
        return result
