#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ssh_login_facts
short_description: How the current SSH login reached this node - connection, method, key - for lockout checks
version_added: 0.2.0
description:
  - Reads, on the node, what a change of the sshd configuration must keep working for the login Ansible is
    using right now. Changes nothing.
  - The TCP connection of this session, both ends, found by walking the process tree up to the sshd process
    that holds it (works through sudo and su, which clear C(SSH_CONNECTION)) and reading C(/proc/net/tcp) and
    C(/proc/net/tcp6).
  - "The login method and key of exactly that connection from sshd's own log line
    (C(Accepted publickey for root from 10.0.0.1 port 40000 ssh2: ED25519 SHA256:...)), read from the journal
    of the session's sshd processes, else from C(auth_logs)."
  - The user's groups, the type and SHA256 fingerprint of every key in the user's authorized_keys files (as
    the effective C(AuthorizedKeysFile) names them), the keys given in I(public_keys), and the effective sshd
    configuration for this user and connection (C(sshd -T -C user=...,host=...,addr=...)).
  - The decision is made on the controller by the C(gpufleet.cluster.ssh_lockout_problems) filter;
    C(gpufleet.cluster.ssh_hardening) runs both before it writes anything and again before it reloads sshd.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  user:
    description:
      - The login user whose access is checked. Must exist on the node.
    type: str
    required: true
  public_keys:
    description:
      - Public key lines (C(ssh-ed25519 AAAA... comment)) the controller may log in with - its key file and agent
        keys. Used when sshd's log has no line for this connection (rotated logs). Lines that hold no key are
        ignored.
    type: list
    elements: str
    default: []
  resolve_hostname:
    description:
      - Also look up the client address's name as sshd does with C(UseDNS yes) (reverse lookup, confirmed by a
        forward lookup), returned as C(hostname). Done anyway when the effective configuration has C(UseDNS yes).
    type: bool
    default: false
  config_file:
    description: The sshd configuration file to read the effective configuration from.
    type: path
    default: /etc/ssh/sshd_config
  sshd_path:
    description: The sshd binary; a bare name is looked up in C(PATH) and C(/usr/sbin).
    type: str
    default: sshd
  journalctl_path:
    description: journalctl; a bare name is looked up in C(PATH). No journal is not an error.
    type: str
    default: journalctl
  auth_logs:
    description: Log files searched for the login line when the journal has none (the last 8 MiB of each).
    type: list
    elements: path
    default: [/var/log/auth.log, /var/log/secure]
  proc_root:
    description: The proc file system whose process tree and TCP tables are read. Point it at a recorded tree to test.
    type: path
    default: /proc
  pid:
    description: The process to start the walk from; 0 is this module's own process.
    type: int
    default: 0
"""

EXAMPLES = r"""
- name: Read how Ansible is logged in
  gpufleet.cluster.ssh_login_facts:
    user: "{{ ansible_user | default('root') }}"
    public_keys: "{{ lookup('ansible.builtin.pipe', 'ssh-add -L 2>/dev/null; true') | split('\n') }}"
  register: login

- name: Refuse settings that would lock that login out
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join('; ') }}"
  vars:
    problems: >-
      {{ login.login | gpufleet.cluster.ssh_lockout_problems({'allow_users': ['deploy@10.1.2.0/24'],
                                                              'password_authentication': false}) }}
"""

RETURN = r"""
login:
  description: What the current login needs.
  returned: success
  type: dict
  contains:
    user:
      description: The login user, its uid, home and groups (primary first).
      type: str
      sample: deploy
    uid:
      description: The user's uid.
      type: int
    home:
      description: The user's home directory.
      type: str
    groups:
      description: Names of the user's groups (primary first).
      type: list
      elements: str
      sample: [deploy, adm]
    connection:
      description:
        - The session's TCP connection as sshd sees it, or null when this module does not run under sshd
          (a local connection) or the process tree could not be read.
        - C(client_address) and C(server_address) are plain IPv4 for IPv4-mapped IPv6 addresses, as sshd shows them.
      type: dict
      sample: {client_address: 10.254.77.1, client_port: 51606, server_address: 10.254.77.150, server_port: 22, pid: 114}
    auth:
      description:
        - How sshd authenticated this connection, from its log line (C(source) C(journal) or the log file), or
          null when no line names this connection. C(method) is sshd's (C(publickey), C(password),
          C(keyboard-interactive/pam), C(gssapi-with-mic), ...); C(key_type) and C(fingerprint) are set for keys.
      type: dict
      sample: {method: publickey, key_type: ED25519, fingerprint: "SHA256:/iMYXEVJ75+ENnWzSn2gnxz1khlB8NoIj6HENtqvzqQ", source: journal}
    authorized_keys:
      description: Keys of the user's authorized_keys files - C(file), C(type), C(fingerprint), C(comment).
      type: list
      elements: dict
    public_keys:
      description: The keys of I(public_keys) that parsed - C(type), C(fingerprint), C(comment).
      type: list
      elements: dict
    hostname:
      description: The client's name as sshd with C(UseDNS yes) would see it (the address when the lookup fails), or null when not looked up.
      type: str
    config:
      description:
        - The effective sshd configuration on disk for this user and connection (C(sshd -T)), keyword -> list of
          values, for the keywords that decide a login (access lists, methods, algorithms, keys, ports, addresses).
      type: dict
      sample: {permitrootlogin: [without-password], port: ["22"], authorizedkeysfile: [.ssh/authorized_keys .ssh/authorized_keys2]}
    notes:
      description: What could not be read (an unreadable authorized_keys file, no journal, ...).
      type: list
      elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import ssh_login_facts_engine as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            user=dict(type='str', required=True),
            public_keys=dict(type='list', elements='str', default=[], no_log=False),
            resolve_hostname=dict(type='bool', default=False),
            config_file=dict(type='path', default='/etc/ssh/sshd_config'),
            sshd_path=dict(type='str', default='sshd'),
            journalctl_path=dict(type='str', default='journalctl'),
            auth_logs=dict(type='list', elements='path', default=['/var/log/auth.log', '/var/log/secure']),
            proc_root=dict(type='path', default='/proc'),
            pid=dict(type='int', default=0),
        ),
        supports_check_mode=True,
    )
    module.exit_json(changed=False, login=engine.gather(module))


if __name__ == '__main__':
    main()
