# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the nccl_bench module: refuse bad input, build the nccl-tests argv (alone, or under mpirun or
srun), run it through _runner and report.

Parsing and the threshold checks are nccl_tests.py's (``parse``, ``evaluate``: pure); this file runs processes.
Standard library (Python 3.8+) apart from the AnsibleModule passed to ``run``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import bench_common as bc
from ansible_collections.gpufleet.cluster.plugins.module_utils import nccl_tests


def build_argv(params, exe, launcher_exe):
    """The nccl-tests command line, behind ``mpirun`` (``-np``, ``-H host:slots``, ``-x`` for LC_ALL and ``env``)
    or ``srun`` (``--ntasks-per-node``, ``-N``/``-w``) as the ``launcher`` option says."""
    tool = [exe, '-b', params['begin_size'], '-e', params['end_size'], '-f', str(params['step_factor']),
            '-g', str(params['gpus_per_process']), '-c', '1' if params['check'] else '0']
    if params['iterations'] is not None:
        tool += ['-n', str(params['iterations'])]
    if params['warmup_iterations'] is not None:
        tool += ['-w', str(params['warmup_iterations'])]
    tool += list(params['args'])
    launcher = params['launcher']
    hosts = params['hosts']
    per_host = params['ranks_per_host']
    if launcher == 'mpirun':
        argv = [launcher_exe, '-np', str(per_host * max(1, len(hosts)))]
        if hosts:
            argv += ['-H', ','.join('%s:%d' % (h, per_host) for h in hosts)]
        argv += ['-x', 'LC_ALL=C']
        for key in sorted(params['env']):
            argv += ['-x', '%s=%s' % (key, params['env'][key])]
        return argv + list(params['launcher_args']) + tool
    if launcher == 'srun':
        argv = [launcher_exe, '--export=ALL', '--ntasks-per-node=%d' % per_host]
        if hosts:
            argv += ['-N', str(len(hosts)), '-w', ','.join(hosts)]
        return argv + list(params['launcher_args']) + tool
    return tool


def bad_input(params, aliases):
    """Every message about bad input (naming the option), checked before anything runs; [] when all is well."""
    errors = ac.nul_errors(params, skip=('env',)) + ac.env_errors(params['env'])
    errors += ac.timeout_range(params['timeout'])
    errors += ac.executable_errors('executable', params['executable'])
    errors += ac.executable_errors('launcher_executable', params['launcher_executable'])
    for name, low in (('ranks_per_host', 1), ('step_factor', 1), ('gpus_per_process', 1), ('iterations', 1),
                      ('warmup_iterations', 0), ('expected_ranks', 1)):
        errors += ac.int_range(name, params[name], low)
    for name in ('min_busbw_gbytes_per_s', 'min_avg_busbw'):
        errors += ac.min_number(ac.option_name(params, name, aliases), params[name])
    for i, host in enumerate(params['hosts']):
        errors += ac.word_errors('hosts[%d]' % i, host)
        if ',' in host:
            errors.append('hosts[%d] must be one host name without ",", got %r' % (i, host))
    sizes = {}
    for name in ('begin_size', 'end_size', 'check_size'):
        try:
            sizes[name] = bc.parse_size(params[name])
        except ValueError as exc:
            errors.append('%s: %s' % (name, exc))
    if sizes.get('begin_size') is not None and sizes.get('end_size') is not None \
            and sizes['begin_size'] > sizes['end_size']:
        errors.append('begin_size (%s) must not be larger than end_size (%s)' % (params['begin_size'], params['end_size']))
    return errors


def run(module):
    """Refuse bad input, run the benchmark (nothing in check mode) and check it. Returns the result: for
    ``fail_json`` when its ``failures`` list is not empty (``msg`` says why), else for ``exit_json``."""
    params = module.params
    errors = bad_input(params, module.aliases)
    if errors:
        return dict(msg='; '.join(errors), failures=errors)
    params['env'] = dict((str(k), str(v)) for k, v in params['env'].items())

    tool_name = os.path.basename(params['executable'])
    rung = '%s (%s)' % (params['rung'], tool_name)
    exe = runner.find(module, params['executable'])
    launcher_exe = None
    if params['launcher'] != 'none':
        launcher = params['launcher_executable'] or params['launcher']
        launcher_exe = runner.find(module, launcher)
        if launcher_exe is None and not module.check_mode:
            return dict(msg='%s: launcher %s not found' % (rung, launcher), failures=['launcher not found'])
        launcher_exe = launcher_exe or launcher
        exe = exe or params['executable']
    argv = build_argv(params, exe or params['executable'], launcher_exe)
    cmd = runner.cmdline(argv)
    early = bc.not_run(module.check_mode, exe, rung, params['executable'], tool_name, cmd)
    if early:
        return early

    env_update = dict(params['env']) if params['launcher'] != 'mpirun' else {}
    res = runner.run(argv, timeout=params['timeout'], env_update=env_update)
    parsed = nccl_tests.parse(res['stdout'])
    failures, summary = nccl_tests.evaluate(parsed, params, rung, res['cmd'])
    who = nccl_tests.subject(params, summary, parsed['ranks'])
    rc_msg = runner.rc_failure(rung, who, res, params['timeout'])
    if rc_msg:
        failures.insert(0, rc_msg)

    result = dict(changed=False, cmd=res['cmd'], rc=res['rc'], elapsed=res['elapsed'], failures=failures,
                  rows=parsed['rows'], params=parsed['params'], layout=parsed['layout'], ranks=parsed['ranks'],
                  out_of_bounds=parsed['out_of_bounds'], out_of_bounds_status=parsed['out_of_bounds_status'],
                  nccl_warnings=parsed['nccl_warnings'], errors=parsed['errors'], malformed=parsed['malformed'],
                  complete=parsed['complete'], error_exceeded=parsed['error_exceeded'],
                  avg_busbw_status=parsed['avg_busbw_status'], runs=parsed['runs'],
                  stdout_lines=bc.tail(res['stdout']), stderr_lines=bc.tail(res['stderr']))
    result.update(summary)
    if failures:
        result['msg'] = '; '.join(failures)
        return result
    result['msg'] = '%s: %d rows on %s, busbw at %s B = %s GB/s, avg busbw %s GB/s (%s)' % (
        rung, len(parsed['rows']), who, summary['check_size'], bc.fmt(summary['busbw_at_check']),
        bc.fmt(summary['avg_busbw']), summary['avg_busbw_source'])
    return result
