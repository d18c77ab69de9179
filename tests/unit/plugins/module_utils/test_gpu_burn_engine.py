# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_burn's engine (module_utils/gpu_burn_engine.py) on its own: argv, judging a run, and run() with a
stand-in module and a small script standing in for gpu-burn."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_burn_engine as engine

from .stand_ins import Failed, StandInModule, run_result, script

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
FAULTY = HAND / 'gpu-burn-3xH100-cr-faulty-died-HANDMADE.txt'
OK_TEXT = ('GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n'
           '100.0%  proc\'d: 100 (60000 Gflop/s)   errors: 0   temps: 60 C\n'
           'Tested 1 GPUs:\n\tGPU 0: OK\n')


DEFAULTS = dict(executable='gpu_burn', chdir=None, duration=10, doubles=False, tensor_cores=False, memory=None,
                args=[], timeout=None, expected_gpus=None, min_gflops=None, max_temp_c=None, rung='gpu_burn')
res = functools.partial(run_result, cmd='gpu_burn 10')


def stand_in(check_mode=False, **params):
    return StandInModule(params, DEFAULTS, check_mode=check_mode)


def test_build_argv():
    params = stand_in(doubles=True, tensor_cores=True, memory='90%', args=['-i', '2'], duration=30).params
    assert engine.build_argv('/opt/gpu_burn', params) == ['/opt/gpu_burn', '-d', '-tc', '-m', '90%', '-i', '2', '30']


def test_judge_faulty_and_died():
    out = engine.judge(res(FAULTY.read_text()), stand_in().params, 310)
    assert out['faulty'] == [1, 2] and out['msg'] == '; '.join(out['failures'])
    assert any('worker DIED' in f for f in out['failures'])


def test_judge_ok(monkeypatch):
    monkeypatch.delenv('CUDA_VISIBLE_DEVICES', raising=False)
    out = engine.judge(res(OK_TEXT), stand_in().params, 310)
    assert out['failures'] == [], out['failures']
    assert out['msg'] == 'gpu_burn: 1 GPUs OK, min 60000.00 Gflop/s, max 60 C'


def test_judge_timeout_names_the_limit():
    run = dict(res(''), rc=-9, timed_out=True)
    out = engine.judge(run, stand_in().params, 42)
    assert out['failures'][0] == 'gpu_burn: gpu_burn did not finish within timeout 42 s (killed); cmd: gpu_burn 10'


def test_run_check_mode_and_not_found():
    assert engine.run(stand_in(check_mode=True, duration=5)) == dict(
        changed=False, skipped=True, cmd='gpu_burn 5', failures=[], msg='skipped: check mode, gpu_burn not run')
    out = engine.run(stand_in())
    assert out['failures'] == ['executable not found']


def test_run_refuses_bad_input(tmp_path):
    with pytest.raises(Failed) as exc:
        engine.run(stand_in(memory='lots', chdir=str(tmp_path / 'nowhere')))
    assert 'memory must be MB' in exc.value.args[0]['msg'] and 'chdir must be an existing' in exc.value.args[0]['msg']


def test_run_in_the_executables_directory(tmp_path, monkeypatch):
    monkeypatch.delenv('CUDA_VISIBLE_DEVICES', raising=False)
    exe = script(tmp_path, 'gpu_burn', "pwd > %s\ncat <<'X'\n%sX" % (tmp_path / 'cwd', OK_TEXT))
    out = engine.run(stand_in(executable=exe, duration=1))
    assert out['failures'] == [] and out['rc'] == 0
    assert (tmp_path / 'cwd').read_text().strip() == str(tmp_path)
