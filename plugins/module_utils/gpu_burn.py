# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for gpu-burn (wilicc/gpu-burn) output.

gpu-burn prints a banner per GPU (``GPU 0: NAME (UUID: GPU-...)``), progress lines rewritten with a
carriage return (so a captured log often holds many progress records on one line)::

    50.0%  proc'd: 2261 (7150 Gflop/s) - 0 (0 Gflop/s)   errors: 0 - 0   temps: 38 C - 36 C

(``errors: N  (WARNING!)`` when a GPU produced wrong results, ``(DIED!)`` when its worker died,
``--`` for an unknown temperature; the newest gpu-burn appends ``  power: 250 W - -- `` per GPU) and a
verdict block::

    Tested 8 GPUs:
        GPU 0: OK
        GPU 1: FAULTY

The banner lines come from ``nvidia-smi -L`` and list every GPU of the node, also the ones gpu-burn does not
burn (``-i N``, ``CUDA_VISIBLE_DEVICES``); ``gpus`` therefore holds only the GPUs gpu-burn reported on (progress
columns, ``Initialized device`` lines, verdicts), the banner is kept in ``devices``. With ``-i N`` gpu-burn
numbers its only GPU 0 in the progress and verdict lines while initialising device N; that GPU is reported
as index N.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_GPU_RE = re.compile(r'^\s*GPU (\d+): (.+?) \(UUID: ([^)]+)\)\s*$')
_INIT_RE = re.compile(r'Initialized device (\d+) with (\d+) MB of memory \((\d+) MB available, using (\d+) MB')
_PROGRESS_RE = re.compile(
    r"(\d+(?:\.\d+)?)%\s+proc'd:\s*(.*?)\s+errors:\s*(.*?)\s+temps:\s*(.*?)(?:\s+power:\s*(.*?))?"
    r"\s*(?=\d+(?:\.\d+)?%\s+proc'd:|$)")
# one cell per GPU, cells separated by '- ' (after a blank or after '(WARNING!)'); '-1' and '--' are values
_CELL_SEP_RE = re.compile(r'(?:(?<=\s)|(?<=\)))-\s+')
_PROCD_RE = re.compile(r'^(-?[0-9]+)\s*\(\s*(-?[0-9]+(?:\.[0-9]+)?)\s*Gflop/s\)$')
_ERR_RE = re.compile(r'^(-?[0-9]+)\s*(?:\((WARNING|DIED)!\))?$')
_TEMP_RE = re.compile(r'^(?:([0-9]+)\s*\N{DEGREE SIGN}?\s*C|(--))$')
_POWER_RE = re.compile(r'^(?:([0-9]+(?:\.[0-9]+)?)\s*W|(--))$')
_TESTED_RE = re.compile(r'^\s*Tested (\d+) GPUs:\s*$')
_VERDICT_RE = re.compile(r'^\s*GPU (\d+): (OK|FAULTY)\s*$')
_PROBLEM_RE = re.compile(r"(No clients are alive|Couldn't init|Aborting|Error|error:|Killing processes with SIGKILL|"
                         r'No CUDA devices|No CUDA capable|Not enough devices|Failure during compute|Could not invoke|'
                         r'CUDA_ERROR|cuda\w*Error|Segmentation fault|out of memory)', re.IGNORECASE)


def _cells(field, rx):
    """Per-GPU cells of one progress field; a cell that does not read (garbled, cut off) gives None so the
    cells after it keep their GPU."""
    field = (field or '').strip()
    if not field:
        return []
    out = []
    for cell in _CELL_SEP_RE.split(field):
        match = rx.match(cell.strip())
        out.append(match.groups() if match else None)
    return out


def _progress(match):
    procd = [(int(c[0]), float(c[1])) if c else (None, None) for c in _cells(match.group(2), _PROCD_RE)]
    errors = [(int(c[0]), c[1]) if c else (None, None) for c in _cells(match.group(3), _ERR_RE)]
    temps = [int(c[0]) if c and c[0] else None for c in _cells(match.group(4), _TEMP_RE)]
    power = [float(c[0]) if c and c[0] else None for c in _cells(match.group(5), _POWER_RE)]
    return {'percent': float(match.group(1)), 'procd': procd, 'errors': errors, 'temps': temps, 'power': power}


