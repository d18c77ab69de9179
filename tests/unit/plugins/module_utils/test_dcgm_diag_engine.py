# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgm_diag's engine (module_utils/dcgm_diag_engine.py) on its own: input checks, argv, judging a run,
and run() with a stand-in module and a small script standing in for dcgmi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import dcgm_diag_engine as engine

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
DCGM4_FAIL = HAND / 'dcgmi-diag-r2-dcgm4-json-memory-fail-HANDMADE.json'
PASS_JSON = {'DCGM GPU Diagnostic': {'test_categories': [{'category': 'Deployment', 'tests': [
    {'name': 'Blacklist', 'results': [{'status': 'Pass', 'gpu_ids': '0'}]}]}]}}


class Failed(Exception):
    pass


class FakeModule:
    """What the engine uses of an AnsibleModule: params, check_mode, get_bin_path (via _runner.find), fail_json."""

    def __init__(self, check_mode=False, bins=None, **params):
        self.params = dict(executable='dcgmi', level='1', gpus=[], parameters=[], output_format='auto', host=None,
                           fail_on_warn=False, timeout=60, rung='dcgm_diag')
        self.params.update(params)
        self.check_mode = check_mode
        self.bins = bins or {}

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return self.bins.get(name)

    def fail_json(self, msg, **kwargs):
        raise Failed(dict(kwargs, msg=msg))


def res(stdout='', stderr='', rc=0, timed_out=False, cmd='dcgmi diag -r 1'):
    return dict(rc=rc, stdout=stdout, stderr=stderr, timed_out=timed_out, elapsed=0.1, cmd=cmd, start_error=None)


def script(tmp_path, body):
    path = tmp_path / 'dcgmi'
    path.write_text('#!/bin/sh\necho "$@" >> %s\n%s\n' % (tmp_path / 'calls', body))
    path.chmod(0o755)
    return str(path)


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
    params = FakeModule().params
    good = engine.judge(res(json.dumps(PASS_JSON)), 'json', params)
    assert good['failures'] == [] and good['msg'] == 'dcgm_diag: 1 tests, none failed'
    assert good['format'] == 'json' and good['gpus'] == {'0': {'Blacklist': 'Pass'}}
    bad = engine.judge(res(DCGM4_FAIL.read_text(), rc=226), 'json', params)
    assert bad['failed_tests'] == ['memory'] and bad['msg'] == '; '.join(bad['failures'])
    assert 'exited with rc=226' in bad['failures'][0]
    assert any(f.startswith('dcgm_diag: memory (') and ' Fail on GPU ' in f for f in bad['failures'])


def test_judge_unparsable_and_empty():
    params = FakeModule().params
    out = engine.judge(res('{"not": "dcgm"'), 'json', params)
    assert out['parse_error'] and out['tests'] == [] and out['failures'][0].startswith('dcgm_diag: ')
    empty = engine.judge(res(''), 'text', params)
    assert empty['failures'] == ['dcgm_diag: no test result parsed from dcgmi diag output (missing results fail); '
                                 'cmd: dcgmi diag -r 1']


def test_run_check_mode_and_not_found():
    out = engine.run(FakeModule(check_mode=True, level=' 3 '))
    assert out == dict(changed=False, skipped=True, cmd='dcgmi diag -r 3 -j', failures=[],
                       msg='skipped: check mode, dcgmi diag not run')
    out = engine.run(FakeModule())
    assert out['failures'] == ['executable not found'] and out['msg'].startswith('dcgm_diag: dcgmi not found on PATH')


def test_run_refuses_bad_input():
    with pytest.raises(Failed) as exc:
        engine.run(FakeModule(level='9', gpus=[2000]))
    assert 'level must be a run level' in exc.value.args[0]['msg'] and 'gpus[0]' in exc.value.args[0]['msg']


def test_run_json_then_text_fallback(tmp_path):
    exe = script(tmp_path, 'case "$*" in *-j*) echo "PARSE ERROR: -j" >&2; exit 1;; esac\n'
                           'echo "no table here"')
    out = engine.run(FakeModule(executable=exe, level='2'))
    assert (tmp_path / 'calls').read_text().splitlines() == ['diag -r 2 -j', 'diag -r 2']
    assert out['format'] == 'text' and out['cmd'] == '%s diag -r 2' % exe and out['failures']


def test_run_json(tmp_path):
    exe = script(tmp_path, "cat <<'X'\n%s\nX" % json.dumps(PASS_JSON))
    out = engine.run(FakeModule(executable=exe))
    assert out['failures'] == [] and out['rc'] == 0 and out['format'] == 'json'
