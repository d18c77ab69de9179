# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Orchestration overhead of the nccl_bench module over running nccl-tests directly.

A replay program (tests/unit/fixtures/replay) stands in for all_reduce_perf: it sleeps a known time
(--sleep, default 2 s) and prints a recorded all_reduce_perf output (8 GPUs, 34 rows). Measured, median of
--runs runs each:

  direct      the replay program run directly (subprocess, output read)            = the tool's own time
  in-process  nccl_bench.main() in this interpreter (argv build, bounded run, parse, checks, JSON result)
  module      the module file run as its own Python process with an args file, as on a target
              (interpreter start-up + Ansible module_utils imports + the above; no AnsiballZ transfer)
  null        a module that only imports AnsibleModule and returns (the floor of any Ansible module process)
  ad-hoc      `ansible localhost -m gpufleet.cluster.nccl_bench` (controller start-up, AnsiballZ, fork),
              shown for reference only: it is a per-task constant of Ansible, not of this module.

Overhead = (time - direct) / direct. Target: <= 5 % of a 2 s run for nccl_bench's own work, i.e. in-process, and
module minus the null-module floor (the floor is Ansible's per-task constant, paid by every module).

Usage: .venv/bin/python benchmarks/bench_nccl_overhead.py [--runs N] [--sleep S] [--no-adhoc]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COLLECTIONS = REPO / '.ansible' / 'collections'
sys.path.insert(0, str(COLLECTIONS))
sys.path.insert(0, str(REPO / 'tests' / 'unit' / 'fixtures' / 'replay'))

from replay import make_replay  # noqa: E402  pylint: disable=wrong-import-position

RECORDING = 'nccl_tests/superbench-allreduce-8xA100-40GB.txt'


def corpus_file():
    env = os.environ.get('GPUFLEET_CORPUS')
    for cand in [Path(env)] if env else [REPO / '..' / 'shared' / 'corpus']:
        if (cand / RECORDING).is_file():
            return (cand / RECORDING).resolve()
    return REPO / 'tests' / 'unit' / 'fixtures' / 'corpus' / RECORDING  # bundled (MIT)


def timed(func, runs):
    times = []
    for dummy in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--sleep', type=float, default=2.0)
    parser.add_argument('--no-adhoc', action='store_true')
    opts = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix='gpufleet-bench-'))
    exe, dummy = make_replay(tmp, 'all_reduce_perf', {'stdout': str(corpus_file()), 'sleep': opts.sleep})
    module_args = {'executable': exe, 'min_busbw_gbytes_per_s': 200, 'gpus_per_process': 8}
    argv = [exe, '-b', '8', '-e', '8G', '-f', '2', '-g', '8', '-c', '1']

    def direct():
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        assert b'Avg bus bandwidth' in proc.stdout

    from ansible.module_utils.testing import patch_module_args
    from ansible_collections.gpufleet.cluster.plugins.modules import nccl_bench

    def in_process():
        buf = io.StringIO()
        with patch_module_args(module_args), redirect_stdout(buf):
            try:
                nccl_bench.main()
            except SystemExit:
                pass
        result = json.loads(buf.getvalue())
        assert 'failed' not in result and result['avg_busbw'] == 68.4048, result.get('msg')

    args_file = tmp / 'args.json'
    args_file.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': module_args}))
    module_path = COLLECTIONS / 'ansible_collections' / 'gpufleet' / 'cluster' / 'plugins' / 'modules' / 'nccl_bench.py'
    env = dict(os.environ, PYTHONPATH=str(COLLECTIONS))

    def module_process():
        proc = subprocess.run([sys.executable, str(module_path), str(args_file)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, check=False)
        result = json.loads(proc.stdout)
        assert 'failed' not in result and result['avg_busbw'] == 68.4048, proc.stdout[-500:]

    null_path = tmp / 'null_module.py'
    null_path.write_text('from ansible.module_utils.basic import AnsibleModule\n'
                         'AnsibleModule(argument_spec={}).exit_json(changed=False)\n')
    null_args = tmp / 'null_args.json'
    null_args.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': {}}))

    def null_module():
        proc = subprocess.run([sys.executable, str(null_path), str(null_args)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, check=True)
        assert b'"changed": false' in proc.stdout

    def adhoc():
        cmd = [str(Path(sys.executable).parent / 'ansible'), 'localhost', '-i', 'localhost,', '-c', 'local',
               '-e', 'ansible_python_interpreter=%s' % sys.executable, '-m', 'gpufleet.cluster.nccl_bench',
               '-a', json.dumps(module_args)]
        proc = subprocess.run(cmd, cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        assert proc.returncode == 0, proc.stdout[-500:]

    direct()  # warm caches
    in_process()
    rows = [('direct', timed(direct, opts.runs)), ('in-process', timed(in_process, opts.runs)),
            ('module', timed(module_process, opts.runs)), ('null', timed(null_module, opts.runs))]
    if not opts.no_adhoc:
        rows.append(('ad-hoc', timed(adhoc, max(2, opts.runs // 2))))
    base = rows[0][1][0]
    floor = rows[3][1][0]
    print('nccl_bench orchestration overhead, tool time %.1f s, %d runs (median / min / max seconds)'
          % (opts.sleep, opts.runs))
    for name, (med, low, high) in rows:
        if name == 'null':
            print('%-11s %7.3f  %7.3f  %7.3f   (floor of any module process: interpreter + AnsibleModule import)'
                  % (name, med, low, high))
            continue
        print('%-11s %7.3f  %7.3f  %7.3f   overhead %+7.1f ms  %+6.2f %%'
              % (name, med, low, high, (med - base) * 1000.0, (med - base) / base * 100.0))
    net = (rows[2][1][0] - floor - base) / base * 100.0
    in_proc = (rows[1][1][0] - base) / base * 100.0
    print('nccl_bench own overhead: in-process %+.2f %%, module process net of the null-module floor %+.2f %%'
          % (in_proc, net))
    worst = max(in_proc, net)
    print('target <= 5 %%: %s (%.2f %%)' % ('met' if worst <= 5.0 else 'NOT met', worst))
    return 0 if worst <= 5.0 else 1


if __name__ == '__main__':
    sys.exit(main())
