# -*- coding: utf-8 -*-
"""plugin_utils/_ssh_lockout.py: sshd's rules for the login Ansible is using (issue #13 items 1-3).

Logins are hand-made dicts shaped like gpufleet.cluster.ssh_login_facts's result."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._ssh_lockout import (
    SettingsError, addr_match_list, lockout_problems, match_user, parse_listen)

FP = 'SHA256:/iMYXEVJ75+ENnWzSn2gnxz1khlB8NoIj6HENtqvzqQ'
SETTINGS = ('allow_users', 'deny_users', 'allow_groups', 'deny_groups', 'permit_root_login', 'password_authentication',
            'pubkey_accepted_algorithms', 'ports', 'listen_addresses')
NAMES = {k: 'ssh_hardening_' + k for k in SETTINGS}


def login(user='deploy', client='10.9.9.9', server='10.0.0.5', port=22, method='publickey', key_type='ED25519',
          fp=FP, akeys=(('ssh-ed25519', FP),), groups=('deploy', 'adm'), **kw):
    out = {'user': user, 'groups': list(groups), 'hostname': None, 'config': {}, 'notes': [], 'public_keys': [],
           'connection': {'client_address': client, 'client_port': 40000, 'server_address': server, 'server_port': port},
           'auth': {'method': method, 'user': user, 'key_type': key_type if method == 'publickey' else None,
                    'fingerprint': fp if method == 'publickey' else None, 'source': 'journal'},
           'authorized_keys': [{'file': '/home/x/.ssh/authorized_keys', 'type': t, 'fingerprint': f} for t, f in akeys]}
    out.update(kw)
    return out


def settings(**kw):
    base = {'allow_users': [], 'allow_groups': [], 'deny_users': [], 'deny_groups': [], 'permit_root_login': 'prohibit-password',
            'password_authentication': False, 'kbd_interactive_authentication': False, 'pubkey_authentication': True,
            'pubkey_accepted_algorithms': ['ssh-ed25519', 'rsa-sha2-512', 'rsa-sha2-256'], 'ports': [22],
            'listen_addresses': [], 'use_dns': False}
    base.update(kw)
    return base


def problems(lg=None, **kw):
    return lockout_problems(lg or login(), settings(**kw), NAMES)


def test_defaults_keep_a_key_login():
    assert problems() == []


# ---- item 1: the host part of user@host
@pytest.mark.parametrize('entry', ['deploy@10.1.2.3', 'deploy@192.0.2.0/24', 'deploy@10.9.9.9,!10.9.9.9', 'deploy@!10.9.9.0/24,*',
                                   'deploy@*.example.com', 'deploy@10.9.9.1?'])
def test_allow_users_host_part_refuses_other_addresses(entry):
    out = problems(allow_users=[entry])
    assert len(out) == 1 and 'ssh_hardening_allow_users' in out[0] and 'deploy from 10.9.9.9' in out[0]


@pytest.mark.parametrize('entry', ['deploy', 'dep*', 'deploy@10.9.9.9', 'deploy@10.9.9.0/24', 'deploy@10.9.9.*', 'deploy@10.9.9.?',
                                   'deploy@192.0.2.1,10.9.0.0/16', '*@10.0.0.0/8', 'deploy@!10.1.2.3,10.9.9.9'])
def test_allow_users_matching_entries_pass(entry):
    assert problems(allow_users=['nobody', entry]) == []


def test_deny_users_with_host_part():
    assert 'ssh_hardening_deny_users' in problems(deny_users=['deploy@10.9.9.0/24'])[0]
    assert problems(deny_users=['deploy@10.1.2.3', 'root']) == []


def test_mask_with_host_bits_is_invalid_as_in_sshd():
    with pytest.raises(SettingsError):
        addr_match_list('10.9.9.9', '10.9.9.1/24')
    assert 'inconsistent mask' in problems(allow_users=['deploy@10.9.9.1/24'])[0]


def test_ipv6_client():
    lg = login(client='2001:db8::7', server='2001:db8::1')
    assert problems(lg, allow_users=['deploy@2001:db8::/64']) == []
    assert problems(lg, allow_users=['deploy@10.0.0.0/8'])


def test_use_dns_needs_the_name():
    # UseDNS no: sshd matches the host part against the address text only.
    assert problems(allow_users=['deploy@ctl.example.com'])
    # UseDNS yes and a name the node looked up
    lg = login(hostname='ctl.example.com')
    assert problems(lg, allow_users=['deploy@*.example.com'], use_dns=True) == []
    # UseDNS yes and no name: cannot decide -> refuse
    out = problems(allow_users=['deploy@*.example.com'], use_dns=True)
    assert 'cannot decide' in out[0]


def test_unknown_client_address_cannot_decide():
    out = lockout_problems(login(connection=None), settings(), NAMES)
    assert 'cannot find' in out[0]
    assert lockout_problems(login(connection=None), settings(), NAMES, need_connection=False) == []


def test_groups():
    assert 'ssh_hardening_allow_groups' in problems(allow_groups=['wheel'])[0]
    assert problems(allow_groups=['ad?']) == []
    assert 'ssh_hardening_deny_groups' in problems(deny_groups=['adm'])[0]


def test_match_user_matches_sshd():
    assert match_user('deploy', '10.9.9.9', '10.9.9.9', 'deploy@10.9.9.9')
    assert not match_user('deploy', '10.9.9.9', '10.9.9.9', 'other@10.9.9.9')
    assert match_user('a@b', 'h', '10.0.0.1', 'a@b@10.0.0.1')  # the last @ splits


# ---- item 2: the port and address of this session
def test_port_left_out():
    assert 'ssh_hardening_ports [2222] leaves out port 22' in problems(ports=[2222])[0]
    assert problems(ports=[2222, 22]) == []


@pytest.mark.parametrize('listen, ok', [
    (['10.0.0.5'], True), (['0.0.0.0'], True), (['10.0.0.5:22'], True), (['10.0.0.6'], False), (['127.0.0.1'], False),
    (['10.0.0.5:2222'], False), (['[::]:22'], False), (['::'], False), (['0.0.0.0:22 rdomain 1'], True),
])
def test_listen_addresses(listen, ok):
    assert (problems(listen_addresses=listen) == []) is ok


def test_listen_by_name_cannot_decide():
    assert 'host names' in problems(listen_addresses=['node1.example.com'])[0]


def test_parse_listen_forms():
    assert parse_listen('[2001:db8::1]:2222', [22]) == [('2001:db8::1', 2222)]
    assert parse_listen('2001:db8::1', [22, 23]) == [('2001:db8::1', 22), ('2001:db8::1', 23)]


# ---- item 3: the method and key this session used
def test_root_by_password_and_prohibit_password():
    lg = login(user='root', method='password')
    out = problems(lg, password_authentication=True)
    assert out == ['ssh_hardening_permit_root_login=prohibit-password refuses root by password, the method this session '
                   'logged in with; use a key for root or set it to yes']
    assert problems(lg, password_authentication=True, permit_root_login='yes') == []


def test_password_session_and_passwords_off():
    assert 'ssh_hardening_password_authentication=no' in problems(login(method='password'))[0]


def test_key_of_this_session_must_stay_authorized_and_accepted():
    assert 'in none of' in problems(login(akeys=[('ssh-ed25519', 'SHA256:other')]))[0]
    assert 'does not accept' in problems(pubkey_accepted_algorithms=['rsa-sha2-512'])[0]
    # an RSA key signs with rsa-sha2-*: accepted when either is listed
    lg = login(key_type='RSA', akeys=[('ssh-rsa', FP)])
    assert problems(lg, pubkey_accepted_algorithms=['rsa-sha2-256']) == []
    assert problems(lg, pubkey_accepted_algorithms=['ssh-ed25519'])


def test_key_from_authorized_keys_command_is_trusted_for_its_type():
    lg = login(akeys=[], config={'authorizedkeyscommand': ['/usr/bin/sss_ssh_authorizedkeys']})
    assert problems(lg) == []
    assert problems(lg, pubkey_accepted_algorithms=['rsa-sha2-512'])


def test_no_log_line_falls_back_on_the_controller_keys():
    lg = login(auth=None, public_keys=[{'type': 'ssh-ed25519', 'fingerprint': FP}])
    assert problems(lg) == []
    lg = login(auth=None, public_keys=[{'type': 'ssh-ed25519', 'fingerprint': 'SHA256:else'}])
    assert 'no key login of deploy can be proven' in problems(lg)[0]
    # a password login stays possible for a non-root user when passwords stay on
    assert problems(lg, password_authentication=True) == []
    assert problems(login(user='root', auth=None), password_authentication=True)


def test_log_line_of_another_user_is_not_this_login():
    lg = login(user='daemon', akeys=[])
    lg['auth']['user'] = 'root'
    assert 'ssh_hardening_password_authentication' in problems(lg)[0]


def test_authentication_methods():
    assert problems(authentication_methods='publickey,password')
    assert problems(authentication_methods='publickey,password publickey') == []


def test_effective_configuration_from_sshd_T():
    lg = login(config={'allowusers': ['deploy@10.1.2.3'], 'port': ['22'], 'listenaddress': ['0.0.0.0:22'],
                       'pubkeyacceptedalgorithms': ['ssh-ed25519'], 'permitrootlogin': ['without-password']})
    out = lockout_problems(lg)
    assert len(out) == 1 and out[0].startswith('AllowUsers')


def test_bad_login_input():
    with pytest.raises(SettingsError):
        lockout_problems({'x': 1})
