# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The firewall role's rules (plugins/plugin_utils/_firewall.py, filters firewall_*): input problems named as the
role reports them, the rendered table, and the lockout walk over the same model (hand-made inputs)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.firewall import FilterModule
from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _firewall as fw

SPEC = {'admin_sources': ['10.254.77.1', '192.168.0.0/16', '192.168.1.0/24', 'fd00::/64'], 'ssh_ports': [22],
        'cluster_sources': ['10.20.0.0/16', '10.21.0.0/16'], 'monitoring_sources': ['10.9.0.5'],
        'exporter_ports': [9100, 9400], 'rollback_seconds': 60}
RULES = {'firewall_extra_rules': [{'name': 'web', 'ports': [443, '8000-8010'], 'sources': ['0.0.0.0/0']}],
         'firewall_extra_rules_login': [{'name': 'block lab', 'proto': 'any', 'sources': ['10.66.0.0/16'],
                                         'action': 'drop'}],
         'firewall_extra_rules_a': [{'name': 'syslog', 'proto': 'udp', 'ports': [514]}]}
FILTERS = FilterModule().filters()


def conn(address, port=22):
    return {'client_address': address, 'server_port': port}


def test_good_input_has_no_problem():
    assert fw.input_problems(SPEC, RULES) == []
    assert FILTERS['firewall_input_problems'](SPEC, RULES) == []


@pytest.mark.parametrize('key, value, message', [
    ('admin_sources', ['999.1.1.1'], "firewall_admin_sources: '999.1.1.1' is not an address or network"),
    ('admin_sources', ['10.0.0.5/16'], "firewall_admin_sources: '10.0.0.5/16' has host bits set (the network is 10.0.0.0/16)"),
    ('admin_sources', [], 'firewall_admin_sources must not be empty'),
    ('admin_sources', '10.0.0.0/8', 'firewall_admin_sources must be a list'),
    ('cluster_sources', ['10.0.0.0/33'], "firewall_cluster_sources: '10.0.0.0/33' has a prefix length outside 0..32"),
    ('cluster_sources', ['fd00::/129'], "prefix length outside 0..128"),
    ('cluster_sources', ['10.0.0.0/8/8'], 'has a prefix length outside'),
    ('monitoring_sources', ['host.example'], "firewall_monitoring_sources: 'host.example' is not an address"),
    ('monitoring_sources', [''], 'is not an address'),
    ('ssh_ports', [0], 'firewall_ssh_ports: 0 is not a port'),
    ('ssh_ports', ['22-22'], "firewall_ssh_ports: '22-22' is not a port"),
    ('ssh_ports', [True], 'firewall_ssh_ports: True is not a port'),
    ('ssh_ports', [], 'firewall_ssh_ports must not be empty'),
    ('exporter_ports', [70000], 'firewall_exporter_ports: 70000 is not a port'),
    ('rollback_seconds', 5, 'firewall_rollback_seconds is 5; allowed: a whole number of seconds 10..3600'),
    ('rollback_seconds', 'soon', "firewall_rollback_seconds is 'soon'"),
    ('table', 'gpu-fleet', "firewall_table is 'gpu-fleet'"),
])
def test_bad_settings_are_named(key, value, message):
    assert any(message in p for p in fw.input_problems(dict(SPEC, **{key: value}), {})), \
        fw.input_problems(dict(SPEC, **{key: value}), {})


@pytest.mark.parametrize('rule, message', [
    ({'name': 'x', 'proto': 'any', 'ports': [1]}, 'firewall_extra_rules[0].ports need proto tcp or udp'),
    ({'name': 'x', 'proto': 'icmp'}, "firewall_extra_rules[0].proto is 'icmp'; allowed: tcp, udp, any"),
    ({'name': 'x', 'action': 'allow'}, "firewall_extra_rules[0].action is 'allow'; allowed: accept, drop, reject"),
    ({'name': 'x', 'port': [22]}, 'firewall_extra_rules[0] has unknown key port'),
    ({'ports': [22]}, 'firewall_extra_rules[0].name is required'),
    ({'name': 'x"; flush ruleset'}, 'firewall_extra_rules[0].name is required'),
    ({'name': 'x', 'sources': ['1.2.3.4/40']}, "firewall_extra_rules[0].sources: '1.2.3.4/40'"),
    ({'name': 'x', 'proto': 'any'}, 'accepts everything from everywhere'),
    ('x', 'firewall_extra_rules[0] must be a dict'),
])
def test_bad_extra_rules_are_named(rule, message):
    problems = fw.input_problems(SPEC, {'firewall_extra_rules': [rule]})
    assert any(message in p for p in problems), problems


