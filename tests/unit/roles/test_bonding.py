# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bonding role: its check (bond_facts' expected option, given the bonding_bonds keys the role keeps,
vars/main.yml __bonding_expected_keys) on what bond_facts' parser reads from recorded /proc/net/bonding files,
and the systemd-networkd files the role renders."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import os

import pytest
import yaml

# ansible.template is imported only when a test templates: importing the controller's templating at
# collection time switches module warnings to the controller's display for every later module test.

from ansible_collections.gpufleet.cluster.plugins.module_utils import bonding

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, 'roles', 'bonding')


def _expected_keys():
    with open(os.path.join(ROLE, 'vars', 'main.yml')) as f:
        return yaml.safe_load(f)['__bonding_expected_keys']


def _problems(bonds, seen, mtu_seen=None):
    """What the role's check reports: bonding_bonds cut to the keys the role passes (as ansible.utils.keep_keys
    does), validated and compared by bond_facts' code."""
    keys = _expected_keys()
    expected, errors = bonding.expected_entries([{k: v for k, v in b.items() if k in keys} for b in bonds])
    assert errors == []
    mtus = {name: int(mtu) for name, mtu in (mtu_seen or {}).items()}
    return bonding.expected_problems(seen, expected, mtus)


def _seen(corpus, name, bond='bond0'):
    return {bond: bonding.parse((corpus / 'bonding' / name).read_text())}


def test_healthy_lacp_bond_has_no_problem(corpus):
    seen = _seen(corpus, 'telegraf-802.3ad-2x10G.txt')
    wanted = [{'name': 'bond0', 'mode': '802.3ad', 'members': ['eth0', 'eth1'], 'miimon': 100,
               'lacp_rate': 'fast', 'xmit_hash_policy': 'layer2', 'mtu': 9000}]
    assert _problems(wanted, seen, {'bond0': '9000'}) == {'bond0': []}


def test_member_down_is_flagged(corpus):
    seen = _seen(corpus, 'telegraf-802.3ad-one-slave-down.txt')
    wanted = [{'name': 'bond0', 'mode': '802.3ad', 'members': ['eth0', 'eth1']}]
    assert _problems(wanted, seen)['bond0'] == ['slave eth1 MII status down']


def test_active_backup_member_down_and_wrong_primary(corpus):
    seen = _seen(corpus, 'telegraf-active-backup-eth3-down.txt')
    wanted = [{'name': 'bond0', 'mode': 'active-backup', 'members': ['eth2', 'eth3'], 'primary': 'eth3'}]
    problems = _problems(wanted, seen)['bond0']
    assert 'slave eth3 MII status down' in problems
    assert any(p.startswith('primary slave is') and p.endswith('wanted eth3') for p in problems)


def test_wrong_mode_members_settings_and_mtu(corpus):
    seen = _seen(corpus, 'telegraf-802.3ad-2x10G.txt')
    wanted = [{'name': 'bond0', 'mode': 'active-backup', 'members': ['eth0', 'eth5'], 'miimon': 200,
               'mtu': 9000},
              {'name': 'bond1', 'mode': '802.3ad', 'members': ['eth7']}]
    problems = _problems(wanted, seen, {'bond0': '1500'})
    assert problems['bond1'] == ['bond bond1 does not exist (no /proc/net/bonding/bond1)']
    assert problems['bond0'] == [
        'mode is 802.3ad, wanted active-backup',
        'member eth5 is not enslaved',
        'eth1 is enslaved but not in members',
        'miimon is 100, wanted 200',
        'MTU is 1500, wanted 9000',
    ]


def test_lacp_rate_and_hash_policy_compared(corpus):
    seen = _seen(corpus, 'telegraf-802.3ad-2x10G.txt')
    wanted = [{'name': 'bond0', 'mode': '802.3ad', 'members': ['eth0', 'eth1'], 'lacp_rate': 'slow',
               'xmit_hash_policy': 'layer3+4'}]
    assert _problems(wanted, seen)['bond0'] == ['lacp_rate is fast, wanted slow',
                                                'xmit_hash_policy is layer2, wanted layer3+4']


def _render(template, **variables):
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template
    with open(os.path.join(ROLE, 'templates', template)) as f:
        text = f.read()
    variables.setdefault('ansible_managed', 'Ansible managed')
    # The template module renders with trim_blocks on.
    return Templar(loader=DataLoader(), variables=variables).template(
        trust_as_template(text), overrides={'trim_blocks': True})


LACP = {'name': 'bond0', 'mode': '802.3ad', 'members': ['eth2', 'eth3'], 'mtu': 9000, 'miimon': 100,
        'arp_interval': 0, 'arp_ip_target': [], 'updelay': 0, 'downdelay': 0, 'addresses': ['10.0.0.1/24'],
        'lacp_rate': 'fast', 'xmit_hash_policy': 'layer3+4'}


