# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the rdma_bw module: refuse bad input, build the perftest argv, run it as server, client or both
(the loopback server in the background, never outliving the call) through _runner, and report.

Parsing and the threshold checks are perftest.py's (``parse``, ``evaluate``: pure); this file runs processes.
Standard library (Python 3.8+) apart from the AnsibleModule passed to ``run``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import signal
import time

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import bench_common as bc
from ansible_collections.gpufleet.cluster.plugins.module_utils import perftest


def common_args(params, latency):
    """perftest options of both sides, from the module options."""
    args = []
    if params['device']:
        args += ['-d', params['device']]
    args += ['-i', str(params['ib_port'])]
    if params['gid_index'] is not None:
        args += ['-x', str(params['gid_index'])]
    if params['all_sizes']:
        args.append('-a')
    elif params['size'] is not None:
        args += ['-s', str(params['size'])]
    if params['duration'] is not None:
        args += ['-D', str(params['duration'])]
    elif params['iterations'] is not None:
        args += ['-n', str(params['iterations'])]
    if params['qps'] is not None:
        args += ['-q', str(params['qps'])]
    if params['port'] is not None:
        args += ['-p', str(params['port'])]
    if params['report_gbits'] and not latency:
        args.append('--report_gbits')
    if params['use_cuda'] is not None:
        args.append('--use_cuda=%d' % params['use_cuda'])
    return args + list(params['args'])


def run_loopback(server_argv, client_argv, params):
    """Server in the background, client against it; the server never outlives this call. A server that
    cannot be started at all (exec format error, bad interpreter) gives ``(None, OSError)``."""
    try:
        server = runner.start(server_argv)
    except OSError as exc:
        return None, exc
    try:
        deadline = time.monotonic() + params['server_start_delay']
        while time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        if server.poll() is not None:
            rc, out, err, timed_out = runner.finish(server, 5)
            client = dict(rc=None, stdout='', stderr='', timed_out=False, elapsed=0.0, cmd=runner.cmdline(client_argv),
                          not_run=True)
        else:
            client = runner.run(client_argv, timeout=params['timeout'])
            # a server whose client is gone finishes within seconds; do not wait the full timeout
            rc, out, err, timed_out = runner.finish(server, min(params['timeout'], 15))
    finally:
        if server.poll() is None:
            try:
                os.killpg(server.pid, signal.SIGKILL)
            except OSError:
                pass
            server.wait()
    server_res = dict(rc=rc, stdout=out, stderr=err, timed_out=timed_out, cmd=runner.cmdline(server_argv))
    return server_res, client


def bad_input(params, aliases):
    """Every message about bad input (naming the option), checked before anything runs; [] when all is well."""
    errors = ac.nul_errors(params) + ac.timeout_range(params['timeout'])
    errors += ac.executable_errors('executable', params['executable'])
    for name, low, high in (('ib_port', 1, 255), ('gid_index', 0, None), ('size', 1, None), ('duration', 1, None),
                            ('iterations', 1, None), ('qps', 1, None), ('port', 1, 65535), ('use_cuda', 0, None),
                            ('check_size', 1, None)):
        errors += ac.int_range(name, params[name], low, high)
    for name in ('min_gbits_per_s', 'min_msg_rate_mpps', 'max_latency_us'):
        errors += ac.min_number(ac.option_name(params, name, aliases), params[name])
    delay = params['server_start_delay']
    if delay is None or math.isnan(delay) or delay < 0 or delay > 60:
        errors.append('server_start_delay must be a number of seconds from 0 to 60, got %r' % (delay,))
    errors += ac.word_errors('server', params['server']) + ac.word_errors('device', params['device'])
    return errors


def _server_info(srv):
    sparsed = perftest.parse(srv['stdout'] + '\n' + srv['stderr'])
    return dict(cmd=srv['cmd'], rc=srv['rc'], timed_out=srv['timed_out'], rows=sparsed['rows'],
                problems=sparsed['problems'], stdout_lines=bc.tail(srv['stdout']), stderr_lines=bc.tail(srv['stderr']))


