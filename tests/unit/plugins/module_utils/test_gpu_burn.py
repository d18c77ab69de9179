# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu-burn parser on the recorded outputs and hand-made edge cases; robustness on cut and garbled recordings."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_burn

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'


def cr_joined(text):
    """The hand-made run as gpu-burn writes it: progress records rewritten with a carriage return on one line
    (kept one per line in the committed file, sanity's line-endings test rejects CR)."""
    return text.replace("\n10.0%", "\r10.0%").replace(" \n20.0%", " \r20.0%").replace(" \n30.0%", " \r30.0%")


def test_every_recorded_file_is_covered(corpus, corpus_full):
    files = sorted(p.name for p in (corpus / 'gpu_burn').glob('*'))
    known = ['blog-T4-faulty-warning-errors.txt', 'superbench-8xA100-80GB-ok.txt']
    assert files == known if corpus_full else set(files) <= set(known)


def test_8xA100_ok_concatenated_progress(corpus_file):
    parsed = gpu_burn.parse(corpus_file('gpu_burn/superbench-8xA100-80GB-ok.txt').read_text())
    assert parsed['tested'] == 8 and parsed['percent'] == 100.0 and parsed['problems'] == []
    assert parsed['progress_records'] == 196  # many records concatenated on single lines
    assert [g['verdict'] for g in parsed['gpus']] == ['OK'] * 8
    assert all(g['max_errors'] == 0 and not g['died'] for g in parsed['gpus'])
    first, last = parsed['gpus'][0], parsed['gpus'][7]
    assert first['name'] == 'NVIDIA A100-SXM4-80GB' and first['uuid'] == 'GPU-b876c63f-396c-f826-5cd0-6b8409990352'
    assert (first['gflops'], first['temp_c'], first['iterations'], first['memory_used_mb']) == (16942.0, 62, 6783, 72443)
    assert (last['gflops'], last['temp_c'], last['iterations']) == (16926.0, 61, 4522)


def test_T4_faulty_with_warning_errors(corpus_file):
    parsed = gpu_burn.parse(corpus_file('gpu_burn/blog-T4-faulty-warning-errors.txt').read_text())
    assert parsed['tested'] == 1 and parsed['progress_records'] == 10
    gpu = parsed['gpus'][0]
    assert gpu['verdict'] == 'FAULTY' and gpu['name'] == 'Tesla T4'
    assert gpu['errors'] == 10159088 and gpu['max_errors'] == 30539726
    assert (gpu['gflops'], gpu['temp_c'], gpu['max_temp_c'], gpu['iterations']) == (3064.0, 70, 70, 1400)


def test_hand_made_carriage_returns_died_and_unknown_temp():
    text = cr_joined((HAND / 'gpu-burn-3xH100-cr-faulty-died-HANDMADE.txt').read_text())
    assert text.count('\r') == 3 and "\r20.0%  proc'd" in text
    assert gpu_burn.parse(text) == gpu_burn.parse(text.replace('\r', '\n'))
    parsed = gpu_burn.parse(text)
    assert parsed['progress_records'] == 3 and parsed['tested'] == 3
    g0, g1, g2 = parsed['gpus']
    assert g0['verdict'] == 'OK' and g0['gflops'] == 41180.0
    assert g1['verdict'] == 'FAULTY' and g1['errors'] == 0 and g1['max_errors'] == 17
    assert g2['died'] is True and g2['temp_c'] is None and g2['max_temp_c'] == 67


def test_cut_off_output_has_no_verdict(corpus_file):
    text = corpus_file('gpu_burn/blog-T4-faulty-warning-errors.txt').read_text()
    parsed = gpu_burn.parse(text.split('Killing processes')[0])
    assert parsed['tested'] is None and parsed['gpus'][0]['verdict'] is None


def test_tool_problem_lines():
    parsed = gpu_burn.parse("Couldn't init a GPU test: CUDA_ERROR_OUT_OF_MEMORY\nNo clients are alive!  Aborting\n")
    assert parsed['gpus'] == [] and len(parsed['problems']) == 2


# ---- newest gpu-burn and -i N (see tests/fixtures/hand_made/gpu_burn/README.md) ----

