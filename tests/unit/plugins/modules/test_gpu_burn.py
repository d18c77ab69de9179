# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_burn module end to end with the replay program standing in for gpu-burn."""

from __future__ import annotations

import sys
from pathlib import Path

from ansible_collections.gpufleet.cluster.plugins.modules import gpu_burn

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
HAND = FIXTURES / 'hand_made'
REPO = FIXTURES.parents[2]
sys.path.insert(0, str(FIXTURES / 'replay'))
from replay import calls, make_replay, run_playbook  # noqa: E402  pylint: disable=wrong-import-position

OK = 'gpu_burn/superbench-8xA100-80GB-ok.txt'
FAULTY = 'gpu_burn/blog-T4-faulty-warning-errors.txt'


def test_ok_run(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(OK))})
    result = run_module(gpu_burn.main, {'executable': exe, 'duration': 30, 'doubles': True, 'tensor_cores': True,
                                        'expected_gpus': 8, 'min_gflops': 15000, 'max_temp_c': 85})
    assert 'failed' not in result, result['msg']
    assert result['tested'] == 8 and result['faulty'] == [] and result['changed'] is False
    assert result['gpus'][0]['gflops'] == 16942.0
    assert calls(log)[0]['argv'] == ['-d', '-tc', '30']
    assert result['msg'] == 'gpu_burn: 8 GPUs OK, min 16890.00 Gflop/s, max 62 C'


def test_faulty_names_gpu_and_errors(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(FAULTY))})
    result = run_module(gpu_burn.main, {'executable': exe, 'duration': 500, 'rung': 'burn-node'})
    assert result['failed'] is True and result['faulty'] == [0]
    assert result['msg'].startswith('burn-node: GPU 0 (Tesla T4, GPU-899fdfea-f386-7371-8495-9a98620768fb) FAULTY '
                                    '(errors 10159088, max 30539726); cmd: %s 500' % exe)
    assert result['gpus'][0]['gflops'] == 3064.0  # full result on failure


def test_thresholds_fail(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(OK))})
    result = run_module(gpu_burn.main, {'executable': exe, 'min_gflops': 17000, 'max_temp_c': 60, 'expected_gpus': 4})
    assert result['failed'] is True
    msg = result['msg']
    assert 'gpu_burn: Gflop/s on GPU 0 (NVIDIA A100-SXM4-80GB, GPU-b876c63f-396c-f826-5cd0-6b8409990352) = 16942.00 ' \
           'Gflop/s < threshold 17000.00 Gflop/s' in msg
    assert 'max temperature on GPU 0 (NVIDIA A100-SXM4-80GB, GPU-b876c63f-396c-f826-5cd0-6b8409990352) = 62 C > threshold 60 C' in msg
    assert '8 GPUs tested, expected 4' in msg


def test_died_and_warning_in_earlier_record(tmp_path, run_module):
    text = (HAND / 'gpu-burn-3xH100-cr-faulty-died-HANDMADE.txt').read_text()
    text = text.replace("\n10.0%", "\r10.0%").replace(" \n20.0%", " \r20.0%").replace(" \n30.0%", " \r30.0%")
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': text})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert result['failed'] is True and result['faulty'] == [1, 2]
    assert 'GPU 2 (NVIDIA H100 80GB HBM3, GPU-00000000-1111-2222-3333-444444444402) worker DIED' in result['msg']


def test_no_verdict_is_a_failure(corpus_file, tmp_path, run_module):
    text = corpus_file(OK).read_text().split('Tested 8 GPUs')[0]
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': text, 'rc': 0})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert result['failed'] is True and 'no "Tested N GPUs" verdict printed' in result['msg']
    assert 'GPU 0 (NVIDIA A100-SXM4-80GB' not in result['msg']  # GPUs without verdict only flagged once


def test_tool_dies(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': "Couldn't init a GPU test: CUDA_ERROR_NO_DEVICE\n",
                                                    'rc': 134})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert result['failed'] is True
    assert result['failures'][0].startswith("gpu_burn: gpu_burn exited with rc=134 (Couldn't init a GPU test")
    assert 'no GPU in the output' in result['failures'][1]


def test_timeout(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(OK)), 'sleep': 30})
    result = run_module(gpu_burn.main, {'executable': exe, 'duration': 1, 'timeout': 1})
    assert result['failed'] is True and result['rc'] == -9 and 'within timeout 1 s' in result['msg']