def _process_failures(rung, who, res, server_info, timeout):
    """Failures of the processes themselves: the side whose figures are returned, and the loopback server."""
    failures = []
    if res.get('not_run'):
        failures.append('%s: server side on %s exited before the client started (rc=%s: %s); cmd: %s'
                        % (rung, who, server_info['rc'],
                           (server_info['problems'] or server_info['stderr_lines'] or server_info['stdout_lines']
                            or ['no output'])[-1], server_info['cmd']))
    else:
        rc_msg = runner.rc_failure(rung, who, res, timeout)
        if rc_msg:
            failures.append(rc_msg)
    if server_info is not None and not res.get('not_run') and (server_info['timed_out'] or server_info['rc'] != 0):
        failures.append('%s: server side on %s %s; cmd: %s' % (
            rung, who, 'did not finish (killed)' if server_info['timed_out'] else 'exited with rc=%s' % server_info['rc'],
            server_info['cmd']))
    return failures


def run(module):
    """Refuse bad input, run the test (nothing in check mode) and check it. Returns the result: for
    ``fail_json`` when its ``failures`` list is not empty (``msg`` says why), else for ``exit_json``."""
    params = module.params
    role = params['role']
    errors = bad_input(params, module.aliases)
    if errors:
        return dict(msg='; '.join(errors), role=role, failures=errors)
    tool = os.path.basename(params['executable'])
    latency = perftest.is_latency_tool(params['executable'])
    rung = '%s (%s)' % (params['rung'], tool)
    exe = runner.find(module, params['executable'])
    common = [exe or params['executable']] + common_args(params, latency)
    client_argv = common + [params['server'] or '127.0.0.1']
    main_argv = common if role == 'server' else client_argv
    cmd = runner.cmdline(main_argv)
    early = bc.not_run(module.check_mode, exe, rung, params['executable'], tool, cmd, role=role)
    if early:
        return early

    server_info = None
    if role == 'loopback':
        srv, res = run_loopback(common, client_argv, params)
        if srv is None:
            return dict(msg='%s: executable %s could not be started (%s); executable must be a perftest program '
                            'this host can run; cmd: %s' % (rung, exe, res.strerror or res, runner.cmdline(common)),
                        cmd=runner.cmdline(common), role=role, failures=['executable could not be started'])
        server_info = _server_info(srv)
    else:
        res = runner.run(main_argv, timeout=params['timeout'])
    parsed = perftest.parse(res['stdout'] + '\n' + res['stderr'])
    who = perftest.subject(parsed, params)
    failures = _process_failures(rung, who, res, server_info, params['timeout'])
    more, summary = perftest.evaluate(parsed, params, rung, res['cmd'])
    failures += more
    if latency and params['min_gbits_per_s'] is not None:
        module.warn('%s is ignored by the latency test %s'
                    % (ac.option_name(params, 'min_gbits_per_s', module.aliases), tool))

    result = dict(changed=False, cmd=res['cmd'], rc=res['rc'], elapsed=res['elapsed'], role=role, failures=failures,
                  test=parsed['test'], kind=parsed['kind'], unit=parsed['unit'], settings=parsed['settings'],
                  local=parsed['local'], remote=parsed['remote'], rows=parsed['rows'], problems=parsed['problems'],
                  complete=parsed['complete'], malformed=parsed['malformed'],
                  warnings_printed=parsed['warnings'], stdout_lines=bc.tail(res['stdout']),
                  stderr_lines=bc.tail(res['stderr']))
    result.update(summary)
    if server_info is not None:
        result['server'] = server_info
    if failures:
        result['msg'] = '; '.join(failures)
        return result
    if latency:
        result['msg'] = '%s: latency at %s B on %s = %s us' % (rung, summary['bytes'], who, bc.fmt(summary['latency_us']))
    else:
        result['msg'] = '%s: average %s Gb/s, peak %s Gb/s, %s Mpps at %s B on %s' % (
            rung, bc.fmt(summary['avg_gbps']), bc.fmt(summary['peak_gbps']), bc.fmt(summary['msg_rate_mpps'], 6),
            summary['bytes'], who)
    return result