def parse(text):
    """Parse gpu-burn output. Returns a dict:

    - ``gpus``: per GPU index (sorted) ``index``, ``name``, ``uuid``, ``verdict`` (``OK``/``FAULTY``/None),
      ``errors`` (last progress record), ``max_errors`` (highest in any record), ``died`` (bool),
      ``gflops`` (last record), ``temp_c`` (last), ``max_temp_c``, ``iterations`` (proc'd, last),
      ``memory_used_mb``; ``name``/``uuid`` come from the banner when it can be matched to the burned GPU;
      ``power_w`` and ``max_power_w`` are added when gpu-burn prints power;
    - ``devices``: the banner (``nvidia-smi -L``) lines, ``index``, ``name``, ``uuid``;
    - ``tested``: the count of ``Tested N GPUs:`` (None when the verdict block is missing);
    - ``progress_records``: how many progress records were found; ``percent``: the last one's percentage;
    - ``problems``: lines reporting a failure of the tool itself.
    """
    gpus = {}
    banner = {}
    initialized = {}

    def gpu(index):
        return gpus.setdefault(index, {
            'index': index, 'name': None, 'uuid': None, 'verdict': None, 'errors': None, 'max_errors': None,
            'died': False, 'gflops': None, 'temp_c': None, 'max_temp_c': None, 'iterations': None,
            'memory_used_mb': None})

    result = {'gpus': [], 'devices': [], 'tested': None, 'progress_records': 0, 'percent': None, 'problems': []}
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
            banner.setdefault(int(match.group(1)), (match.group(2), match.group(3)))
            continue
        match = _INIT_RE.search(line)
        if match:
            initialized[int(match.group(1))] = int(match.group(4))
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
                    if iters is not None and iters < 0:
                        entry['died'] = True
                for i, (errs, note) in enumerate(prog['errors']):
                    entry = gpu(i)
                    entry['errors'] = errs
                    if errs is not None:
                        entry['max_errors'] = max(errs, entry['max_errors'] or 0)
                    if note == 'DIED':
                        entry['died'] = True
                for i, temp in enumerate(prog['temps']):
                    entry = gpu(i)
                    entry['temp_c'] = temp
                    if temp is not None:
                        entry['max_temp_c'] = max(temp, entry['max_temp_c'] or 0)
                for i, power in enumerate(prog['power']):
                    entry = gpu(i)
                    entry['power_w'] = power
                    if power is not None:
                        entry['max_power_w'] = max(power, entry.get('max_power_w') or 0)
            continue
        if _PROBLEM_RE.search(line) and 'Summary at' not in line:
            result['problems'].append(line.strip())
    result['devices'] = [{'index': i, 'name': banner[i][0], 'uuid': banner[i][1]} for i in sorted(banner)]
    result['gpus'] = _assign(gpus, banner, initialized)
    return result


def _assign(gpus, banner, initialized):
    """Burned GPUs in index order, with banner name/UUID and memory where they can be matched."""
    if not gpus:  # nothing was reported: the GPUs gpu-burn initialised, else the banner, without figures
        for index in sorted(set(initialized) or set(banner)):
            gpus[index] = {
                'index': index, 'name': None, 'uuid': None, 'verdict': None, 'errors': None, 'max_errors': None,
                'died': False, 'gflops': None, 'temp_c': None, 'max_temp_c': None, 'iterations': None,
                'memory_used_mb': None}
    columns = sorted(gpus)
    relabel = {}
    if len(columns) == 1 and len(initialized) == 1 and columns[0] not in initialized:
        relabel[columns[0]] = list(initialized)[0]  # gpu-burn -i N: its GPU 0 is device N
    out = []
    for column in columns:
        entry = gpus[column]
        index = relabel.get(column, column)
        entry['index'] = index
        if index in initialized:
            entry['memory_used_mb'] = initialized[index]
        if index in banner and (relabel or len(banner) == len(columns)):
            entry['name'], entry['uuid'] = banner[index]
        out.append(entry)
    return out
