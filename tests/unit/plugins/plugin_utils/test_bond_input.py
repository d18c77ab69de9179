# -*- coding: utf-8 -*-
"""The bonding role's input rules (plugins/plugin_utils/_bond_input.py, filter bond_input_problems):
hand-made inputs, each problem named as the role reports it."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.bonding import FilterModule
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._bond_input import (
    input_problems, is_host_prefix, is_ipv4_address,
)

PRESENT = ['lo', 'eth1', 'eth2', 'eth3', 'eth4']
GOOD = {'name': 'bond0', 'mode': '802.3ad', 'members': ['eth1', 'eth2'], 'mtu': 9000, 'lacp_rate': 'fast',
        'xmit_hash_policy': 'layer3+4', 'addresses': ['10.0.0.5/24', 'fd00::5/64']}


def problems(*bonds, backend='networkd'):
    return input_problems(list(bonds), PRESENT, backend)


def test_good_bonds_have_no_problem():
    ab = {'name': 'bond1', 'mode': 'active-backup', 'members': ['eth3', 'eth4'], 'primary': 'eth3',
          'miimon': 0, 'arp_interval': 200, 'arp_ip_target': ['10.0.0.254', '10.0.0.253'], 'addresses': ['10.1.2.3/31']}
    assert problems(GOOD, ab) == []


@pytest.mark.parametrize('text, ok', [
    ('10.0.0.5', True), ('999.1.1.1', False), ('10.0.0.5/24', False), ('1.2.3', False), ('fd00::1', False),
    ('010.0.0.1', False), ('', False), (5, False),
])
def test_arp_target_is_a_plain_ipv4_address(text, ok):
    assert is_ipv4_address(text) is ok


@pytest.mark.parametrize('text, ok', [
    ('10.0.0.5/24', True), ('10.1.2.3/31', True), ('10.1.2.3/32', True), ('fd00::5/64', True),
    ('999.1.1.1/99', False), ('10.0.0.5/99', False), ('10.0.0.5/33', False), ('fd00::5/129', False),
    ('10.0.0.0/24', False), ('10.0.0.255/24', False), ('10.0.0.5', False), ('10.0.0.5/2/4', False),
    ('10.0.0.5/x', False), ('eth0/24', False), (None, False),
])
def test_addresses_are_host_and_prefix(text, ok):
    assert is_host_prefix(text) is ok


@pytest.mark.parametrize('change, expected', [
    ({'colour': 'red'}, 'bonding_bonds[bond0] has unknown key colour (allowed: name, mode, members'),
    ({'name': 'bond0-with-a-long-name'}, '.name must be 1..15 characters'),
    ({'mode': 'balance-rr'}, '.mode is balance-rr; allowed: active-backup, 802.3ad'),
    ({'mode': None}, '.mode is missing; allowed'),
    ({'members': 'eth1'}, 'bonding_bonds[bond0].members must be a non-empty list of interface names'),
    ({'members': []}, '.members must be a non-empty list'),
    ({'members': ['eth1', 'eth9']}, '.members: eth9 does not exist on this host (no /sys/class/net/eth9)'),
    ({'members': ['eth1', 'eth1']}, '.members lists an interface twice'),
    ({'members': ['eth1', 'bond0']}, '.members contains the bond itself'),
    ({'primary': 'eth1'}, '.primary is only for mode active-backup'),
    ({'lacp_rate': 'medium'}, '.lacp_rate is medium; allowed: slow, fast'),
    ({'xmit_hash_policy': 'layer5'}, '.xmit_hash_policy is layer5; allowed: layer2, layer2+3'),
    ({'mtu': 65}, '.mtu 65 is out of range; allowed: 68..9216'),
    ({'mtu': '9000x'}, '.mtu 9000x is out of range'),
    ({'updelay': 1.5}, '.updelay must be a whole number of milliseconds'),
    ({'arp_interval': 100, 'arp_ip_target': ['10.0.0.1']},
     'arp_interval: ARP monitoring does not work with mode 802.3ad; use miimon'),
    ({'arp_ip_target': ['10.0.0.1']}, '.arp_ip_target needs arp_interval > 0'),
    ({'addresses': ['999.1.1.1/99']}, '.addresses: 999.1.1.1/99 is not ADDRESS/PREFIX'),
    ({'addresses': ['10.0.0.0/24']}, '.addresses: 10.0.0.0/24 is not ADDRESS/PREFIX'),
    ({'addresses': '10.0.0.5/24'}, '.addresses must be a list of ADDRESS/PREFIX'),
])
def test_each_rule_names_the_variable(change, expected):
    got = problems(dict(GOOD, **change))
    assert any(expected in p for p in got), got


def test_active_backup_rules():
    ab = {'name': 'bond1', 'mode': 'active-backup', 'members': ['eth3'], 'primary': 'eth4', 'lacp_rate': 'fast',
          'miimon': 100, 'arp_interval': 200, 'arp_ip_target': ['999.1.1.1']}
    got = problems(ab)
    assert 'bonding_bonds[bond1].primary eth4 is not among members (eth3)' in got
    assert 'bonding_bonds[bond1].lacp_rate is only for mode 802.3ad' in got
    assert 'bonding_bonds[bond1]: set either miimon or arp_interval, not both' in got
    assert 'bonding_bonds[bond1].arp_ip_target: 999.1.1.1 is not an IPv4 address' in got
    got = problems(dict(ab, arp_ip_target=[], miimon=0, primary='eth3', lacp_rate=None))
    assert 'bonding_bonds[bond1].arp_ip_target must list 1..16 IPv4 addresses when arp_interval is set' in got
    got = problems(dict(ab, arp_ip_target=['10.0.0.%d' % i for i in range(1, 18)], miimon=0, primary='eth3'))
    assert any('must list 1..16' in p for p in got)


def test_shared_member_and_networkmanager_lacp():
    other = {'name': 'bond1', 'mode': 'active-backup', 'members': ['eth2', 'eth3']}
    got = problems(GOOD, other, backend='networkmanager')
    assert 'bonding_bonds[bond0].members: eth2 is also a member of another bond' in got
    assert 'bonding_bonds[bond1].members: eth2 is also a member of another bond' in got
    assert any('lacp_rate cannot be set with bonding_backend networkmanager' in p for p in got)


def test_filter_is_wired_and_refuses_a_bad_shape():
    flt = FilterModule().filters()['bond_input_problems']
    assert flt([GOOD], PRESENT) == []
    with pytest.raises(AnsibleFilterError, match='bonding_bonds must be a list of dicts'):
        flt(['bond0'], PRESENT)


def test_defaults_filled_in():
    ab = {'name': 'bond1', 'mode': 'active-backup', 'members': ['eth3'], 'arp_interval': '200',
          'arp_ip_target': ['10.0.0.254']}
    lacp = {'name': 'bond0', 'mode': '802.3ad', 'members': ['eth1'], 'miimon': '50', 'updelay': 200}
    bonds = FilterModule().filters()['bond_input_defaults']([ab, GOOD, lacp])
    assert bonds[0] == dict(ab, miimon=0, arp_interval=200, updelay=0, downdelay=0, addresses=[])
    assert bonds[1] == dict(GOOD, miimon=100, arp_interval=0, arp_ip_target=[], updelay=0, downdelay=0)
    assert bonds[2]['miimon'] == 50 and bonds[2]['updelay'] == 200 and bonds[2]['arp_ip_target'] == []
    assert 'miimon' not in GOOD  # the input is not changed
    with pytest.raises(AnsibleFilterError, match='bonding_bonds must be a list of dicts'):
        FilterModule().filters()['bond_input_defaults']('bond0')
