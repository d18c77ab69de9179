# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift report (hand-made callback records)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._drift import build_report

RECORD = {
    'hosts': {
        'n1': [{'task': 'ssh : Write the hardening drop-in', 'kind': 'gpufleet.cluster.ssh_hardening', 'diff': []},
               {'task': 'nvidia_driver : Hold', 'kind': 'gpufleet.cluster.nvidia_driver', 'diff': []}],
        'n2': [{'task': 'container_toolkit : Hold', 'kind': 'gpufleet.cluster.container_toolkit', 'diff': []}],
    },
    'consequences': {'n1': [{'task': 'ssh : Reload sshd'}]},
}


def test_report_names_exactly_the_changed_settings():
    checks = {'n1': {'messages': []}, 'n2': {'messages': []}, 'n3': {'messages': []}}
    r = build_report(RECORD, ['n1', 'n2', 'n3', 'ctl'], checks, ['n1', 'n2', 'n3'])
    assert r['drift'] is True and r['drifted_nodes'] == ['n1', 'n2'] and r['unchecked'] == []
    assert r['summary'] == {'gpufleet.cluster.ssh_hardening': 1, 'gpufleet.cluster.nvidia_driver': 1,
                            'gpufleet.cluster.container_toolkit': 1}
    assert r['nodes']['n1']['consequences'] == ['ssh : Reload sshd']
    assert r['nodes']['ctl'] == {'drift': False, 'settings': [], 'consequences': [], 'version_lock': [], 'checked': True}
    assert r['mode'] == 'check'


def test_version_lock_deviation_is_drift():
    checks = {'n1': {'messages': ['package nvidia-driver: version expected 570.133.20, found 550.127.08-1']}}
    r = build_report({}, ['n1'], checks, ['n1'], check_mode=False)
    assert r['drift'] and r['summary'] == {'version lock / hardware': 1} and r['mode'] == 'apply'


def test_gpu_node_without_a_check_is_unchecked_never_clean():
    r = build_report({'hosts': {}}, ['n1', 'ctl'], {}, ['n1'])
    assert r['unchecked'] == ['n1'] and r['drift'] is False
    assert build_report(None, [], {}, [])['drift'] is False
