#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fabric_health
short_description: Check InfiniBand/RoCE ports over two reads - counter growth, flapping, link speed, subnet manager
version_added: 0.5.0
description:
  - Reads every RDMA port from sysfs (the same reader as M(gpufleet.cluster.ib_port_facts)) twice, O(interval)
    seconds apart, and fails naming the port, the check and the figure when a port is unhealthy.
  - Error counters are judged by their B(growth) between the two reads, each against its own threshold
    (O(max_growth) over the defaults below), never by their absolute value, which counts since the last reset.
    C(link_downed) growing means the port is flapping.
  - The port must be C(ACTIVE) / C(LinkUp) in both reads and not change state or rate between them; its rate and
    width must not be below O(min_rate_gbps) and O(min_width) (the hardware profile).
  - On InfiniBand ports (not RoCE) a subnet manager must serve the port, C(sm_lid) non-zero; when C(sminfo)
    (infiniband-diags) is installed it is also asked, per port, and the SM must answer and be C(MASTER).
  - A missing figure is a failure, never a pass - a checked counter that is missing or unreadable in either read,
    a counter that went down between the reads (cleared, growth unknown), a counter at its saturation value (the
    IBTA counter widths, for example 65535 for C(symbol_error)), an unreadable rate, width or C(sm_lid).
  - A host without RDMA devices returns C(skipped=true) with the reason (unless O(devices) names devices, which then
    must exist).
  - 'Default thresholds (growth allowed between the two reads): C(link_downed), C(link_error_recovery),
    C(local_link_integrity_errors), C(excessive_buffer_overrun_errors) 0; C(symbol_error), C(port_rcv_errors),
    C(port_rcv_remote_physical_errors) 10; C(port_xmit_discards), C(VL15_dropped) 100. They are gpufleet policy; see
    docs/thresholds.md for the per-profile settings.'
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpufleet.cluster.hardware_roots
attributes:
  check_mode:
    support: full
    details: The module only reads sysfs and queries the subnet manager; check mode runs the same checks.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  devices:
    description:
      - Ports to check, each a device (C(mlx5_0), every port of it) or C(device/port) (C(mlx5_0/1)).
      - Empty (the default) checks every port of every RDMA device found. A named device or port that is not found
        is a failure.
    type: list
    elements: str
    default: []
  interval:
    description:
      - Seconds between the two reads (0 to 3600). The counter thresholds are growth over this interval.
      - C(0) reads twice back to back (tests); the counters then rarely move.
    type: int
    default: 10
  max_growth:
    description:
      - Growth allowed between the two reads per counter, keyed by the counter's sysfs file name (C(symbol_error),
        C(link_downed), ...), merged over the defaults (see the description). A null value drops a default counter.
      - A name is looked up in C(ports/N/counters), then C(counters_ext), then C(hw_counters) (Soft-RoCE C(rxe) has
        only C(hw_counters), with its own C(link_downed)).
    type: dict
    default: {}
  default_counters:
    description:
      - Check the default counters (merged with O(max_growth)). C(false) checks only the counters of O(max_growth).
    type: bool
    default: true
  min_rate_gbps:
    description:
      - Lowest link rate in Gb/s (C(rate) in sysfs, for example C(400) for C(400 Gb/sec (4X NDR))). Not set - no rate
        check.
    type: float
  min_width:
    description:
      - Lowest link width (C(1X), C(2X), C(4X), C(8X), C(12X)). Not set - no width check.
    type: str
  require_active:
    description:
      - Fail a port that is not C(ACTIVE) and C(LinkUp) in both reads.
    type: bool
    default: true
  check_sm:
    description:
      - Check the subnet manager of InfiniBand ports (C(sm_lid) non-zero, and C(sminfo) when installed).
    type: bool
    default: true
  sminfo_path:
    description:
      - C(sminfo) program (name on PATH or path). Not installed - the subnet manager is checked by C(sm_lid) only and
        the result says so in C(sminfo_note). An empty string never runs it.
    type: str
    default: sminfo
  timeout:
    description:
      - Seconds before one C(sminfo) run is ended (1 to 30 days).
    type: int
    default: 30
  rung:
    description:
      - Name that starts every message (the acceptance ladder passes its rung name).
    type: str
    default: fabric_health
