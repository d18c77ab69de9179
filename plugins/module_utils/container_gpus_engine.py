# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the ``container_gpus`` module: refuse bad input, list the host's GPUs with nvidia-smi, run
nvidia-smi in a container given every GPU (``docker run --gpus all`` or CDI ``--device nvidia.com/gpu=all``
with docker or podman) through _runner, and compare the two lists (``evaluate``, pure).

``run(module)`` returns the module's result; its ``failures`` list is empty when the container saw exactly the
host's GPUs (or in check mode, or on a host without nvidia-smi: ``skipped``). The lists are parsed by
nvidia_smi.py, the runtime's error text read by container_runtime.py; this file is the one that starts
processes. Standard library apart from the AnsibleModule passed in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import bench_common as bc
from ansible_collections.gpufleet.cluster.plugins.module_utils import container_runtime as cr
from ansible_collections.gpufleet.cluster.plugins.module_utils.nvidia_smi import (
    NvidiaSmiNoDevices,
    NvidiaSmiParseError,
    parse_gpu_list,
    parse_uuid_list,
)

QUERY_ARGS = {'list': ['-L'], 'uuid': ['--query-gpu=uuid', '--format=csv,noheader']}
CDI_DEVICE = 'nvidia.com/gpu=all'
NO_GPU_MSG = 'skipped: no GPU (nvidia-smi not found: %s)'
# docker/podman run's own exit codes: an error of the runtime, a command it cannot invoke, one it cannot find.
RUNTIME_RCS = (125, 126, 127)
IMAGE_EXAMPLE = 'registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04'


def refuse_bad_input(module, params):
    """Fail naming the option before anything runs."""
    errors = ac.nul_errors(params) + ac.timeout_range(params['timeout'])
    for name in ('docker_path', 'podman_path', 'nvidia_smi_path'):
        errors += ac.executable_errors(name, params[name])
    image = params['image']
    if image is not None and '\x00' not in image and not image.strip():
        errors.append('image must name an image of the local registry or mirror (for example %s), got an empty '
                      'string' % IMAGE_EXAMPLE)
    else:
        errors += ac.word_errors('image', image)
    errors += ac.word_errors('oci_runtime', params['oci_runtime'])
    errors += ac.word_errors('container_nvidia_smi', params['container_nvidia_smi'])
    errors += ac.int_range('expected_gpus', params['expected_gpus'], 1, 1024)
    for i, arg in enumerate(params['run_args']):
        if arg is not None and not arg.strip():
            errors.append('run_args[%d] must be a non-empty argument of "%s run", got %r' % (i, params['runtime'], arg))
    if params['runtime'] == 'podman' and params['mode'] == 'gpus':
        errors.append('mode gpus is docker --gpus; podman gives GPUs through CDI: with runtime podman use mode cdi '
                      '(--device %s)' % CDI_DEVICE)
    ac.refuse(module, errors, failures=errors)


def container_name():
    """One name per module run, so a run cut by its timeout can be removed by name."""
    return 'gpufleet-container-gpus-%d' % os.getpid()


def container_argv(exe, params, name):
    """``docker|podman run`` of the host-side nvidia-smi query in ``params['image']`` with every GPU, no
    network (the container needs none), the image pulled only when missing (or never)."""
    argv = [exe, 'run', '--rm', '--name', name, '--network', 'none', '--pull', params['pull']]
    if params['oci_runtime']:
        argv += ['--runtime', params['oci_runtime']]
    argv += ['--gpus', 'all'] if params['mode'] == 'gpus' else ['--device', CDI_DEVICE]
    argv += list(params['run_args'])
    return argv + [params['image'], params['container_nvidia_smi']] + QUERY_ARGS[params['query']]


def read_list(res, query, where, rung, timeout):
    """``(parsed, failure)`` of one nvidia-smi run ``res`` (``where``: "on the host" or "in the container"); ``parsed`` is None and
    ``failure`` says why when no GPU list could be read."""
    parse = parse_gpu_list if query == 'list' else parse_uuid_list
    try:
        parsed = parse(res['stdout'])
    except NvidiaSmiNoDevices:
        return None, '%s: nvidia-smi %s found no GPU ("No devices were found", rc=%s); cmd: %s' % (
            rung, where, res['rc'], res['cmd'])
    except NvidiaSmiParseError as exc:
        return None, '%s: nvidia-smi %s: %s; cmd: %s' % (rung, where, exc, res['cmd'])
    if where == 'on the host':
        why = runner.failure(res, timeout)
        if why:
            return None, '%s: nvidia-smi on the host %s; cmd: %s' % (rung, why, res['cmd'])
    return parsed, None


