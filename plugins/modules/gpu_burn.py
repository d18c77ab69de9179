#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: gpu_burn
short_description: Stress every GPU with gpu-burn and check the verdict
version_added: 0.1.0
description:
  - Runs gpu-burn (U(https://github.com/wilicc/gpu-burn)) for O(duration) seconds and returns, per GPU, the
    verdict (C(OK)/C(FAULTY)), error counts, Gflop/s and temperature of the last progress record (progress
    records rewritten with a carriage return and concatenated on one line are handled).
  - Fails on any C(FAULTY) GPU, on any error count above 0, on a worker that died, when the tool exits
    non-zero or times out, when it prints no C(Tested N GPUs) verdict, or when a threshold is missed or its
    figure is missing. Messages name the rung, the GPU (index, name, UUID), the figure and the command line.
  - An output that is cut off or garbled is never accepted, with or without thresholds - the module also fails
    when the verdict block lists fewer GPUs than C(Tested N GPUs), when no progress record was printed, when a
    GPU's Gflop/s or error count in the last progress record cannot be read, and when the C(nvidia-smi -L)
    banner lists more GPUs than gpu-burn burned unless C(-i N) in O(args) or E(CUDA_VISIBLE_DEVICES) chose them.
  - Never reports C(changed).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  executable:
    description: Name or path of the gpu-burn binary.
    type: str
    default: gpu_burn
  chdir:
    description:
      - Directory to run in; gpu-burn loads C(compare.ptx) from there. Default the directory of O(executable)
        when it is a path, else the current directory.
    type: path
  duration:
    description: Seconds to burn (the tool's last argument), from C(1) to C(2592000).
    type: int
    default: 60
  doubles:
    description: Use doubles (C(-d)).
    type: bool
    default: false
  tensor_cores:
    description: Use Tensor Cores (C(-tc)).
    type: bool
    default: false
  memory:
    description: Memory to use (C(-m)), for example C(90%) or MB.
    type: str
  args:
    description: Extra arguments placed before the duration.
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds before the run is killed; default O(duration) plus 300.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
  expected_gpus:
    description: Fail unless exactly this many GPUs were tested.
    type: int
  min_gflops:
    description: Minimum Gflop/s of every GPU in the last progress record.
    type: float
  max_temp_c:
    description: Maximum temperature (degrees C) any GPU may reach in any progress record.
    type: int
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: gpu_burn
notes:
  - Commands run as argument lists with C(LC_ALL=C).
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a
    O(duration) or O(timeout) out of range, O(expected_gpus) below 1, O(max_temp_c) outside 1-200, a negative
    O(min_gflops), a O(memory) that is neither MB nor a percentage, a O(chdir) that is not a directory, or an
    O(executable) path that is a directory or not executable.
seealso:
  - module: gpufleet.cluster.dcgm_diag
'''

EXAMPLES = r'''
- name: Burn all GPUs for 10 minutes with doubles and Tensor Cores
  gpufleet.cluster.gpu_burn:
    executable: /opt/gpu-burn/gpu_burn
    duration: 600
    doubles: true
    tensor_cores: true
    expected_gpus: 8
    max_temp_c: 87
'''

RETURN = r'''
skipped:
  description: C(true) in check mode (nothing was run).
  returned: in check mode
  type: bool
msg:
  description: Summary, or every failure joined with C(; ).
  returned: always
  type: str
failures:
  description: One message per failed check.
  returned: always
  type: list
  elements: str
cmd:
  description: The command line that ran (or would run).
  returned: always
  type: str
rc:
  description: Exit code (C(-9) after a timeout).
  returned: when run
  type: int
elapsed:
  description: Wall time in seconds.
  returned: when run
  type: float
gpus:
  description:
    - Per GPU C(index), C(name), C(uuid), C(verdict) (C(OK), C(FAULTY) or C(null) when missing), C(errors)
      (last progress record), C(max_errors), C(died), C(gflops) (last record), C(temp_c), C(max_temp_c),
      C(iterations), C(memory_used_mb); C(power_w) and C(max_power_w) when gpu-burn prints power.
    - Only the GPUs gpu-burn burned (with C(-i N) that is GPU N); C(name) and C(uuid) are C(null) when the
      C(nvidia-smi -L) banner cannot be matched to them (for example under C(CUDA_VISIBLE_DEVICES)).
  returned: when run
  type: list
  elements: dict
devices:
  description: The GPUs of the C(nvidia-smi -L) banner gpu-burn prints (C(index), C(name), C(uuid)), burned or not.
  returned: when run
  type: list
  elements: dict
  version_added: 0.2.0
tested:
  description: N of C(Tested N GPUs), C(null) when the verdict block is missing.
  returned: when run
  type: int
faulty:
  description: Indexes of GPUs with verdict C(FAULTY).
  returned: when run
  type: list
  elements: int
progress_records:
  description: Number of progress records parsed.
  returned: when run
  type: int
percent:
  description: Percentage of the last progress record.
  returned: when run
  type: float
problems:
  description: Lines reporting a failure of the tool itself.
  returned: when run
  type: list
  elements: str
stdout_lines:
  description: Last 40 lines of standard output.
  returned: when run
  type: list
  elements: str
stderr_lines:
  description: Last 40 lines of standard error.
  returned: when run
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_burn_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            executable=dict(type='str', default='gpu_burn'),
            chdir=dict(type='path'),
            duration=dict(type='int', default=60),
            doubles=dict(type='bool', default=False),
            tensor_cores=dict(type='bool', default=False),
            memory=dict(type='str'),
            args=dict(type='list', elements='str', default=[]),
            timeout=dict(type='int'),
            expected_gpus=dict(type='int'),
            min_gflops=dict(type='float'),
            max_temp_c=dict(type='int'),
            rung=dict(type='str', default='gpu_burn'),
        ),
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
