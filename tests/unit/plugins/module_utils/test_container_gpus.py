# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_gpus rung's pure parts: nvidia_smi.parse_gpu_list / parse_uuid_list on REAL recorded lists
(tests/unit/fixtures/excerpts, verbatim; every capture of the shared corpus when present), the engine's evaluate()
comparing a container's list with the host's, and container_runtime reading the runtimes' REAL error texts (the
HANDMADE docker stand-in's CASES, each copied from a public issue)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import container_gpus_engine as engine
from ansible_collections.gpufleet.cluster.plugins.module_utils import container_runtime as cr
from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi

UNIT = Path(__file__).resolve().parents[2]
EXCERPTS = UNIT / 'fixtures' / 'excerpts' / 'nvidia_smi'
A100X8 = (EXCERPTS / 'list-L-8xA100-80GB-superbench.txt').read_text()  # recorded (MIT), see excerpts/README.md
H100_MIG = (EXCERPTS / 'list-L-h100-mig-590.txt').read_text()
STANDIN = UNIT.parents[1] / 'tests' / 'fixtures' / 'hand_made' / 'container_gpus' / 'docker_standin_HANDMADE.py'
CAPTURES = ['nvidia_smi/captures/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt',
            'nvidia_smi/captures/linux-x86_64__nvidia-h100-mig__590.48.01.txt',
            'nvidia_smi/captures/linux-x86_64__nvidia-h200__590.48.01.txt',
            'nvidia_smi/captures/linux-x86_64__nvidia-l40s__595.80.txt',
            'nvidia_smi/captures/windows-x86_64__nvidia-geforce-rtx-2080-super__591.86.txt']


def _standin_cases():
    spec = importlib.util.spec_from_file_location('docker_standin_handmade', str(STANDIN))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CASES


# ------------------------------------------------------------------ parsers on recorded lists
def test_recorded_8_gpu_list():
    parsed = nvidia_smi.parse_gpu_list(A100X8)
    assert parsed['malformed'] == [] and parsed['warnings'] == []
    assert [g['index'] for g in parsed['gpus']] == list(range(8))
    assert set(g['name'] for g in parsed['gpus']) == {'NVIDIA A100-SXM4-80GB'}
    assert parsed['gpus'][0]['uuid'] == 'GPU-b876c63f-396c-f826-5cd0-6b8409990352'
    assert parsed['gpus'][7]['uuid'] == 'GPU-b07c7bf3-4549-25d9-cec2-999db25a20a6'
    assert all(g['mig_devices'] == [] for g in parsed['gpus'])


def test_recorded_mig_list():
    parsed = nvidia_smi.parse_gpu_list(H100_MIG)
    assert parsed['malformed'] == []
    (gpu,) = parsed['gpus']
    assert gpu['name'] == 'NVIDIA H100 80GB HBM3'
    assert [(m['profile'], m['device']) for m in gpu['mig_devices']] == [
        ('3g.40gb', 0), ('2g.20gb', 1), ('1g.10gb', 2), ('1g.10gb', 3)]
    assert gpu['mig_devices'][1]['uuid'] == 'MIG-00000001-0000-0000-0000-000000000001'


@pytest.mark.parametrize('rel', CAPTURES)
def test_every_recorded_capture_list_parses_whole(rel, corpus_file):
    text = corpus_file(rel).read_text()
    section = re.search(r'# \$ nvidia-smi -L\n#+\n(.*?)\n#{20,}', text, re.S).group(1)
    parsed = nvidia_smi.parse_gpu_list(section)
    assert parsed['malformed'] == [] and len(parsed['gpus']) == 1
    assert parsed['gpus'][0]['uuid'].startswith('GPU-')


@pytest.mark.parametrize('rel', ['nvidia_smi/query-gpu-csv-h200-590-idle.txt', 'nvidia_smi/query-gpu-csv-l40s-595-idle.txt',
                                 'nvidia_smi/query-gpu-csv-h100-590-full-fields.txt'])
def test_uuid_list_of_recorded_query_gpu_uuid_column(rel, corpus_file):
    rows = nvidia_smi.parse_query_gpu_csv(corpus_file(rel).read_text())
    uuids = [r['uuid'] for r in rows]
    # what --query-gpu=uuid --format=csv,noheader prints for these GPUs; with and without the header line
    for text in ('\n'.join(uuids) + '\n', 'uuid\n' + '\n'.join(uuids) + '\n'):
        parsed = nvidia_smi.parse_uuid_list(text)
        assert [g['uuid'] for g in parsed['gpus']] == uuids and parsed['malformed'] == []


def test_uuid_list_from_the_recorded_8_gpu_list():
    uuids = [g['uuid'] for g in nvidia_smi.parse_gpu_list(A100X8)['gpus']]
    parsed = nvidia_smi.parse_uuid_list('\n'.join(uuids))
    assert [g['uuid'] for g in parsed['gpus']] == uuids and parsed['gpus'][3]['index'] == 3


