# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for gpu-burn (wilicc/gpu-burn) output.

gpu-burn prints a banner per GPU (``GPU 0: NAME (UUID: GPU-...)``), progress lines rewritten with a
carriage return (so a captured log often holds many progress records on one line)::

    50.0%  proc'd: 2261 (7150 Gflop/s) - 0 (0 Gflop/s)   errors: 0 - 0   temps: 38 C - 36 C

(``errors: N  (WARNING!)`` when a GPU produced wrong results, ``(DIED!)`` when its worker died,
``--`` for an unknown temperature) and a verdict block::

    Tested 8 GPUs:
        GPU 0: OK
        GPU 1: FAULTY
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_GPU_RE = re.compile(r'^\s*GPU (\d+): (.+?) \(UUID: ([^)]+)\)\s*$')
_INIT_RE = re.compile(r'Initialized device (\d+) with (\d+) MB of memory \((\d+) MB available, using (\d+) MB')
_PROGRESS_RE = re.compile(
    r"(\d+(?:\.\d+)?)%\s+proc'd:\s*(.*?)\s+errors:\s*(.*?)\s+temps:\s*(.*?)\s*(?=\d+(?:\.\d+)?%\s+proc'd:|$)")
_PROCD_RE = re.compile(r'(-?\d+)\s*\(\s*(-?\d+(?:\.\d+)?)\s*Gflop/s\)')
_ERR_RE = re.compile(r'(-?\d+)\s*(?:\((WARNING|DIED)!\))?')
_TEMP_RE = re.compile(r'(\d+)\s*C\b|(--)')
_TESTED_RE = re.compile(r'^\s*Tested (\d+) GPUs:\s*$')
_VERDICT_RE = re.compile(r'^\s*GPU (\d+): (OK|FAULTY)\s*$')
_PROBLEM_RE = re.compile(r"(No clients are alive|Couldn't init|Aborting|Error|error:|Killing processes with SIGKILL|"
                         r'CUDA_ERROR|cuda\w*Error|Segmentation fault|out of memory)', re.IGNORECASE)


def _progress(match):
    procd = [(int(n), float(g)) for n, g in _PROCD_RE.findall(match.group(2))]
    errors = [(int(n), note or None) for n, note in _ERR_RE.findall(match.group(3))]
    temps = [int(t) if t else None for t, dummy in _TEMP_RE.findall(match.group(4))]
    return {'percent': float(match.group(1)), 'procd': procd, 'errors': errors, 'temps': temps}


def parse(text):
    """Parse gpu-burn output. Returns a dict:

    - ``gpus``: per GPU index (sorted) ``index``, ``name``, ``uuid``, ``verdict`` (``OK``/``FAULTY``/None),
      ``errors`` (last progress record), ``max_errors`` (highest in any record), ``died`` (bool),
      ``gflops`` (last record), ``temp_c`` (last), ``max_temp_c``, ``iterations`` (proc'd, last),
      ``memory_used_mb``;
    - ``tested``: the count of ``Tested N GPUs:`` (None when the verdict block is missing);
    - ``progress_records``: how many progress records were found; ``percent``: the last one's percentage;
    - ``problems``: lines reporting a failure of the tool itself.
    """
    gpus = {}

    def gpu(index):
        return gpus.setdefault(index, {
            'index': index, 'name': None, 'uuid': None, 'verdict': None, 'errors': None, 'max_errors': None,
            'died': False, 'gflops': None, 'temp_c': None, 'max_temp_c': None, 'iterations': None,
            'memory_used_mb': None})

    result = {'gpus': [], 'tested': None, 'progress_records': 0, 'percent': None, 'problems': []}
    in_verdict = False
    for raw in text.replace('\r', '\n').splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        match = _TESTED_RE.match(line)
        if match:
            result['tested'] = int(match.group(1))
            in_verdict = True
            continue
        match = _VERDICT_RE.match(line)
        if match and in_verdict:
            gpu(int(match.group(1)))['verdict'] = match.group(2)
            continue
        match = _GPU_RE.match(line)
        if match:
            entry = gpu(int(match.group(1)))
            entry['name'], entry['uuid'] = match.group(2), match.group(3)
            continue
        match = _INIT_RE.search(line)
        if match:
            gpu(int(match.group(1)))['memory_used_mb'] = int(match.group(4))
            continue
        records = list(_PROGRESS_RE.finditer(line))
        if records:
            for rec in records:
                prog = _progress(rec)
                result['progress_records'] += 1
                result['percent'] = prog['percent']
                for i, (iters, gflops) in enumerate(prog['procd']):
                    entry = gpu(i)
                    entry['iterations'], entry['gflops'] = iters, gflops
                    if iters < 0:
                        entry['died'] = True
                for i, (errs, note) in enumerate(prog['errors']):
                    entry = gpu(i)
                    entry['errors'] = errs
                    entry['max_errors'] = max(errs, entry['max_errors'] or 0)
                    if note == 'DIED':
                        entry['died'] = True
                for i, temp in enumerate(prog['temps']):
                    entry = gpu(i)
                    entry['temp_c'] = temp
                    if temp is not None:
                        entry['max_temp_c'] = max(temp, entry['max_temp_c'] or 0)
            continue
        if _PROBLEM_RE.search(line) and 'Summary at' not in line:
            result['problems'].append(line.strip())
    result['gpus'] = [gpus[i] for i in sorted(gpus)]
    return result
