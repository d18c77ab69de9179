# -*- coding: utf-8 -*-
"""Time the hardware-facts parsers (milliseconds per parse, median of N runs).

- sysfs_ib.collect on a 12-HCA tree built in a temp dir by replicating the recorded mlx5_0 device of
  the corpus (ports 1, and 2 on every other HCA);
- nvidia_smi.parse_query_xml on an 8-GPU document built by repeating the <gpu> element of a recorded
  XML eight times (PCI ids made unique), and parse_topo_matrix on the recorded 8-GPU DGX-1 matrix.

Usage: .venv/bin/python benchmarks/bench_parsers.py [--runs N]
(GPUFLEET_CORPUS overrides the corpus; without it the bundled tests/unit/fixtures/corpus is used.)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / '.ansible' / 'collections'))

from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi, sysfs_ib  # noqa: E402


def corpus_dir():
    env = os.environ.get('GPUFLEET_CORPUS')
    for cand in [Path(env)] if env else [REPO / '..' / 'shared' / 'corpus']:
        if (cand / 'MANIFEST.tsv').is_file():
            return cand.resolve()
    return REPO / 'tests' / 'unit' / 'fixtures' / 'corpus'  # bundled subset has every file used here


def bench(func, runs):
    func()  # warm-up
    times = []
    for dummy in range(runs):
        start = time.perf_counter()
        func()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times), min(times), max(times)


def build_sysfs(corpus, root, hcas=12):
    src = corpus / 'sysfs_infiniband/procfs/fixtures/sys/class/infiniband/mlx5_0'
    cls = root / 'sys' / 'class' / 'infiniband'
    cls.mkdir(parents=True)
    for i in range(hcas):
        dev = cls / ('mlx5_%d' % i)
        shutil.copytree(src, dev)
        if i % 2:
            shutil.copytree(dev / 'ports' / '1', dev / 'ports' / '2')
    return root


def build_xml(corpus, gpus=8):
    text = (corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text()
    start = text.index('<gpu id=')
    end = text.index('</gpu>', start) + len('</gpu>')
    block = text[start:end]
    blocks = [re.sub(r'00000000:81:00\.0', '00000000:%02X:00.0' % (0x18 + 0x10 * i), block) for i in range(gpus)]
    head = text[:start].replace('<attached_gpus>2</attached_gpus>', '<attached_gpus>%d</attached_gpus>' % gpus)
    return head + '\n'.join(blocks) + '\n</nvidia_smi_log>\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=50)
    args = parser.parse_args()
    corpus = corpus_dir()
    rows = []
    with tempfile.TemporaryDirectory(prefix='gpufleet-bench-') as tmp:
        root = build_sysfs(corpus, Path(tmp))
        facts = sysfs_ib.collect(str(root))
        ports = sum(len(d['ports']) for d in facts.values())
        rows.append(('sysfs_ib.collect, %d HCAs / %d ports' % (len(facts), ports),
                     bench(lambda: sysfs_ib.collect(str(root)), args.runs)))
    xml = build_xml(corpus)
    assert nvidia_smi.parse_query_xml(xml)['count'] == 8
    rows.append(('nvidia_smi.parse_query_xml, 8 GPUs (%d KiB)' % (len(xml) // 1024),
                 bench(lambda: nvidia_smi.parse_query_xml(xml), args.runs)))
    topo = (corpus / 'nvidia_smi/issue37-topo-m-DGX1-V100-hybrid-cube-mesh.txt').read_text()
    rows.append(('nvidia_smi.parse_topo_matrix, 8 GPUs', bench(lambda: nvidia_smi.parse_topo_matrix(topo), args.runs)))
    header = ('parser', 'median ms', 'min ms', 'max ms', args.runs, sys.version.split()[0])
    print('%-48s %10s %10s %10s   (runs=%d, Python %s)' % header)
    for name, (med, lo, hi) in rows:
        print('%-48s %10.3f %10.3f %10.3f' % (name, med, lo, hi))


if __name__ == '__main__':
    main()
