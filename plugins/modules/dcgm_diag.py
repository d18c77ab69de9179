#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: dcgm_diag
short_description: Run DCGM diagnostics (dcgmi diag) and check every test
version_added: 0.1.0
description:
  - Runs C(dcgmi diag -r LEVEL) and returns, per test, its category, overall status, per-GPU results and the
    warning, error and info text; plus a per-GPU view.
  - With O(output_format=auto) the JSON output (C(-j)) is requested and the text table is used when the installed
    dcgmi prints no JSON. Parses the DCGM 1.x-3.x text tables (C(Pass - All), C(Fail - GPU 0), wrapped warning rows),
    the JSON of DCGM 2.x/3.x (C(DCGM GPU Diagnostic), C(gpu_ids)) and DCGM 4.x (C(DCGM Diagnostic), C(entity_id),
    C(test_summary)). Invalid or unknown JSON fails with a clear message.
  - Fails on any C(Fail) result or C(Error) row, on a C(runtime_error), when no test result was parsed or when dcgmi
    exits non-zero; C(Warn) fails only with O(fail_on_warn); C(Skip) never fails. Messages name the rung, the test,
    the GPUs, the DCGM text and the command line. Never reports C(changed).
  - An output that is cut off or garbled is never accepted - a result that is not a known status word, a damaged
    table row or a test without any result counts as an C(Error) of that test, a text table whose closing border
    does not follow the last test row (RV(complete) is C(false)) fails, and JSON that is cut or not of a known
    layout fails.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  executable:
    description: Name or path of C(dcgmi).
    type: str
    default: dcgmi
  level:
    description:
      - Run level or test names for C(-r) (C(1) to C(4), or for example C(memory,pcie)).
      - Anything else (an empty string, C(0), C(5), a name starting with C(-)) is refused naming the allowed levels.
    type: str
    default: '1'
  gpus:
    description: GPU ids to test (C(-i)); all GPUs when empty.
    type: list
    elements: int
    default: []
  parameters:
    description: Test parameters (C(-p)), for example C(pcie.gpu_nvlinks_expected_up=18).
    type: list
    elements: str
    default: []
  output_format:
    description: C(auto) asks for JSON and falls back to the text table; C(json) or C(text) force one.
    type: str
    choices: [auto, json, text]
    default: auto
  host:
    description: Host engine address (C(--host)); the local one when not set.
    type: str
  fail_on_warn:
    description: Treat C(Warn) results and warning rows as failures.
    type: bool
    default: false
  timeout:
    description:
      - Seconds before dcgmi is killed and the module fails.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
    default: 3600
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: dcgm_diag
notes:
  - Commands run as argument lists with C(LC_ALL=C).
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a bad
    O(level) or O(timeout), a GPU id outside 0-1023, a parameter that is not C(test.parameter=value), a O(host)
    that is empty or starts with C(-), or an O(executable) path that is a directory or not executable.
seealso:
  - module: gpufleet.cluster.gpu_burn
  - name: dcgmi diag
    description: DCGM diagnostics reference.
    link: https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
'''

EXAMPLES = r'''
- name: Quick deployment checks
  gpufleet.cluster.dcgm_diag:
    level: '1'

- name: Medium diagnostics on an HGX H100, all 18 NVLinks expected up, warnings fail
  gpufleet.cluster.dcgm_diag:
    level: '2'
    parameters: [pcie.gpu_nvlinks_expected_up=18]
    fail_on_warn: true
    rung: dcgm-r2
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
  description: One message per failed test/GPU.
  returned: always
  type: list
  elements: str
cmd:
  description: The command line that ran (or would run).
  returned: always
  type: str
rc:
  description: Exit code of dcgmi (C(-9) after a timeout).
  returned: when run
  type: int
elapsed:
  description: Wall time in seconds.
  returned: when run
  type: float
format:
  description: C(json) or C(text), the output that was parsed.
  returned: when run
  type: str
metadata:
  description: DCGM version, driver version and device ids when printed.
  returned: when run
  type: dict
tests:
  description:
    - Per test C(category), C(name), C(status) (worst result), C(results) (C(status), C(gpus) list or C(all) or
      C(null), C(entity)) and C(messages) (C(kind) Warning/Error/Info, C(gpus), C(text)).
  returned: when run
  type: list
  elements: dict
gpus:
  description: Per GPU id (or C(all) / C(system) for results not tied to a GPU) test name to status.
  returned: when run
  type: dict
failed_tests:
  description: Names of tests with a C(Fail) result or an C(Error) row.
  returned: when run
  type: list
  elements: str
warned_tests:
  description: Names of tests with a C(Warn) result or a warning row.
  returned: when run
  type: list
  elements: str
runtime_error:
  description: DCGM's C(runtime_error) (JSON output).
  returned: when run
  type: str
parse_error:
  description: Why the output could not be parsed, C(null) when it was.
  returned: when run
  type: str
complete:
  description:
    - Text table - C(true) when its closing border followed the last test row, C(false) (a failure) for a cut output.
      C(null) for JSON (cut JSON does not parse and fails with RV(parse_error)).
  returned: when run
  type: bool
  version_added: 0.2.0
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

from ansible_collections.gpufleet.cluster.plugins.module_utils import dcgm_diag_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            executable=dict(type='str', default='dcgmi'),
            level=dict(type='str', default='1'),
            gpus=dict(type='list', elements='int', default=[]),
            parameters=dict(type='list', elements='str', default=[]),
            output_format=dict(type='str', default='auto', choices=['auto', 'json', 'text']),
            host=dict(type='str'),
            fail_on_warn=dict(type='bool', default=False),
            timeout=dict(type='int', default=3600),
            rung=dict(type='str', default='dcgm_diag'),
        ),
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