def test_rule_names_are_unique_across_group_variables():
    problems = fw.input_problems(SPEC, {'firewall_extra_rules': [{'name': 'a', 'ports': [1]}],
                                        'firewall_extra_rules_gpu': [{'name': 'a', 'ports': [2]}]})
    assert problems == ["firewall_extra_rules_gpu[0].name 'a' is used by another extra rule (firewall_extra_rules[0]); "
                        "names must be unique"]
    assert fw.input_problems(SPEC, {'firewall_extra_rules_x': 'no list'}) == ['firewall_extra_rules_x must be a list of rules (dicts)']


def test_render_one_table_merged_sets_and_rule_order():
    text = fw.render(SPEC, RULES)
    assert text.count('\ntable inet gpufleet') == 2 and 'delete table inet gpufleet\n' in text
    assert 'flush ruleset' not in text and 'table ip ' not in text
    assert 'elements = { 10.254.77.1, 192.168.0.0/16 }' in text  # 192.168.1.0/24 merged into /16
    assert 'elements = { 10.20.0.0/15 }' in text  # two adjacent /16 merged
    assert 'elements = { fd00::/64 }' in text
    chain = text[text.index('chain input'):]
    order = ['policy drop', 'ct state established,related accept', 'ct state invalid drop', 'iif "lo" accept',
             'icmp type', 'icmpv6 type', 'comment "web"', 'comment "syslog"', 'comment "block lab"',
             'ip saddr @admin_v4 tcp dport { 22 }', 'ip6 saddr @admin_v6', 'ip saddr @cluster_v4 counter accept',
             'ip saddr @monitoring_v4 tcp dport { 9100, 9400 }', 'dropped by the policy']
    positions = [chain.index(o) for o in order]
    assert positions == sorted(positions)
    assert 'meta l4proto' not in text.split('comment "syslog"', maxsplit=1)[0].splitlines()[-1]
    assert 'udp dport { 514 } counter accept comment "syslog"' in text
    assert 'ip saddr { 10.66.0.0/16 } counter drop comment "block lab"' in text
    assert 'tcp dport { 443, 8000-8010 }' in text
    assert 'set cluster_v6' not in text  # no empty sets


def test_render_options_and_empty_sets():
    text = fw.render({'admin_sources': ['10.0.0.0/8'], 'ssh_ports': [22, 2222, '2200-2210'], 'allow_ping': False,
                      'log_dropped': True, 'exporter_ports': []}, {})
    assert 'tcp dport { 22, 2200-2210, 2222 }' in text
    assert 'echo-request' not in text and 'log prefix "gpufleet-firewall drop: "' in text
    assert '@cluster' not in text and '@monitoring' not in text
    with pytest.raises(AnsibleFilterError, match='firewall_admin_sources must not be empty'):
        FILTERS['firewall_ruleset']({'admin_sources': []}, {})


@pytest.mark.parametrize('connection, problem', [
    (conn('10.254.77.1'), None),                       # admin source
    (conn('192.168.7.7'), None),                       # admin network
    (conn('10.21.3.4', 2222), None),                   # cluster: every port
    (conn('::ffff:10.254.77.1'), None),                # mapped IPv4
    (conn('fd00::9'), None),                           # IPv6 admin
    (conn('127.0.0.1', 2222), None),                   # loopback
    (None, None),                                      # not over SSH
    (conn('10.66.1.1'), "drop a new SSH connection from the controller 10.66.1.1 to port 22 (the current login, as "
                        "this node sees it): extra rule 'block lab' (firewall_extra_rules_login[0]) matches it first"),
    (conn('172.16.1.1'), '172.16.1.1 is not in firewall_admin_sources (10.254.77.1, 192.168.0.0/16, fd00::/64), nor '
                         'in firewall_cluster_sources (10.20.0.0/15)'),
    (conn('192.168.4.1', 2200), 'port 2200 is not in firewall_ssh_ports (22)'),
    (conn('10.9.0.5'), '10.9.0.5 is not in firewall_admin_sources'),  # a monitoring host: exporters only
    (conn('fd01::1'), 'fd01::1 is not in firewall_admin_sources'),
])
def test_lockout_walk(connection, problem):
    problems = FILTERS['firewall_lockout_problems'](SPEC, RULES, connection)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0], problems


