# -*- coding: utf-8 -*-
"""The ssh_hardening role's pattern/extra-settings rules and moduli rewrite (plugins/plugin_utils/_sshd_input.py):
hand-made inputs, and this machine's real /etc/ssh/moduli when it has one."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.ssh_hardening import FilterModule

FILTERS = FilterModule().filters()
MANAGED = ['ciphers', 'passwordauthentication', 'match', 'subsystem']


def problems(lists=None, extra=None):
    return FILTERS['sshd_input_problems'](lists or {}, extra or {}, MANAGED)


def test_good_input_has_no_problem():
    assert problems({'ssh_hardening_allow_users': ['root', 'ops-*', 'alice@10.0.0.*'], 'ssh_hardening_deny_groups': []},
                    {'PermitTunnel': 'no', 'ClientAliveInterval': 300, 'X11Forwarding': False}) == []


def test_blank_entries_named_per_variable():
    out = problems({'ssh_hardening_allow_users': ['root', ''], 'ssh_hardening_deny_users': ['bad user', 'ok'],
                    'ssh_hardening_allow_groups': ['wheel']})
    assert out == [
        "ssh_hardening_allow_users has empty entries or entries with whitespace: [\"\"]. Each entry is one sshd pattern "
        "such as 'alice', 'ops-*' or 'alice@10.0.0.*'.",
        "ssh_hardening_deny_users has empty entries or entries with whitespace: [\"bad user\"]. Each entry is one sshd "
        "pattern such as 'alice', 'ops-*' or 'alice@10.0.0.*'."]


def test_managed_keywords_refused_whatever_their_case():
    out = problems(extra={'CIPHERS': 'aes256-ctr', 'Match': 'all', 'PermitTunnel': 'no'})
    assert len(out) == 1
    assert out[0].startswith('ssh_hardening_extra_settings sets CIPHERS, Match, which the role sets from its own')


def test_line_breaks_and_nul_refused():
    out = problems(extra={'PermitTunnel': 'no\nMatch all\nPasswordAuthentication yes', 'Banner x': 'none',
                          '': 'x', 'MaxStartups': '10:30:60\x00', 'LoginGraceTime': 30})
    assert len(out) == 1
    assert out[0].startswith("ssh_hardening_extra_settings 'Banner x', '', PermitTunnel, MaxStartups holds a line "
                             "break or NUL")


def test_wrong_shapes_raise_filter_errors():
    with pytest.raises(AnsibleFilterError, match='must be dicts'):
        FILTERS['sshd_input_problems']([], {}, MANAGED)
    with pytest.raises(AnsibleFilterError, match='ssh_hardening_allow_users must be a list'):
        problems({'ssh_hardening_allow_users': 'root'})
    with pytest.raises(AnsibleFilterError, match='ssh_hardening_moduli_min_bits must be a whole number'):
        FILTERS['sshd_moduli_without_small']('', 'big')


def test_moduli_hand_made():
    text = ('#    $OpenBSD: moduli,v 1.33 2023/03/15 $\n'
            '# Time Type Tests Tries Size Generator Modulus\n'
            '20230316 0 6 100 2047 2 C0FFEE\n'
            '20230316 0 6 100 3071 5 BADA55\n'
            '20230316 0 6 100 8191 2 F00D\n'
            'not a group line\n')
    assert FILTERS['sshd_moduli_without_small'](text, 3072) == ''.join(
        line + '\n' for line in text.splitlines() if '2047' not in line)
    assert FILTERS['sshd_moduli_without_small'](text, '8192').count('\n') == 4
    assert FILTERS['sshd_moduli_without_small']('', 3072) == ''


# Real moduli files: this machine's, and Debian's in the lab roots scripts/lab builds (openssh-server's).
MODULI = [p for p in ('/etc/ssh/moduli', '/var/lib/gpufleet-lab/roots/bookworm/etc/ssh/moduli',
                      '/var/lib/gpufleet-lab/roots/trixie/etc/ssh/moduli') if os.path.isfile(p)]


@pytest.mark.skipif(not MODULI, reason='no real /etc/ssh/moduli here (nor in the lab roots)')
@pytest.mark.parametrize('path', MODULI)
def test_moduli_real_file_drops_what_the_probe_counts(path):
    """The rewrite drops exactly the lines the role's probe (probe.sh's awk) counts as small."""
    with open(path) as handle:
        text = handle.read()
    for bits in (2048, 3072, 4096, 8192):
        counted = subprocess.run(
            ['awk', '-v', 'm=%d' % (bits - 1), '$1 !~ /^#/ && NF >= 7 && $5 + 0 < m + 0 {n++} END {print n + 0}'],
            input=text, capture_output=True, text=True, check=True).stdout.strip()
        kept = FILTERS['sshd_moduli_without_small'](text, bits)
        assert len(text.splitlines()) - len(kept.splitlines()) == int(counted), bits
        assert all(line in text.splitlines() for line in kept.splitlines())
