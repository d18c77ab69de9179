# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter node_facts_missing (plugins/filter/node_facts.py) on HAND-MADE fact dicts shaped as node_facts and
setup return them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.filter.node_facts import FilterModule, node_facts_missing

PCI = {'devices': {}, 'summary': {'nvidia_gpu_count': 0}}


def facts(subset=('pci',), root='/', epoch=1000, gathered='990', **keys):
    out = dict(keys or {'pci': PCI})
    out['node_facts'] = {'subset': list(subset), 'sysfs_root': root, 'proc_root': None, 'nvidia_smi': None,
                         'epoch': epoch}
    if gathered is not None:
        out['date_time'] = {'epoch': gathered}
    return out


def test_registered():
    assert FilterModule().filters()['node_facts_missing'] is node_facts_missing


@pytest.mark.parametrize('host, subsets, root, missing', [
    ({}, ['pci'], '/', True),                                          # nothing read yet
    (None, ['pci'], '/', True),
    ({'pci': PCI}, ['pci'], '/', True),                                # pci_facts' key, but no node_facts record
    (facts(), ['pci'], '/', False),                                    # read after this play's fact gathering
    (facts(epoch=990), ['pci'], '/', False),                           # same second
    (facts(epoch=900), ['pci'], '/', True),                            # read before it: an earlier play or run
    (facts(epoch=None), ['pci'], '/', True),
    (facts(gathered=None), ['pci'], '/', False),                       # the play gathers no facts: this run's
    (facts(root='/srv/rec'), ['pci'], '/', True),                      # another root
    (facts(), ['pci', 'gpu'], '/', True),                              # a subset not read
    (facts(subset=['pci', 'gpu'], pci=PCI, nvidia_gpu={'count': 0}), ['gpu'], '/', False),
    (facts(subset=['pci', 'gpu'], pci=PCI), ['gpu'], '/', True),       # its key gone (meta: clear_facts, overwritten)
])
def test_missing(host, subsets, root, missing):
    assert node_facts_missing(host, subsets, root) is missing


@pytest.mark.parametrize('subsets', [[], 'pci', ['pcie'], None])
def test_bad_subsets_fail_naming_them(subsets):
    with pytest.raises(AnsibleFilterError, match='subsets'):
        node_facts_missing(facts(), subsets)
