#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ib_fabric_info
short_description: Fabric-wide InfiniBand view - switches, links below speed, ports down, switch firmware consistency
version_added: 0.5.0
description:
  - Runs C(ibswitches) and C(iblinkinfo -l) (infiniband-diags) from a host on the fabric and reports the switches,
    every link running below what both of its ends support (iblinkinfo's own C(Could be ...)) or below O(min_width) /
    O(min_lane_gbps), and the connected ports that are not Active.
  - Reads an C(ibdiagnet2.db_csv) (ibdiagnet of NVIDIA MFT/UFM) when O(ibdiagnet_db_csv) is given and reports the
    switch firmware per model (PSID); switches of one model running different versions, or another version than
    O(expect_switch_fw), are problems.
  - Findings are returned in C(problems) (the module succeeds unless O(fail_on_problems)); a tool that fails or prints
    nothing to parse is a failure - a missing figure is never a clean fabric.
  - Without infiniband-diags and without O(ibdiagnet_db_csv) the module returns C(skipped=true) with the reason.
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The tools only query the fabric (SMP/SA reads); check mode runs the same.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  ca:
    description: Local HCA the tools send through (C(-C)); default the first active one (libibumad's choice).
    type: str
  ca_port:
    description: Port of O(ca) (C(-P)).
    type: int
  ibswitches_path:
    description: C(ibswitches) program (name on PATH or path).
    type: str
    default: ibswitches
  iblinkinfo_path:
    description: C(iblinkinfo) program (name on PATH or path).
    type: str
    default: iblinkinfo
  ibdiagnet_db_csv:
    description:
      - An C(ibdiagnet2.db_csv) written by C(ibdiagnet) (default C(/var/tmp/ibdiagnet2/ibdiagnet2.db_csv)) to read the
        switch firmware from. Not set - no firmware view.
    type: path
  expect_switch_fw:
    description: Firmware version every switch must run (for example C(27.2010.6102)). Not set - one version per model.
    type: str
  min_width:
    description: Lowest active link width (C(1X) ... C(12X)); links below it are problems.
    type: str
  min_lane_gbps:
    description: Lowest lane speed in Gb/s as iblinkinfo prints it (C(106.25) for NDR, C(53.125) for HDR).
    type: float
  fail_on_problems:
    description: Fail when there is any problem (default - report them and succeed).
    type: bool
    default: false
  timeout:
    description: Seconds before one tool run is ended (1 to 30 days).
    type: int
    default: 300
seealso:
  - module: gpufleet.cluster.fabric_health
'''

EXAMPLES = r'''
- name: Fabric-wide view from the first node, NDR links must be 4X at 106.25 Gb/s per lane
  gpufleet.cluster.ib_fabric_info:
    min_width: 4X
    min_lane_gbps: 106.25
  register: fabric

- name: Switch firmware from last night's ibdiagnet run
  gpufleet.cluster.ib_fabric_info:
    ibdiagnet_db_csv: /var/tmp/ibdiagnet2/ibdiagnet2.db_csv
    expect_switch_fw: 31.2012.1068
'''

RETURN = r'''
status:
  description: C(ok), C(problems), C(fail) (a tool failed or printed nothing) or C(skipped).
  returned: always
  type: str
msg:
  description: The verdict with every problem.
  returned: always
  type: str
problems:
  description: One message per finding (a link below speed, a port down, firmware that differs).
  returned: always
  type: list
  elements: str
failures:
  description: Why the view could not be taken (tool failed, no output to parse), or the problems with O(fail_on_problems).
  returned: always
  type: list
  elements: str
switches:
  description: Switches from C(ibswitches) (C(guid), C(ports), C(desc), C(enhanced), C(lid), C(lmc)).
  returned: when ibswitches ran
  type: list
  elements: dict
links_total:
  description: Port lines C(iblinkinfo -l) printed.
  returned: when iblinkinfo ran
  type: int
links_below:
  description: Links below what both ends support or below the profile, each once (C(node_desc), C(port), C(peer_desc),
    C(peer_port), C(width), C(speed_gbps), C(reasons)).
  returned: when iblinkinfo ran
  type: list
  elements: dict
ports_down:
  description: Connected ports that are not Active (C(node_desc), C(port), C(state), C(phys_state), C(peer_desc)).
  returned: when iblinkinfo ran
  type: list
  elements: dict
firmware:
  description: Switches with firmware from the db_csv (C(switches)), grouped C(groups) PSID -> version -> switches, and
    C(unknown) (switches without a version).
  returned: when ibdiagnet_db_csv is given
  type: dict
commands:
  description: The command lines run.
  returned: when a tool ran
  type: list
  elements: str
skipped:
  description: True when neither infiniband-diags nor a db_csv is there.
  returned: when skipped
  type: bool
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.cluster.plugins.module_utils import ib_fabric_info_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            ca=dict(type='str'),
            ca_port=dict(type='int'),
            ibswitches_path=dict(type='str', default='ibswitches'),
            iblinkinfo_path=dict(type='str', default='iblinkinfo'),
            ibdiagnet_db_csv=dict(type='path'),
            expect_switch_fw=dict(type='str'),
            min_width=dict(type='str'),
            min_lane_gbps=dict(type='float'),
            fail_on_problems=dict(type='bool', default=False),
            timeout=dict(type='int', default=300),
        ),
        supports_check_mode=True,
    )
    result = engine.run(module)
    if result['failures']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
