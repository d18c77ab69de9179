# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

The bonding role's input rules, in one place: what is wrong with each entry of ``bonding_bonds`` before
anything changes on the host (the role's validate step), each problem naming the variable and what is
allowed. Addresses are checked with netaddr (a controller requirement), not with a regex that would
accept ``999.1.1.1/99``. Pure function."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    import netaddr
except ImportError:  # pragma: no cover - netaddr is a controller requirement (requirements.txt)
    netaddr = None

BACKENDS = ('auto', 'netplan', 'networkmanager', 'networkd')
MODES = ('active-backup', '802.3ad')
HASH_POLICIES = ('layer2', 'layer2+3', 'layer3+4', 'encap2+3', 'encap3+4', 'vlan+srcmac')
LACP_RATES = ('slow', 'fast')
MTU_MIN, MTU_MAX = 68, 9216
KEYS = ('name', 'mode', 'members', 'mtu', 'miimon', 'arp_interval', 'arp_ip_target', 'primary', 'xmit_hash_policy',
        'lacp_rate', 'updelay', 'downdelay', 'addresses')
MAX_ARP_TARGETS = 16
_NAME_RE = re.compile(r'^[A-Za-z0-9_.-]{1,15}$')
_WHOLE_RE = re.compile(r'^[0-9]+$')


class BondInputError(Exception):
    """The input is not a list of dicts with unique names (the shape the rules need)."""


def _is_list(value):
    return isinstance(value, (list, tuple))


def is_ipv4_address(text):
    """A plain dotted-quad IPv4 address (no prefix), as the kernel's arp_ip_target takes it."""
    if netaddr is None:
        raise BondInputError('the Python library netaddr is required on the controller (pip install netaddr)')
    if not isinstance(text, str) or '/' in text:
        return False
    try:
        netaddr.IPAddress(text, version=4, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return False
    return True


def is_host_prefix(text):
    """ADDRESS/PREFIX of a host (IPv4 or IPv6): a valid address, a prefix length the family allows, and for
    IPv4 prefixes up to /30 not the network or broadcast address of its subnet."""
    if netaddr is None:
        raise BondInputError('the Python library netaddr is required on the controller (pip install netaddr)')
    if not isinstance(text, str) or text.count('/') != 1:
        return False
    address, prefix = text.split('/')
    if not _WHOLE_RE.match(prefix):
        return False
    try:
        ip = netaddr.IPAddress(address, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return False
    length = int(prefix)
    if length > (32 if ip.version == 4 else 128):
        return False
    net = netaddr.IPNetwork('%s/%d' % (ip, length))
    if ip.version == 4 and length <= 30 and ip in (net.network, net.broadcast):
        return False
    return True


def _whole(value):
    return _WHOLE_RE.match(str(value)) is not None


def bond_problems(bond, bonds, present, backend):
    """Problems of one entry ``bond`` of ``bonds`` on a host whose interfaces are ``present``."""
    e = []
    p = 'bonding_bonds[%s]' % bond.get('name')
    e.extend('%s has unknown key %s (allowed: %s)' % (p, k, ', '.join(KEYS)) for k in bond if k not in KEYS)
    if not _NAME_RE.match(str(bond.get('name'))):
        e.append('%s.name must be 1..15 characters of A-Z a-z 0-9 _ . -' % p)
    mode = bond.get('mode') or ''
    if mode not in MODES:
        e.append('%s.mode is %s; allowed: %s' % (p, mode or 'missing', ', '.join(MODES)))
    members = bond.get('members', [])
    if not _is_list(members) or not members:
        e.append('%s.members must be a non-empty list of interface names' % p)
        members = []
    else:
        others = [m for b in bonds if b.get('name') != bond.get('name') for m in (b.get('members') or [])
                  if _is_list(b.get('members'))]
        e.extend('%s.members: %s does not exist on this host (no /sys/class/net/%s)' % (p, m, m)
                 for m in _unique(members) if m not in present)
        e.extend('%s.members: %s is also a member of another bond' % (p, m) for m in _unique(members) if m in others)
        if len(set(map(str, members))) != len(members):
            e.append('%s.members lists an interface twice' % p)
        if bond.get('name') in members:
            e.append('%s.members contains the bond itself' % p)
    if 'primary' in bond:
        if mode != 'active-backup':
            e.append('%s.primary is only for mode active-backup' % p)
        elif bond['primary'] not in members:
            e.append('%s.primary %s is not among members (%s)' % (p, bond['primary'], ', '.join(map(str, members))))
    if 'lacp_rate' in bond:
        if mode != '802.3ad':
            e.append('%s.lacp_rate is only for mode 802.3ad' % p)
        elif bond['lacp_rate'] not in LACP_RATES:
            e.append('%s.lacp_rate is %s; allowed: %s' % (p, bond['lacp_rate'], ', '.join(LACP_RATES)))
        if backend == 'networkmanager':
            e.append('%s.lacp_rate cannot be set with bonding_backend networkmanager (community.general.nmcli has no '
                     'such option)' % p)
    if 'xmit_hash_policy' in bond:
        if mode != '802.3ad':
            e.append('%s.xmit_hash_policy is only for mode 802.3ad' % p)
        elif bond['xmit_hash_policy'] not in HASH_POLICIES:
            e.append('%s.xmit_hash_policy is %s; allowed: %s'
                     % (p, bond['xmit_hash_policy'], ', '.join(HASH_POLICIES)))
    if 'mtu' in bond and not (_whole(bond['mtu']) and MTU_MIN <= int(bond['mtu']) <= MTU_MAX):
        e.append('%s.mtu %s is out of range; allowed: %d..%d' % (p, bond['mtu'], MTU_MIN, MTU_MAX))
    for k in ('miimon', 'arp_interval', 'updelay', 'downdelay'):
        if k in bond and not _whole(bond[k]):
            e.append('%s.%s must be a whole number of milliseconds' % (p, k))
    arp = int(bond.get('arp_interval', 0)) if _whole(bond.get('arp_interval', 0)) else 0
    targets = bond.get('arp_ip_target', [])
    if arp > 0:
        if mode == '802.3ad':
            e.append('%s.arp_interval: ARP monitoring does not work with mode 802.3ad; use miimon' % p)
        if _whole(bond.get('miimon', 0)) and int(bond.get('miimon', 0)) > 0:
            e.append('%s: set either miimon or arp_interval, not both' % p)
        if not _is_list(targets) or not 0 < len(targets) <= MAX_ARP_TARGETS:
            e.append('%s.arp_ip_target must list 1..%d IPv4 addresses when arp_interval is set' % (p, MAX_ARP_TARGETS))
    elif targets:
        e.append('%s.arp_ip_target needs arp_interval > 0' % p)
    for t in targets if _is_list(targets) else []:
        if not is_ipv4_address(t):
            e.append('%s.arp_ip_target: %s is not an IPv4 address' % (p, t))
    addresses = bond.get('addresses', [])
    if not _is_list(addresses):
        e.append('%s.addresses must be a list of ADDRESS/PREFIX' % p)
        addresses = []
    for a in addresses:
        if not is_host_prefix(a):
            e.append('%s.addresses: %s is not ADDRESS/PREFIX (a host address and a prefix length, e.g. 10.0.0.5/24)'
                     % (p, a))
    return e


def _unique(items):
    seen, out = set(), []
    for item in items:
        if str(item) not in seen:
            seen.add(str(item))
            out.append(item)
    return out


def input_problems(bonds, present, backend='auto'):
    """Every problem of ``bonds`` (the role's ``bonding_bonds``) on a host with interfaces ``present``;
    [] when the input is right. Raises BondInputError when the shape is wrong (the role's shape assert
    runs first, so this only guards direct calls)."""
    if not _is_list(bonds) or not all(isinstance(b, dict) for b in bonds):
        raise BondInputError('bonding_bonds must be a list of dicts')
    problems = []
    for bond in bonds:
        problems.extend(bond_problems(bond, bonds, list(present or []), backend))
    return problems


def with_defaults(bonds):
    """``bonds`` (already checked by input_problems) with the role's defaults filled in: miimon 100 unless ARP
    monitoring is on (then 0), arp_interval 0, updelay/downdelay 0, arp_ip_target and addresses [];
    whole-number strings from the inventory become integers."""
    if not _is_list(bonds) or not all(isinstance(b, dict) for b in bonds):
        raise BondInputError('bonding_bonds must be a list of dicts')
    out = []
    for bond in bonds:
        arp = int(bond.get('arp_interval') or 0)
        full = dict(bond)
        full.update({
            'miimon': int(bond['miimon']) if bond.get('miimon') is not None else (0 if arp > 0 else 100),
            'arp_interval': arp,
            'arp_ip_target': list(bond.get('arp_ip_target') or []),
            'updelay': int(bond.get('updelay') or 0),
            'downdelay': int(bond.get('downdelay') or 0),
            'addresses': list(bond.get('addresses') or []),
        })
        out.append(full)
    return out
