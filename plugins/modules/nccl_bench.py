#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: nccl_bench
short_description: Run an nccl-tests benchmark and check its bus bandwidth
version_added: 0.1.0
description:
  - Runs an nccl-tests binary (C(all_reduce_perf) by default; C(all_gather_perf), C(reduce_scatter_perf),
    C(alltoall_perf), C(broadcast_perf), C(sendrecv_perf) ...) on this host or through C(mpirun) or C(srun)
    across O(hosts), parses its table and checks it.
  - >-
    Parses the column layouts of nccl-tests 1.x/2.0 (C(error) column, with or without C(redop)) and 2.x
    (C(redop), C(root), C(#wrong)), launcher line prefixes (C([1,0]<stdout>:), C(0: ), C(host: )),
    interleaved C(NCCL INFO)/C(NCCL WARN) lines, wrapped rows and 1000+ rank lists.
  - The module fails when the tool exits non-zero or times out, when no data row was parsed, when the
    summary reports out-of-bounds values (C(FAILED) or a count above 0), when any row has C(#wrong) above 0,
    when an old-layout C(error) cell carries the tool's C(*) (error above its threshold), when C(Avg bus bandwidth)
    is followed by C(FAILED) (rccl-tests with C(NCCL_TESTS_MIN_BW)), or when a threshold is not met. A threshold
    whose figure is missing is a failure, never a pass.
  - The module also fails when the output holds a failure line (C(Test NCCL failure), C(Test CUDA failure),
    C(Test failure), C(mpirun noticed) ...), even when the process exited 0 - for example a script that runs several
    binaries one after the other. Each run in the output is listed in RV(runs); the message names the run (its
    number, the binary when the log names it, and the line it started on) and the failure lines, and in a log of
    several runs a run whose table never came or never closed fails too.
  - Lines that are not rows of the table (such as the bare continuation lines of a multi-line C(NCCL INFO) message
    with C(NCCL_DEBUG=INFO)) are skipped; a line counts as a row, or as a damaged one, only when it has the table's
    shape.
  - An output that is cut off or garbled is never accepted, with or without thresholds - the module fails when the
    closing C(# Out of bounds values)/C(# Avg bus bandwidth) lines do not follow the table (RV(complete) is
    C(false)) or when any line that started a data row could not be read (RV(malformed)).
  - Every failure message names the rung, the ranks/GPUs (and C(NCCL_IB_HCA) when set), the figure against
    the threshold and the command line. The full parsed result is returned on failure too.
  - Never reports C(changed).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - gpufleet.cluster.acceptance
  - ansible.builtin.action_common_attributes
options:
  executable:
    description:
      - The nccl-tests binary, a name looked up on E(PATH) or a path.
      - With a O(launcher) a name that is not found locally is passed on as is, for the launcher to resolve.
    type: str
    default: all_reduce_perf
  launcher:
    description:
      - C(none) runs the binary here; C(mpirun) passes O(env) with C(-x NAME=VALUE); C(srun) passes O(env)
        through the environment (C(--export=ALL)).
    type: str
    choices: [none, mpirun, srun]
    default: none
  launcher_executable:
    description:
      - Name or path of the launcher; default C(mpirun) or C(srun).
    type: str
  launcher_args:
    description:
      - Extra launcher arguments placed before the binary (for example C(--mca pml ucx), C(--mpi=pmix)).
    type: list
    elements: str
    default: []
  hosts:
    description:
      - Hosts to run on with a O(launcher) (C(mpirun -H host:N,...), C(srun -w host,...)).
    type: list
    elements: str
    default: []
  ranks_per_host:
    description:
      - Processes per host with a O(launcher) (usually the GPU count with O(gpus_per_process=1)).
    type: int
    default: 8
  env:
    description:
      - NCCL/UCX environment (C(NCCL_IB_HCA), C(NCCL_SOCKET_IFNAME), C(NCCL_IB_GID_INDEX),
        C(NCCL_TOPO_FILE), C(NCCL_DEBUG), C(UCX_NET_DEVICES) ...), passed through to every rank.
      - Names must be non-empty and hold no C(=) or NUL byte; values are strings or numbers without a NUL byte.
        Anything else is refused before the run.
    type: dict
    default: {}
  begin_size:
    description: Smallest message size (C(-b)), bytes or with K/M/G.
    type: str
    default: '8'
  end_size:
    description: Largest message size (C(-e)), bytes or with K/M/G.
    type: str
    default: 8G
  step_factor:
    description: Size multiplication factor (C(-f)).
    type: int
    default: 2
  gpus_per_process:
    description: GPUs per process (C(-g)).
    type: int
    default: 1
  iterations:
    description: Timed iterations per size (C(-n)); the tool's default when not set.
    type: int
  warmup_iterations:
    description: Warm-up iterations per size (C(-w)); the tool's default when not set.
    type: int
  check:
    description: Validate results (C(-c 1)); needed for C(#wrong) to mean anything.
    type: bool
    default: true
  args:
    description: Extra arguments for the binary (for example C(['-d', 'bfloat16'])).
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds before the run is killed (its whole process group) and the module fails.
      - From C(1) to C(2592000) (30 days); other values are refused.
    type: int
    default: 1800
  min_busbw_gbytes_per_s:
    description:
      - Minimum out-of-place bus bandwidth in GB/s (gigabytes per second, as nccl-tests prints busbw) at
        O(check_size) (default the largest size run). See C(docs/thresholds.md) for where the numbers come from.
      - The alias C(min_busbw) is deprecated and will be removed in 2.0.0.
    aliases: [min_busbw]
    type: float
    version_added: 0.2.0
  min_avg_busbw:
    description: Minimum of the average bus bandwidth (the tool's C(Avg bus bandwidth)) in GB/s.
    type: float
  check_size:
    description: Size (bytes or with K/M/G) whose row O(min_busbw_gbytes_per_s) applies to; a missing row fails.
    type: str
  expected_ranks:
    description: Fail unless exactly this many C(Rank) lines were printed.
    type: int
  rung:
    description: Name of the acceptance-ladder rung, used in messages.
    type: str
    default: nccl
notes:
  - Commands run as argument lists with C(LC_ALL=C); the launcher also gets C(-x LC_ALL=C).
  - Bad input is refused before anything runs, with a message naming the option - a NUL byte in any text, a counter
    below 1 (O(warmup_iterations) below 0), a negative threshold, a O(begin_size) above O(end_size), a host that is
    empty, starts with C(-) or holds a comma or a space, or an O(executable) path that is a directory or not executable.
  - The bandwidth checked against O(min_busbw_gbytes_per_s) is the out-of-place C(busbw) column, the figure NCCL
    performance reports quote.
seealso:
  - module: gpufleet.cluster.rdma_bw
  - module: gpufleet.cluster.p2p_bandwidth
  - name: nccl-tests
    description: NCCL tests, including the meaning of algbw and busbw (doc/PERFORMANCE.md).
    link: https://github.com/NVIDIA/nccl-tests
'''

EXAMPLES = r'''
- name: All-reduce on the 8 local GPUs, at least 360 GB/s bus bandwidth at 8 GiB
  gpufleet.cluster.nccl_bench:
    gpus_per_process: 8
    min_busbw_gbytes_per_s: 360
    rung: nccl-node

- name: Two-node all-reduce over InfiniBand with Open MPI
  gpufleet.cluster.nccl_bench:
    launcher: mpirun
    hosts: [gpu001, gpu002]
    ranks_per_host: 8
    launcher_args: [--bind-to, none, --mca, pml, ob1]
    env:
      NCCL_IB_HCA: "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
      NCCL_SOCKET_IFNAME: bond0
    begin_size: 1G
    end_size: 8G
    # the inventory key the acceptance role's multinode step reads
    min_busbw_gbytes_per_s: "{{ acceptance_thresholds.nccl_multinode_min_busbw_gbytes_per_s | default(omit) }}"
    rung: nccl-pair
  register: nccl

- name: All-gather through Slurm
  gpufleet.cluster.nccl_bench:
    executable: /opt/nccl-tests/build/all_gather_perf
    launcher: srun
    launcher_args: [--mpi=pmix]
    hosts: "{{ groups['rack1'] }}"
    timeout: 3600
'''

RETURN = r'''
skipped:
  description: C(true) in check mode (nothing was run).
  returned: in check mode
  type: bool
msg:
  description: Summary, or every failure joined with C(; ) when the run failed.
  returned: always
  type: str
failures:
  description: One message per failed check (rung, GPUs/HCA, figure vs threshold, command line).
  returned: always
  type: list
  elements: str
cmd:
  description: The command line that ran (or would run in check mode).
  returned: always
  type: str
rc:
  description: Exit code of the tool or launcher (C(-9) after a timeout).
  returned: when run
  type: int
elapsed:
  description: Wall time of the run in seconds.
  returned: when run
  type: float
rows:
  description:
    - One entry per data row. C(size) (bytes), C(count), C(type), C(redop) and C(root) (C(null) when the
      layout has no such column), then for out-of-place (C(oop_)) and in-place (C(ip_)) C(time_us), C(algbw),
      C(busbw) (GB/s), C(wrong) (C(null) for C(N/A) or the old layout) and C(error) (old layout only).
  returned: when run
  type: list
  elements: dict
avg_busbw:
  description: Average bus bandwidth in GB/s, from the tool's C(Avg bus bandwidth) line when printed.
  returned: when run
  type: float
avg_busbw_source:
  description: C(tool) (the summary line) or C(computed) (mean of every busbw, as nccl-tests computes it).
  returned: when run
  type: str
max_busbw:
  description: Highest busbw of any row, GB/s.
  returned: when run
  type: float
busbw_at_check:
  description: Out-of-place busbw at RV(check_size), GB/s.
  returned: when run
  type: float
check_size:
  description: Size in bytes whose row is checked against O(min_busbw_gbytes_per_s).
  returned: when run
  type: int
out_of_bounds:
  description: Count from C(# Out of bounds values), C(null) when not printed.
  returned: when run
  type: int
out_of_bounds_status:
  description: C(OK) or C(FAILED) from the same line.
  returned: when run
  type: str
wrong_rows:
  description: Sizes of rows with C(#wrong) above 0, or in the old layout an C(error) the tool flagged with C(*).
  returned: when run
  type: list
  elements: int
ranks:
  description: The C(Rank) lines, each with C(rank), C(group), C(pid), C(host), C(device), C(busid), C(name).
  returned: when run
  type: list
  elements: dict
nranks:
  description: Number of rank lines seen.
  returned: when run
  type: int
devices:
  description: Distinct host/GPU pairs among the ranks.
  returned: when run
  type: int
hosts:
  description: Hosts seen in the rank lines, in order.
  returned: when run
  type: list
  elements: str
params:
  description: The C(# nThread ...) line (nthread, ngpus, min_bytes, max_bytes, iters, validation ...).
  returned: when run
  type: dict
layout:
  description: Column layout found (C(leading) columns, C(check) C(wrong) or C(error), C(guessed)).
  returned: when run
  type: dict
nccl_warnings:
  description: C(NCCL WARN) lines (first 50).
  returned: when run
  type: list
  elements: str
errors:
  description: Failure lines printed by the tool or launcher (C(Test NCCL failure), C(mpirun noticed) ...).
  returned: when run
  type: list
  elements: str
malformed:
  description: Lines that started a data row but could not be read (cut off, or a garbled figure); any fails the run.
  returned: when run
  type: list
  elements: str
complete:
  description:
    - C(true) when the closing C(# Out of bounds values) or C(# Avg bus bandwidth) line followed the last data row;
      C(false) (a failure) for an output cut short.
  returned: when run
  type: bool
  version_added: 0.2.0
error_exceeded:
  description: Sizes whose old-layout C(error) cell the tool flagged with C(*) (each fails the run).
  returned: when run
  type: list
  elements: int
  version_added: 0.2.0
avg_busbw_status:
  description: C(OK) or C(FAILED) printed after C(Avg bus bandwidth) (rccl-tests with C(NCCL_TESTS_MIN_BW)), else C(null).
  returned: when run
  type: str
  version_added: 0.2.0
runs:
  description:
    - One entry per run in the output (a log may hold several binaries or collectives one after the other), each with
      C(index) (from 1), C(line) (the output line the run started on), C(binary) (when the output names it, else
      C(null)), C(rows) (data rows read), C(complete) (its closing lines followed its last row) and C(errors)
      (its failure lines, each prefixed with C(line N) and a colon). Any run with errors fails the module.
  returned: when run
  type: list
  elements: dict
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

from ansible_collections.gpufleet.cluster.plugins.module_utils import nccl_bench_engine as engine


ARGUMENT_SPEC = dict(
    executable=dict(type='str', default='all_reduce_perf'),
    launcher=dict(type='str', default='none', choices=['none', 'mpirun', 'srun']),
    launcher_executable=dict(type='str'),
    launcher_args=dict(type='list', elements='str', default=[]),
    hosts=dict(type='list', elements='str', default=[]),
    ranks_per_host=dict(type='int', default=8),
    env=dict(type='dict', default={}),
    begin_size=dict(type='str', default='8'),
    end_size=dict(type='str', default='8G'),
    step_factor=dict(type='int', default=2),
    gpus_per_process=dict(type='int', default=1),
    iterations=dict(type='int'),
    warmup_iterations=dict(type='int'),
    check=dict(type='bool', default=True),
    args=dict(type='list', elements='str', default=[]),
    timeout=dict(type='int', default=1800),
    min_busbw_gbytes_per_s=dict(type='float', aliases=['min_busbw'], deprecated_aliases=[
        dict(name='min_busbw', version='2.0.0', collection_name='gpufleet.cluster')]),
    min_avg_busbw=dict(type='float'),
    check_size=dict(type='str'),
    expected_ranks=dict(type='int'),
    rung=dict(type='str', default='nccl'),
)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
