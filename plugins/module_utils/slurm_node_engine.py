# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the slurm_node module: reads a node with ``scontrol show node -o`` and its jobs with ``squeue``,
drains, resumes or downs it with ``scontrol update`` as the ownership rules of ``slurm.py`` decide (``plan``), and
waits for its jobs to end.

``slurm.py`` stays pure (parsers and rules, no command); this file runs the Slurm commands through the
collection's runner (``_runner``, with ``LC_ALL=C`` and ``LANG=C``). The module passed in needs ``params``,
``check_mode``, ``_diff``, ``warn``, ``fail_json`` and ``get_bin_path``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils.slurm import (
    NOT_FOUND_RE, SQUEUE_FORMAT, SQUEUE_STATES, SlurmParseError, format_reason, is_foreign, marker_errors,
    parse_node, parse_reason, parse_squeue, plan,
)

# Slurm's commands print in the C locale (dates, messages the parsers read).
ENV = {'LANG': 'C'}


class Slurm(object):
    """scontrol and squeue for one module run. Once ``scontrol update`` succeeded (``changed``) every later
    failure reports ``changed=true`` and says that the node was changed."""

    def __init__(self, module):
        self.module = module
        self.changed = False
        self.action = None
        p = module.params
        self.scontrol = p['scontrol_path'] or self.find('scontrol')
        self.squeue = p['squeue_path'] or self.find('squeue')

    def find(self, prog):
        path = runner.find(self.module, prog)
        if not path:
            self.module.fail_json(msg='%s not found on PATH (%s); set %s_path to the path of Slurm\'s %s'
                                      % (prog, os.environ.get('PATH', ''), prog, prog))
        return path

    def fail_json(self, **kw):
        if self.changed:
            kw['msg'] += ('; note: scontrol update state=%s had already succeeded, the node was changed'
                          % self.action.upper())
        self.module.fail_json(changed=self.changed, **kw)

    def call(self, argv):
        """``(rc, stdout, stderr)`` of ``argv`` (text, bytes that are not UTF-8 as U+FFFD); a program the OS
        cannot start fails naming its option."""
        res = runner.run(argv, env_update=ENV)
        if res['start_error']:  # exists and is executable, but the OS cannot start it
            opt = 'scontrol_path' if argv[0] == self.scontrol else 'squeue_path'
            self.fail_json(msg='%s could not be started: %s; %s must be the path of Slurm\'s %s'
                           % (argv[0], res['start_error'], opt, opt.split('_', maxsplit=1)[0]), cmd=' '.join(argv))
        return res['rc'], res['stdout'], res['stderr']

    def fail(self, argv, rc, out, err, what):
        self.fail_json(msg='%s failed (rc=%s): %s' % (what, rc, (err or out).strip()), cmd=' '.join(argv),
                       rc=rc, stdout=out, stderr=err)

    def node(self, name):
        argv = [self.scontrol, 'show', 'node', '-o', name]
        rc, out, err = self.call(argv)
        if rc != 0:
            if NOT_FOUND_RE.search(err + out):
                self.fail_json(msg='Slurm node %r not found (scontrol: %s); name must be a NodeName of '
                               'slurm.conf' % (name, (err or out).strip()), cmd=' '.join(argv), rc=rc)
            self.fail(argv, rc, out, err, 'scontrol show node')
        try:
            return parse_node(out, name)
        except SlurmParseError as e:
            self.fail_json(msg='cannot read node %r from scontrol: %s' % (name, e), cmd=' '.join(argv),
                           stdout=out)

    def jobs(self, name):
        argv = [self.squeue, '--noheader', '--nodelist=' + name, '--states=' + SQUEUE_STATES,
                '--format=' + SQUEUE_FORMAT]
        rc, out, err = self.call(argv)
        if rc != 0:
            self.fail(argv, rc, out, err, 'squeue')
        try:
            return parse_squeue(out)
        except SlurmParseError as e:
            self.fail_json(msg=str(e), cmd=' '.join(argv), stdout=out)

    def update(self, name, action, reason):
        argv = [self.scontrol, 'update', 'nodename=' + name, 'state=' + action.upper()]
        if action in ('drain', 'down'):
            argv.append('reason=' + reason)
        rc, out, err = self.call(argv)
        if rc != 0:
            self.fail(argv, rc, out, err, 'scontrol update')
        self.changed, self.action = True, action


