#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: container_gpus
short_description: Check that a container given every GPU sees exactly the host's GPUs
version_added: 0.4.0
description:
  - Lists the host's GPUs with C(nvidia-smi -L) (or C(--query-gpu=uuid)), then runs the same query in a container
    of O(image) given every GPU - C(docker run --gpus all) (O(mode=gpus)) or through CDI, C(--device
    nvidia.com/gpu=all) (O(mode=cdi), Docker 25 or later with CDI enabled, or podman) - and compares the two
    lists GPU by GPU (UUIDs) and MIG device by MIG device.
  - >-
    Fails when the runtime refuses or cannot run the container, with the runtime's own error text and what it
    means - for example C(could not select device driver "" with capabilities: [[gpu]]) (no NVIDIA Container
    Toolkit), an OCI runtime in C(daemon.json) whose binary is missing, C(unresolvable CDI devices) (no CDI
    specification), a missing image; when the container prints no GPU list, fewer or more GPUs than the host, or
    UUIDs the host does not list (the GPUs that differ are named); when the host lists other than O(expected_gpus)
    GPUs; and when either list has lines that are not part of a GPU list (cut or garbled). A missing figure is a
    failure, never a pass.
  - The container runs with C(--rm), without network (C(--network none)) and C(--pull) O(pull); the image comes
    from the local image store or the registry or mirror its name gives - nothing else is pulled.
  - >-
    On a host without C(nvidia-smi) nothing runs and the result is C(skipped) with the message C(skipped: no GPU ...).
    Never reports C(changed).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  image:
    description:
      - Image the container runs, from the local registry or mirror (for example
        C(registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04)) or loaded into the local image store. Any
        image works when the GPU runtime injects C(nvidia-smi) (the toolkit's C(utility) capability); otherwise the
        image must bring one.
      - An empty name, or one with spaces or starting with C(-), is refused.
    type: str
    required: true
  runtime:
    description: Container engine that runs the container.
    type: str
    choices: [docker, podman]
    default: docker
  mode:
    description:
      - How the GPUs are given to the container. C(gpus) is C(docker run --gpus all) (the NVIDIA Container Toolkit's
        hook); C(cdi) is C(--device nvidia.com/gpu=all) from the CDI specification that C(nvidia-ctk cdi generate)
        writes (Docker 25 or later with CDI enabled, or podman).
      - O(runtime=podman) needs O(mode=cdi); C(gpus) is refused.
    type: str
    choices: [gpus, cdi]
    default: gpus
  query:
    description:
      - C(list) runs C(nvidia-smi -L) (GPUs and MIG devices, with names); C(uuid) runs C(nvidia-smi
        --query-gpu=uuid --format=csv,noheader) (GPUs only), on the host and in the container alike.
    type: str
    choices: [list, uuid]
    default: list
  pull:
    description:
      - Pull policy of the run, C(--pull). C(missing) pulls the image from the registry its name gives when it is not
        in the local store; C(never) uses the local store only.
    type: str
    choices: [missing, never]
    default: missing
  oci_runtime:
    description:
      - OCI runtime of the container (C(--runtime), for example C(nvidia)); the engine's default runtime when not
        set. Must not start with C(-) or hold spaces.
    type: str
  run_args:
    description:
      - Further arguments of C(docker run) / C(podman run), placed before the image (for example
        C(--security-opt=label=disable) for podman on SELinux hosts). Empty items are refused.
    type: list
    elements: str
    default: []
  container_nvidia_smi:
    description: Name or path of C(nvidia-smi) inside the container.
    type: str
    default: nvidia-smi
  docker_path:
    description: Name or path of C(docker) (used with O(runtime=docker)).
    type: str
    default: docker
  podman_path:
    description: Name or path of C(podman) (used with O(runtime=podman)).
    type: str
    default: podman
  nvidia_smi_path:
    description:
      - Name or path of the host's C(nvidia-smi). When it is not found the host has no GPU - the module returns
        C(skipped) and runs nothing.
    type: str
    default: nvidia-smi
  expected_gpus:
    description: GPUs the host must list (1 to 1024); not checked when not set.
    type: int
  timeout:
    description:
      - Seconds before each command (the host's nvidia-smi, the container run with its pull) is killed and the
        module fails; a container left by a killed run is removed by name.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
    default: 600
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: container_gpus
notes:
  - The NVIDIA Container Toolkit gives the container its GPUs (C(--gpus) through its hook, C(cdi) through the
    specification C(nvidia-ctk cdi generate) writes); the role C(gpufleet.cluster.container_toolkit) installs and
    configures it.
  - Commands run as argument lists with C(LC_ALL=C). Exit codes 125, 126 and 127 of C(docker run) / C(podman run)
    are the runtime's (its error, a command it cannot invoke, one it cannot find); any other code is the
    container's C(nvidia-smi)'s.
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, an empty
    O(image) or one that is not one word, a bad O(timeout) or O(expected_gpus), O(runtime=podman) with O(mode=gpus),
    an empty item of O(run_args), or a tool path that is a directory or not executable.
seealso:
  - module: gpufleet.cluster.gpu_facts
  - name: NVIDIA Container Toolkit, CDI support
    description: Generating the CDI specification and running containers with C(--device nvidia.com/gpu=all).
    link: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html
'''

EXAMPLES = r'''
- name: The GPUs inside a container are the host's (docker --gpus all, image from the local registry)
  gpufleet.cluster.container_gpus:
    image: registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04
    expected_gpus: 8

- name: The same through CDI with podman, from the local image store only
  gpufleet.cluster.container_gpus:
    runtime: podman
    mode: cdi
    image: registry.cluster.local/nvidia/cuda:12.4.1-base-ubuntu22.04
    pull: never
    run_args: [--security-opt=label=disable]
'''

RETURN = r'''
skipped:
  description: C(true) in check mode and on a host without C(nvidia-smi) (nothing was run).
  returned: in check mode, without nvidia-smi
  type: bool
msg:
  description: "Summary, or every failure joined with C(; ) (C(skipped: no GPU ...) without nvidia-smi)."
  returned: always
  type: str
failures:
  description: One message per failed check.
  returned: always
  type: list
  elements: str
cmd:
  description: The container's command line that ran (or would run).
  returned: always
  type: str
  sample: docker run --rm --name gpufleet-container-gpus-4242 --network none --pull missing --gpus all IMAGE nvidia-smi -L
host_cmd:
  description: The host's nvidia-smi command line.
  returned: always
  type: str
runtime:
  description: O(runtime).
  returned: always
  type: str
mode:
  description: O(mode).
  returned: always
  type: str
image:
  description: O(image).
  returned: always
  type: str
rc:
  description: Exit code of the container run (C(-9) after a timeout).
  returned: when the container ran
  type: int
elapsed:
  description: Wall time of the container run in seconds.
  returned: when the container ran
  type: float
host_gpus:
  description: The host's GPUs, C(index), C(name) (C(null) with O(query=uuid)), C(uuid), C(mig_devices) (C(profile),
    C(device), C(uuid)).
  returned: when run
  type: list
  elements: dict
host_count:
  description: GPUs the host lists (C(null) when its list could not be read).
  returned: when run
  type: int
container_gpus:
  description: The GPUs the container lists (as RV(host_gpus)), C(null) when it printed no list.
  returned: when run
  type: list
  elements: dict
container_count:
  description: GPUs the container lists, C(null) when it printed no list - the rung's figure.
  returned: when run
  type: int
missing:
  description: UUIDs of host GPUs the container does not list.
  returned: when the container ran
  type: list
  elements: str
unexpected:
  description: UUIDs the container lists that the host does not.
  returned: when the container ran
  type: list
  elements: str
runtime_error:
  description: The runtime's own error text (its C(Error response from daemon) / C(Error:) lines), C(null) when it
    ran the container.
  returned: when the container ran
  type: str
runtime_error_kind:
  description:
    - What the runtime's error means - C(no_gpu_driver), C(cdi_disabled), C(cdi_unresolvable), C(runtime_missing),
      C(runtime_unknown), C(toolkit_hook), C(command_missing), C(image_missing), C(daemon_down), C(permission),
      C(other); C(null) when the container ran.
  returned: when the container ran
  type: str
hint:
  description: What to fix for a known runtime error, C(null) otherwise.
  returned: when the container ran
  type: str
stdout_lines:
  description: Last 40 lines of standard output of the container run (of the host's nvidia-smi when that failed).
  returned: when run
  type: list
  elements: str
stderr_lines:
  description: Last 40 lines of standard error, as RV(stdout_lines).
  returned: when run
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import container_gpus_engine as engine


ARGUMENT_SPEC = dict(
    image=dict(type='str', required=True),
    runtime=dict(type='str', default='docker', choices=['docker', 'podman']),
    mode=dict(type='str', default='gpus', choices=['gpus', 'cdi']),
    query=dict(type='str', default='list', choices=['list', 'uuid']),
    pull=dict(type='str', default='missing', choices=['missing', 'never']),
    oci_runtime=dict(type='str'),
    run_args=dict(type='list', elements='str', default=[]),
    container_nvidia_smi=dict(type='str', default='nvidia-smi'),
    docker_path=dict(type='str', default='docker'),
    podman_path=dict(type='str', default='podman'),
    nvidia_smi_path=dict(type='str', default='nvidia-smi'),
    expected_gpus=dict(type='int'),
    timeout=dict(type='int', default=600),
    rung=dict(type='str', default='container_gpus'),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
