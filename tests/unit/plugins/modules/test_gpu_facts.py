# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts module with a stand-in ``nvidia-smi`` that prints recorded outputs from the corpus."""

from __future__ import annotations

import json
import shlex
import stat

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import gpu_facts

DUAL_XML = 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml'
TOPO_2GPU = 'nvidia_smi/topo-m-2gpu-NV1-mlx5-PHB-old-legend.txt'
MISMATCH = 'Failed to initialize NVML: Driver/library version mismatch'


def fake_smi(tmp_path, xml=None, topo=None, q_rc=0, q_text=None, topo_rc=0, topo_text=None):
    """Write a shell script answering ``-q -x`` and ``topo -m`` like nvidia-smi would."""
    def answer(path, text, rc):
        if path is not None:
            body = 'cat %s' % shlex.quote(str(path))
        else:
            body = 'echo %s' % shlex.quote(text or '')
        return '%s; exit %d' % (body, rc)

    script = tmp_path / 'nvidia-smi'
    script.write_text(
        '#!/bin/sh\n'
        'echo "$@" >> %s\n'
        'case "$1" in\n'
        '  -q) %s ;;\n'
        '  topo) %s ;;\n'
        '  *) echo "unexpected args: $*" >&2; exit 2 ;;\n'
        'esac\n' % (shlex.quote(str(tmp_path / 'calls.log')), answer(xml, q_text, q_rc), answer(topo, topo_text, topo_rc)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def test_dual_gpu_with_topology(corpus, corpus_file, tmp_path, run_module):
    exe = fake_smi(tmp_path, corpus / DUAL_XML, corpus_file(TOPO_2GPU))
    result = run_module(gpu_facts.main, {'executable': str(exe)})
    assert result['changed'] is False
    facts = result['ansible_facts']['nvidia_gpu']
    assert facts['driver_version'] == '590.44.01' and facts['cuda_version'] == '13.1'
    assert facts['count'] == 2 and facts['executable'] == str(exe)
    assert [g['uuid'] for g in facts['gpus']] == [
        'GPU-12345678-aaaa-bbbb-cccc-0123456789ab', 'GPU-12345678-aaaa-bbbb-cccc-0123456789cd']
    assert facts['topology']['matrix']['GPU0']['mlx5_0'] == 'PHB'
    assert facts['gpus'][1]['topology'] == {'links': {'GPU0': 'NV1', 'mlx5_0': 'PHB'}, 'cpu_affinity': '0-7'}
    assert (tmp_path / 'calls.log').read_text().splitlines() == ['-q -x', 'topo -m']


def test_topology_disabled(corpus, tmp_path, run_module):
    exe = fake_smi(tmp_path, corpus / DUAL_XML, corpus / 'nvidia_smi/issue37-topo-m-DGX1-V100-hybrid-cube-mesh.txt')
    result = run_module(gpu_facts.main, {'executable': str(exe), 'topology': False})
    facts = result['ansible_facts']['nvidia_gpu']
    assert facts['topology'] == {} and facts['gpus'][0]['topology'] is None
    assert (tmp_path / 'calls.log').read_text().splitlines() == ['-q -x']


def test_topo_failure_is_a_warning(corpus, tmp_path, run_module):
    # recorded Windows answer to 'topo -m' (exit code 255 per the capture)
    err = (corpus / 'nvidia_smi/topo-m-windows-error.txt').read_text().splitlines()[0]
    exe = fake_smi(tmp_path, corpus / 'nvidia_smi/xml-telegraf-T4-515.xml', topo_text=err, topo_rc=255)
    result = run_module(gpu_facts.main, {'executable': str(exe)})
    assert 'failed' not in result
    assert result['ansible_facts']['nvidia_gpu']['count'] == 1
    assert result['ansible_facts']['nvidia_gpu']['topology'] == {}
    warnings = json.dumps(result['warnings'])  # list of str or of WarningSummary dicts (2.19+)
    assert 'topo -m failed (rc=255)' in warnings and 'Option -m is missing its value' in warnings


def test_missing_nvidia_smi_is_not_a_failure(tmp_path, run_module, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    result = run_module(gpu_facts.main, {'executable': 'nvidia-smi-gpufleet-absent'})
    assert 'failed' not in result
    assert result['msg'] == 'skipped: no GPU (nvidia-smi not found)'
    facts = result['ansible_facts']['nvidia_gpu']
    assert facts['count'] == 0 and facts['gpus'] == [] and facts['executable'] is None


def test_missing_explicit_path(tmp_path, run_module):
    result = run_module(gpu_facts.main, {'executable': str(tmp_path / 'nope' / 'nvidia-smi')})
    assert result['ansible_facts']['nvidia_gpu']['count'] == 0
    assert 'failed' not in result


@pytest.mark.parametrize('message, rc', [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
     "Make sure that the latest NVIDIA driver is installed and running.", 9),
    (MISMATCH, 18),
])
def test_failing_nvidia_smi_fails_with_text_and_command(tmp_path, run_module, message, rc):
    exe = fake_smi(tmp_path, q_text=message, q_rc=rc)
    result = run_module(gpu_facts.main, {'executable': str(exe)})
    assert result['failed'] is True
    assert message in result['msg']
    assert '%s -q -x' % exe in result['msg']
    assert '(rc=%d)' % rc in result['msg']
    assert result['rc'] == rc


# HAND_MADE stand-in (no recording in the corpus): "No devices were found" is what nvidia-smi prints when the
# driver is loaded but sees no GPU, with a non-zero exit (6 here); rc 0 covers a wrapper that drops the exit code.
@pytest.mark.parametrize('rc', [6, 0])
def test_no_devices_is_a_clear_failure_hand_made(tmp_path, run_module, rc):
    exe = fake_smi(tmp_path, q_text='No devices were found', q_rc=rc)
    result = run_module(gpu_facts.main, {'executable': str(exe)})
    assert result['failed'] is True and result['reason'] == 'no_devices' and result['rc'] == rc
    assert result['msg'] == (
        '%s -q -x: nvidia-smi found no GPU ("No devices were found", rc=%d): the NVIDIA driver answers but no GPU is '
        'visible - a GPU fallen off the bus (see dmesg for Xid 79), a GPU not passed through, or one bound to another '
        'driver' % (exe, rc))
    assert 'not XML' not in result['msg']


def test_garbage_output_fails(tmp_path, run_module):
    exe = fake_smi(tmp_path, q_text='this is not xml')
    result = run_module(gpu_facts.main, {'executable': str(exe)})
    assert result['failed'] is True and 'not XML' in result['msg'] and '-q -x' in result['msg']
    assert 'reason' not in result


def test_adhoc_end_to_end_check_mode(corpus, corpus_file, tmp_path, run_adhoc):
    exe = fake_smi(tmp_path, corpus_file('nvidia_smi/xml-netdata-TeslaP100-v11.xml'),
                   corpus / 'nvidia_smi/topo-m-h100-single-ansi.txt')
    rc, result = run_adhoc('gpu_facts', {'executable': str(exe)}, check=True)
    assert rc == 0 and result['changed'] is False
    facts = result['ansible_facts']['nvidia_gpu']
    assert facts['driver_version'] == '510.47.03'
    assert facts['gpus'][0]['ecc_errors']['aggregate'] == {'corrected': 3, 'uncorrected': 0}
    assert facts['gpus'][0]['topology'] == {'links': {}, 'cpu_affinity': '0-19', 'numa_affinity': '0',
                                            'gpu_numa_id': None}


def test_adhoc_failure(tmp_path, run_adhoc):
    exe = fake_smi(tmp_path, q_text=MISMATCH, q_rc=18)
    rc, result = run_adhoc('gpu_facts', {'executable': str(exe)})
    assert rc == 2  # ansible: a host failed
    assert MISMATCH in result['msg'] and '-q -x' in result['msg'] and result['rc'] == 18
