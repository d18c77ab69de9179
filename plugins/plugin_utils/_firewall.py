# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

The firewall role's rules in one place: what is wrong with its input (each problem names the variable and what
is allowed), the nftables table rendered from it - or, for firewalld, the zone file with the same rules in the same
order -, and whether those rules would admit a new SSH connection from the controller as the node sees the current
login (the lockout check). The table is rendered here, from the same
normalised model the lockout check walks, so the check judges exactly the rules that are loaded. Addresses and
networks are checked and merged with netaddr. Pure functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    import netaddr
except ImportError:  # pragma: no cover - netaddr is a controller requirement (requirements.txt)
    netaddr = None

PROTOS = ('tcp', 'udp', 'any')
ACTIONS = ('accept', 'drop', 'reject')
RULE_KEYS = ('name', 'proto', 'ports', 'sources', 'action')
TABLE_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_]{0,31}$')
# firewalld zone names: its chain names leave 17 characters for them (firewall.functions.max_zone_name_len)
ZONE_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_-]{0,16}$')
RULE_NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_ .:/-]{0,63}$')
PORT_RANGE_RE = re.compile(r'^([0-9]{1,5})-([0-9]{1,5})$')
WHOLE_RE = re.compile(r'^[0-9]{1,5}$')
ROLLBACK_MIN, ROLLBACK_MAX = 10, 3600
# ICMP the host needs to work (errors, PMTU discovery) and IPv6 neighbour discovery / MLD; echo when allowed.
ICMP_TYPES = ('destination-unreachable', 'time-exceeded', 'parameter-problem')
ICMPV6_TYPES = ('destination-unreachable', 'packet-too-big', 'time-exceeded', 'parameter-problem',
                'nd-router-solicit', 'nd-router-advert', 'nd-neighbor-solicit', 'nd-neighbor-advert',
                'mld-listener-query', 'mld-listener-report', 'mld2-listener-report')
HEADER = ('# Managed by gpufleet.cluster.firewall: only the table below, nothing else of the ruleset. Do not edit here;\n'
          '# change the firewall_* variables. Loaded at boot by gpufleet-firewall.service.\n')


# firewalld: the zone's target drops what no rule accepts; the extra rules come first, in order (rich rules with
# negative priorities run before the zone's allow rules, lowest first); the ICMP types the nftables table accepts
# that firewalld knows as icmptypes (it has none for MLD).
FIREWALLD_ICMP = ('destination-unreachable', 'time-exceeded', 'parameter-problem', 'packet-too-big',
                  'router-solicitation', 'router-advertisement', 'neighbour-solicitation', 'neighbour-advertisement')
FIREWALLD_EXTRA_PRIORITY = -30000
FIREWALLD_HEADER = ('<!-- Managed by gpufleet.cluster.firewall (firewall_backend firewalld): the whole zone. Do not edit '
                    'here; change the firewall_* variables. -->')


class FirewallInputError(Exception):
    """The input is not of the shape the rules need (the role's argument spec normally catches this first)."""


def _need_netaddr():
    if netaddr is None:
        raise FirewallInputError('the Python library netaddr is required on the controller (pip install netaddr)')


def _is_list(value):
    return isinstance(value, (list, tuple))