def test_runs_in_the_executables_directory(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(OK))})
    result = run_module(gpu_burn.main, {'executable': exe, 'args': ['-m', '90%']})
    assert 'failed' not in result


def test_check_mode(corpus_file, tmp_path, run_module, run_adhoc):
    exe, log = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(OK))})
    result = run_module(gpu_burn.main, {'executable': exe, '_ansible_check_mode': True})
    assert result['skipped'] is True and calls(log) == []
    rc, res = run_playbook(REPO, 'gpu_burn', {'executable': exe}, check=True, tmpdir=tmp_path)
    assert rc == 0 and res['skipped'] is True and calls(log) == []


def test_adhoc(corpus_file, tmp_path, run_adhoc):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(FAULTY))})
    rc, res = run_adhoc('gpu_burn', {'executable': exe, 'rung': 'burn'})
    assert rc == 2 and 'burn: GPU 0 (Tesla T4' in res['msg'] and res['faulty'] == [0]


TOOLS_HAND = FIXTURES.parents[1] / 'fixtures' / 'hand_made' / 'gpu_burn'


def test_full_output_passes_without_thresholds(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout': str(corpus_file(OK))})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert 'failed' not in result, result['msg']
    assert len(result['devices']) == 8 and result['tested'] == 8


def test_verdict_block_cut_fails(corpus_file, tmp_path, run_module):
    """The real 8-GPU run cut after the third verdict line: 'Tested 8 GPUs' but five verdicts missing."""
    text = corpus_file(OK).read_text()
    text = text[:text.index('\tGPU 3: OK')]
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': text})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert result['failed'] is True
    assert result['failures'][0].startswith('gpu_burn: "Tested 8 GPUs" but 3 verdict line(s) read (verdict block cut '
                                            'off or garbled; an incomplete output is not accepted)')
    assert 'GPU 7 (NVIDIA A100-SXM4-80GB' in result['msg'] and 'has no verdict' in result['msg']


def test_garbled_progress_cell_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """The real run with GPU 4's Gflop/s in the last progress record garbled: its figure is missing, the run fails."""
    text = corpus_file(OK).read_text()
    last = text.rindex('4522 (16890 Gflop/s)')
    text = text[:last] + '4522 (168?0 Gflop/s)' + text[last + len('4522 (16890 Gflop/s)'):]
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': text})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert result['failed'] is True and len(result['failures']) == 1
    assert result['failures'][0].startswith('gpu_burn: GPU 4 (NVIDIA A100-SXM4-80GB, ')
    assert 'has no readable Gflop/s in the last progress record (garbled or cut off' in result['msg']


def test_no_progress_record_fails(corpus_file, tmp_path, run_module):
    """The real run with every progress record removed: verdicts alone carry no figure."""
    lines = [line for line in corpus_file(OK).read_text().replace('\r', '\n').splitlines() if "proc'd" not in line]
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': '\n'.join(lines) + '\n'})
    result = run_module(gpu_burn.main, {'executable': exe})
    assert result['failed'] is True and result['progress_records'] == 0
    assert result['failures'] == ['gpu_burn: no progress record printed (no Gflop/s or error count figure; missing '
                                  'figures fail); cmd: %s 60' % exe]


def test_fewer_gpus_burned_than_listed(tmp_path, run_module, monkeypatch):
    """HANDMADE `gpu_burn -i 2` output (8 GPUs in the banner, one burned): fine with -i, a failure without it."""
    monkeypatch.delenv('CUDA_VISIBLE_DEVICES', raising=False)
    text = (TOOLS_HAND / 'gpu-burn-i2-power-8gpu-node-HANDMADE.txt').read_text()
    exe, dummy = make_replay(tmp_path, 'gpu_burn', {'stdout_text': text})
    ok = run_module(gpu_burn.main, {'executable': exe, 'args': ['-i', '2'], 'duration': 30})
    assert 'failed' not in ok, ok['msg']
    assert [g['index'] for g in ok['gpus']] == [2] and len(ok['devices']) == 8
    bad = run_module(gpu_burn.main, {'executable': exe, 'duration': 30})
    assert bad['failed'] is True and bad['failures'] == [
        'gpu_burn: nvidia-smi lists 8 GPUs but gpu-burn burned 1 (GPU 0, GPU 1, GPU 3, GPU 4, GPU 5, GPU 6, GPU 7 not '
        'burned; no -i or CUDA_VISIBLE_DEVICES chose them); cmd: %s 30' % exe]
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '2')
    assert 'failed' not in run_module(gpu_burn.main, {'executable': exe, 'duration': 30})
