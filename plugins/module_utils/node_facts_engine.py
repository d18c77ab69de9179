# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the node_facts module: what a node is made of, read in one module call (one round trip)
instead of one call per kind.

Each subset is read by the code that owns it, with the same result as its own facts module - nothing is
parsed here:

- ``pci``: ``sysfs_pci.read_pci`` (as pci_facts) -> ``ansible_facts.pci``
- ``infiniband``: ``sysfs_ib.collect`` (as ib_port_facts) -> ``ansible_facts.infiniband``
- ``gpu``: ``gpu_facts_engine.gather`` (as gpu_facts: nvidia-smi) -> ``ansible_facts.nvidia_gpu``
- ``firmware``: ``fw_facts_engine.gather`` (as fw_facts) -> ``ansible_facts.firmware``; the RDMA devices are
  read once for it and ``infiniband`` when both are asked for
- ``bonding``: ``bonding.read_all`` (as bond_facts) -> ``ansible_facts.bonding``

plus ``ansible_facts.node_facts``: which subsets this call read, from which roots and when, so a role later in
the play can tell whether the facts it needs are there already (filter ``node_facts_missing``).

The module passed in needs ``warn``, ``fail_json`` and ``get_bin_path`` (an AnsibleModule, or a stand-in).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import bonding
from ansible_collections.gpufleet.cluster.plugins.module_utils import fw_facts_engine
from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_facts_engine
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_ib import collect
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_pci import normalize_vendors, read_pci, vendor_errors

# Subsets in the order they are read; 'all' stands for every one.
SUBSETS = ('pci', 'infiniband', 'gpu', 'firmware', 'bonding')
# The ansible_facts key of each subset (the key of its own facts module).
FACT_KEYS = {'pci': 'pci', 'infiniband': 'infiniband', 'gpu': 'nvidia_gpu', 'firmware': 'firmware',
             'bonding': 'bonding'}
# node_facts option -> fw_facts option (the firmware subset runs fw_facts' engine with these).
FW_OPTIONS = ('query_flash', 'mstflint_path', 'flint_path', 'mlxup_path', 'ofed_info_path', 'kernel_modules',
              'fabricmanager_path', 'fabricmanager_service', 'fabricmanager_log', 'fail_on_error')


def wanted(subset):
    """The subsets ``subset`` names, in reading order ('all' gives every one)."""
    names = set(subset or [])
    return [s for s in SUBSETS if 'all' in names or s in names]


def fw_params(p):
    return dict(((k, p[k]) for k in FW_OPTIONS), sysfs_root=p['sysfs_root'])


def input_errors(p):
    """Messages naming the option for every bad input (empty list when all is fine); nothing is read or run."""
    errors = ac.nul_errors(p)
    if errors:
        return errors
    if not p['subset']:
        errors.append('subset must name at least one of all, %s; got an empty list' % ', '.join(SUBSETS))
    errors += ac.root_dir_errors('proc_root', p['proc_root'])
    errors += vendor_errors(p['vendors'])
    errors += ac.executable_errors('nvidia_smi_path', p['nvidia_smi_path'])
    # fw_facts' own checks: sysfs_root, tool paths, kernel module names, Fabric Manager unit and log
    errors += fw_facts_engine.input_errors(fw_params(p))
    return errors


def gather(module, p):
    """The module's result: ``changed=False``, ``ansible_facts`` with one key per subset read plus
    ``node_facts``, and ``msg`` when the gpu subset found no nvidia-smi (no failure: the host has no GPU).
    Ends the module through ``fail_json`` where the subset's own module would fail."""
    subsets = wanted(p['subset'])
    facts = {}
    result = dict(changed=False, ansible_facts=facts)
    rdma = None
    if 'pci' in subsets:
        devices, summary = read_pci(p['sysfs_root'], normalize_vendors(p['vendors']))
        facts['pci'] = {'devices': devices, 'summary': summary}
    if 'infiniband' in subsets or 'firmware' in subsets:
        rdma = collect(p['sysfs_root'])
    if 'infiniband' in subsets:
        facts['infiniband'] = rdma
    if 'gpu' in subsets:
        gpu = gpu_facts_engine.gather(module, p['nvidia_smi_path'], p['gpu_topology'])
        facts['nvidia_gpu'] = gpu['ansible_facts']['nvidia_gpu']
        if gpu.get('msg'):
            result['msg'] = gpu['msg']
    if 'firmware' in subsets:
        fw = fw_facts_engine.gather(module, fw_params(p), devices=rdma)
        facts['firmware'] = fw
        if fw['errors'] and p['fail_on_error']:
            module.fail_json(msg='; '.join(fw['errors']), ansible_facts=dict(firmware=fw))
    if 'bonding' in subsets:
        try:
            facts['bonding'] = bonding.read_all(p['proc_root'])
        except bonding.BondingReadError as exc:
            module.fail_json(msg=bonding.read_error_msg(exc))
    facts['node_facts'] = {
        'subset': subsets,
        'sysfs_root': p['sysfs_root'],
        'proc_root': p['proc_root'] if 'bonding' in subsets else None,
        'nvidia_smi': facts['nvidia_gpu']['executable'] if 'gpu' in subsets else None,
        # the host's clock, as ansible_facts.date_time.epoch of the play's fact gathering (node_facts_missing)
        'epoch': int(time.time()),
    }
    return result