def _section(text, name):
    """The key=value lines of one [section] of a systemd unit-style file."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith('['):
            cur = line.strip('[]')
        elif cur == name and '=' in line and not line.startswith('#'):
            out.append(line)
    return out


def test_netdev_lacp():
    text = _render('bond.netdev.j2', b=LACP)
    assert _section(text, 'NetDev') == ['Name=bond0', 'Kind=bond', 'MTUBytes=9000']
    assert _section(text, 'Bond') == ['Mode=802.3ad', 'MIIMonitorSec=100ms', 'LACPTransmitRate=fast',
                                      'TransmitHashPolicy=layer3+4']


def test_netdev_arp_monitoring():
    b = dict(LACP, mode='active-backup', miimon=0, arp_interval=200, arp_ip_target=['10.0.0.254', '10.0.0.253'])
    del b['lacp_rate'], b['xmit_hash_policy']
    assert _section(_render('bond.netdev.j2', b=b), 'Bond') == [
        'Mode=active-backup', 'ARPIntervalSec=200ms', 'ARPIPTargets=10.0.0.254 10.0.0.253']


def test_member_network_primary():
    b = dict(LACP, mode='active-backup', primary='eth3')
    assert _section(_render('member.network.j2', b=b, m='eth3'), 'Network') == ['Bond=bond0', 'PrimarySlave=yes']
    assert _section(_render('member.network.j2', b=b, m='eth2'), 'Network') == ['Bond=bond0']
    assert _section(_render('member.network.j2', b=b, m='eth2'), 'Link') == ['MTUBytes=9000']


def test_bond_network_addresses():
    text = _render('bond.network.j2', b=LACP)
    assert _section(text, 'Match') == ['Name=bond0']
    assert 'Address=10.0.0.1/24' in _section(text, 'Network')
    assert 'LinkLocalAddressing=no' in _render('bond.network.j2', b=dict(LACP, addresses=[]))


@pytest.mark.parametrize('mode', ['active-backup', '802.3ad'])
def test_netplan_drop_in_is_yaml(mode):
    b = dict(LACP, mode=mode)
    if mode == 'active-backup':
        b = dict(b, primary='eth2')
        del b['lacp_rate'], b['xmit_hash_policy']
    doc = yaml.safe_load(_render('netplan-bonding.yaml.j2', __bonding_list=[b]))
    bond = doc['network']['bonds']['bond0']
    assert doc['network']['version'] == 2
    assert bond['interfaces'] == ['eth2', 'eth3'] and bond['mtu'] == 9000
    assert bond['parameters']['mode'] == mode
    assert set(doc['network']['ethernets']) == {'eth2', 'eth3'}
    if mode == '802.3ad':
        assert bond['parameters']['lacp-rate'] == 'fast'
    else:
        assert bond['parameters']['primary'] == 'eth2'


def _netplan_generate():
    """netplan's generator: GPUFLEET_NETPLAN_GENERATE, else the netplan.io package's; None when absent."""
    for path in (os.environ.get('GPUFLEET_NETPLAN_GENERATE'), '/usr/libexec/netplan/generate', '/lib/netplan/generate'):
        if path and os.access(path, os.X_OK):
            return path
    return None


@pytest.mark.parametrize('mode', ['active-backup', '802.3ad'])
def test_netplan_generate_accepts_the_drop_in(mode, tmp_path):
    """The drop-in next to an operator's file that already defines the members: netplan merges them and
    renders the bond for networkd (what the role's validate step runs on the host)."""
    gen = _netplan_generate()
    if gen is None:
        pytest.skip('netplan generate not installed (netplan.io; or set GPUFLEET_NETPLAN_GENERATE)')
    import subprocess
    b = dict(LACP, mode=mode)
    if mode == 'active-backup':
        b = dict(b, primary='eth2', miimon=0, arp_interval=200, arp_ip_target=['10.0.0.254'])
        del b['lacp_rate'], b['xmit_hash_policy']
    etc = tmp_path / 'etc' / 'netplan'
    etc.mkdir(parents=True)
    (etc / '00-operator.yaml').write_text('network:\n  version: 2\n  ethernets:\n    eth2: {dhcp4: true}\n    eth3: {}\n')
    (etc / '90-gpufleet-bonding.yaml').write_text(_render('netplan-bonding.yaml.j2', __bonding_list=[b]))
    for f in etc.iterdir():
        f.chmod(0o600)
    res = subprocess.run([gen, '--root-dir', str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    assert res.returncode == 0, res.stdout
    netdev = (tmp_path / 'run' / 'systemd' / 'network' / '10-netplan-bond0.netdev').read_text()
    assert 'Mode=%s' % mode in netdev and 'MTUBytes=9000' in netdev
    if mode == '802.3ad':
        assert 'LACPTransmitRate=fast' in netdev and 'TransmitHashPolicy=layer3+4' in netdev
    else:
        assert 'ARPIntervalSec=200ms' in netdev and 'ARPIPTargets=10.0.0.254' in netdev
