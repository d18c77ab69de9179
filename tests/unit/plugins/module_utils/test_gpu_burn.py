# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu-burn parser on the recorded outputs and a hand-made edge case."""

from __future__ import annotations

from pathlib import Path

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
