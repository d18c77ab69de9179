#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_burn
short_description: Stress every GPU with gpu-burn and check the verdict
version_added: 0.1.0
description:
  - Runs gpu-burn (U(https://github.com/wilicc/gpu-burn)) for O(duration) seconds and returns, per GPU, the
    verdict (C(OK)/C(FAULTY)), error counts, Gflop/s and temperature of the last progress record (progress
    records rewritten with a carriage return and concatenated on one line are handled).
  - Fails on any C(FAULTY) GPU, on any error count above 0, on a worker that died, when the tool exits
    non-zero or times out, when it prints no C(Tested N GPUs) verdict, or when a threshold is missed or its
    figure is missing. Messages name the rung, the GPU (index, name, UUID), the figure and the command line.
  - An output that is cut off or garbled is never accepted, with or without thresholds - the module also fails
    when the verdict block lists fewer GPUs than C(Tested N GPUs), when no progress record was printed, when a
    GPU's Gflop/s or error count in the last progress record cannot be read, and when the C(nvidia-smi -L)
    banner lists more GPUs than gpu-burn burned unless C(-i N) in O(args) or E(CUDA_VISIBLE_DEVICES) chose them.
  - Never reports C(changed).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  executable:
    description: Name or path of the gpu-burn binary.
    type: str
    default: gpu_burn
  chdir:
    description:
      - Directory to run in; gpu-burn loads C(compare.ptx) from there. Default the directory of O(executable)
        when it is a path, else the current directory.
    type: path
  duration:
    description: Seconds to burn (the tool's last argument), from C(1) to C(2592000).
    type: int
    default: 60
  doubles:
    description: Use doubles (C(-d)).
    type: bool
    default: false
  tensor_cores:
    description: Use Tensor Cores (C(-tc)).
    type: bool
    default: false
  memory:
    description: Memory to use (C(-m)), for example C(90%) or MB.
    type: str
  args:
    description: Extra arguments placed before the duration.
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds before the run is killed; default O(duration) plus 300.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
  expected_gpus:
    description: Fail unless exactly this many GPUs were tested.
    type: int
  min_gflops:
    description: Minimum Gflop/s of every GPU in the last progress record.
    type: float
  max_temp_c:
    description: Maximum temperature (degrees C) any GPU may reach in any progress record.
    type: int
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: gpu_burn
notes:
  - Commands run as argument lists with C(LC_ALL=C).
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a
    O(duration) or O(timeout) out of range, O(expected_gpus) below 1, O(max_temp_c) outside 1-200, a negative
    O(min_gflops), a O(memory) that is neither MB nor a percentage, a O(chdir) that is not a directory, or an
    O(executable) path that is a directory or not executable.
seealso:
  - module: gpufleet.cluster.dcgm_diag
'''

EXAMPLES = r'''
- name: Burn all GPUs for 10 minutes with doubles and Tensor Cores
  gpufleet.cluster.gpu_burn:
    executable: /opt/gpu-burn/gpu_burn
    duration: 600
    doubles: true
    tensor_cores: true
    expected_gpus: 8
    max_temp_c: 87
'''

RETURN = r'''
skipped:
  description: C(true) in check mode (nothing was run).
  returned: in check mode
  type: bool
msg:
  description: Summary, or every failure joined with C(; ).
  returned: always
  type: str
failures:
  description: One message per failed check.
  returned: always
  type: list
  elements: str
cmd:
  description: The command line that ran (or would run).
  returned: always
  type: str
rc:
  description: Exit code (C(-9) after a timeout).
  returned: when run
  type: int
elapsed:
  description: Wall time in seconds.
  returned: when run
  type: float
gpus:
  description:
    - Per GPU C(index), C(name), C(uuid), C(verdict) (C(OK), C(FAULTY) or C(null) when missing), C(errors)
      (last progress record), C(max_errors), C(died), C(gflops) (last record), C(temp_c), C(max_temp_c),
      C(iterations), C(memory_used_mb); C(power_w) and C(max_power_w) when gpu-burn prints power.
    - Only the GPUs gpu-burn burned (with C(-i N) that is GPU N); C(name) and C(uuid) are C(null) when the
      C(nvidia-smi -L) banner cannot be matched to them (for example under C(CUDA_VISIBLE_DEVICES)).
  returned: when run
  type: list
  elements: dict
devices:
  description: The GPUs of the C(nvidia-smi -L) banner gpu-burn prints (C(index), C(name), C(uuid)), burned or not.
  returned: when run
  type: list
  elements: dict
  version_added: 0.2.0
tested:
  description: N of C(Tested N GPUs), C(null) when the verdict block is missing.
  returned: when run
  type: int
faulty:
  description: Indexes of GPUs with verdict C(FAULTY).
  returned: when run
  type: list
  elements: int
progress_records:
  description: Number of progress records parsed.
  returned: when run
  type: int
percent:
  description: Percentage of the last progress record.
  returned: when run
  type: float
problems:
  description: Lines reporting a failure of the tool itself.
  returned: when run
  type: list
  elements: str
stdout_lines:
  description: Last 40 lines of standard output.
  returned: when run
  type: list
  elements: str
stderr_lines:
  description: Last 40 lines of standard error.
  returned: when run
  type: list
  elements: str
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule

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


def main():
    module = AnsibleModule(
        argument_spec=dict(
            executable=dict(type='str', default='gpu_burn'),
            chdir=dict(type='path'),
            duration=dict(type='int', default=60),
            doubles=dict(type='bool', default=False),
            tensor_cores=dict(type='bool', default=False),
            memory=dict(type='str'),
            args=dict(type='list', elements='str', default=[]),
            timeout=dict(type='int'),
            expected_gpus=dict(type='int'),
            min_gflops=dict(type='float'),
            max_temp_c=dict(type='int'),
            rung=dict(type='str', default='gpu_burn'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    refuse_bad_input(module, params)
    rung = params['rung']
    exe = runner.find(module, params['executable'])
    argv = [exe or params['executable']]
    if params['doubles']:
        argv.append('-d')
    if params['tensor_cores']:
        argv.append('-tc')
    if params['memory']:
        argv += ['-m', params['memory']]
    argv += list(params['args']) + [str(params['duration'])]
    cmd = runner.cmdline(argv)
    if module.check_mode:
        module.exit_json(changed=False, skipped=True, cmd=cmd, failures=[],
                         msg='skipped: check mode, gpu_burn not run')
    if exe is None:
        module.fail_json(msg='%s: %s not found on PATH; cmd: %s' % (rung, params['executable'], cmd), cmd=cmd,
                         failures=['executable not found'])
    chdir = params['chdir'] or (os.path.dirname(exe) if os.sep in params['executable'] else None)
    timeout = params['timeout'] if params['timeout'] is not None else params['duration'] + 300
    res = runner.run(argv, timeout=timeout, cwd=chdir)
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
        module.fail_json(msg='; '.join(failures), **result)
    result['msg'] = '%s: %d GPUs OK, min %s Gflop/s, max %s C' % (
        rung, len(parsed['gpus']), bc.fmt(min(g['gflops'] for g in parsed['gpus'] if g['gflops'] is not None)
                                          if any(g['gflops'] is not None for g in parsed['gpus']) else None),
        bc.fmt(max([g['max_temp_c'] for g in parsed['gpus'] if g['max_temp_c'] is not None] or [0])))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
