# -*- coding: utf-8 -*-
"""hwcheck on facts parsed (with the collection's own parsers) from the REAL recordings of the corpus.

Each unmodified recording passes against a profile derived from what it holds; faults planted on
copies of the recordings (port DOWN, rate halved, firmware changed, a GPU removed, PCIe x8, an
uncorrectable ECC error, a row-remapping failure) are each reported by name.
"""

from __future__ import annotations

import copy
import os
import shutil
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import ibv_devinfo, nvidia_smi, sysfs_ib
from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _hwcheck as hwcheck

IBV_DEVINFO = 'ibv_devinfo/heioy-2xCX3-mlx4-port2-down.txt'
REPO_ROOT = Path(__file__).resolve().parents[4]


# --- helpers ----------------------------------------------------------------------------------

def gpu_facts_from_xml(text):
    """What gpu_facts returns for this ``nvidia-smi -q -x`` output (executable found)."""
    facts = nvidia_smi.parse_query_xml(text)
    facts['executable'] = '/usr/bin/nvidia-smi'
    return facts


def derive_gpu_profile(gpu):
    """The expectation a recording fulfils: every check whose figure the recording holds."""
    gpus = gpu['gpus']
    exp = {'gpus': gpu['count'], 'gpu_memory_health': True}
    names = set(g['name'] for g in gpus)
    if len(names) == 1 and None not in names:
        exp['gpu_model'] = names.pop()
    pcie = {}
    gens = set(g['pcie_link_gen_max'] if g['pcie_link_gen_max'] is not None else g['pcie_link_gen_current'] for g in gpus)
    if len(gens) == 1 and None not in gens:
        pcie['gen'] = gens.pop()
    widths = set(g['pcie_link_width_current'] for g in gpus)
    if len(widths) == 1 and None not in widths:
        pcie['width'] = widths.pop()
    if pcie:
        exp['gpu_pcie'] = pcie
    if gpu['driver_version']:
        exp['driver_branch'] = gpu['driver_version'].split('.')[0]
        exp['driver_version'] = gpu['driver_version']
    vbios = set(g['vbios_version'] for g in gpus)
    if len(vbios) == 1 and None not in vbios:
        exp['vbios'] = vbios.pop()
    temps = [g['temperature_gpu'] for g in gpus]
    if None not in temps:
        exp['gpu_temp_max_c'] = max(temps)
    unc = [g['ecc_errors']['volatile']['uncorrected'] for g in gpus]
    if None not in unc:
        exp['ecc_uncorrected_max'] = max(unc)
    return exp


def writable_copy(src, dest):
    """Copy a (read-only) recorded tree, keeping links, and make the copy writable."""
    shutil.copytree(str(src), str(dest), symlinks=True)
    for root, dirs, files in os.walk(str(dest)):
        for name in dirs + files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
    os.chmod(str(dest), os.stat(str(dest)).st_mode | stat.S_IWUSR)
    return dest


def sysfs_root_of(class_dir):
    """``.../X/sys/class/infiniband`` -> ``.../X``."""
    return Path(class_dir).parents[2]


def derive_hca_profile(infiniband, names):
    """Expect exactly ``names`` with the port values all of their ports share and their firmware."""
    ports = [p for n in names for p in infiniband[n]['ports'].values()]
    exp_ports = {}
    for key in ('state', 'phys_state', 'rate_gbps', 'link_layer'):
        values = set(p.get(key) for p in ports)
        if len(values) == 1 and None not in values:
            exp_ports[key] = values.pop()
    boards = {}
    for n in names:
        boards.setdefault(infiniband[n]['board_id'], set()).add(infiniband[n]['fw_ver'])
    return {
        'hcas': len(names),
        'hca_match': '^(%s)$' % '|'.join(names),
        'hca_ports': exp_ports,
        'hca_firmware': dict((b, v.pop()) for b, v in boards.items() if len(v) == 1),
    }


def messages(devs):
    return [d['message'] for d in devs]


