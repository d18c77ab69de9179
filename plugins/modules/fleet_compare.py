#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet_compare
short_description: Check that the hosts of each hardware profile run the same firmware and software versions
version_added: 0.1.0
description:
  - Groups hosts by profile and compares, per profile, HCA firmware per board id (PSID), GPU VBIOS, NVIDIA
    driver, OFED and (optionally) Fabric Manager versions. Each host votes with its value (a host with
    several values votes with all of them joined by C( + )); the value most hosts have is the majority
    and every other host is named with its value and the majority value. When two or more values have
    the most hosts, the tie is reported as such on every host of the tied values.
  - A host that does not report a value the others report is a deviation. A value no host reports is
    not compared (for example the driver on CPU-only lab hosts).
  - Runs on the controller (action plugin, usually with C(run_once)); changes nothing.
author:
  - gpufleet contributors (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Compares data only; check mode gives the same result.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  hosts:
    description:
      - Host name to that host's facts, with the keys C(infiniband), C(nvidia_gpu) and C(firmware) as the
        facts modules return them (as for the C(facts) option of M(gpufleet.cluster.node_compare)).
      - Instead of facts, a host may map to a dict with the key C(versions) as returned by
        M(gpufleet.cluster.node_compare) (C(driver), C(ofed), C(fabricmanager), C(vbios) list and
        C(hca_firmware) board id to list of versions), which keeps the data small on big fleets.
    type: dict
    required: true
  profiles:
    description:
      - Host name to profile name (for example C(gpufleet_profile) of each host). Hosts left out are in
        profile C(none).
    type: dict
  items:
    description:
      - What must agree across the hosts of a profile.
    type: list
    elements: str
    choices: [hca_firmware, vbios, driver, ofed, fabricmanager]
    default: [hca_firmware, vbios, driver, ofed]
  hca_match:
    description:
      - Regular expression selecting the RDMA devices whose firmware is compared (all but SR-IOV virtual
        functions when unset).
    type: str
  fail_on_deviation:
    description:
      - Fail when a host deviates. With C(false) the result lists them in RV(deviations) and RV(outliers).
    type: bool
    default: true
notes:
  - Host facts that do not have the shape the facts modules (or M(gpufleet.cluster.node_compare)'s C(versions))
    return, a O(hca_match) that is not a regular expression, or a profile that is not a name fail the task with a
    message naming the key, before anything is compared.
seealso:
  - module: gpufleet.cluster.node_compare
  - module: gpufleet.cluster.fw_facts
'''

EXAMPLES = r'''
- name: Versions must agree across each profile's hosts
  gpufleet.cluster.fleet_compare:
    hosts: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'ansible_facts'))) }}"
    profiles: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'gpufleet_profile'))) }}"
  run_once: true

- name: Only HCA firmware, collect outliers without failing
  gpufleet.cluster.fleet_compare:
    hosts: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'ansible_facts'))) }}"
    items: [hca_firmware]
    fail_on_deviation: false
  run_once: true
  register: fleet
'''

RETURN = r'''
deviations:
  description:
    - One entry per host and differing value, with C(host), C(profile), C(item), C(label), C(device) (the host),
      C(expected) (majority, C(null) on a tie), C(actual) and C(message).
  returned: always
  type: list
  elements: dict
  sample:
    - host: node03
      device: node03
      profile: h100_ib
      item: hca_firmware
      label: board_id MT_0000000838
      expected: 28.42.1000
      actual: 28.39.1002
      message: "node03: hca firmware board_id MT_0000000838 expected 28.42.1000 (majority, 3 of 4 hosts of profile h100_ib), found 28.39.1002"
outliers:
  description: Names of the hosts with a deviation, sorted.
  returned: always
  type: list
  elements: str
summary:
  description: Per profile and item, C(values) (value to hosts), C(missing) (hosts not reporting it), C(majority) and C(tie).
  returned: always
  type: list
  elements: dict
msg:
  description: Every deviation joined with C(; ), or what agreed.
  returned: always
  type: str
'''
