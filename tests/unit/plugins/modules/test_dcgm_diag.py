# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgm_diag end to end with the replay program standing in for dcgmi."""

from __future__ import annotations

import sys
from pathlib import Path

from ansible_collections.gpufleet.cluster.plugins.modules import dcgm_diag

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
HAND = FIXTURES / 'hand_made'
REPO = FIXTURES.parents[2]
sys.path.insert(0, str(FIXTURES / 'replay'))
from replay import calls, make_replay, run_playbook  # noqa: E402  pylint: disable=wrong-import-position

R2_JSON = 'dcgmi_diag/virtualclient-diag-r2.json'
R2_TEXT = 'dcgmi_diag/aws-p4de-8xA100-r2-dcgm333.txt'


def test_json_pass(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'dcgmi', {'stdout': str(corpus_file(R2_JSON))})
    result = run_module(dcgm_diag.main, {'executable': exe, 'level': '2', 'gpus': [0],
                                         'parameters': ['pcie.gpu_nvlinks_expected_up=12']})
    assert 'failed' not in result, result['msg']
    assert result['format'] == 'json' and len(result['tests']) == 11 and result['failed_tests'] == []
    assert result['gpus']['0'] == {'PCIe': 'Pass', 'GPU Memory': 'Pass'}
    assert calls(log)[0]['argv'] == ['diag', '-r', '2', '-i', '0', '-p', 'pcie.gpu_nvlinks_expected_up=12', '-j']


def test_text_fallback_when_no_json(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'dcgmi', [
        {'if_arg': '-j', 'stderr_text': 'PARSE ERROR: Argument: -j\n             Couldn\'t find match for argument\n',
         'rc': 1},
        {'stdout': str(corpus_file(R2_TEXT))}])
    result = run_module(dcgm_diag.main, {'executable': exe, 'level': '2'})
    assert 'failed' not in result, result['msg']
    assert result['format'] == 'text' and result['metadata']['DCGM Version'] == '3.3.3'
    assert [c['argv'][-1] for c in calls(log)] == ['-j', '2']


def test_deployment_fail_cascade_names_tests(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout': str(corpus_file('dcgmi_diag/deepops-dcgm1x-deployment-fail-cascade.txt')),
                                                 'rc': 226})
    result = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'text', 'rung': 'dcgm-r1'})
    assert result['failed'] is True
    assert result['failed_tests'] == ['Persistence Mode', 'Environment Variables', 'Page Retirement',
                                      'Graphics Processes', 'Inforom']
    assert 'dcgm-r1: Persistence Mode (Deployment) Fail on the node: no detail printed; cmd: %s diag -r 1' % exe \
        in result['msg']
    assert 'exited with rc=226' in result['failures'][0]


def test_gpu_memory_fail_names_gpu_and_text(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout': str(corpus_file('dcgmi_diag/mleng-fragment-r2-gpu-memory-fail-thermal-warning.txt'))})
    result = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'text', 'level': '2'})
    assert result['failed'] is True and len(result['failures']) == 2
    assert result['complete'] is False and 'is incomplete' in result['failures'][1]  # a fragment: no closing border
    assert result['msg'].startswith('dcgm_diag: GPU Memory (no category) Fail on GPU 0: GPU 0 Thermal violations '
                                    'totaling 13.3 seconds started')


def test_error_row_is_a_failure(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout': str(corpus_file('dcgmi_diag/mleng-fragment-deployment-error-row-remap-pending.txt'))})
    result = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'text'})
    assert result['failed'] is True
    assert 'Deployment (Deployment) Error on GPU 3: GPU 3 has uncorrectable memory errors and row remappings are pending' \
        in result['msg']


def test_malformed_json_fails_clearly(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout': str(corpus_file('dcgmi_diag/virtualclient-diag-fail-malformed.json'))})
    result = run_module(dcgm_diag.main, {'executable': exe})
    assert result['failed'] is True and result['tests'] == []
    assert result['parse_error'].startswith('dcgmi diag JSON has no "DCGM Diagnostic"/"DCGM GPU Diagnostic" object')
    assert result['msg'].startswith('dcgm_diag: dcgmi diag JSON has no')


def test_dcgm4_json_fail_and_skip(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout': str(HAND / 'dcgmi-diag-r2-dcgm4-json-memory-fail-HANDMADE.json')})
    result = run_module(dcgm_diag.main, {'executable': exe, 'level': '2'})
    assert result['failed'] is True and result['failed_tests'] == ['memory'] and len(result['failures']) == 1
    assert result['msg'] == ('dcgm_diag: memory (Hardware) Fail on GPU 1: GPU 1 has uncorrectable memory errors and row '
                             'remappings are pending; cmd: %s diag -r 2 -j' % exe)


def test_dcgm4_text_warn_passes_unless_fail_on_warn(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout': str(HAND / 'dcgmi-diag-r2-dcgm4-text-per-gpu-warn-HANDMADE.txt')})
    ok = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'text'})
    assert 'failed' not in ok and ok['warned_tests'] == ['targeted_power']
    assert ok['msg'] == 'dcgm_diag: 4 tests, none failed, warnings in targeted_power'
    bad = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'text', 'fail_on_warn': True})
    assert bad['failed'] is True
    assert 'targeted_power (Stress) Warn on the node, GPU 1 (fail_on_warn): GPU 1 Thermal violations' in bad['msg']