def _device(gpu):
    if gpu.get('name'):
        return 'GPU %s %s (%s)' % (gpu['index'], gpu['name'], gpu['uuid'])
    return 'GPU %s (%s)' % (gpu['index'], gpu['uuid'])


def _mig(gpus):
    return [dict(m, gpu=g['uuid']) for g in gpus for m in g['mig_devices']]


def host_failures(host, rung, cmd, expected_gpus=None):
    """Failures of the host's own list: other than ``expected_gpus`` GPUs, lines that are not part of a list."""
    failures = []
    hgpus = host['gpus']
    if expected_gpus is not None and len(hgpus) != expected_gpus:
        failures.append('%s: the host lists %d GPU(s), expected %d: %s; cmd: %s'
                        % (rung, len(hgpus), expected_gpus, ', '.join(_device(g) for g in hgpus) or 'none', cmd))
    if host['malformed']:
        bc.check_output(failures, rung, 'the host', cmd, malformed=host['malformed'])
    return failures


def _show_mig(dev):
    return 'MIG %s device %s of %s (%s)' % (dev['profile'], dev['device'], dev['gpu'], dev['uuid'])


def evaluate(host, container, rung, cmd, expected_gpus=None):
    """Failures of comparing the GPU list the container printed with the host's (both parsed by
    nvidia_smi.parse_gpu_list or parse_uuid_list; ``container`` None when it printed no list). Pure.

    Fails when the host lists other than ``expected_gpus`` GPUs, when the container printed no GPU, fewer or
    more GPUs than the host, a UUID the host does not list or not one the host lists (each named), the same
    for MIG devices, and when either output has lines that are not part of a GPU list (cut or garbled)."""
    failures = host_failures(host, rung, cmd, expected_gpus)
    hgpus = host['gpus']
    if container is None or not container['gpus']:
        failures.append('%s: the container printed no GPU list (the host has %d GPU(s): %s; a missing figure '
                        'fails); cmd: %s' % (rung, len(hgpus), ', '.join(g['uuid'] for g in hgpus) or 'none', cmd))
        if container is not None and container['malformed']:
            bc.check_output(failures, rung, 'the container', cmd, malformed=container['malformed'])
        return failures
    cgpus = container['gpus']
    for what, show, hdev, cdev in (('GPU', _device, hgpus, cgpus), ('MIG device', _show_mig, _mig(hgpus), _mig(cgpus))):
        cset = set(d['uuid'] for d in cdev)
        hset = set(d['uuid'] for d in hdev)
        missing = [d for d in hdev if d['uuid'] not in cset]
        unexpected = [d for d in cdev if d['uuid'] not in hset]
        if len(cdev) != len(hdev):
            failures.append('%s: the container sees %d %s(s), the host %d (%s than the host)%s%s; cmd: %s' % (
                rung, len(cdev), what, len(hdev), 'fewer' if len(cdev) < len(hdev) else 'more',
                ('; missing in the container: ' + ', '.join(show(d) for d in missing)) if missing else '',
                ('; not on the host: ' + ', '.join(show(d) for d in unexpected)) if unexpected else '', cmd))
        elif missing or unexpected:
            failures.append('%s: the container sees other %ss than the host (different UUIDs): missing in the '
                            'container: %s; not on the host: %s; cmd: %s' % (
                                rung, what, ', '.join(show(d) for d in missing) or 'none',
                                ', '.join(show(d) for d in unexpected) or 'none', cmd))
    if container['malformed']:
        bc.check_output(failures, rung, 'the container', cmd, malformed=container['malformed'])
    return failures


