# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_gpus module end to end: the host's nvidia-smi is a script printing a REAL recorded ``nvidia-smi -L``
list (tests/unit/fixtures/excerpts), docker/podman the HANDMADE stand-in (tests/fixtures/hand_made/container_gpus)
that prints the container's list or fails with the runtimes' REAL error texts. Checks the command line it runs,
the pass, every failure with the runtime's own text, the GPU-less skip, check mode and the timeout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import container_gpus

UNIT = Path(__file__).resolve().parents[2]
EXCERPTS = UNIT / 'fixtures' / 'excerpts' / 'nvidia_smi'
A100X8 = EXCERPTS / 'list-L-8xA100-80GB-superbench.txt'  # recorded (MIT), see excerpts/README.md
H100_MIG = EXCERPTS / 'list-L-h100-mig-590.txt'
STANDIN = UNIT.parents[1] / 'tests' / 'fixtures' / 'hand_made' / 'container_gpus' / 'docker_standin_HANDMADE.py'
IMAGE = 'registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04'


class Lab(object):
    """A temp tree with bin/nvidia-smi (prints ``host``), bin/docker and bin/podman (the stand-in)."""

    def __init__(self, tmp_path, monkeypatch, host=A100X8, container=A100X8, case='ok'):
        self.bin = tmp_path / 'bin'
        self.bin.mkdir()
        self.log = tmp_path / 'runtime.log'
        self.smi_log = tmp_path / 'smi.log'
        self.host_list = tmp_path / 'host.txt'
        self.host_list.write_text(Path(host).read_text() if isinstance(host, Path) else host)
        self.ctr_list = tmp_path / 'container.txt'
        self.ctr_list.write_text(Path(container).read_text() if isinstance(container, Path) else container)
        self.smi = self._script('nvidia-smi', 'echo "$*" >> %s\ncat %s' % (self.smi_log, self.host_list))
        for name in ('docker', 'podman'):
            self._script(name, '# HANDMADE stand-in, not the real %s\nexec %s %s "$@"' % (name, sys.executable, STANDIN))
        monkeypatch.setenv('GPUFLEET_STANDIN_CASE', case)
        monkeypatch.setenv('GPUFLEET_STANDIN_LIST', str(self.ctr_list))
        monkeypatch.setenv('GPUFLEET_STANDIN_LOG', str(self.log))

    def _script(self, name, body):
        path = self.bin / name
        path.write_text('#!/bin/sh\n%s\n' % body)
        path.chmod(0o755)
        return str(path)

    def params(self, **kw):
        return dict(dict(image=IMAGE, docker_path=str(self.bin / 'docker'), podman_path=str(self.bin / 'podman'),
                         nvidia_smi_path=self.smi), **kw)

    def calls(self):
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def smi_calls(self):
        return self.smi_log.read_text().splitlines() if self.smi_log.exists() else []


def test_same_gpus_pass_with_the_command_line_of_the_rung(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch)
    result = run_module(container_gpus.main, lab.params(expected_gpus=8))
    assert not result.get('failed'), result['msg']
    assert result['changed'] is False and result['failures'] == []
    assert result['host_count'] == 8 and result['container_count'] == 8
    assert result['missing'] == [] and result['unexpected'] == [] and result['runtime_error'] is None
    assert result['msg'] == ("container_gpus: the container (docker --gpus all, %s) sees the host's 8 GPU(s), same "
                             'UUIDs' % IMAGE)
    (call,) = lab.calls()
    assert call[:4] == ['run', '--rm', '--name', call[3]] and call[3].startswith('gpufleet-container-gpus-')
    assert call[4:] == ['--network', 'none', '--pull', 'missing', '--gpus', 'all', IMAGE, 'nvidia-smi', '-L']
    assert lab.smi_calls() == ['-L'] and result['host_cmd'] == lab.smi + ' -L'