def test_no_output_and_timeout(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout_text': 'Error: unable to establish a connection to the '
                                                 'specified host: localhost\n', 'rc': 255})
    result = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'text'})
    assert result['failed'] is True and 'exited with rc=255 (Error: unable to establish a connection' in result['msg']
    assert 'no test result parsed' in result['msg']
    slow, dummy = make_replay(tmp_path, 'dcgmi-slow', {'stdout_text': '{}', 'sleep': 30})
    result = run_module(dcgm_diag.main, {'executable': slow, 'timeout': 1})
    assert result['failed'] is True and result['rc'] == -9


def test_check_mode_and_adhoc(corpus_file, tmp_path, run_module, run_adhoc):
    exe, log = make_replay(tmp_path, 'dcgmi', {'stdout': str(corpus_file(R2_JSON))})
    result = run_module(dcgm_diag.main, {'executable': exe, '_ansible_check_mode': True})
    assert result['skipped'] is True and calls(log) == []
    rc, res = run_playbook(REPO, 'dcgm_diag', {'executable': exe}, check=True, tmpdir=tmp_path)
    assert rc == 0 and res['skipped'] is True and calls(log) == []
    rc, res = run_adhoc('dcgm_diag', {'executable': exe, 'level': '2'})
    assert rc == 0 and res['failed_tests'] == [] and len(res['tests']) == 11


def _text_run(tmp_path, run_module, text, **params):
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout_text': text})
    return exe, run_module(dcgm_diag.main, dict({'executable': exe, 'output_format': 'text', 'level': '2'}, **params))


def test_full_text_output_is_complete(corpus_file, tmp_path, run_module):
    exe, result = _text_run(tmp_path, run_module, corpus_file(R2_TEXT).read_text())
    assert 'failed' not in result, result['msg']
    assert result['complete'] is True and len(result['tests']) == 11


def test_cut_text_output_fails(corpus_file, tmp_path, run_module):
    """The real r2 table without its closing border (the output cut short after the last test row)."""
    lines = corpus_file(R2_TEXT).read_text().rstrip('\n').splitlines()
    exe, result = _text_run(tmp_path, run_module, '\n'.join(lines[:-1]) + '\n', rung='dcgm-r2')
    assert result['failed'] is True and result['complete'] is False and result['failed_tests'] == []
    assert result['failures'] == [
        "dcgm-r2: output on dcgmi diag -r 2 is incomplete: the table's closing border does not follow the last test "
        'row (cut off or garbled output is not accepted); cmd: %s diag -r 2' % exe]


def test_text_output_cut_mid_table_fails(corpus_file, tmp_path, run_module):
    """Cut after the Integration section: the Hardware and Stress results never came."""
    text = corpus_file(R2_TEXT).read_text()
    exe, result = _text_run(tmp_path, run_module, text[:text.index('+-----  Hardware')])
    assert result['failed'] is True and len(result['failures']) == 1 and 'is incomplete' in result['msg']
    assert [t['name'] for t in result['tests']][-1] == 'PCIe'


def test_garbled_status_fails(corpus_file, tmp_path, run_module):
    """A status cell of the real table garbled ('Pass' -> 'Pa?s'): an unknown word is an error, never a pass."""
    text = corpus_file(R2_TEXT).read_text().replace('| PCIe                      | Pass - All',
                                                    '| PCIe                      | Pa?s - All')
    exe, result = _text_run(tmp_path, run_module, text)
    assert result['failed'] is True and result['failed_tests'] == ['PCIe'] and result['complete'] is True
    assert "dcgm_diag: PCIe (Integration) Error on the node: unrecognised result 'Pa?s - All'" in result['msg']


def test_garbled_row_fails(corpus_file, tmp_path, run_module):
    """A row of the real table that lost its leading border (a damaged line): kept as an error of its test."""
    text = corpus_file(R2_TEXT).read_text().replace('| GPU Memory                | Pass - All',
                                                    'GPU Memory                | Pass - All')
    exe, result = _text_run(tmp_path, run_module, text)
    assert result['failed'] is True and 'unreadable table row' in result['msg']


def test_cut_json_fails(corpus_file, tmp_path, run_module):
    """The real r2 JSON cut in the middle: not valid JSON, the run fails with the parse error."""
    text = corpus_file(R2_JSON).read_text()
    exe, dummy = make_replay(tmp_path, 'dcgmi', {'stdout_text': text[:len(text) // 2]})
    result = run_module(dcgm_diag.main, {'executable': exe, 'output_format': 'json'})
    assert result['failed'] is True and result['tests'] == [] and result['parse_error'].startswith(
        'dcgmi diag output is not valid JSON')