def test_a_list_cut_inside_a_uuid_has_a_malformed_line():
    cut = A100X8[:A100X8.index('GPU 5:') + 40]
    parsed = nvidia_smi.parse_gpu_list(cut)
    assert len(parsed['gpus']) == 5 and parsed['malformed'] == [cut.splitlines()[-1]]


def test_noise_and_warnings():
    parsed = nvidia_smi.parse_gpu_list('WARNING: infoROM is corrupted at gpu 0000:04:00.0\n' + A100X8 + 'garbage\n')
    assert parsed['warnings'] == ['WARNING: infoROM is corrupted at gpu 0000:04:00.0']
    assert parsed['malformed'] == ['garbage'] and len(parsed['gpus']) == 8
    orphan = nvidia_smi.parse_gpu_list(H100_MIG.split('\n', 1)[1])  # MIG lines without their GPU line
    assert orphan['gpus'] == [] and len(orphan['malformed']) == 4
    assert nvidia_smi.parse_uuid_list('GPU-1234\nnot-a-uuid\n')['malformed'] == ['not-a-uuid']


@pytest.mark.parametrize('parse', [nvidia_smi.parse_gpu_list, nvidia_smi.parse_uuid_list])
def test_failure_messages_raise(parse):
    with pytest.raises(nvidia_smi.NvidiaSmiNoDevices):
        parse('No devices were found\n')
    with pytest.raises(nvidia_smi.NvidiaSmiParseError, match='Failed to initialize NVML: Driver/library version mismatch'):
        parse('Failed to initialize NVML: Driver/library version mismatch\n')
    assert parse('')['gpus'] == [] and parse(b'\xff\xfe')['gpus'] == []


# ------------------------------------------------------------------ evaluate()
def _list(text):
    return nvidia_smi.parse_gpu_list(text)


def test_same_list_passes():
    assert engine.evaluate(_list(A100X8), _list(A100X8), 'container_gpus', 'CMD', expected_gpus=8) == []
    assert engine.evaluate(_list(H100_MIG), _list(H100_MIG), 'container_gpus', 'CMD') == []


def test_fewer_gpus_fail_naming_the_missing_one():
    fewer = ''.join(A100X8.splitlines(True)[:7])
    (msg,) = engine.evaluate(_list(A100X8), _list(fewer), 'container_gpus', 'CMD')
    assert 'the container sees 7 GPU(s), the host 8 (fewer than the host)' in msg
    assert 'missing in the container: GPU 7 NVIDIA A100-SXM4-80GB (GPU-b07c7bf3-4549-25d9-cec2-999db25a20a6)' in msg
    assert msg.endswith('; cmd: CMD')


def test_other_uuids_fail_naming_both():
    # HANDMADE variant of the recorded list: GPU 2's UUID changed by hand (another node's GPU)
    other = A100X8.replace('GPU-0263142c-1fa3-5a88-7390-8118632bc351', 'GPU-0263142c-1fa3-5a88-7390-000000000000')
    (msg,) = engine.evaluate(_list(A100X8), _list(other), 'container_gpus', 'CMD')
    assert 'other GPUs than the host (different UUIDs)' in msg
    assert 'missing in the container: GPU 2 NVIDIA A100-SXM4-80GB (GPU-0263142c-1fa3-5a88-7390-8118632bc351)' in msg
    assert 'not on the host: GPU 2 NVIDIA A100-SXM4-80GB (GPU-0263142c-1fa3-5a88-7390-000000000000)' in msg


def test_more_gpus_than_the_host_fail():
    host = ''.join(A100X8.splitlines(True)[:4])
    (msg,) = engine.evaluate(_list(host), _list(A100X8), 'r', 'CMD')
    assert 'sees 8 GPU(s), the host 4 (more than the host)' in msg and 'not on the host: GPU 4' in msg


@pytest.mark.parametrize('container', [None, '', 'No GPU list here\n'])
def test_no_list_is_a_failure(container):
    parsed = None if container is None else _list(container)
    failures = engine.evaluate(_list(A100X8), parsed, 'container_gpus', 'CMD')
    assert 'the container printed no GPU list (the host has 8 GPU(s): GPU-b876c63f' in failures[0]
    assert len(failures) == (2 if container else 1)  # the garbage line is named as well


def test_missing_mig_devices_fail():
    fewer_mig = ''.join(H100_MIG.splitlines(True)[:3])
    (msg,) = engine.evaluate(_list(H100_MIG), _list(fewer_mig), 'r', 'CMD')
    assert 'sees 2 MIG device(s), the host 4' in msg
    assert 'MIG 1g.10gb device 2 of GPU-00000000-0000-0000-0000-000000000000' in msg


