# -*- coding: utf-8 -*-
"""plugins/plugin_utils/_sshd_probe.py (filters sshd_probe_facts, sshd_algorithm_problems, sshd_config_mismatch):
the ssh_hardening role's reading of its probe and of ``sshd -T``.

Every probe output here is HAND-MADE, typed from what roles/ssh_hardening/files/probe.sh prints (one "KEY VALUE"
line each); the algorithm names are those OpenSSH 9.2 lists, the layout of the hostkey line is the probe's awk
over ``ssh-keygen -l``. None of it is recorded output."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.ssh_hardening import FilterModule
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._sshd_probe import (
    ProbeError, algorithm_problems, config_lines, effective_mismatch, probe_facts,
)

FILTERS = FilterModule().filters()

# HAND-MADE: a stock Debian 12 host switched to socket activation, with a DSA and an ECDSA key and a 2048-bit RSA key
# (what molecule/ssh_hardening's prepare step makes of bookworm), seen over SSH from 10.254.77.1.
HANDMADE_PROBE_BOOKWORM = """\
uid 0
sshd /usr/sbin/sshd
version 9.2
kex diffie-hellman-group14-sha256
kex diffie-hellman-group16-sha512
kex diffie-hellman-group18-sha512
kex diffie-hellman-group-exchange-sha256
kex ecdh-sha2-nistp256
kex curve25519-sha256
kex curve25519-sha256@libssh.org
kex sntrup761x25519-sha512@openssh.com
cipher aes128-ctr
cipher aes192-ctr
cipher aes256-ctr
cipher aes128-gcm@openssh.com
cipher aes256-gcm@openssh.com
cipher chacha20-poly1305@openssh.com
mac hmac-sha1
mac hmac-sha2-256-etm@openssh.com
mac hmac-sha2-512-etm@openssh.com
mac umac-128-etm@openssh.com
sig ssh-ed25519
sig ssh-ed25519-cert-v01@openssh.com
sig ecdsa-sha2-nistp256
sig rsa-sha2-256
sig rsa-sha2-512
sig ssh-rsa
hostkey /etc/ssh/ssh_host_dsa_key 1024 DSA
hostkey /etc/ssh/ssh_host_ecdsa_key 256 ECDSA
hostkey /etc/ssh/ssh_host_ed25519_key 256 ED25519
hostkey /etc/ssh/ssh_host_rsa_key 2048 RSA
moduli_small 183
first_directive Include /etc/ssh/sshd_config.d/*.conf
main_hostkey_lines 0
main_sftp Subsystem\tsftp\t/usr/lib/openssh/sftp-server
dropin_dir present
unit ssh disabled inactive
unit ssh.socket enabled active
client 10.254.77.1
"""

# HAND-MADE: a fresh host without openssh-server (no sshd line, nothing from sshd_config), probe run by a non-root
# user through a local connection (no SSH_CLIENT).
HANDMADE_PROBE_NO_SSHD = """\
uid 1000
version 9.2
kex curve25519-sha256
cipher aes256-ctr
mac hmac-sha2-256-etm@openssh.com
sig ssh-ed25519
unit ssh absent unknown
unit ssh.socket absent unknown
client 127.0.0.1
"""

# HAND-MADE: sshd -T refused the current configuration (two lines of its error, prefixed by the probe).
HANDMADE_PROBE_SSHD_T_ERROR = HANDMADE_PROBE_BOOKWORM + """\
sshd_T_error /etc/ssh/sshd_config line 12: Bad configuration option: PermitRootLogn
sshd_T_error /etc/ssh/sshd_config: terminating, 1 bad configuration options
"""

# HAND-MADE: sshd -T for the converged bookworm host, cut to the keywords the role checks.
HANDMADE_SSHD_T = """\
port 22
passwordauthentication no
kbdinteractiveauthentication no
permitrootlogin without-password
hostkey /etc/ssh/ssh_host_ed25519_key
hostkey /etc/ssh/ssh_host_rsa_key
subsystem sftp internal-sftp
acceptenv LANG
acceptenv LC_*
"""


def facts(text):
    return probe_facts(text.splitlines())


# ------------------------------------------------------------------------------------------- probe_facts

def test_bookworm_probe_as_one_dict():
    f = facts(HANDMADE_PROBE_BOOKWORM)
    assert f['uid'] == '0'
    assert f['sshd_present'] is True
    assert f['sshd'] == '/usr/sbin/sshd'
    assert f['version'] == '9.2'
    assert f['supported']['kex'][-1] == 'sntrup761x25519-sha512@openssh.com'
    assert f['supported']['cipher'] == ['aes128-ctr', 'aes192-ctr', 'aes256-ctr', 'aes128-gcm@openssh.com',
                                        'aes256-gcm@openssh.com', 'chacha20-poly1305@openssh.com']
    assert f['supported']['mac'][0] == 'hmac-sha1'
    # host key and user key algorithms both come from the signature list
    assert f['supported']['hostkey'] == f['supported']['pubkey'] == [
        'ssh-ed25519', 'ssh-ed25519-cert-v01@openssh.com', 'ecdsa-sha2-nistp256', 'rsa-sha2-256', 'rsa-sha2-512', 'ssh-rsa']
    assert f['host_keys'] == [
        {'path': '/etc/ssh/ssh_host_dsa_key', 'bits': 1024, 'type': 'DSA'},
        {'path': '/etc/ssh/ssh_host_ecdsa_key', 'bits': 256, 'type': 'ECDSA'},
        {'path': '/etc/ssh/ssh_host_ed25519_key', 'bits': 256, 'type': 'ED25519'},
        {'path': '/etc/ssh/ssh_host_rsa_key', 'bits': 2048, 'type': 'RSA'},
    ]
    assert f['moduli_small'] == 183
    assert f['first_directive'] == 'Include /etc/ssh/sshd_config.d/*.conf'
    assert f['main_hostkey_lines'] == 0
    assert f['main_sftp'] == ['Subsystem\tsftp\t/usr/lib/openssh/sftp-server']
    assert f['present'] == {'banner_file': False, 'dropin_dir': True, 'socket_dropin': False}
    assert f['units'] == {'ssh': {'enabled': 'disabled', 'active': 'inactive'},
                          'ssh.socket': {'enabled': 'enabled', 'active': 'active'}}
    assert f['client'] == '10.254.77.1'
    assert f['sshd_t_errors'] == []


def test_missing_keys_get_the_roles_defaults():
    f = facts(HANDMADE_PROBE_NO_SSHD)
    assert f['uid'] == '1000'
    assert f['sshd_present'] is False
    assert f['sshd'] == '/usr/sbin/sshd'
    assert f['host_keys'] == []
    assert f['moduli_small'] == 0
    assert f['first_directive'] == ''
    assert f['main_hostkey_lines'] == 0
    assert f['main_sftp'] == []
    assert f['present'] == {'banner_file': False, 'dropin_dir': False, 'socket_dropin': False}
    assert f['units'] == {'ssh': {'enabled': 'absent', 'active': 'unknown'},
                          'ssh.socket': {'enabled': 'absent', 'active': 'unknown'}}


@pytest.mark.parametrize('output', [[], '', None], ids=['no-lines', 'empty-string', 'none'])
def test_no_output_is_all_defaults(output):
    assert probe_facts(output) == {
        'uid': None, 'sshd_present': False, 'sshd': '/usr/sbin/sshd', 'version': '0.0',
        'supported': {'kex': [], 'cipher': [], 'mac': [], 'hostkey': [], 'pubkey': []},
        'host_keys': [], 'moduli_small': 0, 'first_directive': '', 'main_hostkey_lines': 0, 'main_sftp': [],
        'present': {'banner_file': False, 'dropin_dir': False, 'socket_dropin': False}, 'units': {},
        'client': '127.0.0.1', 'sshd_t_errors': [],
    }


def test_stdout_string_reads_like_stdout_lines():
    assert probe_facts(HANDMADE_PROBE_BOOKWORM) == facts(HANDMADE_PROBE_BOOKWORM)


def test_sshd_t_errors_in_order():
    assert facts(HANDMADE_PROBE_SSHD_T_ERROR)['sshd_t_errors'] == [
        '/etc/ssh/sshd_config line 12: Bad configuration option: PermitRootLogn',
        '/etc/ssh/sshd_config: terminating, 1 bad configuration options']


def test_first_value_counts_and_files_present():
    lines = HANDMADE_PROBE_BOOKWORM.splitlines() + [
        'version 1.0', 'sshd /bin/false', 'first_directive Port 22', 'moduli_small 7', 'client 192.0.2.9',
        'banner_file present', 'socket_dropin present', 'main_sftp Subsystem sftp internal-sftp']
    f = probe_facts(lines)
    assert (f['version'], f['sshd'], f['first_directive'], f['moduli_small'], f['client']) == (
        '9.2', '/usr/sbin/sshd', 'Include /etc/ssh/sshd_config.d/*.conf', 183, '10.254.77.1')
    assert f['present'] == {'banner_file': True, 'dropin_dir': True, 'socket_dropin': True}
    assert f['main_sftp'] == ['Subsystem\tsftp\t/usr/lib/openssh/sftp-server', 'Subsystem sftp internal-sftp']


def test_first_directive_keeps_its_spacing():
    f = probe_facts(['first_directive   include  /etc/ssh/sshd_config.d/*.conf  '])
    assert f['first_directive'] == '  include  /etc/ssh/sshd_config.d/*.conf  '


@pytest.mark.parametrize('line, uid', [('uid 0', '0'), ('uid ', ''), ('uid', ''), ('uid 1000', '1000')])
def test_uid_as_printed(line, uid):
    # `id -u` printing nothing gives "uid " -> '' (not root); a line without a space has an empty value.
    assert probe_facts([line])['uid'] == uid


def test_several_host_keys_in_probe_order():
    f = probe_facts(['hostkey /etc/ssh/ssh_host_rsa_key 4096 RSA', 'hostkey /etc/ssh/ssh_host_ed25519_key 256 ED25519',
                     'hostkey /etc/ssh/ssh_host_rsa_key 3072 RSA'])
    assert [(k['path'], k['bits']) for k in f['host_keys']] == [
        ('/etc/ssh/ssh_host_rsa_key', 4096), ('/etc/ssh/ssh_host_ed25519_key', 256), ('/etc/ssh/ssh_host_rsa_key', 3072)]


def test_host_key_path_with_a_space_stays_whole():
    # fields are counted from the right: BITS and TYPE are the last two
    f = probe_facts(['hostkey /etc/ssh/ssh_host_my key_key 256 ED25519'])
    assert f['host_keys'] == [{'path': '/etc/ssh/ssh_host_my key_key', 'bits': 256, 'type': 'ED25519'}]


def test_several_unit_lines_later_wins_extra_fields_ignored():
    f = probe_facts(['unit sshd enabled active', 'unit sshd.socket disabled inactive', 'unit sshd masked inactive',
                     'unit ssh static active extra words'])
    assert f['units'] == {'sshd': {'enabled': 'masked', 'active': 'inactive'},
                          'sshd.socket': {'enabled': 'disabled', 'active': 'inactive'},
                          'ssh': {'enabled': 'static', 'active': 'active'}}


def test_unknown_keys_and_blank_lines_are_skipped():
    base = facts(HANDMADE_PROBE_BOOKWORM)
    noisy = ['', 'Warning: something', 'ssh_host_key_note x', '   '] + HANDMADE_PROBE_BOOKWORM.splitlines() + ['']
    assert probe_facts(noisy) == base


@pytest.mark.parametrize('line, quoted', [
    ('hostkey /etc/ssh/ssh_host_rsa_key 2048', "'hostkey /etc/ssh/ssh_host_rsa_key 2048'"),
    ('hostkey /etc/ssh/ssh_host_rsa_key RSA 2048', "'hostkey /etc/ssh/ssh_host_rsa_key RSA 2048'"),
    ('hostkey', "'hostkey '"),
    ('unit ssh enabled', "'unit ssh enabled'"),
    ('unit', "'unit '"),
    ('moduli_small many', "'moduli_small many'"),
    ('moduli_small ', "'moduli_small '"),
    ('main_hostkey_lines -1', "'main_hostkey_lines -1'"),
], ids=['hostkey-no-type', 'hostkey-bits-not-a-number', 'hostkey-empty', 'unit-two-fields', 'unit-empty',
        'moduli-word', 'moduli-empty', 'hostkey-lines-negative'])
def test_malformed_lines_fail_naming_the_line(line, quoted):
    lines = HANDMADE_PROBE_BOOKWORM.splitlines() + [line]
    with pytest.raises(ProbeError) as exc:
        probe_facts(lines)
    assert quoted in str(exc.value)
    with pytest.raises(AnsibleFilterError) as exc:
        FILTERS['sshd_probe_facts'](lines)
    assert quoted in str(exc.value)


def test_not_lines_fails_cleanly():
    with pytest.raises(AnsibleFilterError, match='list of lines or a string'):
        FILTERS['sshd_probe_facts']({'stdout_lines': []})


# ----------------------------------------------------------------------------------------- algorithm_problems

ALGORITHM_VARS = [
    {'var': 'ssh_hardening_kex_algorithms', 'kind': 'kex', 'value': []},
    {'var': 'ssh_hardening_ciphers', 'kind': 'cipher', 'value': []},
    {'var': 'ssh_hardening_macs', 'kind': 'mac', 'value': []},
    {'var': 'ssh_hardening_host_key_algorithms', 'kind': 'hostkey', 'value': []},
    {'var': 'ssh_hardening_pubkey_accepted_algorithms', 'kind': 'pubkey', 'value': []},
]


def _vars(**values):
    return [dict(v, value=values.get(v['kind'], [])) for v in ALGORITHM_VARS]


def test_supported_lists_have_no_problem():
    f = facts(HANDMADE_PROBE_BOOKWORM)
    algorithms = {'kex': ['curve25519-sha256'], 'cipher': ['aes256-ctr'], 'mac': ['umac-128-etm@openssh.com'],
                  'hostkey': ['ssh-ed25519'], 'pubkey': ['ssh-ed25519']}
    assert algorithm_problems(f, _vars(cipher=['aes256-ctr']), algorithms) == []


def test_unsupported_user_entry_named_with_the_supported_ones():
    f = facts(HANDMADE_PROBE_BOOKWORM)
    lists = {'kex': ['x'], 'cipher': ['aes256-ctr', 'bogus-cipher'], 'mac': ['x'], 'hostkey': ['x'], 'pubkey': ['x']}
    got = algorithm_problems(f, _vars(cipher=['aes256-ctr', 'bogus-cipher']), lists)
    assert got == ['ssh_hardening_ciphers contains entries OpenSSH 9.2 on this host does not support: bogus-cipher. '
                   'Supported here: aes128-ctr, aes192-ctr, aes256-ctr, aes128-gcm@openssh.com, aes256-gcm@openssh.com, '
                   'chacha20-poly1305@openssh.com.']


def test_empty_recommended_list_named():
    f = facts(HANDMADE_PROBE_BOOKWORM)
    got = algorithm_problems(f, _vars(), {'kex': ['x'], 'cipher': ['x'], 'mac': [], 'hostkey': ['x'], 'pubkey': ['x']})
    assert got == ['None of the recommended ssh_hardening_macs entries is supported by OpenSSH 9.2 here; set '
                   'ssh_hardening_macs from: hmac-sha1, hmac-sha2-256-etm@openssh.com, hmac-sha2-512-etm@openssh.com, '
                   'umac-128-etm@openssh.com']


def test_kinds_the_probe_listed_nothing_for_are_not_checked():
    # no ssh client: nothing listed, nothing to check against
    f = probe_facts(['uid 0'])
    assert algorithm_problems(f, _vars(cipher=['bogus']), {'kex': [], 'cipher': ['bogus'], 'mac': [], 'hostkey': [],
                                                           'pubkey': []}) == []


def test_algorithm_problems_bad_input_fails_cleanly():
    with pytest.raises(AnsibleFilterError, match='sshd_probe_facts'):
        FILTERS['sshd_algorithm_problems']('not a dict', ALGORITHM_VARS, {})
    with pytest.raises(AnsibleFilterError, match='var, kind and value'):
        FILTERS['sshd_algorithm_problems'](facts(HANDMADE_PROBE_BOOKWORM), [{'kind': 'kex'}], {})


# ------------------------------------------------------------------------------- config_lines, effective_mismatch

EXPECTED = {'passwordauthentication': 'no', 'kbdinteractiveauthentication': 'no', 'permitrootlogin': 'without-password'}
PATHS = ['/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_rsa_key']
SFTP = 'Subsystem sftp internal-sftp'


def test_config_lines_collects_repeated_keywords():
    assert config_lines(HANDMADE_SSHD_T)['acceptenv'] == ['LANG', 'LC_*']
    assert config_lines(['nospace', 'x a b'])['nospace'] == [''] and config_lines(['x a b'])['x'] == ['a b']


def test_converged_config_has_no_mismatch():
    assert effective_mismatch(HANDMADE_SSHD_T.splitlines(), EXPECTED, PATHS, SFTP) == []


def test_overridden_value_named_as_molecule_expects():
    lines = HANDMADE_SSHD_T.replace('passwordauthentication no', 'passwordauthentication yes').splitlines()
    assert FILTERS['sshd_config_mismatch'](lines, EXPECTED, PATHS, SFTP) == ['passwordauthentication is yes, want no']


def test_unset_extra_host_keys_and_sftp():
    lines = [l for l in HANDMADE_SSHD_T.splitlines() if not l.startswith(('permitrootlogin', 'subsystem'))]
    lines += ['hostkey /etc/ssh/ssh_host_dsa_key', 'hostkey /etc/ssh/ssh_host_dsa_key', 'hostkey /etc/ssh/ssh_host_ecdsa_key']
    assert effective_mismatch(lines, EXPECTED, PATHS, SFTP) == [
        'permitrootlogin is <unset>, want without-password',
        'extra HostKey /etc/ssh/ssh_host_dsa_key, /etc/ssh/ssh_host_ecdsa_key',
        'subsystem is <unset>, want Subsystem sftp internal-sftp']


def test_sftp_disabled_and_other_subsystems():
    lines = HANDMADE_SSHD_T.splitlines() + ['subsystem backup /usr/local/bin/backup']
    assert effective_mismatch(lines, EXPECTED, PATHS, '') == ['subsystem is sftp internal-sftp, want <none>']
    no_sftp = [l for l in lines if not l.startswith('subsystem sftp')]
    assert effective_mismatch(no_sftp, EXPECTED, PATHS, '') == []
    server = [l.replace('internal-sftp', '/usr/lib/openssh/sftp-server') for l in lines]
    assert effective_mismatch(server, EXPECTED, PATHS, 'Subsystem sftp /usr/lib/openssh/sftp-server') == []


def test_several_values_of_a_keyword_are_joined():
    lines = HANDMADE_SSHD_T.splitlines() + ['port 2222']
    assert effective_mismatch(lines, {'port': '22'}, PATHS, SFTP) == ['port is 22 2222, want 22']
