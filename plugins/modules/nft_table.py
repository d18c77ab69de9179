#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nft_table
short_description: Own one nftables table, checked with nft -c and loaded with a timed rollback
version_added: 0.5.0
description:
  - Manages exactly one nftables table (O(family) O(name)) from a file, and nothing else of the ruleset - no
    C(flush ruleset), other tables (docker's, kube-proxy's, the distro's) stay as they are.
  - O(state=present) compares O(content) with the persisted file O(path), and the live table (C(nft -s list table))
    with the listing recorded after the last confirmed load, so a table changed or removed by hand is loaded again
    and a converged host reports C(changed=false).
  - When they differ, the file is checked with C(nft -c -f) (nothing is loaded when nft refuses it), the live table
    is kept in a rollback file, and with O(rollback_seconds) a transient systemd timer (C(systemd-run --on-active))
    is armed that loads the rollback file - the table as it was - after that many seconds. Then the new file is
    loaded in one transaction. The result has RV(pending=true) until a call with O(state=confirmed), made after
    the caller reconnected (for example after C(meta reset_connection)), stops the timer and persists the file.
    A confirm that never comes leaves the old table in force, and the old file on disk (the persisted file changes
    only on confirm).
  - With O(rollback_seconds=0) the file is loaded and persisted at once.
  - O(content) may only declare, delete or flush its own table (the module refuses C(flush ruleset), C(include),
    or statements about other tables); the usual form is C(table F N) + C(delete table F N) + C(table F N { ... })
    so that the load replaces the table atomically.
  - Loading the persisted file at boot is the caller's (the C(gpufleet.cluster.firewall) role installs a unit).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the live table and the files and reports what would change; loads, arms and writes nothing.
  diff_mode:
    support: full
    details: The persisted file before and after; the before header says why the table is reloaded.
  platform:
    platforms: posix
options:
  name:
    description: The table's name (1..32 characters of C(A-Z a-z 0-9 _), starting with a letter).
    type: str
    required: true
  family:
    description: The table's family.
    type: str
    choices: [inet, ip, ip6]
    default: inet
  state:
    description:
      - V(present) loads O(content) when it differs (with the timed rollback armed when O(rollback_seconds) > 0).
      - V(confirmed) stops a pending rollback and persists what was loaded; with nothing pending it changes nothing,
        and it fails when the rollback already fired.
      - V(absent) deletes the table and the persisted file.
    type: str
    choices: [present, confirmed, absent]
    default: present
  content:
    description: The whole file (nft syntax) with O(state=present).
    type: str
  path:
    description: The persisted file. Default C(/etc/nftables.d/NAME.nft).
    type: path
  rollback_seconds:
    description:
      - Seconds after the load at which the old table comes back unless a call with O(state=confirmed) stopped it
        (10..3600); V(0) loads and persists at once, without rollback.
    type: int
    default: 0
  state_dir:
    description: Where the recorded listing, the candidate and the rollback file live (created mode 0700).
    type: path
    default: /var/lib/gpufleet/nft
  nft_path:
    description: The nft program (a name looked up on PATH, or a path).
    type: str
    default: nft
  systemd_run_path:
    description: The systemd-run program (used when O(rollback_seconds) > 0).
    type: str
    default: systemd-run
  systemctl_path:
    description: The systemctl program (used for the rollback timer).
    type: str
    default: systemctl
  timeout:
    description: Seconds each command may take.
    type: int
    default: 30
notes:
  - Needs root (CAP_NET_ADMIN) and nft; the rollback needs systemd.
seealso:
  - name: nftables wiki, atomic rule replacement
    description: Why a file that declares, deletes and defines its table replaces it in one transaction.
    link: https://wiki.nftables.org/wiki-nftables/index.php/Atomic_rule_replacement
"""

EXAMPLES = r"""
- name: Load the firewall table; the old one comes back in 60 s unless confirmed
  gpufleet.cluster.nft_table:
    name: gpufleet
    content: "{{ lookup('ansible.builtin.template', 'gpufleet.nft.j2') }}"
    rollback_seconds: 60
  register: fw

- name: Open a new connection (the firewall must admit it)
  ansible.builtin.meta: reset_connection

- name: Confirm, which stops the rollback and persists the file
  gpufleet.cluster.nft_table:
    name: gpufleet
    state: confirmed
  when: fw.pending

- name: Remove the table
  gpufleet.cluster.nft_table:
    name: gpufleet
    state: absent
"""

RETURN = r"""
pending:
  description: A load is waiting for its confirm (the rollback timer runs).
  returned: always
  type: bool
path:
  description: The persisted file.
  returned: always
  type: str
reasons:
  description: Why the table is (re)loaded - C(file differs), C(file missing), C(table not loaded), C(live table differs from the last load).
  returned: with state=present
  type: list
  elements: str
rollback_unit:
  description: The transient timer that restores the old table (C(gpufleet-nft-rollback-FAMILY-NAME.timer)).
  returned: always
  type: str
loaded_at:
  description: When the new table was loaded (seconds since the epoch, on the node).
  returned: when loaded
  type: float
rollback_at:
  description: When the rollback fires unless confirmed (seconds since the epoch, on the node).
  returned: when a rollback was armed
  type: float
rolled_back_at:
  description: When the rollback fired (seconds since the epoch, on the node).
  returned: when a confirm failed because the rollback had fired
  type: float
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import nft_table_engine as engine

ARGUMENT_SPEC = dict(
    name=dict(type="str", required=True),
    family=dict(type="str", choices=["inet", "ip", "ip6"], default="inet"),
    state=dict(type="str", choices=["present", "confirmed", "absent"], default="present"),
    content=dict(type="str"),
    path=dict(type="path"),
    rollback_seconds=dict(type="int", default=0),
    state_dir=dict(type="path", default="/var/lib/gpufleet/nft"),
    nft_path=dict(type="str", default="nft"),
    systemd_run_path=dict(type="str", default="systemd-run"),
    systemctl_path=dict(type="str", default="systemctl"),
    timeout=dict(type="int", default=30),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = engine.run(module.params, module.check_mode, module._diff, lambda name: _runner.find(module, name), module)
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