def run(module):
    """Refuse bad input (fail_json), then (not in check mode, and only where nvidia-smi is found) list the
    host's GPUs, run the container and return the result: ``failures`` (empty when the lists match) and
    ``msg``, plus both lists."""
    params = module.params
    refuse_bad_input(module, params)
    rung = params['rung']
    tool = params['docker_path'] if params['runtime'] == 'docker' else params['podman_path']
    exe = runner.find(module, tool)
    smi = runner.find(module, params['nvidia_smi_path'])
    argv = container_argv(exe or tool, params, container_name())
    cmd = runner.cmdline(argv)
    host_argv = [smi or params['nvidia_smi_path']] + QUERY_ARGS[params['query']]
    base = dict(host_cmd=runner.cmdline(host_argv), runtime=params['runtime'], mode=params['mode'],
                image=params['image'])
    if smi is None:
        return dict(base, changed=False, skipped=True, cmd=cmd, failures=[],
                    msg=NO_GPU_MSG % params['nvidia_smi_path'])
    early = bc.not_run(module.check_mode, exe, rung, tool, '%s run' % params['runtime'], cmd, **base)
    if early:
        return early

    host_res = runner.run(host_argv, timeout=params['timeout'])
    host, host_failure = read_list(host_res, params['query'], 'on the host', rung, params['timeout'])
    if host_failure:
        return dict(base, changed=False, cmd=cmd, failures=[host_failure], msg=host_failure, host_gpus=[],
                    host_count=None, container_gpus=None, container_count=None,
                    stdout_lines=bc.tail(host_res['stdout']), stderr_lines=bc.tail(host_res['stderr']))
    res = runner.run(argv, timeout=params['timeout'])
    if res['timed_out']:  # the client was killed; the container may still be there
        runner.run([exe, 'rm', '--force', argv[argv.index('--name') + 1]], timeout=60)
    return dict(base, **judge(host, res, params))


def judge(host, res, params):
    """The result for the host's parsed list ``host`` and the container run ``res`` (a _runner.run dict). The
    runtime's own exit codes (125 its error, 126 cannot invoke, 127 not found), a timeout or a client that
    could not start fail with the runtime's error text; any other code is the container's nvidia-smi's."""
    rung, cmd = params['rung'], res['cmd']
    runtime_error, kind, hint, container = None, None, None, None
    if res['start_error'] or res['timed_out'] or res['rc'] in RUNTIME_RCS:
        if not res['start_error']:
            runtime_error = cr.error_text(res['stderr'], res['stdout'])
            kind, hint = cr.diagnose(runtime_error)
        what = runner.failure(res, params['timeout']) if res['start_error'] or res['timed_out'] \
            else 'failed (rc=%s)' % res['rc']
        said = (': ' + runtime_error) if runtime_error else ''
        means = (' - ' + hint) if hint else ''
        failures = ['%s: %s run %s%s%s; cmd: %s' % (rung, params['runtime'], what, said, means, cmd)]
        failures += host_failures(host, rung, cmd, params['expected_gpus'])
    else:
        container, failure = read_list(res, params['query'], 'in the container', rung, params['timeout'])
        if failure:
            failures = [failure] + host_failures(host, rung, cmd, params['expected_gpus'])
        else:
            failures = evaluate(host, container, rung, cmd, params['expected_gpus'])
            if res['rc'] != 0:
                failures.insert(0, '%s: nvidia-smi in the container exited with rc=%s (%s); cmd: %s'
                                % (rung, res['rc'], runner.last_line(res), cmd))
    cgpus = container['gpus'] if container else None
    huuids = set(g['uuid'] for g in host['gpus'])
    cuuids = set(g['uuid'] for g in cgpus or [])
    result = dict(changed=False, cmd=cmd, rc=res['rc'], elapsed=res['elapsed'], failures=failures,
                  host_gpus=host['gpus'], host_count=len(host['gpus']), container_gpus=cgpus,
                  container_count=len(cgpus) if container else None,
                  missing=sorted(huuids - cuuids) if container else [], unexpected=sorted(cuuids - huuids),
                  runtime_error=runtime_error, runtime_error_kind=kind, hint=hint,
                  stdout_lines=bc.tail(res['stdout']), stderr_lines=bc.tail(res['stderr']))
    if failures:
        result['msg'] = '; '.join(failures)
    else:
        mig = _mig(host['gpus'])
        result['msg'] = "%s: the container (%s %s, %s) sees the host's %d GPU(s)%s, same UUIDs" % (
            rung, params['runtime'], '--gpus all' if params['mode'] == 'gpus' else '--device ' + CDI_DEVICE,
            params['image'], len(host['gpus']), (' and %d MIG device(s)' % len(mig)) if mig else '')
    return result
