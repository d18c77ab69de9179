# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for gpufleet.cluster.ssh_hardening (logic: plugins/plugin_utils/_sshd_probe.py and _sshd_input.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Imports inside the filters, not here: docs/architecture.md, "Filter plugins load cheaply".
def _probe(func_name, *args):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _sshd_probe

    try:
        return getattr(_sshd_probe, func_name)(*args)
    except _sshd_probe.ProbeError as exc:
        raise AnsibleFilterError(str(exc))


def _input(func_name, *args):
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _sshd_input

    try:
        return getattr(_sshd_input, func_name)(*args)
    except _sshd_input.InputError as exc:
        raise AnsibleFilterError(str(exc))


def sshd_probe_facts(lines):
    return _probe('probe_facts', lines)


def sshd_algorithm_problems(facts, algorithm_vars, algorithms):
    return _probe('algorithm_problems', facts, algorithm_vars, algorithms)


def sshd_config_mismatch(lines, expected, host_key_paths, sftp_line=''):
    return _probe('effective_mismatch', lines, expected, host_key_paths, sftp_line)


def sshd_input_problems(pattern_lists, extra_settings, managed_keywords):
    return _input('input_problems', pattern_lists, extra_settings, managed_keywords)


def sshd_moduli_without_small(text, min_bits):
    return _input('moduli_without_small', text, min_bits)


class FilterModule(object):
    def filters(self):
        return {
            'sshd_probe_facts': sshd_probe_facts,
            'sshd_algorithm_problems': sshd_algorithm_problems,
            'sshd_config_mismatch': sshd_config_mismatch,
            'sshd_input_problems': sshd_input_problems,
            'sshd_moduli_without_small': sshd_moduli_without_small,
        }