def test_expected_count_and_garbled_container_output():
    failures = engine.evaluate(_list(A100X8), _list(A100X8 + 'GPU 8: NVIDIA A100-SXM4-80GB (UUID: GPU-b07c'),
                               'r', 'CMD', expected_gpus=4)
    assert failures[0].startswith('r: the host lists 8 GPU(s), expected 4')
    assert any('malformed row(s) on the container' in f for f in failures)


# ------------------------------------------------------------------ the runtimes' REAL error texts
EXPECTED_KIND = {
    'no_toolkit': 'no_gpu_driver', 'runtime_missing': 'runtime_missing', 'cdi_unresolvable': 'cdi_unresolvable',
    'cdi_disabled': 'cdi_disabled', 'hook_failed': 'toolkit_hook', 'no_smi_in_container': 'command_missing',
    'image_never_pulled': 'image_missing', 'podman_cdi_unresolvable': 'cdi_unresolvable',
    'podman_no_smi': 'command_missing',
}


@pytest.mark.parametrize('case', sorted(EXPECTED_KIND))
def test_runtime_errors_are_read_verbatim_and_diagnosed(case):
    stderr, dummy, source = _standin_cases()[case]
    assert source
    text = cr.error_text(stderr)
    assert text.split(': ', 1)[0] in ('docker', 'Error')
    assert 'See ' not in text and 'ERRO[' not in text  # the CLI's noise is dropped, the error is kept whole
    first = stderr.splitlines()[0].strip()
    assert text.startswith(first)
    kind, hint = cr.diagnose(text)
    assert kind == EXPECTED_KIND[case] and hint


def test_hook_error_keeps_its_second_line():
    text = cr.error_text(_standin_cases()['hook_failed'][0])
    assert text.endswith("stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: change "
                         'root failed: no such file or directory: unknown.')


def test_error_text_fallbacks():
    assert cr.error_text('', '') is None and cr.diagnose(None) == (None, None)
    assert cr.error_text('some line\nlast words\n') == 'last words'
    assert cr.error_text('', 'No devices were found\n') == 'No devices were found'
    assert cr.diagnose('something new') == ('other', None)
    assert cr.diagnose('Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon '
                       'running?')[0] == 'daemon_down'


# What the real dockerd printed in the lab (molecule/container_gpus on nspawn lab hosts, Debian's docker.io 20.10.24 on
# bookworm and 26.1.5 on trixie, 2026-11-26), stderr of `docker run` verbatim, with its exit code.
LAB_RECORDED = [
    ('20.10.24: daemon.json default-runtime nvidia, binary missing', 127, 'runtime_missing',
     'docker: Error response from daemon: failed to create shim task: OCI runtime create failed: unable to retrieve OCI '
     'runtime error (open /run/containerd/io.containerd.runtime.v2.task/moby/ac0f85abb0231641ff21cd984fec3b649658e5c28e0'
     '373cb1cba4d63a4669ac6/log.json: no such file or directory): fork/exec /usr/bin/nvidia-container-runtime: no such '
     'file or directory: unknown.\n'),
    ('26.1.5: daemon.json default-runtime nvidia, binary missing', 127, 'runtime_missing',
     'docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime '
     'create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v2.task/moby/6bc4d'
     '016559bf79a287c52086ce1f93dfab0067d37f3bd1f1cdf21fdbba24778/log.json: no such file or directory): fork/exec '
     '/usr/bin/nvidia-container-runtime: no such file or directory: unknown.\n'),
    ('20.10.24 and 26.1.5: --gpus all, no nvidia-container-runtime-hook', 125, 'no_gpu_driver',
     'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'),
    ('20.10.24: --device nvidia.com/gpu=all', 125, 'cdi_unsupported',
     "docker: nvidia.com/gpu=all is not an absolute path.\nSee 'docker run --help'.\n"),
    ('26.1.5: --device nvidia.com/gpu=all, CDI not enabled', 125, 'cdi_disabled',
     'docker: Error response from daemon: could not select device driver "cdi" with capabilities: [].\n'),
    ('20.10.24: cgroup v1 read-only in nspawn (the lab itself, not a GPU fault)', 125, 'other',
     'docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: '
     'unable to start container process: unable to apply cgroup configuration: mkdir /sys/fs/cgroup/cpuset/docker: '
     'read-only file system: unknown.\n'),
]


@pytest.mark.parametrize('case,rc,kind,stderr', LAB_RECORDED, ids=[c[0] for c in LAB_RECORDED])
def test_lab_recorded_dockerd_errors(case, rc, kind, stderr):
    text = cr.error_text(stderr)
    assert text == stderr.splitlines()[0]  # one line each, kept whole, the usage pointer dropped
    assert cr.diagnose(text)[0] == kind
    assert rc in engine.RUNTIME_RCS