def test_cdi_podman_uuid_query(tmp_path, monkeypatch, run_module):
    uuids = '\n'.join(line.split('UUID: ')[1].rstrip(')') for line in A100X8.read_text().splitlines()) + '\n'
    lab = Lab(tmp_path, monkeypatch, host=uuids, container=uuids)
    result = run_module(container_gpus.main, lab.params(runtime='podman', mode='cdi', query='uuid', pull='never',
                                                        oci_runtime='crun', run_args=['--security-opt=label=disable']))
    assert not result.get('failed'), result['msg']
    assert 'podman --device nvidia.com/gpu=all' in result['msg']
    assert lab.calls()[0][4:] == ['--network', 'none', '--pull', 'never', '--runtime', 'crun', '--device',
                                  'nvidia.com/gpu=all', '--security-opt=label=disable', IMAGE, 'nvidia-smi',
                                  '--query-gpu=uuid', '--format=csv,noheader']
    assert result['cmd'].startswith(str(lab.bin / 'podman') + ' run ')


def test_mig_devices_compared(tmp_path, monkeypatch, run_module):
    fewer = ''.join(H100_MIG.read_text().splitlines(True)[:4])  # the recorded list without its last MIG device
    lab = Lab(tmp_path, monkeypatch, host=H100_MIG, container=fewer)
    result = run_module(container_gpus.main, lab.params())
    assert result['failed'] and 'sees 3 MIG device(s), the host 4' in result['msg']
    assert 'MIG-00000003-0000-0000-0000-000000000003' in result['msg']


def test_fewer_gpus_fail_naming_the_missing_gpu(tmp_path, monkeypatch, run_module):
    fewer = ''.join(A100X8.read_text().splitlines(True)[:6])
    lab = Lab(tmp_path, monkeypatch, container=fewer)
    result = run_module(container_gpus.main, lab.params())
    assert result['failed'] and result['container_count'] == 6 and result['host_count'] == 8
    assert result['missing'] == ['GPU-0df232aa-4ecd-f6af-a06e-2607f1dd4993', 'GPU-b07c7bf3-4549-25d9-cec2-999db25a20a6']
    assert 'the container sees 6 GPU(s), the host 8 (fewer than the host)' in result['msg']


def test_other_uuids_fail(tmp_path, monkeypatch, run_module):
    # HANDMADE variant of the recorded list: one UUID changed by hand
    other = A100X8.read_text().replace('GPU-eddccf9f-ca78-9402-3377-660305c27bfe', 'GPU-eddccf9f-ca78-9402-3377-0000000000ff')
    lab = Lab(tmp_path, monkeypatch, container=other)
    result = run_module(container_gpus.main, lab.params())
    assert result['failed'] and result['unexpected'] == ['GPU-eddccf9f-ca78-9402-3377-0000000000ff']
    assert 'different UUIDs' in result['msg'] and 'GPU-eddccf9f-ca78-9402-3377-660305c27bfe' in result['msg']


