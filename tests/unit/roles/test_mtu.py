# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mtu role: the netplan drop-in it renders holds only the MTU of the netplan-managed interfaces and, with
netplan's own generator when installed, merges into the operator's definition of the interface."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import os
import subprocess

import pytest
import yaml

# ansible.template is imported only when a test templates: importing the controller's templating at
# collection time switches module warnings to the controller's display for every later module test.

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, 'roles', 'mtu')

PLAN = [
    {'name': 'ens1f0np0', 'mtu': 9000, 'backend': 'netplan', 'where': '', 'ipoib': False},
    {'name': 'ib0', 'mtu': 4092, 'backend': 'netplan', 'where': '', 'ipoib': True},
    {'name': 'eno1', 'mtu': 1500, 'backend': 'networkd', 'where': '/etc/systemd/network/eno1.network', 'ipoib': False},
]


def _render():
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template
    with open(os.path.join(ROLE, 'templates', 'netplan-mtu.yaml.j2')) as f:
        text = f.read()
    variables = {'ansible_managed': 'Ansible managed', '__mtu_plan': PLAN}
    return Templar(loader=DataLoader(), variables=variables).template(
        trust_as_template(text), overrides={'trim_blocks': True})


def test_drop_in_has_only_the_netplan_interfaces_mtu():
    doc = yaml.safe_load(_render())
    assert doc == {'network': {'version': 2, 'ethernets': {'ens1f0np0': {'mtu': 9000}, 'ib0': {'mtu': 4092}}}}


def test_role_ranges():
    with open(os.path.join(ROLE, 'vars', 'main.yml')) as f:
        v = yaml.safe_load(f)
    assert (v['__mtu_ethernet_min'], v['__mtu_ethernet_max']) == (68, 9216)
    assert v['__mtu_ipoib_datagram'] == [2044, 4092]
    assert v['__mtu_ipoib_connected_max'] == 65520


def test_netplan_generate_merges_the_mtu(tmp_path):
    gen = next((p for p in (os.environ.get('GPUFLEET_NETPLAN_GENERATE'), '/usr/libexec/netplan/generate',
                            '/lib/netplan/generate') if p and os.access(p, os.X_OK)), None)
    if gen is None:
        pytest.skip('netplan generate not installed (netplan.io; or set GPUFLEET_NETPLAN_GENERATE)')
    etc = tmp_path / 'etc' / 'netplan'
    etc.mkdir(parents=True)
    (etc / '00-operator.yaml').write_text(
        'network:\n  version: 2\n  ethernets:\n    ens1f0np0:\n      addresses: [10.1.0.5/24]\n')
    (etc / '90-gpufleet-mtu.yaml').write_text(_render())
    for f in etc.iterdir():
        f.chmod(0o600)
    res = subprocess.run([gen, '--root-dir', str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    assert res.returncode == 0, res.stdout
    network = (tmp_path / 'run' / 'systemd' / 'network' / '10-netplan-ens1f0np0.network').read_text()
    assert 'MTUBytes=9000' in network and 'Address=10.1.0.5/24' in network
