# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the ``dcgm_diag`` module: refuse bad input, run ``dcgmi diag`` through _runner (JSON first,
the text table when this dcgmi prints no JSON), parse it (module_utils/dcgmi.py) and judge every test.

``run(module)`` returns the module's result; its ``failures`` list is empty when the run passed (or in
check mode). Parsing lives in dcgmi.py, which starts no process; this file is the one that does.
Standard library apart from the AnsibleModule passed in (``params``, ``check_mode``, ``fail_json``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import bench_common as bc
from ansible_collections.gpufleet.cluster.plugins.module_utils.dcgmi import (
    DcgmiParseError,
    parse_json,
    parse_text,
    per_gpu,
)


_TEST_NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_.\- ]*$')


def level_errors(level):
    """``level`` is a run level 1 to 4 or a comma-separated list of test names."""
    allowed = ('level must be a run level 1, 2, 3 or 4, or comma-separated test names (for example '
               '"memory,pcie" or "targeted stress")')
    if level is None or '\x00' in level:
        return []  # a NUL is reported with the other options
    text = level.strip()
    if not text:
        return ['%s, got an empty string' % allowed]
    if text.isdigit():
        return [] if text in ('1', '2', '3', '4') else ['%s, got %r' % (allowed, level)]
    names = [n.strip() for n in text.split(',')]
    if not all(_TEST_NAME_RE.match(n) for n in names):
        return ['%s, got %r' % (allowed, level)]
    return []


def refuse_bad_input(module, params):
    """Fail naming the option before anything runs."""
    errors = ac.nul_errors(params) + level_errors(params['level']) + ac.timeout_range(params['timeout'])
    errors += ac.executable_errors('executable', params['executable'])
    for i, gpu in enumerate(params['gpus']):
        errors += ac.int_range('gpus[%d]' % i, gpu, 0, 1023)
    for i, item in enumerate(params['parameters']):
        if not item or '=' not in item or item.startswith('-'):
            errors.append('parameters[%d] must be test.parameter=value (for example '
                          'pcie.gpu_nvlinks_expected_up=18), got %r' % (i, item))
    errors += ac.word_errors('host', params['host'])
    ac.refuse(module, errors, failures=errors)


def build_argv(exe, params, json_output):
    argv = [exe, 'diag', '-r', params['level']]
    if params['gpus']:
        argv += ['-i', ','.join(str(g) for g in params['gpus'])]
    for item in params['parameters']:
        argv += ['-p', item]
    if params['host']:
        argv += ['--host', params['host']]
    if json_output:
        argv.append('-j')
    return argv


def _gpus_text(gpus):
    if gpus == 'all':
        return 'all GPUs'
    if not gpus:
        return 'the node'
    return ('GPU ' if len(gpus) == 1 else 'GPUs ') + ','.join(str(g) for g in gpus)


def evaluate(parsed, params, rung, cmd):
    failures = []
    failed, warned = [], []
    for test in parsed['tests']:
        label = '%s (%s)' % (test['name'], test['category'] or 'no category')
        texts = [m for m in test['messages'] if m['kind'] in ('Warning', 'Error')]
        bad = [r for r in test['results'] if r['status'] == 'Fail']
        errors = [m for m in test['messages'] if m['kind'] == 'Error']
        for res in bad:
            detail = '; '.join(m['text'] for m in texts if not m['gpus'] or not isinstance(res['gpus'], list)
                               or set(m['gpus']) & set(res['gpus'])) or 'no detail printed'
            failures.append('%s: %s Fail on %s: %s; cmd: %s' % (rung, label, _gpus_text(res['gpus']), detail, cmd))
        if not bad and errors:
            for msg in errors:
                failures.append('%s: %s Error on %s: %s; cmd: %s' % (rung, label, _gpus_text(msg['gpus']), msg['text'], cmd))
        if bad or errors:
            failed.append(test['name'])
        warns = [r for r in test['results'] if r['status'] == 'Warn']
        warn_msgs = [m for m in test['messages'] if m['kind'] == 'Warning']
        if warns or (warn_msgs and not bad):
            warned.append(test['name'])
            if params['fail_on_warn'] and not bad:
                where = [r['gpus'] for r in warns] or [m['gpus'] for m in warn_msgs]
                detail = '; '.join(m['text'] for m in warn_msgs) or 'no detail printed'
                failures.append('%s: %s Warn on %s (fail_on_warn): %s; cmd: %s'
                                % (rung, label, ', '.join(_gpus_text(w) for w in where), detail, cmd))
    return failures, failed, warned


