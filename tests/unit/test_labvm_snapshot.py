# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/labvm's saved VMs: the key of a snapshot (what may differ between two runs of the same machine does not
change it, every real input does), when up restores, boots cold or saves, and the snapshots' garbage collection.
No VM is started."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os
import time

import pytest


@pytest.fixture
def labvm(repo_script, monkeypatch):
    mod = repo_script('labvm')
    monkeypatch.setattr(mod, 'qemu_identity', lambda: 'qemu 7.2 test build')
    monkeypatch.delenv('GPUFLEET_LABVM_SNAPSHOT', raising=False)
    monkeypatch.delenv('GPUFLEET_LABVM_BOOT', raising=False)
    monkeypatch.delenv('GPUFLEET_LABVM_APPEND', raising=False)
    return mod


@pytest.fixture
def fake_qemu(labvm, monkeypatch, tmp_path):
    """up_vm with nothing started: an image directory with a stamp, free ports from a counter, every fake pid alive;
    the cold boots' qemu command lines and the restores asked for are collected."""
    image = tmp_path / 'image'
    image.mkdir()
    (image / 'stamp').write_text('{"stamp": "s1", "built": "2026-11-28T00:00:00Z"}\n')
    calls = {'cold': [], 'restore': []}

    class FakeProc(object):
        def __init__(self, argv, **kw):
            self.pid = 10000 + len(calls['cold'])
            calls['cold'].append(argv)

    ports = iter(range(40000, 40500))
    monkeypatch.setattr(labvm, 'current_image', lambda: str(image))
    monkeypatch.setattr(labvm, 'run', lambda *a, **kw: None)
    monkeypatch.setattr(labvm, 'free_port', lambda *a, **kw: next(ports))
    monkeypatch.setattr(labvm, 'pid_alive', lambda pid: pid is not None and pid >= 10000)
    monkeypatch.setattr(labvm, 'wait_listening', lambda port, timeout=20: None)
    monkeypatch.setattr(labvm.subprocess, 'Popen', FakeProc)
    return calls


def forget(labvm):
    """A new run on the same machine: no VM state, no link records (the snapshots stay)."""
    for d in (labvm.VMS, labvm.LINKS):
        for n in os.listdir(d) if os.path.isdir(d) else []:
            p = os.path.join(d, n)
            if os.path.isdir(p):
                for f in os.listdir(p):
                    os.unlink(os.path.join(p, f))
                os.rmdir(p)
            else:
                os.unlink(p)


LINKS = ['vmk-b', 'vmk-b:100000', 'vmk-b:100000']


def test_masked_parts_do_not_change_the_key(labvm, fake_qemu):
    """The same two VMs brought up twice: other ssh and wire ports, the other end listening, other per-VM
    directories - the same keys."""
    a1 = labvm.up_vm('vmk-a', 1024, LINKS)
    b1 = labvm.up_vm('vmk-b', 1024, [])  # connects to A's wires
    forget(labvm)
    b2 = labvm.up_vm('vmk-b', 1024, ['vmk-a', 'vmk-a:100000', 'vmk-a:100000'])  # now B boots first and listens
    a2 = labvm.up_vm('vmk-a', 1024, [])
    assert b1['ssh_port'] != b2['ssh_port'] and a1['ssh_port'] != a2['ssh_port']
    assert [x for x in b1['argv'] if 'connect=' in x] and [x for x in b2['argv'] if 'listen=' in x]
    assert b1['argv'] != b2['argv']
    assert a1['snapshot'] == a2['snapshot'] and b1['snapshot'] == b2['snapshot']
    assert a1['snapshot'] != b1['snapshot']
    # the per-VM directory (overlay, console, QMP socket) is masked too
    argv = a1['argv']
    vmdir = labvm.vm_dir('vmk-a')
    moved = [x.replace(vmdir, '/elsewhere/vmk-a') for x in argv]
    assert moved != argv
    assert labvm.snapshot_key(moved, '/elsewhere/vmk-a', 'img', 'q') == labvm.snapshot_key(argv, vmdir, 'img', 'q')
    masked = [labvm.mask_arg(x, vmdir) for x in argv]
    assert any('hostfwd=tcp:127.0.0.1:<port>-:22' in x for x in masked)
    assert [x for x in masked if x.startswith('socket,')] == ['socket,id=l0,<wire>', 'socket,id=l1,<wire>',
                                                              'socket,id=l2,<wire>']


@pytest.mark.parametrize('change', [
    'mem', 'smp', 'numa', 'nic_count', 'wire_speed', 'nic_speed', 'boot_stock', 'append', 'name', 'image', 'qemu'])
def test_each_real_input_changes_the_key(labvm, fake_qemu, monkeypatch, tmp_path, change):
    base = labvm.up_vm('vmk-a', 1024, LINKS)['snapshot']
    forget(labvm)
    kw = {'name': 'vmk-a', 'mem': 1024, 'links': LINKS, 'nic_speed': None, 'smp': 1, 'numa': False}
    if change == 'mem':
        kw['mem'] = 2048
    elif change == 'smp':
        kw['smp'] = 2
    elif change == 'numa':
        kw.update(smp=2, numa=True)
    elif change == 'nic_count':
        kw['links'] = LINKS[:2]
    elif change == 'wire_speed':
        kw['links'] = ['vmk-b', 'vmk-b:100000', 'vmk-b:25000']
    elif change == 'nic_speed':
        kw['nic_speed'] = 10000
    elif change == 'boot_stock':
        monkeypatch.setenv('GPUFLEET_LABVM_BOOT', 'stock')
    elif change == 'append':
        monkeypatch.setenv('GPUFLEET_LABVM_APPEND', 'loglevel=7')
    elif change == 'name':
        kw['name'] = 'vmk-c'
        kw['links'] = ['vmk-b', 'vmk-b:100000', 'vmk-b:100000']
    elif change == 'image':  # the same recipe built again is another disk
        (tmp_path / 'image' / 'stamp').write_text('{"stamp": "s1", "built": "2026-11-29T00:00:00Z"}\n')
    elif change == 'qemu':
        monkeypatch.setattr(labvm, 'qemu_identity', lambda: 'qemu 7.2 another build')
    st = labvm.up_vm(kw['name'], kw['mem'], kw['links'], kw['nic_speed'], kw['smp'], kw['numa'])
    assert st['snapshot'] != base


