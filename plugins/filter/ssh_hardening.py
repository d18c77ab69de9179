# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for gpufleet.cluster.ssh_hardening (logic: plugins/plugin_utils/_sshd_probe.py and _sshd_input.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._sshd_probe import (
    ProbeError, algorithm_problems, effective_mismatch, probe_facts,
)
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._sshd_input import (
    InputError, input_problems, moduli_without_small,
)


def sshd_probe_facts(lines):
    try:
        return probe_facts(lines)
    except ProbeError as exc:
        raise AnsibleFilterError(str(exc))


def sshd_algorithm_problems(facts, algorithm_vars, algorithms):
    try:
        return algorithm_problems(facts, algorithm_vars, algorithms)
    except ProbeError as exc:
        raise AnsibleFilterError(str(exc))


def sshd_config_mismatch(lines, expected, host_key_paths, sftp_line=''):
    try:
        return effective_mismatch(lines, expected, host_key_paths, sftp_line)
    except ProbeError as exc:
        raise AnsibleFilterError(str(exc))


def sshd_input_problems(pattern_lists, extra_settings, managed_keywords):
    try:
        return input_problems(pattern_lists, extra_settings, managed_keywords)
    except InputError as exc:
        raise AnsibleFilterError(str(exc))


def sshd_moduli_without_small(text, min_bits):
    try:
        return moduli_without_small(text, min_bits)
    except InputError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {
            'sshd_probe_facts': sshd_probe_facts,
            'sshd_algorithm_problems': sshd_algorithm_problems,
            'sshd_config_mismatch': sshd_config_mismatch,
            'sshd_input_problems': sshd_input_problems,
            'sshd_moduli_without_small': sshd_moduli_without_small,
        }