def set_xml(root, gpu_index, path, value):
    gpu = root.findall('gpu')[gpu_index]
    elem = gpu.find(path)
    assert elem is not None, path
    elem.text = value


# --- GPUs: every recorded nvidia-smi -q -x ------------------------------------------------------

def test_recorded_xml_passes_derived_profile(nvsmi_xml_file):
    gpu = gpu_facts_from_xml(nvsmi_xml_file.read_text())
    expected = derive_gpu_profile(gpu)
    assert hwcheck.validate_expected(expected) == []
    assert hwcheck.check_node({'nvidia_gpu': gpu}, expected) == []
    assert expected['gpus'] == gpu['count'] >= 1


def test_recorded_xml_against_wrong_profile_names_every_item(nvsmi_xml_file):
    gpu = gpu_facts_from_xml(nvsmi_xml_file.read_text())
    expected = derive_gpu_profile(gpu)
    wrong = dict(expected, gpus=gpu['count'] + 1, gpu_model='NVIDIA H100 80GB HBM3', vbios='96.00.99.00.01')
    devs = hwcheck.check_node({'nvidia_gpu': gpu}, wrong)
    assert 'node: GPUs expected %d, found %d' % (gpu['count'] + 1, gpu['count']) in messages(devs)
    models = [d for d in devs if d['item'] == 'model']
    assert len(models) == gpu['count'] and models[0]['expected'] == 'NVIDIA H100 80GB HBM3'
    assert len([d for d in devs if d['item'] == 'vbios']) == gpu['count']
    for dev in devs:
        assert set(dev) == {'device', 'item', 'expected', 'actual', 'message'}


