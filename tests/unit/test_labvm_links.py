# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/labvm: parallel wires between the same two VMs (a bond needs two), their NIC order and speed,
and the inventory limited to named VMs. No VM is started."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def labvm(repo_script):
    return repo_script('labvm')


@pytest.fixture
def fake_qemu(labvm, monkeypatch, tmp_path):
    """labvm's up_vm with nothing started: an empty image directory, free ports from a counter, every fake pid
    alive, the qemu command lines collected in the returned list."""
    image = tmp_path / 'image'
    image.mkdir()
    started = []

    class FakeProc(object):
        def __init__(self, argv, **kw):
            self.pid = 10000 + len(started)
            started.append(argv)

    ports = iter(range(40000, 40100))
    monkeypatch.setattr(labvm, 'current_image', lambda: str(image))
    monkeypatch.setattr(labvm, 'run', lambda *a, **kw: None)
    monkeypatch.setattr(labvm, 'free_port', lambda *a, **kw: next(ports))
    monkeypatch.setattr(labvm, 'pid_alive', lambda pid: pid >= 10000)
    monkeypatch.setattr(labvm, 'wait_listening', lambda port, timeout=20: None)
    monkeypatch.setattr(labvm.subprocess, 'Popen', FakeProc)
    return started


def test_parallel_wires_have_distinct_ids_nets_and_speeds(labvm):
    first = labvm.ensure_link('vmb-b', 'vmb-a', 1)
    second = labvm.ensure_link('vmb-a', 'vmb-b', 2, 100000)
    third = labvm.ensure_link('vmb-b', 'vmb-a', 3, 100000)
    assert [first['id'], second['id'], third['id']] == ['vmb-a--vmb-b', 'vmb-a--vmb-b--2', 'vmb-a--vmb-b--3']
    assert len({first['net'], second['net'], third['net']}) == 3
    assert [first['speed'], second['speed'], third['speed']] == [None, 100000, 100000]
    # recorded once: asking again returns the same record, whatever the order of the names
    assert labvm.ensure_link('vmb-b', 'vmb-a', 2)['net'] == second['net']
    assert labvm.link_ids('vmb-b', 'vmb-a', 3) == ['vmb-a--vmb-b', 'vmb-a--vmb-b--2', 'vmb-a--vmb-b--3']


def test_nic_order_follows_the_wire_index_not_the_file_name(labvm):
    for idx in (1, 2, 3):
        labvm.ensure_link('vmb-a', 'vmb-b', idx)
    labvm.ensure_link('vmb-a', 'vmc', 1)
    # file names sort "vmb-a--vmb-b--2.json" before "vmb-a--vmb-b.json"; the NICs must not
    names = sorted(os.listdir(labvm.LINKS))
    assert names[0] == 'vmb-a--vmb-b--2.json'
    ordered = sorted((lk for lk in labvm.all_links() if 'vmb-a' in lk['ends']), key=labvm.link_order)
    assert [lk['id'] for lk in ordered] == ['vmb-a--vmb-b', 'vmb-a--vmb-b--2', 'vmb-a--vmb-b--3', 'vmb-a--vmc']


def test_link_to_itself_is_refused(labvm):
    with pytest.raises(SystemExit):
        labvm.ensure_link('vmb-a', 'vmb-a')


def test_inventory_lists_only_the_named_running_vms(labvm, monkeypatch):
    for name, port in (('vmb-a', 2201), ('vmb-b', 2202), ('vmr-a', 2203)):
        d = labvm.vm_dir(name)
        os.makedirs(d)
        with open(os.path.join(d, 'state.json'), 'w') as f:
            json.dump({'name': name, 'pid': 1, 'ssh_port': port, 'links': {}}, f)
    monkeypatch.setattr(labvm, 'running', labvm.load_state)
    inv = labvm.inventory(['vmb-a', 'vmb-b'])
    assert 'vmb-a:' in inv and 'vmb-b:' in inv and 'vmr-a' not in inv
    assert 'vmr-a:' in labvm.inventory()