notes:
  - The module never clears counters (that would hide a problem from the next reader); clear them with
    C(perfquery -x -R) when a counter is saturated.
seealso:
  - module: gpufleet.cluster.ib_port_facts
  - module: gpufleet.cluster.ib_fabric_info
'''

EXAMPLES = r'''
- name: Check every RDMA port over 10 seconds against the profile's rate
  gpufleet.cluster.fabric_health:
    min_rate_gbps: 400
    min_width: 4X

- name: Stricter symbol errors, no VL15 check, over a minute
  gpufleet.cluster.fabric_health:
    devices: [mlx5_0/1, mlx5_1]
    interval: 60
    max_growth:
      symbol_error: 0
      VL15_dropped: null

- name: Soft-RoCE (rxe has hw_counters only) - check its link_downed and send errors
  gpufleet.cluster.fabric_health:
    devices: [rxe0]
    default_counters: false
    max_growth:
      link_downed: 0
      send_err: 0
    interval: 2
'''

RETURN = r'''
status:
  description: C(pass), C(fail) or C(skipped) (no RDMA device).
  returned: always
  type: str
  sample: fail
msg:
  description:
    - 'The verdict, every problem named with its port, for example
      C(fabric_health: 1 problem(s) on 2 port(s): mlx5_0/1: symbol_error grew by 25 in 10 s (from 3 to 28; max 10)).'
  returned: always
  type: str
failures:
  description: One message per problem (empty when healthy).
  returned: always
  type: list
  elements: str
problems:
  description: The problems with their figures.
  returned: always
  type: list
  elements: dict
  contains:
    port:
      description: C(device/port).
      type: str
    check:
      description: C(state), C(changed), C(rate), C(width), C(subnet_manager), C(counter_growth), C(counter_missing),
        C(counter_reset), C(counter_saturated), C(vanished) or C(selection).
      type: str
    counter:
      description: The counter (counter checks).
      type: str
    first:
      description: Its value in the first read.
      type: int
    second:
      description: Its value in the second read.
      type: int
    growth:
      description: The growth (C(counter_growth)).
      type: int
    max:
      description: The growth allowed (C(counter_growth)).
      type: int
    message:
      description: The problem in words.
      type: str
ports:
  description: Every checked port with its state, rate, width, sm_lid, the growth of each checked counter, its
    status and problems.
  returned: always
  type: list
  elements: dict
  sample:
    - device: mlx5_0
      port: "1"
      link_layer: InfiniBand
      state: ACTIVE
      phys_state: LinkUp
      rate: "400 Gb/sec (4X NDR)"
      rate_gbps: 400
      width: 4X
      sm_lid: 1
      growth: {link_downed: 0, symbol_error: 25}
      status: fail
      problems: ["mlx5_0/1: symbol_error grew by 25 in 10 s (from 3 to 28; max 10)"]
interval:
  description: Seconds between the two reads as measured (at least O(interval)).
  returned: always
  type: float
checked_counters:
  description: The counters checked and the growth each may show.
  returned: always
  type: dict
sminfo_path:
  description: The C(sminfo) that was run, or null when it was not (not installed, O(check_sm) false).
  returned: when the ports were read
  type: str
elapsed:
  description: Seconds the module took (both reads, the wait and the C(sminfo) runs).
  returned: when the ports were read
  type: float
sminfo_note:
  description: Why the subnet manager was checked by C(sm_lid) only.
  returned: when sminfo is not installed
  type: str
skipped:
  description: True on a host without RDMA devices.
  returned: when skipped
  type: bool
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import fabric_health_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type='path', default='/'),
            devices=dict(type='list', elements='str', default=[]),
            interval=dict(type='int', default=10),
            max_growth=dict(type='dict', default={}),
            default_counters=dict(type='bool', default=True),
            min_rate_gbps=dict(type='float'),
            min_width=dict(type='str'),
            require_active=dict(type='bool', default=True),
            check_sm=dict(type='bool', default=True),
            sminfo_path=dict(type='str', default='sminfo'),
            timeout=dict(type='int', default=30),
            rung=dict(type='str', default='fabric_health'),
        ),
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
