#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: rdma_bw
short_description: Run a perftest RDMA bandwidth or latency test and check it
version_added: 0.1.0
description:
  - Runs a perftest tool (C(ib_write_bw) by default; C(ib_read_bw), C(ib_send_bw), or the latency tools
    C(ib_write_lat), C(ib_read_lat), C(ib_send_lat)) as server, client, or both on this host (C(loopback)).
  - In C(loopback) the server runs in the background, the client connects to O(server) (C(127.0.0.1) by default)
    within the same module call; both are bounded by O(timeout) and the server's process group is killed when
    the module ends.
  - Returns the rows and, at O(check_size) (default the largest size), peak and average bandwidth in Gb/s and
    the message rate in Mpps, or the latency figures in microseconds. C(--report_gbits) (Gb/sec) and the
    C(MB/sec)/C(MiB/sec) tables of older and newer perftest are parsed; MB/MiB figures are converted to Gb/s.
  - Fails when the tool exits non-zero or times out, when no result row was parsed, or when a threshold is
    missed or its figure is missing. Messages name the rung, the HCA and port, the figure against the threshold
    and the command line. Never reports C(changed).
  - An output that is cut off or garbled is never accepted, with or without thresholds - the module fails when
    perftest's closing dashed line does not follow the result rows (RV(complete) is C(false)) or when a result
    row could not be read under its header (RV(malformed), for example a cut row or C(-nan)).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  executable:
    description: The perftest tool, a name looked up on E(PATH) or a path. Names ending in C(_lat) are latency tests.
    type: str
    default: ib_write_bw
  role:
    description:
      - C(server) waits for one client; C(client) connects to O(server); C(loopback) runs both here.
    type: str
    choices: [server, client, loopback]
    default: loopback
  server:
    description: Server host for C(client) and C(loopback) (default C(127.0.0.1) in loopback).
    type: str
  device:
    description: RDMA device (C(-d), for example C(mlx5_0)).
    type: str
  ib_port:
    description: Port of the device (C(-i)).
    type: int
    default: 1
  gid_index:
    description: GID index (C(-x)), needed on RoCE.
    type: int
  size:
    description: Message size in bytes (C(-s)); ignored with O(all_sizes).
    type: int
  all_sizes:
    description: Run all sizes from 2 bytes to 8 MiB (C(-a)).
    type: bool
    default: false
  duration:
    description: Seconds per test (C(-D)); takes precedence over O(iterations).
    type: int
  iterations:
    description: Iterations (C(-n)).
    type: int
  qps:
    description: Number of queue pairs (C(-q)).
    type: int
  port:
    description: TCP port for the connection set-up (C(-p)).
    type: int
  report_gbits:
    description: Report bandwidth in Gb/s (C(--report_gbits)); not passed to latency tools.
    type: bool
    default: true
  use_cuda:
    description: GPU index for GPUDirect RDMA buffers (C(--use_cuda=N)); perftest must be built with CUDA.
    type: int
  args:
    description: Extra arguments for both sides.
    type: list
    elements: str
    default: []
  server_start_delay:
    description: Seconds the loopback client waits after starting the server.
    type: float
    default: 1.0
  timeout:
    description:
      - Seconds before a side is killed (its whole process group) and the module fails.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
    default: 120
  check_size:
    description: Size in bytes whose row the thresholds apply to; a missing row fails. Default the largest size.
    type: int
  min_gbits_per_s:
    description:
      - Minimum average bandwidth in Gb/s (gigabits per second, the unit of RV(avg_gbps); perftest's C(MB/sec) and
        C(MiB/sec) figures are converted). See C(docs/thresholds.md).
      - The alias C(min_gbps) is deprecated and will be removed in 2.0.0. It is Gb/s too, not the GB/s (8 times
        more) of O(gpufleet.cluster.p2p_bandwidth#module:min_gbytes_per_s) and
        O(gpufleet.cluster.nccl_bench#module:min_busbw_gbytes_per_s).
    aliases: [min_gbps]
    type: float
    version_added: 0.2.0
  min_msg_rate_mpps:
    description: Minimum message rate in Mpps.
    type: float
  max_latency_us:
    description: Maximum latency in microseconds (C(t_avg), or C(t_typical) where perftest prints no average).
    type: float
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: rdma
notes:
  - Commands run as argument lists with C(LC_ALL=C).
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a count,
    size or port out of range (O(ib_port) 1-255, O(port) 1-65535, O(server_start_delay) 0-60 s, others at least 1,
    O(gid_index) and O(use_cuda) at least 0), a negative threshold, an empty O(server) or O(device) or one starting
    with C(-), or an O(executable) path that is a directory or not executable. An executable the OS cannot start
    (for example a script without C(#!)) fails the module with the OS error.
  - In C(server) role the figures come from the server's own table (perftest prints one for write/send tests).
seealso:
  - module: gpufleet.cluster.nccl_bench
  - module: gpufleet.cluster.ib_port_facts
'''

EXAMPLES = r'''
- name: Loopback write bandwidth on every HCA, at least 360 Gb/s (NDR)
  gpufleet.cluster.rdma_bw:
    device: "{{ item }}"
    size: 65536
    duration: 5
    min_gbits_per_s: 360
    rung: rdma-loopback
  loop: [mlx5_0, mlx5_3, mlx5_4, mlx5_5]

- name: Pair test, server side in the background
  gpufleet.cluster.rdma_bw:
    role: server
    device: mlx5_0
  async: 120
  poll: 0
  delegate_to: gpu001

- name: Pair test, client side
  gpufleet.cluster.rdma_bw:
    role: client
    server: gpu001
    device: mlx5_0
    min_gbits_per_s: 360
  delegate_to: gpu002
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
  description: Command line of the side whose figures are returned (client, or server in C(server) role).
  returned: always
  type: str
rc:
  description: Exit code of that side (C(-9) after a timeout).
  returned: when run
  type: int
elapsed:
  description: Wall time of that side in seconds.
  returned: when run
  type: float
role:
  description: The role that ran.
  returned: always
  type: str
test:
  description: Test name from the banner (C(RDMA_Write), C(RDMA_Read), C(Send) ...).
  returned: when run
  type: str
kind:
  description: C(BW) or C(Latency).
  returned: when run
  type: str
unit:
  description: Bandwidth unit as printed (C(Gb/sec), C(MB/sec), C(MiB/sec)).
  returned: when run
  type: str
settings:
  description: Banner values (C(device), C(link_type), C(mtu), C(qps), C(connection), C(tx_depth) ...).
  returned: when run
  type: dict
local:
  description: Local address line (C(LID), C(QPN), C(PSN), C(GID) ...).
  returned: when run
  type: dict
remote:
  description: Remote address line.
  returned: when run
  type: dict
rows:
  description:
    - Per size C(bytes), C(iterations) and C(bw_peak), C(bw_avg) (printed unit), C(bw_peak_gbps), C(bw_avg_gbps),
      C(msg_rate_mpps) (C(null) when the perftest version prints no such column); or C(t_min_us), C(t_max_us),
      C(t_typical_us), C(t_avg_us), C(t_stdev_us), C(p99_us), C(p999_us) for latency tests (C(*_cycles) instead
      when perftest reports cycles). Extra columns when printed - C(sl), C(bw_port1), C(msg_rate_port1_mpps) ...,
      C(cpu_util_pct).
  returned: when run
  type: list
  elements: dict
bytes:
  description: Size whose figures are returned.
  returned: when run
  type: int
peak_gbps:
  description: Peak bandwidth at RV(bytes), Gb/s.
  returned: when run
  type: float
avg_gbps:
  description: Average bandwidth at RV(bytes), Gb/s.
  returned: when run
  type: float
msg_rate_mpps:
  description: Message rate at RV(bytes), Mpps.
  returned: when run
  type: float
max_peak_gbps:
  description: Highest peak bandwidth of any size, Gb/s.
  returned: when run
  type: float
latency_us:
  description: Latency at RV(bytes) (C(t_avg), else C(t_typical)), microseconds.
  returned: when run
  type: float
latency_typical_us:
  description: C(t_typical) at RV(bytes).
  returned: when run
  type: float
latency_max_us:
  description: C(t_max) at RV(bytes).
  returned: when run
  type: float
latency_p999_us:
  description: 99.9th percentile at RV(bytes), when printed.
  returned: when run
  type: float
complete:
  description: C(true) when perftest's closing dashed line followed the result rows; C(false) (a failure) for a cut output.
  returned: when run
  type: bool
  version_added: 0.2.0
malformed:
  description: Result rows that could not be read under the table header (cut off, garbled, C(-nan)); any fails the run.
  returned: when run
  type: list
  elements: str
  version_added: 0.2.0
problems:
  description: Error lines printed by the tool (C(Couldn't connect), C(Unable to init) ...).
  returned: when run
  type: list
  elements: str
warnings_printed:
  description: Warnings printed by the tool (C(Conflicting CPU frequency ...)).
  returned: when run
  type: list
  elements: str
server:
  description: The server side in C(loopback) (C(cmd), C(rc), C(timed_out), C(rows), C(problems), C(stdout_lines)).
  returned: in loopback
  type: dict
stdout_lines:
  description: Last 40 lines of standard output of the returned side.
  returned: when run
  type: list
  elements: str
stderr_lines:
  description: Last 40 lines of standard error of the returned side.
  returned: when run
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import rdma_bw_engine as engine


ARGUMENT_SPEC = dict(
    executable=dict(type='str', default='ib_write_bw'),
    role=dict(type='str', default='loopback', choices=['server', 'client', 'loopback']),
    server=dict(type='str'),
    device=dict(type='str'),
    ib_port=dict(type='int', default=1),
    gid_index=dict(type='int'),
    size=dict(type='int'),
    all_sizes=dict(type='bool', default=False),
    duration=dict(type='int'),
    iterations=dict(type='int'),
    qps=dict(type='int'),
    port=dict(type='int'),
    report_gbits=dict(type='bool', default=True),
    use_cuda=dict(type='int'),
    args=dict(type='list', elements='str', default=[]),
    server_start_delay=dict(type='float', default=1.0),
    timeout=dict(type='int', default=120),
    check_size=dict(type='int'),
    min_gbits_per_s=dict(type='float', aliases=['min_gbps'], deprecated_aliases=[
        dict(name='min_gbps', version='2.0.0', collection_name='gpufleet.cluster')]),
    min_msg_rate_mpps=dict(type='float'),
    max_latency_us=dict(type='float'),
    rung=dict(type='str', default='rdma'),
)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        required_if=[('role', 'client', ['server'])],
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