TOOLS_HAND = Path(__file__).resolve().parents[3] / 'fixtures' / 'hand_made' / 'gpu_burn'


def test_single_gpu_of_eight_with_power_hand_made():
    """gpu_burn -i 2 with the power column: the banner lists 8 GPUs, only device 2 burns and reports as GPU 0."""
    parsed = gpu_burn.parse((TOOLS_HAND / 'gpu-burn-i2-power-8gpu-node-HANDMADE.txt').read_text())
    assert parsed['tested'] == 1 and parsed['progress_records'] == 3 and parsed['problems'] == []
    assert len(parsed['devices']) == 8 and parsed['devices'][7]['uuid'].endswith('507')
    assert len(parsed['gpus']) == 1
    gpu = parsed['gpus'][0]
    assert (gpu['index'], gpu['verdict'], gpu['uuid']) == (2, 'OK', 'GPU-10000000-2222-3333-4444-555555555502')
    assert (gpu['gflops'], gpu['temp_c'], gpu['max_temp_c'], gpu['memory_used_mb']) == (40990.0, 65, 65, 72318)
    assert (gpu['power_w'], gpu['max_power_w'], gpu['errors'], gpu['max_errors']) == (None, 688.0, 0, 0)


def test_power_column_makes_no_phantom_gpu():
    """'power: -- - --' after the temps must not read as two more GPUs with unknown temperature."""
    line = ("\r50.0%  proc'd: 100 (400 Gflop/s) - 90 (350 Gflop/s)   errors: 0 - 3  (WARNING!)  temps: 61 C - 63 C"
            "   power: -- - 301 W \n")
    parsed = gpu_burn.parse(line + 'done\n\nTested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: FAULTY\n')
    assert [g['index'] for g in parsed['gpus']] == [0, 1]
    assert [(g['temp_c'], g.get('power_w'), g['max_errors']) for g in parsed['gpus']] == [(61, None, 0), (63, 301.0, 3)]


def test_garbled_cell_keeps_the_other_gpus_in_place():
    """A cell that does not read is missing for its GPU only; '85\u00b0C' (degree sign) reads as 85."""
    parsed = gpu_burn.parse("10.0%  proc'd: 10 (400 Gflop/s) - ?? (350 Gflop/s) - 12 (390 Gflop/s)   "
                            "errors: 0 - 0 - 5  (WARNING!)  temps: 61 C - 85\u00b0C - 66 C \n")
    assert [(g['iterations'], g['gflops'], g['errors'], g['temp_c']) for g in parsed['gpus']] == [
        (10, 400.0, 0, 61), (None, None, 0, 85), (12, 390.0, 5, 66)]
    assert parsed['tested'] is None  # no verdict block: the run did not finish


# ---- robustness: every recorded output cut, shuffled and garbled ----


@pytest.mark.parametrize('name', ['blog-T4-faulty-warning-errors.txt', 'superbench-8xA100-80GB-ok.txt'])
def test_cut_shuffled_garbled_never_pass_silently(name, corpus_file, damaged_tokens):
    text = corpus_file('gpu_burn/' + name).read_text()
    orig = gpu_burn.parse(text)
    verdicts = {g['index']: g['verdict'] for g in orig['gpus']}
    for kind, bad in damaged_tokens(text):
        parsed = gpu_burn.parse(bad)  # never raises
        assert len(parsed['gpus']) <= len(orig['gpus']), (kind, bad)  # no phantom GPU
        for gpu in parsed['gpus']:
            assert gpu['verdict'] in (None, verdicts.get(gpu['index'])), (kind, gpu)  # never a better verdict
        if kind == 'cut' and parsed != orig:
            # cut short: the verdict block is missing or incomplete
            assert parsed['tested'] is None or any(g['verdict'] is None for g in parsed['gpus']) \
                or len(parsed['gpus']) < parsed['tested'], bad


def test_tool_failure_lines_of_the_newest_gpu_burn():
    parsed = gpu_burn.parse('No CUDA devices\nFailure during compute: Error in "SGEMM": CUBLAS_STATUS_EXECUTION_FAILED\n'
                            'Could not invoke nvidia-smi, no temps available\n')
    assert len(parsed['problems']) == 3 and parsed['gpus'] == [] and parsed['tested'] is None
