# -*- coding: utf-8 -*-
"""A fixed CPU workload, timed, so wall times of test runs on different machines (or one machine on different days)
can be compared: the CI tier is CPU-bound on this kind of machine (2 cores), so its wall time scales with these.

Prints one line, e.g.::

    cpu reference: python 0.66 s (10M additions), sha256 0.19 s (256 MiB), json 1.92 s (20 x 1 MB round trips)

each the best of --runs runs (default 3) on one core. scripts/test prints it (one run each, a few seconds) before its
jobs start and again under its table.

Usage: python benchmarks/cpu_reference.py [--runs N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import timeit


def _python():
    total = 0
    for i in range(10_000_000):
        total += i
    return total


_BLOCK = b'\x5a' * (1 << 20)


def _sha256():
    h = hashlib.sha256()
    for _block in range(256):
        h.update(_BLOCK)
    return h.hexdigest()


_DOC = {'k%d' % i: {'name': 'gpu%d' % i, 'values': list(range(40)), 'ok': True} for i in range(5200)}  # 1.05 MB of JSON


def _json():
    for _round in range(20):
        json.loads(json.dumps(_DOC))


def best(fn, runs):
    return min(timeit.repeat(fn, number=1, repeat=runs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()
    if args.runs < 1:
        ap.error('--runs must be 1 or more')
    print('cpu reference: python %.2f s (10M additions), sha256 %.2f s (256 MiB), json %.2f s (20 x 1 MB round trips)'
          % (best(_python, args.runs), best(_sha256, args.runs), best(_json, args.runs)))


if __name__ == '__main__':
    main()