def test_planted_gpu_missing(corpus):
    text = (corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text()
    gpu = gpu_facts_from_xml(text)
    expected = derive_gpu_profile(gpu)
    root = ET.fromstring(text)
    root.remove(root.findall('gpu')[1])
    faulty = gpu_facts_from_xml(ET.tostring(root, encoding='unicode'))
    assert messages(hwcheck.check_node({'nvidia_gpu': faulty}, expected)) == ['node: GPUs expected 2, found 1']


def test_planted_pcie_x8(corpus):
    text = (corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text()
    expected = derive_gpu_profile(gpu_facts_from_xml(text))
    assert expected['gpu_pcie'] == {'gen': 4, 'width': 16}
    root = ET.fromstring(text)
    set_xml(root, 1, 'pci/pci_gpu_link_info/link_widths/current_link_width', '8x')
    faulty = gpu_facts_from_xml(ET.tostring(root, encoding='unicode'))
    bus = faulty['gpus'][1]['pci_bus_id']
    devs = hwcheck.check_node({'nvidia_gpu': faulty}, expected)
    assert messages(devs) == ['GPU 1 (%s): pcie width expected 16, found 8' % bus]
    assert devs[0]['device'] == 'GPU 1' and devs[0]['item'] == 'pcie_width'
    assert (devs[0]['expected'], devs[0]['actual']) == (16, 8)


@pytest.mark.parametrize('rel, path', [
    ('nvidia_smi/xml-telegraf-A10G-515.xml', 'ecc_errors/volatile/dram_uncorrectable'),   # Ampere schema
    ('nvidia_smi/xml-telegraf-T4-515.xml', 'ecc_errors/volatile/sram_uncorrectable'),      # SRAM, 515 schema
    ('nvidia_smi/xml-netdata-TeslaP100-v11.xml', 'ecc_errors/volatile/double_bit/total'),  # Pascal
])
def test_planted_uncorrectable_ecc(corpus_file, rel, path):
    text = corpus_file(rel).read_text()
    expected = derive_gpu_profile(gpu_facts_from_xml(text))
    assert expected['ecc_uncorrected_max'] == 0
    root = ET.fromstring(text)
    set_xml(root, 0, path, '3')
    faulty = gpu_facts_from_xml(ET.tostring(root, encoding='unicode'))
    assert messages(hwcheck.check_node({'nvidia_gpu': faulty}, expected)) == [
        'GPU 0: ECC volatile uncorrected expected <= 0, found 3']


def test_planted_remapped_row_failure_and_pending(corpus):
    text = (corpus / 'nvidia_smi/xml-telegraf-A10G-515.xml').read_text()
    expected = derive_gpu_profile(gpu_facts_from_xml(text))
    root = ET.fromstring(text)
    set_xml(root, 0, 'remapped_rows/remapped_row_failure', 'Yes')
    faulty = gpu_facts_from_xml(ET.tostring(root, encoding='unicode'))
    assert messages(hwcheck.check_node({'nvidia_gpu': faulty}, expected)) == ['GPU 0: remapped rows failure']
    set_xml(root, 0, 'remapped_rows/remapped_row_pending', 'Yes')
    faulty = gpu_facts_from_xml(ET.tostring(root, encoding='unicode'))
    assert messages(hwcheck.check_node({'nvidia_gpu': faulty}, expected)) == [
        'GPU 0: remapped rows failure', 'GPU 0: remapped rows pending (GPU reset needed)']
    # without the memory-health expectation, nothing is checked
    assert hwcheck.check_node({'nvidia_gpu': faulty}, dict(expected, gpu_memory_health=False)) == []


def test_planted_retired_pages_pending(corpus):
    text = (corpus / 'nvidia_smi/xml-telegraf-T4-515.xml').read_text()
    expected = derive_gpu_profile(gpu_facts_from_xml(text))
    root = ET.fromstring(text)
    set_xml(root, 0, 'retired_pages/pending_retirement', 'Yes')
    faulty = gpu_facts_from_xml(ET.tostring(root, encoding='unicode'))
    assert messages(hwcheck.check_node({'nvidia_gpu': faulty}, expected)) == [
        'GPU 0: retired pages pending (GPU reset needed)']


def test_planted_hot_gpu_and_driver_branch(corpus):
    text = (corpus / 'nvidia_smi/xml-telegraf-T4-515.xml').read_text()
    gpu = gpu_facts_from_xml(text)
    expected = dict(derive_gpu_profile(gpu), gpu_temp_max_c=35, driver_branch='550')
    devs = hwcheck.check_node({'nvidia_gpu': gpu}, expected)
    assert messages(devs) == ['node: driver branch expected 550, found 515',
                              'GPU 0: temperature expected <= 35 C, found 40 C']


def test_ecc_not_reported_is_a_deviation(corpus):
    # RTX 4000 Ada: ECC not reported (N/A), so a profile limiting ECC must not pass
    gpu = gpu_facts_from_xml((corpus / 'nvidia_smi/xml-telegraf-rtx4000ada-595-v13.xml').read_text())
    devs = hwcheck.check_node({'nvidia_gpu': gpu}, {'ecc_uncorrected_max': 0})
    assert len(devs) == 1 and devs[0]['actual'] is None
    assert devs[0]['message'].startswith('GPU 0: ECC volatile uncorrected expected <= 0, not reported')


def test_nvidia_smi_absent_is_a_deviation():
    absent = {'executable': None, 'driver_version': None, 'cuda_version': None, 'attached_gpus': 0,
              'count': 0, 'gpus': [], 'topology': {}}
    devs = hwcheck.check_node({'nvidia_gpu': absent}, {'gpus': 8, 'driver_branch': '550', 'gpu_pcie': {'gen': 5}})
    assert messages(devs) == ['nvidia-smi not found; expected 8 GPUs',
                              'node: driver branch expected 550, not reported (nvidia-smi not found)']
    # a CPU-only profile is fine without nvidia-smi
    assert hwcheck.check_node({'nvidia_gpu': absent}, {'gpus': 0}) == []
    # facts not gathered at all
    assert messages(hwcheck.check_node({}, {'gpus': 8})) == ['GPU facts (gpu_facts) missing; expected 8 GPUs']


def test_gpu_on_pci_bus_but_not_in_nvidia_smi(corpus):
    gpu = gpu_facts_from_xml((corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text())
    buses = [hwcheck.norm_bdf(g['pci_bus_id']) for g in gpu['gpus']]
    pci = {'summary': {'nvidia_gpus': buses + ['0000:9a:00.0']}}
    assert messages(hwcheck.check_node({'nvidia_gpu': gpu, 'pci': pci}, {})) == [
        'GPU at 0000:9a:00.0: on the PCI bus but not shown by nvidia-smi']
    assert hwcheck.norm_bdf('00000000:9A:00.0') == '0000:9a:00.0'


def test_fabricmanager_version_and_driver_match(corpus):
    gpu = gpu_facts_from_xml((corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text())
    firmware = {'fabricmanager': {'version': '590.44.01'}}
    assert hwcheck.check_node({'nvidia_gpu': gpu, 'firmware': firmware}, {'fabricmanager_version': '590.44.01'}) == []
    devs = hwcheck.check_node({'nvidia_gpu': gpu, 'firmware': {'fabricmanager': {'version': None}}},
                              {'fabricmanager_version': '590.44.01'})
    assert messages(devs) == ['node: fabricmanager version expected 590.44.01, not reported (nv-fabricmanager not found)']


def test_fabricmanager_not_the_driver_version_is_the_version_lock_rule(corpus):
    # the profile expects the fabric manager that runs, but the driver nvidia-smi reports is another version:
    # the rule and its message are the version lock's (_version_lock.fabricmanager_errors)
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import fabricmanager_errors
    gpu = gpu_facts_from_xml((corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text())
    assert gpu['driver_version'] == '590.44.01'
    devs = hwcheck.check_node({'nvidia_gpu': gpu, 'firmware': {'fabricmanager': {'version': '590.48.01'}}},
                              {'fabricmanager_version': '590.48.01'})
    assert messages(devs) == ['node: fabric manager 590.48.01 must equal driver 590.44.01 exactly: '
                              'Fabric Manager refuses to start against another driver version']
    assert messages(devs) == ['node: ' + m for m in fabricmanager_errors('590.48.01', '590.44.01', 'fabric manager', 'driver')]
    assert [(d['item'], d['expected'], d['actual']) for d in devs] == [('fabricmanager_version', '590.44.01', '590.48.01')]
    # the same versions, whitespace aside, are no deviation
    assert hwcheck.check_node({'nvidia_gpu': gpu, 'firmware': {'fabricmanager': {'version': '590.44.01\n'}}},
                              {'fabricmanager_version': '590.44.01'}) == []


# --- HCAs: every recorded /sys/class/infiniband tree ---------------------------------------------

def test_recorded_sysfs_passes_derived_profile(sysfs_ib_root):
    ib = sysfs_ib.collect(str(sysfs_root_of(sysfs_ib_root)))
    assert ib
    # the whole node: every device, the port values all ports share, firmware per board id
    whole = derive_hca_profile(ib, sorted(ib))
    assert hwcheck.check_node({'infiniband': ib}, dict(whole, hca_match=None)) == []
    # each device on its own, with all its port values
    for name in ib:
        expected = derive_hca_profile(ib, [name])
        assert set(expected['hca_ports']) >= {'state', 'rate_gbps', 'link_layer'}
        assert hwcheck.check_node({'infiniband': ib}, expected) == [], name


def test_planted_port_down_rate_halved_fw_mismatch(sysfs_ib_root, tmp_path):
    root = sysfs_root_of(sysfs_ib_root)
    ib = sysfs_ib.collect(str(root))
    name = 'mlx4_0'  # ConnectX-3, 2 ports at 40 Gb/s QDR, in both recorded trees
    expected = derive_hca_profile(ib, [name])
    assert expected['hca_ports'] == {'state': 'ACTIVE', 'phys_state': 'LinkUp', 'rate_gbps': 40,
                                     'link_layer': 'InfiniBand'}
    copy_root = writable_copy(root, tmp_path / 'node')
    dev = copy_root / 'sys/class/infiniband' / name
    (dev / 'ports/1/state').write_text('1: DOWN\n')
    (dev / 'ports/1/phys_state').write_text('2: Polling\n')
    (dev / 'ports/2/rate').write_text('20 Gb/sec (4X DDR)\n')
    (dev / 'fw_ver').write_text('2.30.8000\n')
    devs = hwcheck.check_node({'infiniband': sysfs_ib.collect(str(copy_root))}, expected)
    assert messages(devs) == [
        'mlx4_0 port 1: phys_state expected LinkUp, found Polling',
        'mlx4_0 port 1: state expected ACTIVE, found DOWN',
        'mlx4_0 port 2: rate_gbps expected 40, found 20',
        'mlx4_0: fw_ver expected 2.31.5050, found 2.30.8000',
    ]
    assert [(d['device'], d['item']) for d in devs] == [
        ('mlx4_0 port 1', 'phys_state'), ('mlx4_0 port 1', 'state'), ('mlx4_0 port 2', 'rate_gbps'), ('mlx4_0', 'fw_ver')]


def test_planted_hca_missing_and_file_unreadable(sysfs_ib_root, tmp_path):
    root = sysfs_root_of(sysfs_ib_root)
    ib = sysfs_ib.collect(str(root))
    expected = derive_hca_profile(ib, sorted(ib))
    expected['hca_match'] = None
    copy_root = writable_copy(root, tmp_path / 'node')
    shutil.rmtree(str(copy_root / 'sys/class/infiniband/mlx4_0'))
    other = sorted(n for n in ib if n != 'mlx4_0')
    devs = hwcheck.check_node({'infiniband': sysfs_ib.collect(str(copy_root))}, expected)
    assert messages(devs)[0] == 'node: HCAs expected %d, found %d (%s) on InfiniBand' % (len(ib), len(other), ', '.join(other))
    # a rate file that is gone: a missing figure is a deviation
    copy2 = writable_copy(root, tmp_path / 'node2')
    os.remove(str(copy2 / 'sys/class/infiniband/mlx4_0/ports/2/rate'))
    devs = hwcheck.check_node({'infiniband': sysfs_ib.collect(str(copy2))}, derive_hca_profile(ib, ['mlx4_0']))
    assert messages(devs) == ['mlx4_0 port 2: rate_gbps expected 40, not reported']


def test_ethernet_nics_are_not_counted_against_an_infiniband_profile(corpus, tmp_path):
    # An HGX node has Ethernet (storage) NICs next to its InfiniBand HCAs: with hca_ports.link_layer set
    # and no hca_match, only the devices on that link layer are the profile's HCAs.
    root = writable_copy(corpus / 'sysfs_infiniband/node_exporter', tmp_path / 'node')
    for port in ('1', '2'):
        (root / 'sys/class/infiniband/mlx4_0/ports' / port / 'link_layer').write_text('Ethernet\n')
    ib = sysfs_ib.collect(str(root))
    assert hwcheck.select_hcas(ib, link_layer='InfiniBand') == ['i40iw0']
    assert hwcheck.check_node({'infiniband': ib}, {'hcas': 1, 'hca_ports': {'link_layer': 'InfiniBand'}}) == []
    # a fabric HCA whose port came up as Ethernet is named in the count
    devs = hwcheck.check_node({'infiniband': ib}, {'hcas': 2, 'hca_ports': {'link_layer': 'InfiniBand'}})
    assert messages(devs) == ['node: HCAs expected 2, found 1 (i40iw0) on InfiniBand; not counted: mlx4_0 (Ethernet)']


def test_hca_firmware_lock_as_string_and_unknown_board(sysfs_ib_root):
    ib = sysfs_ib.collect(str(sysfs_root_of(sysfs_ib_root)))
    assert hwcheck.check_node({'infiniband': ib}, {'hca_match': '^mlx4_0$', 'hca_firmware': '2.31.5050'}) == []
    devs = hwcheck.check_node({'infiniband': ib}, {'hca_match': '^mlx4_0$', 'hca_firmware': {'MT_0000000838': '28.42.1000'}})
    assert messages(devs) == ['mlx4_0: board_id SM_1141000001000 has no entry in the firmware lock '
                              '(locked: MT_0000000838), found 2.31.5050']


def test_firmware_pending_reset(corpus):
    ib = sysfs_ib.collect(str(corpus / 'sysfs_infiniband/node_exporter'))
    firmware = {'hca': {'mlx4_0': {'flash': {'fw_version': '2.42.5000', 'fw_version_running': '2.31.5050',
                                             'pending_reset': True}}}}
    devs = hwcheck.check_node({'infiniband': ib, 'firmware': firmware}, {'hca_match': '^mlx4_0$', 'hca_firmware': '2.31.5050'})
    assert messages(devs) == ['mlx4_0: firmware 2.42.5000 burned but 2.31.5050 running (reset pending)']


def test_ib_mtu_from_recorded_ibv_devinfo(corpus_file, corpus):
    text = corpus_file(IBV_DEVINFO).read_text()
    parsed = ibv_devinfo.parse_ibv_devinfo(text)
    assert sorted(parsed) == ['mlx4_0', 'mlx4_1']
    assert parsed['mlx4_0']['2'] == {'state': 'PORT_DOWN', 'max_mtu': 4096, 'active_mtu': 4096, 'link_layer': 'InfiniBand'}
    ib = sysfs_ib.collect(str(corpus / 'sysfs_infiniband/node_exporter'))
    facts = {'infiniband': ib, 'ibv_devinfo': text}
    assert hwcheck.check_node(facts, {'hca_match': '^mlx4_0$', 'ib_mtu': 4096}) == []
    devs = hwcheck.check_node(facts, {'hca_match': '^mlx4_0$', 'ib_mtu': 2048})
    assert messages(devs) == ['mlx4_0 port 1: active mtu expected 2048, found 4096',
                              'mlx4_0 port 2: active mtu expected 2048, found 4096']
    devs = hwcheck.check_node({'infiniband': ib, 'ibv_devinfo': None}, {'hca_match': '^mlx4_0$', 'ib_mtu': 4096})
    assert messages(devs)[0] == 'mlx4_0 port 1: active mtu expected 4096, not reported (ibv_devinfo not found or failed)'


def test_no_ib_facts_is_a_deviation_only_when_expected():
    assert hwcheck.check_node({}, {'gpus': 0}) == []
    assert messages(hwcheck.check_node({}, {'hcas': 8})) == [
        'node: InfiniBand/RoCE facts (ib_port_facts) missing', 'node: HCAs expected 8, found 0']
    assert hwcheck.check_node({'infiniband': {}}, {'hcas': 0}) == []


def test_virtual_functions_are_not_hcas():
    ib = {'mlx5_0': {'ports': {}}, 'mlx5_1': {'virtual_function': True, 'ports': {}}}
    assert hwcheck.select_hcas(ib) == ['mlx5_0']


# --- expectation validation ---------------------------------------------------------------------

def test_validate_expected():
    assert hwcheck.validate_expected({'gpus': 8, 'hca_ports': {'rate_gbps': 400}, 'vbios': {'H100': '96.00'}}) == []
    errors = hwcheck.validate_expected({'gpus': -1, 'gpu_pcie': {'lanes': 16}, 'hca_ports': {'speed_gbps': 1},
                                        'ib_mtu': 9000, 'hca_match': '(', 'bogus': 1, 'gpu_memory_health': 'yes'})
    text = '\n'.join(errors)
    for needle in ('expected.bogus is not a known check', 'expected.gpus must be an integer >= 0',
                   'expected.gpu_pcie.lanes is not known', 'expected.hca_ports.speed_gbps is not known',
                   'expected.ib_mtu must be one of 256, 512, 1024, 2048, 4096', 'expected.hca_match is not a regular',
                   'expected.gpu_memory_health must be true or false'):
        assert needle in text
    assert hwcheck.validate_expected([]) == ['expected must be a dict, got list']


# --- fleet --------------------------------------------------------------------------------------

def fleet_of(corpus, n=4):
    ib = sysfs_ib.collect(str(corpus / 'sysfs_infiniband/node_exporter'))
    gpu = gpu_facts_from_xml((corpus / 'nvidia_smi/xml-telegraf-2xA5000-590-v13.xml').read_text())
    return dict(('node%02d' % i, {'infiniband': copy.deepcopy(ib), 'nvidia_gpu': copy.deepcopy(gpu),
                                  'firmware': {'ofed': {'version': '24.10-1.1.4'}}}) for i in range(1, n + 1))


def test_fleet_agrees(corpus):
    summary, devs = hwcheck.fleet_compare(fleet_of(corpus), {})
    assert devs == []
    by_item = dict(((s['item'], s['label']), s) for s in summary)
    assert by_item[('driver', None)]['majority'] == '590.44.01'
    assert by_item[('hca_firmware', 'board_id SM_1141000001000')]['majority'] == '2.31.5050'


def test_fleet_one_host_on_other_firmware(corpus):
    hosts = fleet_of(corpus)
    hosts['node03']['infiniband']['mlx4_0']['fw_ver'] = '2.42.5000'
    summary, devs = hwcheck.fleet_compare(hosts, dict((h, 'h100_ib') for h in hosts), items=['hca_firmware'],
                                          hca_match='^mlx4_')
    assert messages(devs) == ['node03: hca firmware board_id SM_1141000001000 expected 2.31.5050 '
                              '(majority, 3 of 4 hosts of profile h100_ib), found 2.42.5000']
    assert devs[0]['host'] == 'node03' and devs[0]['expected'] == '2.31.5050' and devs[0]['actual'] == '2.42.5000'
    assert summary[0]['values'] == {'2.31.5050': ['node01', 'node02', 'node04'], '2.42.5000': ['node03']}


def test_fleet_tie_is_reported_as_such(corpus):
    hosts = fleet_of(corpus)
    for h in ('node03', 'node04'):
        hosts[h]['nvidia_gpu']['driver_version'] = '590.48.01'
    summary, devs = hwcheck.fleet_compare(hosts, {}, items=['driver'])
    assert sorted(d['host'] for d in devs) == ['node01', 'node02', 'node03', 'node04']
    assert all(d['expected'] is None for d in devs)
    assert messages(devs)[0] == ('node01: driver 590.44.01, no majority in profile none '
                                 '(tie: 590.44.01 on node01, node02; 590.48.01 on node03, node04)')
    assert summary[0]['tie'] is True and summary[0]['majority'] is None


def test_fleet_groups_by_profile_and_names_missing(corpus):
    hosts = fleet_of(corpus, 6)
    profiles = {'node01': 'a', 'node02': 'a', 'node03': 'a', 'node04': 'b', 'node05': 'b', 'node06': 'b'}
    for h in ('node04', 'node05', 'node06'):
        hosts[h]['firmware']['ofed'] = {'version': '5.8-1.0.1.1'}  # another profile may differ
    hosts['node02']['firmware']['ofed'] = None  # ofed_info missing on one host
    hosts['node06']['nvidia_gpu']['gpus'][1]['vbios_version'] = '94.02.6D.00.AA'  # mixed on one host
    summary, devs = hwcheck.fleet_compare(hosts, profiles)
    assert messages(devs) == [
        'node02: ofed expected 24.10-1.1.4, not reported (other hosts of profile a report it)',
        'node06: vbios expected 94.02.6D.00.0D (majority, 2 of 3 hosts of profile b), found 94.02.6D.00.0D + 94.02.6D.00.AA',
    ]


def test_fleet_without_values_compares_nothing():
    hosts = dict(('lab%d' % i, {'infiniband': {}, 'nvidia_gpu': {'executable': None, 'gpus': [], 'driver_version': None},
                                'firmware': {'ofed': None}}) for i in range(4))
    assert hwcheck.fleet_compare(hosts, {})[1] == []


def test_fleet_accepts_precomputed_versions():
    hosts = {'a': {'versions': {'driver': '550.127.08'}}, 'b': {'versions': {'driver': '550.127.08'}},
             'c': {'versions': {'driver': '550.90.07'}}}
    dummy, devs = hwcheck.fleet_compare(hosts, {}, items=['driver'])
    assert [d['host'] for d in devs] == ['c']


# --- the prod profile as the role reads it ------------------------------------------------------

def role_expectation(profile_vars):
    """Render roles/node_facts_check defaults + vars (the inventory -> expectation mapping) with Jinja."""
    import yaml
    from jinja2.nativetypes import NativeEnvironment

    role = REPO_ROOT / 'roles' / 'node_facts_check'
    from ansible_collections.gpufleet.cluster.plugins.filter.version_lock import FilterModule

    env = NativeEnvironment()
    env.filters.update(('gpufleet.cluster.' + k, f) for k, f in FilterModule().filters().items())
    context = dict(profile_vars)
    defaults = yaml.safe_load((role / 'defaults' / 'main.yml').read_text())
    for key, value in defaults.items():
        context[key] = env.from_string(value).render(context) if isinstance(value, str) and '{{' in value else value
    mapping = yaml.safe_load((role / 'vars' / 'main.yml').read_text())['__node_facts_check_expected']
    return dict((key, env.from_string(value).render(context)) for key, value in mapping.items())


def test_prod_profile_works_as_is():
    import yaml

    profile = yaml.safe_load((REPO_ROOT / 'inventories/prod/group_vars/profile_h100_ib.yml').read_text())
    expected = role_expectation(profile)
    assert hwcheck.validate_expected(expected) == []
    assert expected['gpus'] == 8 and expected['gpu_pcie'] == {'gen': 5, 'width': 16}
    # (jinja2's NativeEnvironment turns '550' into 550; Ansible keeps the string, hwcheck takes either)
    assert str(expected['driver_branch']) == '550' and expected['hca_firmware'] == '28.42.1000'
    assert expected['hca_ports']['rate_gbps'] == 400 and expected['ib_mtu'] == 4096
    assert expected['driver_version'] == '550.127.08' and expected['ofed_version'] is None
    assert expected['kernel'] == '5.15.0-125-generic'
    assert expected['packages'] == {'nvidia-container-toolkit': '1.17.3', 'nvidia-container-toolkit-base': '1.17.3'}
    # HAND-MADE H100 XML (tests/unit/fixtures/hand_made): one H100 on the 590 driver
    xml = (REPO_ROOT / 'tests/unit/fixtures/hand_made/nvidia-smi-q-x-h100-mig-HANDMADE.xml').read_text()
    devs = hwcheck.check_node({'nvidia_gpu': gpu_facts_from_xml(xml), 'infiniband': {}, 'firmware': {}}, expected)
    assert messages(devs) == [
        'node: GPUs expected 8, found 1',
        'node: driver branch expected 550, found 590',
        'node: driver version expected 550.127.08, found 590.48.01',
        'node: fabricmanager version expected 550.127.08, not reported (nv-fabricmanager not found)',
        'GPU 0: vbios expected 96.00.99.00.01, found 96.00.A5.00.01',
        'node: HCAs expected 8, found 0 on InfiniBand',
        # the version lock's kernel and packages: facts not given here, so not reported = deviation
        'node: kernel expected 5.15.0-125-generic, not reported (no kernel fact)',
        'node: installed packages not reported (package_facts did not run)',
    ]
    # a CPU-only lab profile checks counts only
    lab = yaml.safe_load((REPO_ROOT / 'inventories/lab/group_vars/profile_lab_cpu.yml').read_text())
    lab_expected = dict((k, v) for k, v in role_expectation(lab).items() if v is not None)
    assert lab_expected == {'gpus': 0, 'hcas': 0, 'gpu_memory_health': True}
