# -*- coding: utf-8 -*-
"""What resolving one gpufleet.cluster.* filter costs the controller in each task (docs/architecture.md, "Filter
plugins load cheaply"): ansible-core loads every file in plugins/filter/ for it, in the task's worker process.

Prints two figures:

    load: every filter file in a fresh interpreter (ansible and its display imported first, as in a worker): best of
          --runs fresh interpreters, and which of the collection's other modules that pulled in
    play: ansible-playbook with --tasks tasks on 2 local hosts, each task templating one gpufleet filter, against the
          same tasks with a builtin filter: wall and CPU-s of the whole process tree, and the difference per host-task
          (--no-play leaves this out; it takes about 20 s)

Usage: .venv/bin/python benchmarks/filter_load.py [--runs 5] [--tasks 30] [--no-play]
(from the repository root, after scripts/setup: the collection resolves from .ansible/collections)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, '.ansible', 'collections')
FILTER_DIR = os.path.join(ROOT, 'plugins', 'filter')

LOAD = r'''
import importlib, json, os, sys, time
import ansible.errors, ansible.utils.display
before = set(sys.modules)
t0 = time.perf_counter()
for name in sorted(f[:-3] for f in os.listdir(sys.argv[1]) if f.endswith('.py') and f != '__init__.py'):
    importlib.import_module('ansible_collections.gpufleet.cluster.plugins.filter.' + name)
took = time.perf_counter() - t0
pulled = sorted(m.rsplit('.', 1)[-1] for m in set(sys.modules) - before
                if m.startswith('ansible_collections.gpufleet.cluster.plugins.')
                and not m.startswith('ansible_collections.gpufleet.cluster.plugins.filter'))
print(json.dumps({'took': took, 'pulled': pulled}))
'''


def load(runs):
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    results = [json.loads(subprocess.run([sys.executable, '-c', LOAD, FILTER_DIR], env=env, check=True,
                                         capture_output=True, text=True).stdout.splitlines()[-1]) for _run in range(runs)]
    best = min(r['took'] for r in results)
    files = len([f for f in os.listdir(FILTER_DIR) if f.endswith('.py') and f != '__init__.py'])
    pulled = results[0]['pulled']
    print('load: %d filter files in %.3f s (best of %d fresh interpreters); other collection modules pulled in: %s'
          % (files, best, runs, ', '.join(pulled) if pulled else 'none'))


def play(tasks):
    bindir = os.path.dirname(sys.executable)
    gpufleet = "{{ {} | gpufleet.cluster.version_lock_errors | length }}"
    builtin = "{{ {} | to_json | length }}"
    walls = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, expr in (('gpufleet', gpufleet), ('builtin', builtin)):
            path = os.path.join(tmp, label + '.yml')
            with open(path, 'w') as f:
                f.write('- hosts: all\n  gather_facts: false\n  tasks:\n')
                for _task in range(tasks):
                    f.write('    - ansible.builtin.debug: {msg: "%s"}\n' % expr)
            argv = [os.path.join(bindir, 'ansible-playbook'), '-i', 'h1,h2', '-c', 'local',
                    '-e', 'ansible_python_interpreter=' + sys.executable, path]
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                           env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS))
            wall = time.monotonic() - t0
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            walls[label] = (wall, cpu)
            print('play: %-8s filter, %d tasks x 2 hosts: %.1f s wall, %.1f CPU-s' % (label, tasks, wall, cpu))
    extra = (walls['gpufleet'][1] - walls['builtin'][1]) / (2 * tasks)
    print('play: a gpufleet filter costs %.3f CPU-s more per host-task than a builtin one' % extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--tasks', type=int, default=30)
    ap.add_argument('--no-play', action='store_true')
    args = ap.parse_args()
    if args.runs < 1 or args.tasks < 1:
        ap.error('--runs and --tasks must be at least 1')
    if not os.path.isdir(os.path.join(COLLECTIONS, 'ansible_collections', 'gpufleet', 'cluster')):
        sys.exit('filter_load: %s has no gpufleet.cluster link; run scripts/setup first' % COLLECTIONS)
    load(args.runs)
    if not args.no_play:
        play(args.tasks)


if __name__ == '__main__':
    main()