@pytest.mark.parametrize('container', ['', 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b876c63f-396c'])
def test_no_or_cut_list_fails(tmp_path, monkeypatch, run_module, container):
    lab = Lab(tmp_path, monkeypatch, container=container)
    result = run_module(container_gpus.main, lab.params())
    assert result['failed'] and result['container_count'] in (None, 0)
    assert 'the container printed no GPU list (the host has 8 GPU(s)' in result['msg']


@pytest.mark.parametrize('case,kind,text', [
    ('no_toolkit', 'no_gpu_driver', 'docker: Error response from daemon: could not select device driver "" with '
                                    'capabilities: [[gpu]].'),
    ('runtime_missing', 'runtime_missing', 'exec: "nvidia-container-runtime": executable file not found in $PATH'),
    ('cdi_unresolvable', 'cdi_unresolvable', 'unresolvable CDI devices nvidia.com/gpu=all'),
    ('cdi_disabled', 'cdi_disabled', 'could not select device driver "cdi" with capabilities: [].'),
    ('hook_failed', 'toolkit_hook', 'nvidia-container-cli: initialization error: change root failed'),
    ('no_smi_in_container', 'command_missing', 'exec: "nvidia-smi": executable file not found in $PATH'),
    ('image_never_pulled', 'image_missing', 'No such image: ' + IMAGE),
])
def test_runtime_failures_carry_the_runtimes_own_text(tmp_path, monkeypatch, run_module, case, kind, text):
    lab = Lab(tmp_path, monkeypatch, case=case)
    result = run_module(container_gpus.main, lab.params(mode='cdi' if 'cdi' in case else 'gpus'))
    assert result['failed'] and result['runtime_error_kind'] == kind
    assert text in result['runtime_error'] and text in result['msg']
    assert result['msg'].startswith('container_gpus: docker run failed (rc=%d): ' % result['rc'])
    assert result['hint'] in result['msg'] and 'See ' not in result['msg']
    assert result['container_gpus'] is None and result['container_count'] is None


def test_podman_errors(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch, case='podman_no_smi')
    result = run_module(container_gpus.main, lab.params(runtime='podman', mode='cdi'))
    assert result['failed'] and result['rc'] == 127 and result['runtime_error_kind'] == 'command_missing'
    assert result['msg'].startswith('container_gpus: podman run failed (rc=127): Error: crun: executable file '
                                    '`nvidia-smi` not found in $PATH')


def test_no_gpu_in_the_container(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch, case='container_no_devices')
    result = run_module(container_gpus.main, lab.params())
    assert result['failed'] and result['rc'] == 6
    assert 'nvidia-smi in the container found no GPU ("No devices were found", rc=6)' in result['msg']


def test_gpu_less_host_is_skipped_and_runs_nothing(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch)
    result = run_module(container_gpus.main, lab.params(nvidia_smi_path=str(tmp_path / 'none' / 'nvidia-smi')))
    assert result['skipped'] is True and not result.get('failed')
    assert result['msg'].startswith('skipped: no GPU (nvidia-smi not found')
    assert lab.calls() == [] and lab.smi_calls() == []


def test_check_mode_runs_nothing(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch)
    result = run_module(container_gpus.main, dict(lab.params(), _ansible_check_mode=True))
    assert result['skipped'] is True and result['msg'] == 'skipped: check mode, docker run not run'
    assert '--gpus all' in result['cmd'] and lab.calls() == [] and lab.smi_calls() == []


def test_host_without_devices_fails_before_the_container(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch, host='No devices were found\n')
    result = run_module(container_gpus.main, lab.params())
    assert result['failed'] and 'nvidia-smi on the host found no GPU' in result['msg'] and lab.calls() == []


def test_missing_runtime_fails(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch)
    result = run_module(container_gpus.main, lab.params(docker_path=str(tmp_path / 'none' / 'docker')))
    assert result['failed'] and 'not found on PATH' in result['msg'] and lab.smi_calls() == []


def test_timeout_kills_and_removes_the_container(tmp_path, monkeypatch, run_module):
    lab = Lab(tmp_path, monkeypatch, case='hang')
    result = run_module(container_gpus.main, lab.params(timeout=1))
    assert result['failed'] and 'did not finish within timeout 1 s (killed)' in result['msg']
    calls = lab.calls()
    assert calls[0][0] == 'run' and calls[1] == ['rm', '--force', calls[0][3]]


@pytest.mark.parametrize('params,option', [
    ({'image': ''}, 'image'), ({'image': '--privileged'}, 'image'), ({'image': 'two words'}, 'image'),
    ({'runtime': 'podman', 'mode': 'gpus'}, 'mode'), ({'expected_gpus': 0}, 'expected_gpus'),
    ({'timeout': 0}, 'timeout'), ({'run_args': ['']}, 'run_args[0]'), ({'oci_runtime': '-x'}, 'oci_runtime'),
])
def test_bad_input_refused_before_anything_runs(tmp_path, monkeypatch, run_module, params, option):
    lab = Lab(tmp_path, monkeypatch)
    result = run_module(container_gpus.main, lab.params(**params))
    assert result['failed'] and option in result['msg']
    assert lab.calls() == [] and lab.smi_calls() == []