def test_up_wires_three_nics_to_the_same_peer_with_per_wire_speed(labvm, fake_qemu):
    """`up A --link B --link B:100000 --link B:100000` then `up B`: both ends get eth1..eth3 in the same
    order on the same subnets, the speed only on the wires that asked for it (no qemu is started)."""
    started = fake_qemu
    a = labvm.up_vm('vmt-a', 1024, ['vmt-b', 'vmt-b:100000', 'vmt-b:100000'])
    b = labvm.up_vm('vmt-b', 1024, [])
    nics_a = [x for x in started[0] if x.startswith('virtio-net-pci,netdev=l')]
    nics_b = [x for x in started[1] if x.startswith('virtio-net-pci,netdev=l')]
    assert [',speed=100000,duplex=full' in n for n in nics_a] == [False, True, True]
    assert [',speed=100000,duplex=full' in n for n in nics_b] == [False, True, True]
    by_dev_a = {v['dev']: v['address'] for v in a['links'].values()}
    by_dev_b = {v['dev']: v['address'] for v in b['links'].values()}
    assert sorted(by_dev_a) == sorted(by_dev_b) == ['eth1', 'eth2', 'eth3']
    for dev in by_dev_a:  # the same wire on both ends: same /24, .1 and .2
        assert by_dev_a[dev].rsplit('.', 1)[0] == by_dev_b[dev].rsplit('.', 1)[0]
    # B connects to the ports A listens on, wire by wire
    listens = [x for x in started[0] if x.startswith('socket,') and 'listen=' in x]
    connects = [x for x in started[1] if x.startswith('socket,') and 'connect=' in x]
    assert [x.rsplit(':', 1)[1] for x in listens] == [x.rsplit(':', 1)[1] for x in connects]
    with pytest.raises(SystemExit):
        labvm.up_vm('vmt-c', 1024, ['vmt-b:fast'])


def test_numa_splits_cpus_and_memory_and_adds_the_node1_bridge(labvm):
    argv = labvm.numa_argv(4, 1024)
    assert argv[:4] == ['-object', 'memory-backend-ram,id=numa0,size=512M', '-numa', 'node,nodeid=0,cpus=0-1,memdev=numa0']
    assert argv[4:8] == ['-object', 'memory-backend-ram,id=numa1,size=512M', '-numa', 'node,nodeid=1,cpus=2-3,memdev=numa1']
    assert argv[8:] == ['-device', 'pxb-pcie,id=pxb1,bus_nr=64,numa_node=1,bus=pcie.0,addr=0x10']
    odd = labvm.numa_argv(2, 1023)
    assert 'size=511M' in odd[1] and 'size=512M' in odd[5] and 'cpus=0-0' in odd[3] and 'cpus=1-1' in odd[7]


def test_boot_leaves_out_unused_modules_but_not_the_ones_the_tiers_load(labvm, fake_qemu, monkeypatch):
    """The kernel command line keeps udev from loading what a TCG guest never uses (module_blacklist=), and
    GPUFLEET_LABVM_BOOT=stock boots without it (nor no5lvl). The list must never hold a module the roles or the VM
    tier load (the rdma_stack role's defaults, Soft-RoCE, bonding, VLANs, the loop device)."""
    started = fake_qemu
    labvm.up_vm('vmm-a', 1024, [])
    monkeypatch.setenv('GPUFLEET_LABVM_BOOT', 'stock')
    labvm.up_vm('vmm-b', 1024, [])
    cmdlines = [argv[argv.index('-append') + 1].split() for argv in started]
    listed = [a for a in cmdlines[0] if a.startswith('module_blacklist=')]
    assert listed == ['module_blacklist=' + ','.join(labvm.BOOT_MODULE_BLACKLIST)]
    assert 'no5lvl' in cmdlines[0]
    assert not [a for a in cmdlines[1] if a.startswith('module_blacklist=') or a == 'no5lvl']
    monkeypatch.setenv('GPUFLEET_LABVM_BOOT', 'trim')  # a typo is refused before anything is created or started
    with pytest.raises(SystemExit, match='GPUFLEET_LABVM_BOOT must be trimmed'):
        labvm.up_vm('vmm-c', 1024, [])
    assert len(started) == 2 and not os.path.exists(os.path.join(labvm.VMS, 'vmm-c'))

    with open(os.path.join(REPO, 'roles', 'rdma_stack', 'defaults', 'main.yml')) as f:
        line = [x for x in f if x.startswith('rdma_stack_kernel_modules:')][0]
    role_modules = [m.strip() for m in line.split('[', 1)[1].split(']', 1)[0].split(',')]
    used = set(role_modules) | {'rdma_rxe', 'ib_core', 'ib_uverbs', 'bonding', '8021q', 'loop', 'crc32_generic',
                                'crc32_pclmul', 'crc32c_intel', 'virtio_net', 'virtio_blk', 'ext4'}
    assert 'mlx5_ib' in used and not used & set(labvm.BOOT_MODULE_BLACKLIST)
