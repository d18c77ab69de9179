# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl_tuning's host state after converge and the bad-input side effect, read back from the Debian 12 nspawn host
by molecule's testinfra verifier (pytest-testinfra over molecule's inventory). The values the scenario wants are
written out here (role defaults with the overrides of molecule.yml: rp_filter dropped for all, set for eth0,
tcp_mtu_probing 1, rmem_max raised), not read from the role, so a wrong default or merge fails here. What the role
reported (applied / not applied) is asserted in converge.yml, right after the role ran."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

CONF = '/etc/sysctl.d/90-gpufleet.conf'
# in the host's network namespace: set now and in the file
SETTABLE = {
    'net.ipv4.conf.all.arp_ignore': '1',
    'net.ipv4.conf.all.arp_announce': '2',
    'net.ipv4.conf.default.arp_ignore': '1',
    'net.ipv4.conf.default.arp_announce': '2',
    'net.ipv4.conf.default.rp_filter': '2',
    'net.ipv4.conf.eth0.rp_filter': '2',
    'net.ipv4.tcp_mtu_probing': '1',
    'net.ipv4.tcp_rmem': '4096 87380 67108864',
    'net.ipv4.tcp_wmem': '4096 65536 67108864',
}
# net.core.* belong to the machine's kernel, not the container: in the file only (tests/vm/sysctl_tuning.yml sets them
# on a VM)
FILE_ONLY = {
    'net.core.rmem_max': '134217728',
    'net.core.wmem_max': '67108864',
    'net.core.rmem_default': '16777216',
    'net.core.wmem_default': '16777216',
    'net.core.netdev_max_backlog': '250000',
}


def _settings(text):
    """key -> value of a sysctl.d file, whitespace inside values folded to one space."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition('=')
        if sep and not line.lstrip().startswith(('#', ';')):
            out[key.strip()] = ' '.join(value.split())
    return out


def test_the_namespaced_sysctls_hold_the_wanted_values(host):
    got = host.check_output('sysctl -n -- %s' % ' '.join(SETTABLE)).splitlines()
    assert dict((key, ' '.join(value.split())) for key, value in zip(SETTABLE, got)) == SETTABLE


def test_net_core_was_not_set_in_the_container(host):
    # the scenario's premise: an nspawn host cannot set net.core.*, so the role must not claim it did
    assert host.run('systemd-detect-virt --container').rc == 0
    assert host.check_output('sysctl -n net.core.rmem_max').strip() != FILE_ONLY['net.core.rmem_max']


def test_the_file_holds_every_key_and_keeps_what_others_wrote(host):
    conf = host.file(CONF)
    assert conf.is_file and conf.user == 'root' and not conf.mode & 0o022
    text = conf.content_string
    settings = _settings(text)
    want = dict(SETTABLE, **FILE_ONLY)
    assert dict((key, settings.get(key)) for key in want) == want
    # the default the overrides dropped (null) is not written
    assert 'net.ipv4.conf.all.rp_filter' not in settings
    # the storage team's line and comment (prepare.yml) survive
    assert settings.get('net.ipv4.ip_local_reserved_ports') == '4791'
    assert re.search(r'(?m)^# added by the storage team$', text)