def job_list(jobs):
    return ', '.join('%s (%s, user %s, %s)' % (j['job_id'], j['name'], j['user'], j['state']) for j in jobs)


def refuse_bad_input(module):
    """Fail naming the option before Slurm is asked; returns the node name (stripped)."""
    p = module.params
    ac.refuse(module, ac.nul_errors(p))
    name = p['name'].strip()
    if not name or name.startswith('-') or any(c in name for c in ',[] ') or any(c.isspace() for c in name):
        module.fail_json(msg='name must be one Slurm NodeName (no hostlist such as "gpu[01-04]" or "a,b", no '
                             'leading "-"), got %r' % p['name'])
    if p['state'] in ('drain', 'down') and not (p['reason'] or '').strip():
        module.fail_json(msg='reason must not be empty with state=%s (Slurm requires a reason)' % p['state'])
    errors = marker_errors(p['reason_prefix'], p['run_id'])
    errors += ac.timeout_range(p['timeout']) + ac.int_range('poll_interval', p['poll_interval'], 1, 3600, 'seconds')
    for opt in ('scontrol_path', 'squeue_path'):
        problems = ac.executable_errors(opt, p[opt])
        if not problems and p[opt] and os.sep in p[opt] and not os.path.exists(p[opt]):
            problems = ['%s %s does not exist; %s must be the path of an executable file' % (opt, p[opt], opt)]
        errors += problems
    ac.refuse(module, errors)
    return name


def wait_idle(slurm, name, jobs, timeout, poll_interval):
    """Poll squeue until no job holds the node or ``timeout`` seconds passed: ``(jobs, waited seconds)``."""
    start = time.time()
    while jobs and time.time() - start < timeout:
        time.sleep(min(poll_interval, max(1, timeout - (time.time() - start))))
        jobs = slurm.jobs(name)
    return jobs, round(time.time() - start, 1)


def manage(module, name):
    """Read, decide, act (not in check mode), wait: ``(failed, result)``, failed when the jobs outlived
    ``wait_idle``'s timeout (the result's ``msg`` says which). Other failures end the module here."""
    p = module.params
    slurm = Slurm(module)
    node = slurm.node(name)
    reason = None
    if p['state'] in ('drain', 'down'):
        reason = format_reason(p['reason'], p['run_id'], p['failure'], p['reason_prefix'])
    decision = plan(node, p['state'], reason, p['reason_prefix'], p['force'], p['passed'])
    before = {'state': node['state'], 'reason': node['reason']}
    foreign = is_foreign(node, p['reason_prefix'])
    marker = parse_reason(node['reason'], p['reason_prefix'])
    changed = decision['action'] is not None
    if decision['skipped_foreign'] or (decision['kept_failure'] and p['state'] == 'resume'):
        module.warn('slurm_node %s: %s' % (name, decision['message']))

    if changed and not module.check_mode:
        slurm.update(name, decision['action'], decision['reason'])
        node = slurm.node(name)

    jobs = slurm.jobs(name)
    waited = 0.0
    if p['wait_idle'] and not module.check_mode:
        jobs, waited = wait_idle(slurm, name, jobs, p['timeout'], p['poll_interval'])
        node = slurm.node(name)

    after = decision['after'] if module.check_mode else {'state': node['state'], 'reason': node['reason']}
    result = dict(
        changed=changed,
        name=name,
        state=node['state'],
        base_state=node['base_state'],
        flags=node['flags'],
        drained=node['drained'],
        draining=node['draining'],
        down=node['down'],
        not_responding=node['not_responding'],
        reason=node['reason'],
        reason_user=node['reason_user'],
        reason_time=node['reason_time'],
        foreign=foreign,
        marker=marker,
        kept_failure=decision['kept_failure'],
        action=decision['action'].upper() if changed else None,
        message=decision['message'],
        jobs=jobs,
        waited=waited,
        before=before,
    )
    if module._diff:
        result['diff'] = {'before': before, 'after': after,
                          'before_header': 'slurm node %s' % name, 'after_header': 'slurm node %s' % name}
    if p['wait_idle'] and jobs and not module.check_mode:
        result['msg'] = ('node %s still runs %d job(s) after %ss (timeout): %s; the node is left as it is (%s)'
                         % (name, len(jobs), p['timeout'], job_list(jobs), node['state']))
        return True, result
    return False, result