def test_lockout_first_match_wins():
    rules = {'firewall_extra_rules': [{'name': 'ssh ok', 'ports': [22], 'sources': ['10.66.1.0/24']},
                                      {'name': 'block', 'proto': 'any', 'sources': ['10.66.0.0/16'], 'action': 'reject'}]}
    assert fw.lockout_problems(SPEC, rules, conn('10.66.1.1')) == []
    assert 'would reject' in fw.lockout_problems(SPEC, rules, conn('10.66.2.1'))[0]
    udp = {'firewall_extra_rules': [{'name': 'u', 'proto': 'udp', 'ports': [22], 'action': 'drop'}]}
    assert fw.lockout_problems(SPEC, udp, conn('10.254.77.1')) == []  # UDP rules cannot drop SSH


def test_lockout_bad_connection_is_an_error():
    with pytest.raises(AnsibleFilterError, match='no usable client_address/server_port'):
        FILTERS['firewall_lockout_problems'](SPEC, {}, {'client_address': 'nowhere', 'server_port': 22})


# ------------------------------------------------------------------------------------------- firewalld zone
def _rules(xml):
    return [line.strip() for line in xml.splitlines() if line.strip().startswith('<rule')]


def test_firewalld_zone_same_rules_same_order():
    xml = FILTERS['firewall_firewalld_zone'](SPEC, RULES)
    assert xml.startswith('<?xml version="1.0" encoding="utf-8"?>\n<!-- Managed by gpufleet.cluster.firewall')
    assert '<zone target="DROP">' in xml and '<short>gpufleet</short>' in xml and xml.endswith('</zone>\n')
    rules = _rules(xml)
    # the extra rules first, in the order of the nftables chain (firewall_extra_rules, then _a, then _login), each
    # with its own ascending negative priority; one rich rule per source network and port interval
    assert rules[:4] == [
        '<rule family="ipv4" priority="-30000"><source address="0.0.0.0/0"/><port port="443" protocol="tcp"/><accept/></rule>',
        '<rule family="ipv4" priority="-30000"><source address="0.0.0.0/0"/><port port="8000-8010" protocol="tcp"/><accept/></rule>',
        '<rule priority="-29999"><port port="514" protocol="udp"/><accept/></rule>',
        '<rule family="ipv4" priority="-29998"><source address="10.66.0.0/16"/><drop/></rule>']
    # then SSH from the admin sources (merged: 192.168.1.0/24 is inside 192.168.0.0/16), the cluster, the exporters
    assert rules[4:11] == [
        '<rule family="ipv4"><source address="10.254.77.1"/><port port="22" protocol="tcp"/><accept/></rule>',
        '<rule family="ipv4"><source address="192.168.0.0/16"/><port port="22" protocol="tcp"/><accept/></rule>',
        '<rule family="ipv6"><source address="fd00::/64"/><port port="22" protocol="tcp"/><accept/></rule>',
        '<rule family="ipv4"><source address="10.20.0.0/15"/><accept/></rule>',
        '<rule family="ipv4"><source address="10.9.0.5"/><port port="9100" protocol="tcp"/><accept/></rule>',
        '<rule family="ipv4"><source address="10.9.0.5"/><port port="9400" protocol="tcp"/><accept/></rule>',
        '<rule><icmp-type name="destination-unreachable"/><accept/></rule>']
    assert rules[-1] == '<rule><icmp-type name="echo-request"/><accept/></rule>' and len(rules) == 4 + 6 + 9
    assert "<!-- extra rule 'block lab' (firewall_extra_rules_login[0]) -->" in xml


def test_firewalld_zone_options_and_escaping():
    xml = fw.render_firewalld({'admin_sources': ['10.0.0.0/8'], 'ssh_ports': ['2200-2210'], 'allow_ping': False,
                               'exporter_ports': [], 'monitoring_sources': ['10.9.0.5'], 'firewalld_zone': 'compute'},
                              {'firewall_extra_rules': [{'name': 'a--b', 'proto': 'tcp', 'sources': ['10.1.0.0/16']}]})
    assert '<short>compute</short>' in xml and 'echo-request' not in xml
    assert '<port port="2200-2210" protocol="tcp"/>' in xml and '10.9.0.5' not in xml  # no exporter ports: no rule
    assert "<!-- extra rule 'a- -b' (firewall_extra_rules[0]) -->" in xml  # '--' cannot be in an XML comment
    assert '<rule family="ipv4" priority="-30000"><source address="10.1.0.0/16"/><protocol value="tcp"/><accept/></rule>' in xml


@pytest.mark.parametrize('zone', ['gpufleet-compute-nodes', '1zone', 'a/b', '', None])
def test_firewalld_zone_name_is_checked(zone):
    problems = fw.input_problems(dict(SPEC, firewalld_zone=zone), {})
    assert len(problems) == 1 and problems[0].startswith('firewall_firewalld_zone is %r; allowed: 1..17' % (zone,))
