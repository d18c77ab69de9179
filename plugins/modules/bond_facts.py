#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: bond_facts
short_description: Linux bonding state from /proc/net/bonding, with a degraded verdict
version_added: 0.1.0
description:
  - Parses every file in C(/proc/net/bonding/) into C(ansible_facts.bonding), keyed by bond name -
    mode, primary and active slave, MII and ARP monitoring settings, transmit hash policy, LACP details
    (rate, aggregator selection, active aggregator with partner MAC and keys) and per slave its MII
    status, speed, duplex, link failure count, aggregator ID, churn states and LACP PDU details.
  - Each bond gets C(degraded) and C(degraded_reasons) - a slave whose MII status is not up, an
    active-backup bond without active slave, an 802.3ad slave outside the active aggregator (or slaves
    spread over aggregators, or in no aggregator), an 802.3ad bond the driver says has no active
    aggregator, an actor or partner churned, no LACP partner (partner MAC all zero).
  - No bonding driver or no bonds gives an empty dict.
  - With O(expected), also compares the kernel's view with the wanted bonds and returns C(bond_check) - mode, every
    member enslaved and no other, the bond's own degraded reasons, the primary slave (and active while it is up),
    miimon, lacp_rate, xmit_hash_policy and MTU. The role C(gpufleet.cluster.bonding) uses it to wait for its bonds.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
options:
  proc_root:
    description:
      - Directory under which C(proc/net/bonding/) is read. Point it at a recorded tree to test.
      - Must be an existing directory. A bonding file there that is not UTF-8 text fails the module naming the
        file and the byte; entries that cannot be read (a directory, no permission) are left out.
    type: path
    default: /
  sysfs_root:
    description:
      - Directory under which C(sys/class/net/BOND/mtu) is read for the C(mtu) of O(expected). Must be an existing directory.
    type: path
    default: /
  expected:
    description:
      - Bonds that should exist, compared with what the kernel shows. Each is a dict with C(name) (the bond),
        C(mode) (as in C(ansible_facts.bonding[].mode)) and C(members) (interfaces that should be enslaved, and no
        other), and optionally C(primary) (compared on active-backup bonds; when it is up it must be the active
        slave), C(miimon), C(lacp_rate) (C(slow) or C(fast)), C(xmit_hash_policy) and C(mtu) (read from
        C(sys/class/net/BOND/mtu) under O(sysfs_root)). A key left out (or null) is not compared.
      - An unknown key, a missing C(name), C(mode) or C(members), a value of the wrong type, a name that is not an
        interface name, a bond listed twice, members that are empty or repeated, a primary that is not a member, an
        MTU outside 68..65535 or a negative miimon fail the module before anything is read.
    type: list
    elements: dict
"""

EXAMPLES = r"""
- name: Read bonds
  gpufleet.cluster.bond_facts:

- name: Fail on a degraded bond
  ansible.builtin.assert:
    that: not item.value.degraded
    fail_msg: "{{ item.key }}: {{ item.value.degraded_reasons | join('; ') }}"
  loop: "{{ ansible_facts.bonding | dict2items }}"

- name: Wait until bond0 is as wanted
  gpufleet.cluster.bond_facts:
    expected:
      - {name: bond0, mode: 802.3ad, members: [enp1s0f0, enp1s0f1], lacp_rate: fast, mtu: 9000}
  register: bonds
  until: bonds.bond_check.values() | rejectattr('ok') | list | length == 0
  retries: 10
  delay: 3
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: complex
  contains:
    bonding:
      description:
        - Bonds keyed by name. Each has C(mode) (C(balance-rr), C(active-backup), C(balance-xor),
          C(broadcast), C(802.3ad), C(balance-tlb), C(balance-alb)), C(mode_text), C(driver_version),
          C(mii_status), C(miimon), C(updelay), C(downdelay), and when present C(primary_slave),
          C(primary_reselect), C(active_slave), C(xmit_hash_policy), C(arp_interval), C(arp_ip_target),
          C(arp_missed_max), C(ns_ip6_target), C(peer_notif_delay),
          C(lacp) (C(lacp_rate), C(min_links), C(ad_select), C(system_priority), C(system_mac),
          C(active_aggregator) with C(id), C(ports), C(actor_key), C(partner_key), C(partner_mac), or
          null when the driver says the bond has no active aggregator),
          C(slaves) (list of C(name), C(mii_status), C(speed), C(speed_mbps) (null when unknown),
          C(duplex),
          C(link_failure_count), C(permanent_hw_addr), C(queue_id), C(aggregator_id) (null for C(N/A)),
          C(actor_churn_state), C(partner_churn_state), C(actor_churned_count), C(partner_churned_count),
          C(actor_lacp_pdu), C(partner_lacp_pdu)), C(degraded) and C(degraded_reasons).
      returned: always
      type: dict
      sample:
        bond0:
          mode: 802.3ad
          xmit_hash_policy: layer3+4
          mii_status: up
          lacp: {lacp_rate: fast, active_aggregator: {id: 2, partner_mac: "00:00:00:00:00:00"}}
          slaves: [{name: enp1s0f0, mii_status: down, aggregator_id: 1, speed_mbps: null}]
          degraded: true
          degraded_reasons: ["slave enp1s0f0 MII status down"]
bond_check:
  description:
    - Per expected bond, C(ok) and C(problems) (what differs from O(expected), and the bond's degraded reasons;
      a bond that does not exist has the one problem saying so).
  returned: when O(expected) is set
  type: dict
  sample:
    bond0: {ok: false, problems: ["member enp1s0f1 is not enslaved", "MTU is 1500, wanted 9000"]}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import bonding


def main():
    module = AnsibleModule(
        argument_spec=dict(proc_root=dict(type="path", default="/"), sysfs_root=dict(type="path", default="/"),
                           expected=dict(type="list", elements="dict")),
        supports_check_mode=True,
    )
    params = module.params
    expected, errors = bonding.expected_entries(params["expected"])
    ac.refuse(module, ac.nul_errors(params) or ac.root_dir_errors("proc_root", params["proc_root"])
              + ac.root_dir_errors("sysfs_root", params["sysfs_root"]) + errors)
    try:
        bonds = bonding.read_all(params["proc_root"])
    except bonding.BondingReadError as exc:
        module.fail_json(msg=bonding.read_error_msg(exc))
    extra = {}
    if params["expected"] is not None:
        extra["bond_check"] = bonding.check(bonds, expected, params["sysfs_root"])
    module.exit_json(changed=False, ansible_facts={"bonding": bonds}, **extra)


if __name__ == "__main__":
    main()