def parse_source(text):
    """An IPNetwork for ``text`` (an address, or a network ADDRESS/PREFIX without host bits), else a reason."""
    _need_netaddr()
    if not isinstance(text, str) or not text.strip():
        return None, 'is not an address or network (a string such as 10.0.0.0/16, 10.0.0.5 or fd00::/64)'
    text = text.strip()
    address, prefix = (text.split('/', 1) + [''])[:2]
    try:
        ip = netaddr.IPAddress(address, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None, 'is not an address or network (a string such as 10.0.0.0/16, 10.0.0.5 or fd00::/64)'
    bits = 32 if ip.version == 4 else 128
    if prefix == '':
        return netaddr.IPNetwork('%s/%d' % (ip, bits)), None
    if not WHOLE_RE.match(prefix) or int(prefix) > bits:
        return None, 'has a prefix length outside 0..%d' % bits
    net = netaddr.IPNetwork('%s/%s' % (ip, prefix))
    if net.network != ip:
        return None, 'has host bits set (the network is %s)' % net.cidr
    return net, None


def _port_item(value):
    """(low, high) for a port or an 'N-M' range, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and WHOLE_RE.match(value)):
        port = int(value)
        return (port, port) if 1 <= port <= 65535 else None
    if isinstance(value, str):
        match = PORT_RANGE_RE.match(value.strip())
        if match:
            low, high = int(match.group(1)), int(match.group(2))
            if 1 <= low < high <= 65535:
                return (low, high)
    return None


def _sources_problems(name, values, allow_empty=True):
    if not _is_list(values):
        return ['%s must be a list of addresses or networks' % name]
    problems = []
    if not values and not allow_empty:
        problems.append('%s must not be empty' % name)
    for value in values:
        why = parse_source(value)[1]
        if why:
            problems.append('%s: %r %s' % (name, value, why))
    return problems


def _ports_problems(name, values, allow_empty=True):
    if not _is_list(values):
        return ['%s must be a list of ports (1..65535) or ranges such as "6817-6819"' % name]
    problems = []
    if not values and not allow_empty:
        problems.append('%s must not be empty' % name)
    for value in values:
        if _port_item(value) is None:
            problems.append('%s: %r is not a port (1..65535) or a range LOW-HIGH with LOW < HIGH' % (name, value))
    return problems


def extra_rules(variables):
    """The extra rules from ``variables`` (a dict of variable name -> list): ``firewall_extra_rules`` first, then every
    ``firewall_extra_rules_*`` (one per inventory group, so group_vars files do not override each other) in name
    order. Returns [(variable, index, rule)]."""
    out = []
    for name in sorted(variables or {}, key=lambda n: (n != 'firewall_extra_rules', n)):
        rules = variables[name]
        if not _is_list(rules):
            raise FirewallInputError('%s must be a list of rules (dicts)' % name)
        out.extend((name, i, rule) for i, rule in enumerate(rules))
    return out


def _rule_problems(var, index, rule, seen):
    p = '%s[%d]' % (var, index)
    if not isinstance(rule, dict):
        return ['%s must be a dict with keys %s' % (p, ', '.join(RULE_KEYS))]
    e = ['%s has unknown key %s (allowed: %s)' % (p, k, ', '.join(RULE_KEYS)) for k in rule if k not in RULE_KEYS]
    name = rule.get('name')
    if not isinstance(name, str) or not RULE_NAME_RE.match(name):
        e.append('%s.name is required: 1..64 characters of A-Z a-z 0-9 _ . : / - and spaces, starting with a letter or '
                 'digit' % p)
    elif name in seen:
        e.append('%s.name %r is used by another extra rule (%s); names must be unique' % (p, name, seen[name]))
    else:
        seen[name] = p
    proto = rule.get('proto', 'tcp')
    if proto not in PROTOS:
        e.append('%s.proto is %r; allowed: %s' % (p, proto, ', '.join(PROTOS)))
    action = rule.get('action', 'accept')
    if action not in ACTIONS:
        e.append('%s.action is %r; allowed: %s' % (p, action, ', '.join(ACTIONS)))
    ports = rule.get('ports', [])
    e.extend(_ports_problems(p + '.ports', ports))
    if proto == 'any' and _is_list(ports) and ports:
        e.append('%s.ports need proto tcp or udp (proto any matches every protocol, which has no ports)' % p)
    e.extend(_sources_problems(p + '.sources', rule.get('sources', [])))
    if proto == 'any' and not ports and not rule.get('sources') and action == 'accept':
        e.append('%s accepts everything from everywhere (no proto, ports or sources); name what it is for' % p)
    return e


def input_problems(spec, rules_vars):
    """Every problem of the role's input; [] when it is right. ``spec``: the firewall_* scalars and lists
    (admin_sources, ssh_ports, cluster_sources, monitoring_sources, exporter_ports, rollback_seconds); ``rules_vars``:
    {variable name: list of extra rules}."""
    _need_netaddr()
    if not isinstance(spec, dict):
        raise FirewallInputError('the firewall settings must be a dict')
    e = []
    e.extend(_sources_problems('firewall_admin_sources', spec.get('admin_sources', []), allow_empty=False))
    e.extend(_ports_problems('firewall_ssh_ports', spec.get('ssh_ports', []), allow_empty=False))
    e.extend(_sources_problems('firewall_cluster_sources', spec.get('cluster_sources', [])))
    e.extend(_sources_problems('firewall_monitoring_sources', spec.get('monitoring_sources', [])))
    e.extend(_ports_problems('firewall_exporter_ports', spec.get('exporter_ports', [])))
    seconds = spec.get('rollback_seconds', 60)
    if isinstance(seconds, bool) or not WHOLE_RE.match(str(seconds)) or not ROLLBACK_MIN <= int(seconds) <= ROLLBACK_MAX:
        e.append('firewall_rollback_seconds is %r; allowed: a whole number of seconds %d..%d (longer than a new SSH '
                 'connection takes, with its retries)' % (seconds, ROLLBACK_MIN, ROLLBACK_MAX))
    table = spec.get('table', 'gpufleet')
    if not isinstance(table, str) or not TABLE_RE.match(table):
        e.append('firewall_table is %r; allowed: 1..32 characters of A-Z a-z 0-9 _, starting with a letter' % (table,))
    zone = spec.get('firewalld_zone', 'gpufleet')
    if not isinstance(zone, str) or not ZONE_RE.match(zone):
        e.append('firewall_firewalld_zone is %r; allowed: 1..17 characters of A-Z a-z 0-9 _ -, starting with a letter '
                 '(firewalld builds chain names from it)' % (zone,))
    try:
        rules = extra_rules(rules_vars)
    except FirewallInputError as exc:
        return e + [str(exc)]
    seen = {}
    for var, index, rule in rules:
        e.extend(_rule_problems(var, index, rule, seen))
    return e


# ------------------------------------------------------------------------------------------- the model
def _networks(values):
    """(v4, v6) lists of merged networks (netaddr.cidr_merge: no overlaps, as an interval set needs)."""
    nets = [parse_source(v)[0] for v in values or []]
    v4 = netaddr.cidr_merge([n for n in nets if n.version == 4])
    v6 = netaddr.cidr_merge([n for n in nets if n.version == 6])
    return v4, v6


def _ports(values):
    """Sorted, merged (low, high) port intervals."""
    items = sorted(_port_item(v) for v in values or [])
    out = []
    for low, high in items:
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def model(spec, rules_vars):
    """The normalised rules (input already checked by input_problems), in the order the chain evaluates them."""
    problems = input_problems(spec, rules_vars)
    if problems:
        raise FirewallInputError('; '.join(problems))
    extras = []
    for var, index, rule in extra_rules(rules_vars):
        v4, v6 = _networks(rule.get('sources', []))
        extras.append({'name': rule['name'], 'variable': '%s[%d]' % (var, index), 'proto': rule.get('proto', 'tcp'),
                       'ports': _ports(rule.get('ports', [])), 'any_source': not rule.get('sources'),
                       'v4': v4, 'v6': v6, 'action': rule.get('action', 'accept')})
    sets = {}
    for key in ('admin', 'cluster', 'monitoring'):
        sets[key] = _networks(spec.get(key + '_sources', []))
    return {'table': spec.get('table', 'gpufleet'), 'extras': extras, 'sets': sets,
            'ssh_ports': _ports(spec.get('ssh_ports', [])), 'exporter_ports': _ports(spec.get('exporter_ports', [])),
            'allow_ping': bool(spec.get('allow_ping', True)), 'log_dropped': bool(spec.get('log_dropped', False))}


# ----------------------------------------------------------------------------------------- rendering
def _port_text(ports):
    return ', '.join(str(lo) if lo == hi else '%d-%d' % (lo, hi) for lo, hi in ports)


def _set_text(nets):
    return ', '.join(str(n.ip) if n.size == 1 else str(n.cidr) for n in nets)


def _extra_lines(rule):
    if rule['proto'] == 'any':
        match = ''
    elif rule['ports']:
        match = '%s dport { %s } ' % (rule['proto'], _port_text(rule['ports']))
    else:
        match = 'meta l4proto %s ' % rule['proto']
    tail = '%scounter %s comment "%s"' % (match, rule['action'], rule['name'])
    if rule['any_source']:
        return [tail]
    lines = []
    if rule['v4']:
        lines.append('ip saddr { %s } %s' % (_set_text(rule['v4']), tail))
    if rule['v6']:
        lines.append('ip6 saddr { %s } %s' % (_set_text(rule['v6']), tail))
    return lines


def render(spec, rules_vars):
    """The file the role installs: one table, replaced as a whole in one transaction (the empty declaration
    makes ``delete table`` succeed when the table does not exist yet); no other table is touched."""
    m = model(spec, rules_vars)
    t = 'inet %s' % m['table']
    out = [HEADER, 'table %s\ndelete table %s\n\ntable %s {' % (t, t, t)]
    for key in ('admin', 'cluster', 'monitoring'):
        for family, nets in zip(('ipv4_addr', 'ipv6_addr'), m['sets'][key]):
            if nets:
                out.append('\tset %s_%s {\n\t\ttype %s\n\t\tflags interval\n\t\telements = { %s }\n\t}\n'
                           % (key, 'v4' if family == 'ipv4_addr' else 'v6', family, _set_text(nets)))
    chain = ['type filter hook input priority filter; policy drop;',
             'ct state established,related accept',
             'ct state invalid drop',
             'iif "lo" accept',
             'icmp type { %s } accept' % ', '.join(ICMP_TYPES + (('echo-request',) if m['allow_ping'] else ())),
             'icmpv6 type { %s } accept' % ', '.join(ICMPV6_TYPES + (('echo-request',) if m['allow_ping'] else ()))]
    for rule in m['extras']:
        chain.extend(_extra_lines(rule))
    ssh = _port_text(m['ssh_ports'])
    exporters = _port_text(m['exporter_ports'])
    for key, match, comment in (('admin', 'tcp dport { %s } ' % ssh, 'ssh from firewall_admin_sources'),
                                ('cluster', '', 'everything from firewall_cluster_sources'),
                                ('monitoring', 'tcp dport { %s } ' % exporters, 'exporters from firewall_monitoring_sources')):
        if key == 'monitoring' and not m['exporter_ports']:
            continue
        for family, nets in zip(('ip', 'ip6'), m['sets'][key]):
            if nets:
                chain.append('%s saddr @%s_%s %scounter accept comment "%s"'
                             % (family, key, 'v4' if family == 'ip' else 'v6', match, comment))
    if m['log_dropped']:
        chain.append('limit rate 10/minute burst 20 packets log prefix "gpufleet-firewall drop: " level info')
    chain.append('counter comment "dropped by the policy"')
    out.append('\tchain input {\n%s\t}\n}\n' % ''.join('\t\t%s\n' % line for line in chain))
    return '\n'.join(out)


def _xml(text):
    return (str(text).replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;'))


def _comment(text):
    return '<!-- %s -->' % str(text).replace('--', '- -')


def _rich(family, source, ports, proto, action, priority=None):
    """One rich rule of the zone file: ``ports`` [(low, high)] with ``proto`` tcp/udp, or ``proto`` alone (no ports),
    or neither (proto any)."""
    attrs = ''.join(' %s="%s"' % (k, v) for k, v in (('family', family), ('priority', priority)) if v is not None)
    inner = []
    if source is not None:
        inner.append('<source address="%s"/>' % _xml(source))
    if ports:
        inner.extend('<port port="%s" protocol="%s"/>' % (lo if lo == hi else '%d-%d' % (lo, hi), proto)
                     for lo, hi in ports[:1])
    elif proto in ('tcp', 'udp'):
        inner.append('<protocol value="%s"/>' % proto)
    inner.append('<%s/>' % action)
    return '  <rule%s>%s</rule>' % (attrs, ''.join(inner))


def _rich_rules(nets, ports, proto, action, priority=None):
    """Rich rules for every source network (v4, v6) and port interval: a rich rule holds one of each."""
    out = []
    for family, group in zip(('ipv4', 'ipv6'), nets):
        for net in group:
            source = str(net.ip) if net.size == 1 else str(net.cidr)
            for interval in (ports or [None]):
                out.append(_rich(family, source, [interval] if interval else [], proto, action, priority))
    return out


def render_firewalld(spec, rules_vars):
    """The firewalld zone file (``/etc/firewalld/zones/ZONE.xml``) with the rules of ``render``: target DROP; the
    extra rules first and in order (priorities FIREWALLD_EXTRA_PRIORITY + index); SSH from the admin sources,
    everything from the cluster sources, the exporter ports from the monitoring sources; the ICMP types the host needs
    and echo-request unless ``allow_ping`` is false. Established/related traffic and loopback are firewalld's own
    rules."""
    m = model(spec, rules_vars)
    zone = spec.get('firewalld_zone', 'gpufleet')
    out = ['<?xml version="1.0" encoding="utf-8"?>', FIREWALLD_HEADER, '<zone target="DROP">',
           '  <short>%s</short>' % _xml(zone),
           '  <description>gpufleet.cluster.firewall: drop inbound but for the admin, cluster and monitoring sources'
           '</description>']
    for index, rule in enumerate(m['extras']):
        priority = FIREWALLD_EXTRA_PRIORITY + index
        out.append('  ' + _comment('extra rule %r (%s)' % (rule['name'], rule['variable'])))
        ports = rule['ports'] if rule['proto'] != 'any' else []
        if rule['any_source']:
            for interval in (ports or [None]):
                families = ('ipv4', 'ipv6') if rule['proto'] == 'any' and not interval else (None,)
                for family in families:
                    out.append(_rich(family, None, [interval] if interval else [], rule['proto'], rule['action'],
                                     priority))
        else:
            out.extend(_rich_rules((rule['v4'], rule['v6']), ports, rule['proto'], rule['action'], priority))
    for key, ports, proto, comment in (('admin', m['ssh_ports'], 'tcp', 'ssh from firewall_admin_sources'),
                                       ('cluster', [], 'any', 'everything from firewall_cluster_sources'),
                                       ('monitoring', m['exporter_ports'], 'tcp',
                                        'exporters from firewall_monitoring_sources')):
        if key == 'monitoring' and not ports:
            continue
        rules = _rich_rules(m['sets'][key], ports, proto, 'accept')
        if rules:
            out.append('  ' + _comment(comment))
            out.extend(rules)
    out.append('  ' + _comment('ICMP the host needs%s' % (', and ping' if m['allow_ping'] else '')))
    for name in FIREWALLD_ICMP + (('echo-request',) if m['allow_ping'] else ()):
        out.append('  <rule><icmp-type name="%s"/><accept/></rule>' % name)
    out.append('</zone>')
    return '\n'.join(out) + '\n'


# ----------------------------------------------------------------------------------------- lockout check
def _in_ports(port, ports):
    return any(lo <= port <= hi for lo, hi in ports)


def _in_nets(ip, nets):
    v4, v6 = nets
    return any(ip in n for n in (v4 if ip.version == 4 else v6))


def lockout_problems(spec, rules_vars, connection):
    """Why the rendered table would drop a NEW TCP connection from ``connection['client_address']`` to
    ``connection['server_port']`` (the current login as the node sees it, from ssh_login_facts); [] when it is
    accepted, or when ``connection`` is empty (not logged in over SSH: nothing to lock out). Walks the chain as
    the kernel does: the first rule that matches decides, then the policy (drop)."""
    m = model(spec, rules_vars)
    if not connection:
        return []
    try:
        ip = netaddr.IPAddress(str(connection.get('client_address')), flags=netaddr.INET_PTON)
        port = int(connection.get('server_port'))
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise FirewallInputError('the login connection %r has no usable client_address/server_port' % (connection,))
    if ip.is_ipv4_mapped():
        ip = ip.ipv4()
    if ip.is_loopback():
        return []  # iif "lo" accept
    what = 'a new SSH connection from the controller %s to port %d (the current login, as this node sees it)' % (ip, port)
    for rule in m['extras']:
        if rule['proto'] not in ('tcp', 'any'):
            continue
        if rule['ports'] and not _in_ports(port, rule['ports']):
            continue
        if not rule['any_source'] and not _in_nets(ip, (rule['v4'], rule['v6'])):
            continue
        if rule['action'] == 'accept':
            return []
        return ['the new ruleset would %s %s: extra rule %r (%s) matches it first'
                % (rule['action'], what, rule['name'], rule['variable'])]
    if _in_nets(ip, m['sets']['admin']) and _in_ports(port, m['ssh_ports']):
        return []
    if _in_nets(ip, m['sets']['cluster']):
        return []
    if _in_nets(ip, m['sets']['monitoring']) and _in_ports(port, m['exporter_ports']):
        return []
    why = []
    if not _in_nets(ip, m['sets']['admin']):
        why.append('%s is not in firewall_admin_sources (%s)' % (ip, _set_text(m['sets']['admin'][0] + m['sets']['admin'][1])))
    elif not _in_ports(port, m['ssh_ports']):
        why.append('port %d is not in firewall_ssh_ports (%s)' % (port, _port_text(m['ssh_ports'])))
    why.append('nor in firewall_cluster_sources (%s)'
               % (_set_text(m['sets']['cluster'][0] + m['sets']['cluster'][1]) or 'empty'))
    return ['the new ruleset would drop %s: %s' % (what, ', '.join(why))]
