# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgm_diag's engine (module_utils/dcgm_diag_engine.py) on its own: input checks, argv, judging a run,
and run() with a stand-in module and a small script standing in for dcgmi."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import dcgm_diag_engine as engine

from .stand_ins import Failed, StandInModule, run_result, script

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
DCGM4_FAIL = HAND / 'dcgmi-diag-r2-dcgm4-json-memory-fail-HANDMADE.json'
PASS_JSON = {'DCGM GPU Diagnostic': {'test_categories': [{'category': 'Deployment', 'tests': [
    {'name': 'Blacklist', 'results': [{'status': 'Pass', 'gpu_ids': '0'}]}]}]}}


DEFAULTS = dict(executable='dcgmi', level='1', gpus=[], parameters=[], output_format='auto', host=None,
                fail_on_warn=False, timeout=60, rung='dcgm_diag')
res = functools.partial(run_result, elapsed=0.1, cmd='dcgmi diag -r 1')


def stand_in(check_mode=False, **params):
    return StandInModule(params, DEFAULTS, check_mode=check_mode)


@pytest.mark.parametrize('level,ok', [('1', True), ('4', True), (' 2 ', True), ('memory,pcie', True),
                                      ('targeted stress', True), ('0', False), ('5', False), ('', False),
                                      ('-r', False), (None, True), ('1\x00', True)])
def test_level_errors(level, ok):
    assert (engine.level_errors(level) == []) is ok


def test_build_argv():
    params = dict(level='2', gpus=[0, 3], parameters=['pcie.gpu_nvlinks_expected_up=18'], host='10.0.0.1')
    assert engine.build_argv('/x/dcgmi', params, True) == [
        '/x/dcgmi', 'diag', '-r', '2', '-i', '0,3', '-p', 'pcie.gpu_nvlinks_expected_up=18', '--host', '10.0.0.1', '-j']
    assert engine.build_argv('dcgmi', dict(level='1', gpus=[], parameters=[], host=None), False) == \
        ['dcgmi', 'diag', '-r', '1']


def test_judge_pass_and_fail():
    params = stand_in().params
    good = engine.judge(res(json.dumps(PASS_JSON)), 'json', params)
    assert good['failures'] == [] and good['msg'] == 'dcgm_diag: 1 tests, none failed'
    assert good['format'] == 'json' and good['gpus'] == {'0': {'Blacklist': 'Pass'}}
    bad = engine.judge(res(DCGM4_FAIL.read_text(), rc=226), 'json', params)
    assert bad['failed_tests'] == ['memory'] and bad['msg'] == '; '.join(bad['failures'])
    assert 'exited with rc=226' in bad['failures'][0]
    assert any(f.startswith('dcgm_diag: memory (') and ' Fail on GPU ' in f for f in bad['failures'])


def test_judge_unparsable_and_empty():
    params = stand_in().params
    out = engine.judge(res('{"not": "dcgm"'), 'json', params)
    assert out['parse_error'] and out['tests'] == [] and out['failures'][0].startswith('dcgm_diag: ')
    empty = engine.judge(res(''), 'text', params)
    assert empty['failures'] == ['dcgm_diag: no test result parsed from dcgmi diag output (missing results fail); '
                                 'cmd: dcgmi diag -r 1']


def test_run_check_mode_and_not_found():
    out = engine.run(stand_in(check_mode=True, level=' 3 '))
    assert out == dict(changed=False, skipped=True, cmd='dcgmi diag -r 3 -j', failures=[],
                       msg='skipped: check mode, dcgmi diag not run')
    out = engine.run(stand_in())
    assert out['failures'] == ['executable not found'] and out['msg'].startswith('dcgm_diag: dcgmi not found on PATH')


def test_run_refuses_bad_input():
    with pytest.raises(Failed) as exc:
        engine.run(stand_in(level='9', gpus=[2000]))
    assert 'level must be a run level' in exc.value.args[0]['msg'] and 'gpus[0]' in exc.value.args[0]['msg']


def test_run_json_then_text_fallback(tmp_path):
    exe = script(tmp_path, 'dcgmi', 'case "$*" in *-j*) echo "PARSE ERROR: -j" >&2; exit 1;; esac\n'
                                    'echo "no table here"', calls=tmp_path / 'calls')
    out = engine.run(stand_in(executable=exe, level='2'))
    assert (tmp_path / 'calls').read_text().splitlines() == ['diag -r 2 -j', 'diag -r 2']
    assert out['format'] == 'text' and out['cmd'] == '%s diag -r 2' % exe and out['failures']


def test_run_json(tmp_path):
    exe = script(tmp_path, 'dcgmi', "cat <<'X'\n%s\nX" % json.dumps(PASS_JSON))
    out = engine.run(stand_in(executable=exe))
    assert out['failures'] == [] and out['rc'] == 0 and out['format'] == 'json'
