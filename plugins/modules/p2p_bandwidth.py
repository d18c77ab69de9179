#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: p2p_bandwidth
short_description: Measure GPU-to-GPU bandwidth and latency matrices and check every pair
version_added: 0.1.0
description:
  - Runs CUDA samples' C(p2pBandwidthLatencyTest) (default) or NVIDIA's C(nvbandwidth) (O(tool=nvbandwidth)) and
    returns every matrix it prints (unidirectional and bidirectional bandwidth with P2P enabled and disabled,
    GPU and CPU latency, connectivity; for nvbandwidth one matrix per test case plus the C(SUM) lines).
  - Fails when any GPU pair is below O(min_gbytes_per_s) (unidirectional) or O(min_bidir_gbytes_per_s)
    (bidirectional), both in GB/s, above O(max_latency_us), when a pair's figure is missing (a matrix cut short),
    when peer access is not available and O(require_p2p) is set, when the tool exits non-zero or times out, or when
    no matrix to check was printed.
    Messages name the rung, the pair (C(GPU 2 -> GPU 3)), the figure against the threshold and the command line.
  - With C(--p2p_read) in O(args) the C((P2P Reads)) unidirectional and latency matrices are checked against
    O(min_gbytes_per_s) and O(max_latency_us) like the C((P2P Writes)) ones.
  - An output that is cut off or garbled is never accepted, with or without thresholds - the module fails when a
    matrix every p2pBandwidthLatencyTest run prints (bandwidth and latency, P2P disabled and enabled, the CPU
    latency halves when the version prints them, the C(P2P Reads) matrices with C(--p2p_read) or when one of them
    was printed) or a
    requested nvbandwidth test case is absent, when any of those matrices lacks a pair's figure, or when a matrix
    row could not be read (RV(malformed)).
  - Never reports C(changed).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  tool:
    description: Which program's output to expect.
    type: str
    choices: [p2pBandwidthLatencyTest, nvbandwidth]
    default: p2pBandwidthLatencyTest
  executable:
    description: Name or path of the program; default the O(tool) name on E(PATH).
    type: str
  testcases:
    description: nvbandwidth test cases (C(-t)); all when empty. Ignored for p2pBandwidthLatencyTest.
    type: list
    elements: str
    default: []
  args:
    description: Extra arguments.
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds before the program is killed and the module fails.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
    default: 900
  min_gbytes_per_s:
    description:
      - Minimum unidirectional GPU-to-GPU bandwidth of every pair in GB/s (gigabytes per second, the unit both tools
        print) (C(Unidirectional P2P=Enabled) matrix, or every nvbandwidth GPU-to-GPU C(->)/C(<-) matrix).
      - The alias C(min_gbps) is deprecated and will be removed in 2.0.0. It is GB/s too, not the Gb/s of
        O(gpufleet.cluster.rdma_bw#module:min_gbits_per_s).
    aliases: [min_gbps]
    type: float
    version_added: 0.2.0
  min_bidir_gbytes_per_s:
    description:
      - Minimum bidirectional bandwidth of every pair in GB/s (C(Bidirectional P2P=Enabled), or GPU C(<->)).
      - nvbandwidth's bidirectional test cases print three matrices, C(Read1)/C(Write1), C(Read2)/C(Write2) and
        C(Total); the C(Total) one is checked, the two one-way parts are returned and must be whole.
      - The alias C(min_bidir_gbps) (GB/s too) is deprecated and will be removed in 2.0.0.
    aliases: [min_bidir_gbps]
    type: float
    version_added: 0.2.0
  max_latency_us:
    description: Maximum GPU-to-GPU latency with P2P enabled, microseconds (p2pBandwidthLatencyTest only).
    type: float
  require_p2p:
    description:
      - Fail when a pair reports C(CANNOT Access Peer) (p2pBandwidthLatencyTest), or when nvbandwidth prints C(N/A) for
        a pair of different GPUs in a GPU-to-GPU matrix (it does so for pairs without peer access).
      - With C(false) such nvbandwidth pairs are not applicable, neither a failure nor a missing figure.
    type: bool
    default: true
  expected_gpus:
    description: Fail unless the checked matrices have exactly this many GPUs.
    type: int
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: p2p
notes:
  - Commands run as argument lists with C(LC_ALL=C).
  - The diagonal (a GPU to itself) is never checked.
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a
    O(timeout) out of range, O(expected_gpus) below 1, a negative threshold, a test case that is empty or starts
    with C(-), or an O(executable) path that is a directory or not executable.
seealso:
  - module: gpufleet.cluster.nccl_bench
'''

EXAMPLES = r'''
- name: NVLink P2P on an HGX H100, every pair at least 300 GB/s one way
  gpufleet.cluster.p2p_bandwidth:
    executable: /usr/local/cuda/extras/demo_suite/p2pBandwidthLatencyTest
    min_gbytes_per_s: 300
    expected_gpus: 8

- name: nvbandwidth device-to-device copies only
  gpufleet.cluster.p2p_bandwidth:
    tool: nvbandwidth
    testcases: [device_to_device_memcpy_write_ce, device_to_device_bidirectional_memcpy_write_ce]
    min_gbytes_per_s: 300
    min_bidir_gbytes_per_s: 600
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
tool:
  description: The tool whose output was parsed.
  returned: always
  type: str
devices:
  description: Devices printed by the tool (C(index), C(name), PCI ids for p2pBandwidthLatencyTest).
  returned: when run
  type: list
  elements: dict
peer_access:
  description: Source id to destination id to C(true)/C(false) from the C(CAN/CANNOT Access Peer) lines.
  returned: when run
  type: dict
matrices:
  description:
    - Name to matrix, each with C(title), C(unit), C(rows), C(columns) and C(values) (row id to column id to number,
      C(null) for C(N/A)); nvbandwidth matrices also have C(engine), C(direction), C(row_kind) (C(CPU), C(GPU), or
      C(ALL) for the single row of the all-to-one/one-to-all test cases, which is not a GPU pair), C(column_kind),
      C(testcase), C(part) (C(read1), C(read2), C(write1), C(write2), C(total) for the three matrices of a
      bidirectional test case, named C(<testcase>_<part>); else C(null)) and C(not_applicable) (the C([row, column])
      cells printed C(N/A), that is the diagonal and pairs without peer access).
  returned: when run
  type: dict
sums:
  description: nvbandwidth C(SUM) lines, test case to GB/s.
  returned: when run
  type: dict
checked:
  description: Names of the matrices checked against thresholds, with the kind of check.
  returned: when run
  type: dict
worst_pairs:
  description: Per checked matrix the worst pair (C(pair), C(value)).
  returned: when run
  type: dict
malformed:
  description: Matrix rows that could not be read (cut off or garbled), p2pBandwidthLatencyTest only; any fails the run.
  returned: when run
  type: list
  elements: str
  version_added: 0.2.0
problems:
  description: Error lines printed by the tool.
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

from ansible_collections.gpufleet.cluster.plugins.module_utils import p2p_bandwidth_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            tool=dict(type='str', default='p2pBandwidthLatencyTest', choices=['p2pBandwidthLatencyTest', 'nvbandwidth']),
            executable=dict(type='str'),
            testcases=dict(type='list', elements='str', default=[]),
            args=dict(type='list', elements='str', default=[]),
            timeout=dict(type='int', default=900),
            min_gbytes_per_s=dict(type='float', aliases=['min_gbps'], deprecated_aliases=[
                dict(name='min_gbps', version='2.0.0', collection_name='gpufleet.cluster')]),
            min_bidir_gbytes_per_s=dict(type='float', aliases=['min_bidir_gbps'], deprecated_aliases=[
                dict(name='min_bidir_gbps', version='2.0.0', collection_name='gpufleet.cluster')]),
            max_latency_us=dict(type='float'),
            require_p2p=dict(type='bool', default=True),
            expected_gpus=dict(type='int'),
            rung=dict(type='str', default='p2p'),
        ),
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
