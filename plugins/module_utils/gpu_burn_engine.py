# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the ``gpu_burn`` module: refuse bad input, run gpu-burn through _runner, parse its output
(module_utils/gpu_burn.py) and judge every GPU.

``run(module)`` returns the module's result; its ``failures`` list is empty when the run passed (or in
check mode). Parsing lives in gpu_burn.py, which starts no process; this file is the one that does.
Standard library apart from the AnsibleModule passed in (``params``, ``check_mode``, ``fail_json``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import bench_common as bc
from ansible_collections.gpufleet.cluster.plugins.module_utils.gpu_burn import parse


def _gpu_name(gpu):
    return 'GPU %d (%s, %s)' % (gpu['index'], gpu['name'] or 'unknown', gpu['uuid'] or 'no UUID')


def _selects_gpus(params, environ):
    """True when the run burns a chosen subset of the node's GPUs (gpu-burn -i N, or CUDA_VISIBLE_DEVICES)."""
    return any(str(a).startswith('-i') for a in params['args']) or bool(environ.get('CUDA_VISIBLE_DEVICES'))


def evaluate(parsed, params, rung, cmd, environ=None):
    failures = []
    gpus = parsed['gpus']
    tested = parsed['tested']
    if not gpus:
        failures.append('%s: no GPU in the output (missing figures fail); cmd: %s' % (rung, cmd))
    if tested is None:
        failures.append('%s: no "Tested N GPUs" verdict printed (tool died or was cut off); cmd: %s' % (rung, cmd))
    else:
        verdicts = [g['index'] for g in gpus if g['verdict'] is not None]
        if len(verdicts) != tested:
            failures.append('%s: "Tested %d GPUs" but %d verdict line(s) read (verdict block cut off or garbled; '
                            'an incomplete output is not accepted); cmd: %s' % (rung, tested, len(verdicts), cmd))
    burned = tested if tested is not None else len(gpus)
    devices = parsed.get('devices') or []
    if gpus and len(devices) > burned and not _selects_gpus(params, os.environ if environ is None else environ):
        failures.append('%s: nvidia-smi lists %d GPUs but gpu-burn burned %d (%s not burned; no -i or '
                        'CUDA_VISIBLE_DEVICES chose them); cmd: %s'
                        % (rung, len(devices), burned,
                           ', '.join('GPU %d' % d['index'] for d in devices
                                     if d['index'] not in [g['index'] for g in gpus]) or 'some', cmd))
    if gpus and not parsed['progress_records']:
        failures.append('%s: no progress record printed (no Gflop/s or error count figure; missing figures fail); '
                        'cmd: %s' % (rung, cmd))
    for gpu in gpus:
        who = _gpu_name(gpu)
        if gpu['verdict'] == 'FAULTY':
            failures.append('%s: %s FAULTY (errors %s, max %s); cmd: %s'
                            % (rung, who, bc.fmt(gpu['errors']), bc.fmt(gpu['max_errors']), cmd))
        elif gpu['verdict'] is None and parsed['tested'] is not None:
            failures.append('%s: %s has no verdict; cmd: %s' % (rung, who, cmd))
        if gpu['max_errors'] and gpu['verdict'] != 'FAULTY':
            failures.append('%s: %s errors = %d > threshold 0; cmd: %s' % (rung, who, gpu['max_errors'], cmd))
        if gpu['died']:
            failures.append('%s: %s worker DIED; cmd: %s' % (rung, who, cmd))
        if parsed['progress_records'] and (gpu['gflops'] is None or gpu['errors'] is None):
            failures.append('%s: %s has no readable %s in the last progress record (garbled or cut off; '
                            'missing figures fail); cmd: %s'
                            % (rung, who, ' and '.join(n for n, v in (('Gflop/s', gpu['gflops']),
                                                                      ('error count', gpu['errors'])) if v is None), cmd))
        bc.check_min(failures, rung, who, 'Gflop/s', gpu['gflops'], params['min_gflops'], 'Gflop/s', cmd)
        bc.check_max(failures, rung, who, 'max temperature', gpu['max_temp_c'], params['max_temp_c'], 'C', cmd)
    if params['expected_gpus'] is not None and (parsed['tested'] if parsed['tested'] is not None else len(gpus)) \
            != params['expected_gpus']:
        failures.append('%s: %s GPUs tested, expected %d; cmd: %s'
                        % (rung, bc.fmt(parsed['tested']), params['expected_gpus'], cmd))
    return failures


def refuse_bad_input(module, params):
    """Fail naming the option before anything runs."""
    errors = ac.nul_errors(params) + ac.timeout_range(params['timeout'])
    errors += ac.int_range('duration', params['duration'], 1, ac.MAX_TIMEOUT, 'seconds')
    errors += ac.executable_errors('executable', params['executable'])
    errors += ac.int_range('expected_gpus', params['expected_gpus'], 1)
    errors += ac.int_range('max_temp_c', params['max_temp_c'], 1, 200, 'degrees C')
    errors += ac.min_number('min_gflops', params['min_gflops'])
    chdir = params['chdir']
    if chdir is not None and '\x00' not in chdir and not os.path.isdir(chdir):
        errors.append('chdir must be an existing directory, got %r' % chdir)
    if params['memory'] is not None and '\x00' not in params['memory'] \
            and not re.match(r'^[0-9]+(\.[0-9]+)?%?$', params['memory'].strip()):
        errors.append('memory must be MB (for example 8000) or a percentage (for example 90%%), got %r'
                      % params['memory'])
    ac.refuse(module, errors, failures=errors)


def build_argv(exe, params):
    argv = [exe]
    if params['doubles']:
        argv.append('-d')
    if params['tensor_cores']:
        argv.append('-tc')
    if params['memory']:
        argv += ['-m', params['memory']]
    return argv + list(params['args']) + [str(params['duration'])]


def run(module):
    """Refuse bad input (fail_json), then run gpu-burn as ``module.params`` ask (not in check mode) and
    return the result: ``failures`` (empty when every GPU passed) and ``msg``, plus the parsed figures."""
    params = module.params
    refuse_bad_input(module, params)
    rung = params['rung']
    exe = runner.find(module, params['executable'])
    argv = build_argv(exe or params['executable'], params)
    cmd = runner.cmdline(argv)
    early = bc.not_run(module.check_mode, exe, rung, params['executable'], 'gpu_burn', cmd)
    if early:
        return early
    chdir = params['chdir'] or (os.path.dirname(exe) if os.sep in params['executable'] else None)
    timeout = params['timeout'] if params['timeout'] is not None else params['duration'] + 300
    return judge(runner.run(argv, timeout=timeout, cwd=chdir), params, timeout)


def judge(res, params, timeout):
    """The module's result for one gpu-burn run ``res`` (a _runner.run dict) bounded by ``timeout``."""
    rung = params['rung']
    parsed = parse(res['stdout'] + '\n' + res['stderr'])
    failures = []
    rc_msg = runner.rc_failure(rung, 'gpu_burn', res, timeout)
    if rc_msg:
        failures.append(rc_msg)
    failures += evaluate(parsed, params, rung, res['cmd'])
    result = dict(changed=False, cmd=res['cmd'], rc=res['rc'], elapsed=res['elapsed'], failures=failures,
                  gpus=parsed['gpus'], devices=parsed['devices'], tested=parsed['tested'],
                  progress_records=parsed['progress_records'],
                  percent=parsed['percent'], problems=parsed['problems'],
                  faulty=[g['index'] for g in parsed['gpus'] if g['verdict'] == 'FAULTY'],
                  stdout_lines=bc.tail(res['stdout']), stderr_lines=bc.tail(res['stderr']))
    if failures:
        result['msg'] = '; '.join(failures)
        return result
    result['msg'] = '%s: %d GPUs OK, min %s Gflop/s, max %s C' % (
        rung, len(parsed['gpus']), bc.fmt(min(g['gflops'] for g in parsed['gpus'] if g['gflops'] is not None)
                                          if any(g['gflops'] is not None for g in parsed['gpus']) else None),
        bc.fmt(max([g['max_temp_c'] for g in parsed['gpus'] if g['max_temp_c'] is not None] or [0])))
    return result