def run(module):
    """Refuse bad input (fail_json), then run dcgmi diag as ``module.params`` ask (not in check mode) and
    return the result: ``failures`` (empty when every test passed) and ``msg``, plus the parsed tests."""
    params = module.params
    refuse_bad_input(module, params)
    params['level'] = params['level'].strip()
    rung = params['rung']
    exe = runner.find(module, params['executable'])
    fmt = params['output_format']
    argv = build_argv(exe or params['executable'], params, fmt != 'text')
    cmd = runner.cmdline(argv)
    early = bc.not_run(module.check_mode, exe, rung, params['executable'], 'dcgmi diag', cmd)
    if early:
        return early

    res = runner.run(argv, timeout=params['timeout'])
    if fmt == 'auto' and '{' not in res['stdout'] and not res['timed_out']:
        # this dcgmi printed no JSON (no -j support, or it refused the option): use the text table
        argv = build_argv(exe, params, False)
        res = runner.run(argv, timeout=params['timeout'])
        fmt = 'text'
    return judge(res, fmt, params)


def parse_output(stdout, fmt):
    """(parsed, parse_error) of dcgmi's output in ``fmt`` ('json' or 'text'); an output that does not parse
    gives an empty JSON result and the reason."""
    try:
        return (parse_text(stdout) if fmt == 'text' else parse_json(stdout)), None
    except DcgmiParseError as exc:
        return {'format': 'json', 'metadata': {}, 'tests': [], 'runtime_error': None, 'preamble': []}, str(exc)


def judge(res, fmt, params):
    """The module's result for one dcgmi diag run ``res`` (a _runner.run dict) whose output is ``fmt``."""
    rung = params['rung']
    parsed, parse_error = parse_output(res['stdout'], fmt)
    failures = []
    rc_msg = runner.rc_failure(rung, 'dcgmi diag -r %s' % params['level'], res, params['timeout'])
    if rc_msg:
        failures.append(rc_msg)
    if parse_error:
        failures.append('%s: %s; cmd: %s' % (rung, parse_error, res['cmd']))
    if parsed['runtime_error']:
        failures.append('%s: DCGM runtime error: %s; cmd: %s' % (rung, parsed['runtime_error'], res['cmd']))
    test_failures, failed, warned = evaluate(parsed, params, rung, res['cmd'])
    failures += test_failures
    if not parsed['tests'] and not parse_error:
        failures.append('%s: no test result parsed from dcgmi diag output (missing results fail); cmd: %s'
                        % (rung, res['cmd']))
    elif parsed.get('complete') is False:
        bc.check_output(failures, rung, 'dcgmi diag -r %s' % params['level'], res['cmd'], complete=False,
                        missing="the table's closing border does not follow the last test row")

    result = dict(changed=False, cmd=res['cmd'], rc=res['rc'], elapsed=res['elapsed'], failures=failures,
                  format=parsed['format'], metadata=parsed['metadata'], tests=parsed['tests'], gpus=per_gpu(parsed),
                  failed_tests=failed, warned_tests=warned, runtime_error=parsed['runtime_error'],
                  parse_error=parse_error, complete=parsed.get('complete'), stdout_lines=bc.tail(res['stdout']),
                  stderr_lines=bc.tail(res['stderr']))
    if failures:
        result['msg'] = '; '.join(failures)
    else:
        result['msg'] = '%s: %d tests, none failed%s' % (
            rung, len(parsed['tests']), (', warnings in %s' % ', '.join(warned)) if warned else '')
    return result
