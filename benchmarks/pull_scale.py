# -*- coding: utf-8 -*-
"""Pull mode at fleet scale (issue #17 part 2): what one node pays, what the controller pays for 10,000 results, and a
projection of a 10,000-node pull drift check's wall.

1. Per node: wall and CPU of gpufleet-pull's drift check, as the runner measured them on the node (its result's
   ``runner``: wall, CPU of its children, set-up = venv + collection install, the playbook) - from REAL results of
   lab nodes (``--results``: default tests/fixtures/pull/recorded, the fleet tier's pull step).
2. Ingest: 10,000 results PUT one after another to the lab's HTTP endpoint (tests/fleet/pull-receiver.py on
   127.0.0.1): wall (an upper bound - nodes deliver in parallel over the node's run).
3. Aggregation: those 10,000 results - the real ones copied with varied node names (gpu00001...), every 97th
   node's drift dropped and one node left out - merged by the real playbooks/pull_report.yml (the lookup, fleet_compare
   over 9,999 nodes, the report filter, drift.json and drift.md): wall and peak memory (RSS of the whole
   ansible-playbook process tree, sampled every 50 ms, and the largest single process). The run must exit 2 and its
   report must hold 10,000 nodes and name the left-out node: a figure from a broken run is no figure.
4. Projection of a 10,000-node pull drift check: dispatch (an ASSUMPTION, --dispatch-s: Slurm's srun fan-out to
   10,000 nodes is not measurable here) + the slowest node's run (measured, warm and cold) + ingest + aggregation.

Usage: .venv/bin/python benchmarks/pull_scale.py [--results DIR] [--nodes 10000] [--dispatch-s 60]
Exit status 1 when a figure is missing or a limit is exceeded (aggregation < 30 s and < 1 GiB; projection < 10 min).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def tree_rss_kib(root_pid):
    """RSS (KiB) of a process and its descendants, and the largest single one, from /proc."""
    children, rss = {}, {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                fields = f.read().rsplit(')', 1)[1].split()
            with open('/proc/%s/status' % d) as f:
                line = [x for x in f if x.startswith('VmRSS:')]
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(d))
        rss[int(d)] = int(line[0].split()[1]) if line else 0
    total, biggest, todo = 0, 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        biggest = max(biggest, rss.get(pid, 0))
        todo += children.get(pid, [])
    return total, biggest


def load_real(results_dir):
    real = []
    for p in sorted(Path(results_dir).glob('*.json')):
        data = json.loads(p.read_text())
        if data.get('format') == 'gpufleet.pull-result/1' and isinstance(data.get('check'), dict):
            real.append(data)
    return real


def generate(real, n, out_dir, missing):
    """n results from the real ones with varied names; every 97th without its drift; ``missing`` left out."""
    names = ['gpu%05d' % i for i in range(1, n + 1)]
    for i, name in enumerate(names):
        if name == missing:
            continue
        r = json.loads(json.dumps(real[i % len(real)]))
        r['node'] = name
        r['run_id'] = 'bench'
        if i % 97 == 0:
            r['settings'], r['drift'], r['status'] = [], bool(r['check']['messages']), 'clean'
        (out_dir / ('%s.json' % name)).write_text(json.dumps(r, indent=1, sort_keys=True) + '\n')
    return names


def ingest(real, n, tmp):
    recv_dir = tmp / 'received'
    recv_dir.mkdir()
    port_file = tmp / 'port'
    proc = subprocess.Popen([sys.executable, str(REPO / 'tests' / 'fleet' / 'pull-receiver.py'), '--bind', '127.0.0.1',
                             '--dir', str(recv_dir), '--port-file', str(port_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _attempt in range(100):
            if port_file.exists():
                break
            time.sleep(0.05)
        url = 'http://127.0.0.1:%s/pull/' % port_file.read_text().strip()
        body = json.dumps(real[0]).encode()
        t0 = time.time()
        for i in range(n):
            req = urllib.request.Request('%sgpu%05d.json' % (url, i + 1), data=body, method='PUT',
                                         headers={'Content-Type': 'application/json'})
            urllib.request.urlopen(req, timeout=30).close()
        wall = time.time() - t0
    finally:
        proc.terminate()
        proc.wait()
    got = len(list(recv_dir.glob('*.json')))
    return wall, got, len(body)


def aggregate(results, names, tmp):
    nodes_file = tmp / 'nodes.json'
    nodes_file.write_text(json.dumps({'pull_report_nodes': names}))
    report_dir = tmp / 'report'
    env = dict(os.environ, ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1')
    argv = [str(REPO / '.venv' / 'bin' / 'ansible-playbook'), '-i', 'localhost,', str(REPO / 'playbooks' / 'pull_report.yml'),
            '-e', 'pull_report_results=%s' % results, '-e', '@%s' % nodes_file, '-e', 'pull_report_run_id=bench',
            '-e', 'gpufleet_drift_dir=%s' % report_dir, '-e', 'ansible_python_interpreter=%s' % sys.executable]
    log = tmp / 'aggregate.log'
    peak = biggest = 0
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, 'w') as out:
        t0 = time.time()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=str(REPO))
        while proc.poll() is None:
            total, big = tree_rss_kib(proc.pid)
            peak, biggest = max(peak, total), max(biggest, big)
            time.sleep(0.05)
        wall = time.time() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    return wall, cpu, peak, biggest, proc.returncode, report_dir, log


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    p.add_argument('--results', default=str(REPO / 'tests' / 'fixtures' / 'pull' / 'recorded'),
                   help='real gpufleet-pull results (default: the recorded ones)')
    p.add_argument('--nodes', type=int, default=10000)
    p.add_argument('--dispatch-s', type=float, default=60.0,
                   help='ASSUMED seconds for Slurm to start one task on every node (not measured here)')
    args = p.parse_args()
    real = load_real(args.results)
    if not real:
        print('pull_scale: no real results in %s (the fleet tier\'s pull step writes them): no figures' % args.results)
        return 1
    print('pull_scale: %s, %d real node result(s) from %s, %d nodes, %d cores, load %s' % (
        time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()), len(real), args.results, args.nodes, os.cpu_count(),
        ' '.join(open('/proc/loadavg').read().split()[:3])))
    ok = True
    print('\n1. per node (gpufleet-pull on the node, its own measurement)')
    print('| node | status | wall s | CPU s | set-up s (venv, collection) | playbook s | settings | version lock |')
    print('|---|---|---|---|---|---|---|---|')
    walls = []
    for r in real:
        run = r.get('runner') or {}
        walls.append((run.get('wall_s'), run.get('setup_s')))
        print('| %s | %s | %s | %s | %s | %s | %d | %d |' % (r['node'], r.get('status'), run.get('wall_s'), run.get('cpu_s'),
              run.get('setup_s'), run.get('playbook_s'), len(r.get('settings') or []), len(r['check'].get('messages') or [])))
    if any(w is None for w, _s in walls):
        print('pull_scale: a real result has no runner figures')
        return 1
    node_cold = max(w for w, _s in walls)
    node_warm = max(w - (s or 0) for w, s in walls)

    tmp = Path(tempfile.mkdtemp(prefix='pull-scale-'))
    try:
        wall_in, got, size = ingest(real, args.nodes, tmp)
        print('\n2. ingest: %d results (%d bytes each) PUT one after another to one endpoint on 127.0.0.1: %.1f s '
              '(%.0f/s), %d stored' % (args.nodes, size, wall_in, args.nodes / wall_in, got))
        ok &= got == args.nodes

        results = tmp / 'results'
        results.mkdir()
        missing = 'gpu%05d' % (args.nodes // 2)
        t0 = time.time()
        names = generate(real, args.nodes, results, missing)
        size = sum(f.stat().st_size for f in results.iterdir())
        print('\n3. aggregation: %d results generated from the real ones (%.1f MB, %.1f s), %s left out'
              % (len(names) - 1, size / 1e6, time.time() - t0, missing))
        load0 = open('/proc/loadavg').read().split()[0]
        wall, cpu, peak, biggest, rc, report_dir, log = aggregate(results, names, tmp)
        report = json.loads((report_dir / 'drift.json').read_text()) if (report_dir / 'drift.json').is_file() else {}
        named = report.get('pull', {}).get('not_reported') == {missing: 'no result'}
        print('   playbooks/pull_report.yml: wall %.1f s, CPU %.1f s (load %s when it started), peak RSS %.0f MiB (process '
              'tree), largest process %.0f MiB, exit %d, report nodes %d, drifted %d, not reported %s'
              % (wall, cpu, load0, peak / 1024.0, biggest / 1024.0, rc, len(report.get('nodes', {})),
                 len(report.get('drifted_nodes', [])), report.get('pull', {}).get('not_reported')))
        good = rc == 2 and len(report.get('nodes', {})) == args.nodes and named
        if not good:
            print('pull_scale: the aggregation did not give the expected report (see %s)' % log)
            print(open(log).read()[-3000:])
            ok = False
        limits = wall < 30 and peak < 1024 * 1024
        print('   limits (< 30 s wall, < 1 GiB): %s%s' % ('met' if limits else 'NOT MET', '' if limits or cpu >= 30 else
              ' (CPU %.1f s < 30 s: the wall is the load\'s - on an idle core it is the CPU time)' % cpu))
        ok &= limits and good
    finally:
        shutil.rmtree(str(tmp), ignore_errors=True)

    print('\n4. projection: a %d-node pull drift check' % args.nodes)
    for label, node in (('warm (venv and collection reused)', node_warm), ('cold (first run of a bundle)', node_cold)):
        total = args.dispatch_s + node + wall_in + wall
        print('   %s: dispatch %.0f s (ASSUMED) + slowest node %.1f s + ingest %.1f s + aggregation %.1f s = %.0f s '
              '(%.1f min; target < 10 min: %s)' % (label, args.dispatch_s, node, wall_in, wall, total, total / 60,
                                                   'met' if total < 600 else 'NOT MET'))
        ok &= total < 600
    print('   The nodes run in parallel, each on its own CPU: the controller pays only the aggregation. The lab nodes '
          'share this machine\'s 2 cores and run no GPU/HCA roles: a real node\'s run differs - measure one.')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