def test_device_order_and_macs_are_part_of_the_key(labvm, fake_qemu):
    argv = labvm.up_vm('vmk-a', 1024, LINKS)['argv']
    vmdir = labvm.vm_dir('vmk-a')
    key = labvm.snapshot_key(argv, vmdir, 'img', 'q')
    nics = [i for i, x in enumerate(argv) if x.startswith('virtio-net-pci,netdev=l')]
    swapped = list(argv)
    swapped[nics[0]], swapped[nics[1]] = argv[nics[1]], argv[nics[0]]
    assert labvm.snapshot_key(swapped, vmdir, 'img', 'q') != key
    other_mac = [x.replace('mac=52:54:00:', 'mac=52:54:01:') for x in argv]
    assert labvm.snapshot_key(other_mac, vmdir, 'img', 'q') != key
    assert labvm.snapshot_key(argv, vmdir, 'img', 'q') == key


def make_snapshot(labvm, key, name, image, age=0):
    path = os.path.join(labvm.SNAPSHOTS, key)
    os.makedirs(path)
    for f in ('state', 'disk.qcow2'):
        open(os.path.join(path, f), 'w').close()
    with open(os.path.join(path, 'meta.json'), 'w') as f:
        json.dump({'key': key, 'name': name, 'image': image}, f)
    if age:
        t = time.time() - age
        os.utime(os.path.join(path, 'meta.json'), (t, t))
    return path


def test_up_restores_a_saved_machine_else_boots_cold_and_saves_later(labvm, fake_qemu, monkeypatch):
    calls = fake_qemu
    st = labvm.up_vm('vmk-a', 1024, [])
    assert st['boot'] == 'cold' and st['save_snapshot'] is True and len(calls['cold']) == 1
    key = st['snapshot']
    forget(labvm)
    snap = make_snapshot(labvm, key, 'vmk-a', st['image'])

    def restore_ok(st, path, argv):
        calls['restore'].append((path, argv))
        st.update(pid=20000, boot='restored')
        return 20000
    monkeypatch.setattr(labvm, 'restore_vm', restore_ok)
    st = labvm.up_vm('vmk-a', 1024, [])
    assert st['boot'] == 'restored' and st['pid'] == 20000 and not st.get('save_snapshot')
    assert calls['restore'][0][0] == snap and len(calls['cold']) == 1
    forget(labvm)

    monkeypatch.setattr(labvm, 'restore_vm', lambda st, path, argv: None)  # the restore failed: cold, saved again
    st = labvm.up_vm('vmk-a', 1024, [])
    assert st['boot'] == 'cold' and st['save_snapshot'] is True and len(calls['cold']) == 2
    forget(labvm)

    monkeypatch.setenv('GPUFLEET_LABVM_SNAPSHOT', '0')  # forced cold boots, nothing saved
    monkeypatch.setattr(labvm, 'restore_vm', restore_ok)
    st = labvm.up_vm('vmk-a', 1024, [])
    assert st['boot'] == 'cold' and 'snapshot' not in st and 'save_snapshot' not in st
    assert len(calls['cold']) == 3 and len(calls['restore']) == 1


def test_gc_drops_snapshots_of_old_images_unused_ones_and_all_but_the_newest_per_vm(labvm, monkeypatch, tmp_path):
    cur = str(tmp_path / 'images' / 'cur')
    old = str(tmp_path / 'images' / 'old')
    make_snapshot(labvm, 'k-old-image', 'vmk-a', old)
    for i in range(labvm.SNAPSHOT_KEEP + 1):  # k-a0 is the least recently used
        make_snapshot(labvm, 'k-a%d' % i, 'vmk-a', cur, age=1000 - i)
    make_snapshot(labvm, 'k-b', 'vmk-b', cur, age=labvm.SNAPSHOT_MAX_AGE + 60)
    make_snapshot(labvm, 'k-c', 'vmk-c', cur)
    broken = make_snapshot(labvm, 'k-broken', 'vmk-c', cur)
    os.unlink(os.path.join(broken, 'state'))
    os.makedirs(os.path.join(labvm.SNAPSHOTS, 'k-d.tmp-123'))  # a save in progress
    # a running VM restored from (or to be saved as) k-run keeps it, whatever its image
    make_snapshot(labvm, 'k-run', 'vmk-r', old)
    os.makedirs(labvm.vm_dir('vmk-r'))
    with open(os.path.join(labvm.vm_dir('vmk-r'), 'state.json'), 'w') as f:
        json.dump({'name': 'vmk-r', 'pid': 1, 'image': old, 'snapshot': 'k-run'}, f)
    monkeypatch.setattr(labvm, 'running', labvm.load_state)
    labvm.gc_snapshots({os.path.realpath(cur)})
    left = sorted(os.listdir(labvm.SNAPSHOTS))
    assert left == ['k-a1', 'k-a2', 'k-a3', 'k-c', 'k-d.tmp-123', 'k-run']
