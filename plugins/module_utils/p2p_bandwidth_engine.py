# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the ``p2p_bandwidth`` module: refuse bad input, run p2pBandwidthLatencyTest or nvbandwidth
through _runner, parse the GPU matrices (module_utils/p2p_bandwidth.py) and judge every GPU pair.

``run(module)`` returns the module's result; its ``failures`` list is empty when the run passed (or in
check mode). Parsing lives in p2p_bandwidth.py, which starts no process; this file is the one that does.
Standard library apart from the AnsibleModule passed in (``params``, ``aliases``, ``check_mode``, ``fail_json``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import bench_common as bc
from ansible_collections.gpufleet.cluster.plugins.module_utils.p2p_bandwidth import (
    above,
    below,
    missing_pairs,
    not_applicable_pairs,
    parse_nvbandwidth,
    parse_p2p,
)

MAX_LISTED = 12


def select(parsed, tool):
    """Matrices to check: name -> 'uni' | 'bidir' | 'latency'."""
    out = {}
    if tool == 'nvbandwidth':
        for name, matrix in parsed['matrices'].items():
            if matrix.get('row_kind') != 'GPU' or matrix.get('column_kind') != 'GPU':
                continue
            if matrix.get('direction') != '<->':
                out[name] = 'uni'
            elif matrix.get('part') in (None, 'total'):  # Read1/Read2 (Write1/Write2): one way of a bidir run
                out[name] = 'bidir'
        return out
    for name, kind in (('unidirectional_p2p_enabled', 'uni'), ('bidirectional_p2p_enabled', 'bidir'),
                       ('latency_p2p_enabled', 'latency'), ('unidirectional_p2p_enabled_reads', 'uni'),
                       ('latency_p2p_enabled_reads', 'latency')):
        if name in parsed['matrices']:
            out[name] = kind
    return out


# Every p2pBandwidthLatencyTest run prints these, in this order; the CPU halves of the latency matrices come
# with the versions that print them for P2P=Disabled, the (P2P Reads) matrices with --p2p_read.
_P2P_FULL = ('unidirectional_p2p_disabled', 'unidirectional_p2p_enabled', 'bidirectional_p2p_disabled',
             'bidirectional_p2p_enabled', 'latency_p2p_disabled', 'latency_p2p_enabled')
_P2P_READS = ('unidirectional_p2p_enabled_reads', 'latency_p2p_enabled_reads')


def expected_matrices(parsed, params):
    """Matrices a whole run of the tool prints (empty when that cannot be known)."""
    matrices = parsed['matrices']
    if params['tool'] == 'nvbandwidth':
        return list(params['testcases'])
    want = list(_P2P_FULL)
    if any(name in matrices for name in _P2P_READS) or any('p2p_read' in str(a) for a in params['args']):
        want += list(_P2P_READS)
    if 'latency_p2p_disabled_cpu' in matrices:
        want += [name + '_cpu' for name in want if name.startswith('latency_') and name != 'latency_p2p_disabled']
        want.append('latency_p2p_disabled_cpu')
    return want


def check_whole(parsed, params, rung, cmd, checked):
    """Failures for a cut or garbled output: matrices a whole run prints that are absent, pairs missing from
    them, and malformed matrix rows."""
    failures = []
    tool = params['tool']
    wanted = expected_matrices(parsed, params)
    if parsed['matrices'] or checked:
        absent = [name for name in wanted if not _matrices_of(parsed, name)]
        if absent:
            failures.append('%s: output is incomplete: %s not printed (cut off or garbled output is not accepted); '
                            'cmd: %s' % (rung, ', '.join(absent), cmd))
    names = [key for name in wanted for key in _matrices_of(parsed, name)]
    if tool == 'nvbandwidth':  # the one-way parts of a bidirectional run are not checked, but must be whole
        names += [key for key, matrix in sorted(parsed['matrices'].items())
                  if matrix.get('part') and matrix.get('row_kind') == 'GPU' and matrix.get('column_kind') == 'GPU']
    for name in sorted(set(names), key=names.index):
        matrix = parsed['matrices'].get(name)
        if matrix is None or name in checked:
            continue  # absent (above) or checked with the thresholds
        missing = missing_pairs(matrix)
        if missing:
            failures.append('%s: %s is missing figures for %d pair(s): %s; cmd: %s' % (
                rung, matrix['title'], len(missing),
                ', '.join(_pair(matrix, s, d, tool) for s, d in missing[:MAX_LISTED])
                + (', ...' if len(missing) > MAX_LISTED else ''), cmd))
    bc.check_output(failures, rung, 'the GPU matrices', cmd, malformed=parsed.get('malformed'))
    return failures


def _matrices_of(parsed, name):
    """Keys of the matrices a test case (nvbandwidth: one, or the three parts of a bidirectional one) or a
    p2pBandwidthLatencyTest matrix name stands for."""
    return [key for key, matrix in parsed['matrices'].items() if key == name or matrix.get('testcase') == name]


def _pair(matrix, src, dst, tool):
    arrow = matrix.get('direction', '->') if tool == 'nvbandwidth' else '->'
    return 'GPU %s %s GPU %s' % (src, arrow, dst)


def evaluate(parsed, params, rung, cmd):
    tool = params['tool']
    failures = []
    checked = select(parsed, tool)
    worst = {}
    limits = {'uni': params['min_gbytes_per_s'], 'bidir': params['min_bidir_gbytes_per_s'],
              'latency': params['max_latency_us']}
    wanted = [k for k, v in limits.items() if v is not None]
    for kind in wanted:
        if not any(v == kind for v in checked.values()):
            failures.append('%s: no %s matrix printed, threshold %s cannot be checked (missing figures fail); cmd: %s'
                            % (rung, {'uni': 'unidirectional GPU-GPU bandwidth', 'bidir': 'bidirectional GPU-GPU '
                                      'bandwidth', 'latency': 'P2P=Enabled latency'}[kind], limits[kind], cmd))
    if not checked and not wanted:
        failures.append('%s: no GPU-to-GPU matrix parsed from the output (missing figures fail); cmd: %s' % (rung, cmd))
    for name, kind in sorted(checked.items()):
        matrix = parsed['matrices'][name]
        unit = matrix['unit'] or ''
        values = [(matrix['values'][s][d], s, d) for s in matrix['rows'] for d in matrix['values'][s]
                  if s != d and matrix['values'][s][d] is not None]
        if values:
            value, src, dst = (max if kind == 'latency' else min)(values)
            worst[name] = {'pair': _pair(matrix, src, dst, tool), 'value': value}
        missing = missing_pairs(matrix)
        if missing:
            failures.append('%s: %s is missing figures for %d pair(s): %s; cmd: %s' % (
                rung, matrix['title'], len(missing), ', '.join(_pair(matrix, s, d, tool) for s, d in missing[:MAX_LISTED])
                + (', ...' if len(missing) > MAX_LISTED else ''), cmd))
        threshold = limits[kind]
        if threshold is None:
            continue
        bad = above(matrix, threshold) if kind == 'latency' else below(matrix, threshold)
        if bad:
            rel = '>' if kind == 'latency' else '<'
            failures.append('%s: %s: %s %s threshold %s %s; cmd: %s' % (
                rung, matrix['title'], ', '.join('%s = %.2f %s' % (_pair(matrix, s, d, tool), v, unit)
                                                 for s, d, v in bad[:MAX_LISTED])
                + (', ... (%d pairs)' % len(bad) if len(bad) > MAX_LISTED else ''), rel, bc.fmt(threshold), unit, cmd))
    if tool == 'p2pBandwidthLatencyTest' and params['require_p2p']:
        denied = ['GPU %s -> GPU %s' % (s, d) for s in sorted(parsed['peer_access'])
                  for d, ok in sorted(parsed['peer_access'][s].items()) if not ok]
        if denied:
            failures.append('%s: peer access not available (CANNOT Access Peer) for %s; cmd: %s'
                            % (rung, ', '.join(denied[:MAX_LISTED]), cmd))
    if tool == 'nvbandwidth' and params['require_p2p']:
        for name in sorted(checked):
            matrix = parsed['matrices'][name]
            pairs = not_applicable_pairs(matrix)
            if pairs:
                failures.append('%s: %s: N/A (no peer access) for %d pair(s): %s (require_p2p); cmd: %s' % (
                    rung, matrix['title'], len(pairs), ', '.join(_pair(matrix, s, d, tool) for s, d in pairs[:MAX_LISTED])
                    + (', ...' if len(pairs) > MAX_LISTED else ''), cmd))
    failures += check_whole(parsed, params, rung, cmd, checked)
    if params['expected_gpus'] is not None:
        for name in sorted(checked):
            count = len(parsed['matrices'][name]['columns'])
            if count != params['expected_gpus']:
                failures.append('%s: %s has %d GPUs, expected %d; cmd: %s'
                                % (rung, parsed['matrices'][name]['title'], count, params['expected_gpus'], cmd))
    return failures, checked, worst


def refuse_bad_input(module, params):
    """Fail naming the option before anything runs."""
    errors = ac.nul_errors(params) + ac.timeout_range(params['timeout'])
    errors += ac.executable_errors('executable', params['executable'])
    errors += ac.int_range('expected_gpus', params['expected_gpus'], 1)
    for name in ('min_gbytes_per_s', 'min_bidir_gbytes_per_s', 'max_latency_us'):
        errors += ac.min_number(ac.option_name(params, name, module.aliases), params[name])
    for i, case in enumerate(params['testcases']):
        errors += ac.word_errors('testcases[%d]' % i, case)
    ac.refuse(module, errors, tool=params['tool'], failures=errors)


def build_argv(exe, params):
    argv = [exe]
    if params['tool'] == 'nvbandwidth':
        for case in params['testcases']:
            argv += ['-t', case]
    return argv + list(params['args'])


def run(module):
    """Refuse bad input (fail_json), then run the tool as ``module.params`` ask (not in check mode) and
    return the result: ``failures`` (empty when every pair passed) and ``msg``, plus the parsed matrices."""
    params = module.params
    refuse_bad_input(module, params)
    tool = params['tool']
    rung = '%s (%s)' % (params['rung'], tool)
    name = params['executable'] or tool
    exe = runner.find(module, name)
    argv = build_argv(exe or name, params)
    cmd = runner.cmdline(argv)
    early = bc.not_run(module.check_mode, exe, rung, name, tool, cmd, tool=tool)
    if early:
        return early
    return judge(runner.run(argv, timeout=params['timeout']), params)


def judge(res, params):
    """The module's result for one run ``res`` (a _runner.run dict) of ``params['tool']``."""
    tool = params['tool']
    rung = '%s (%s)' % (params['rung'], tool)
    parsed = (parse_nvbandwidth if tool == 'nvbandwidth' else parse_p2p)(res['stdout'] + '\n' + res['stderr'])
    failures = []
    rc_msg = runner.rc_failure(rung, tool, res, params['timeout'])
    if rc_msg:
        failures.append(rc_msg)
    more, checked, worst = evaluate(parsed, params, rung, res['cmd'])
    failures += more
    result = dict(changed=False, cmd=res['cmd'], rc=res['rc'], elapsed=res['elapsed'], tool=tool, failures=failures,
                  devices=parsed['devices'], peer_access=parsed['peer_access'], matrices=parsed['matrices'],
                  sums=parsed.get('sums', {}), checked=checked, worst_pairs=worst, problems=parsed['problems'],
                  malformed=parsed.get('malformed', []),
                  stdout_lines=bc.tail(res['stdout']), stderr_lines=bc.tail(res['stderr']))
    if failures:
        result['msg'] = '; '.join(failures)
        return result
    result['msg'] = '%s: %s' % (rung, ', '.join('%s worst %s = %s' % (n, w['pair'], bc.fmt(w['value']))
                                                for n, w in sorted(worst.items())) or 'no pairs')
    return result
