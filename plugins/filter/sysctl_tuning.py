# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for roles/sysctl_tuning: which keys ansible.posix.sysctl has work to do for.

The role sets and persists each key with ansible.posix.sysctl, one task call per key (about half a second each on
a lab host). On a converged host every call finds nothing to do, so the role first reads the kernel's values (one
``sysctl -e`` call) and the file (one slurp) and calls the module only for the keys this filter names. The rule is
the module's own (ansible.posix.sysctl 1.x ``SysctlModule.process``): the file's value is the text after the
first ``=`` of the key's last line, stripped, compared as a string with the wanted value (booleans as 1/0);
the kernel's value is compared token by token. Anything this filter cannot read counts as work to do, so a key is
left out only when the module would report ``ok`` for it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE


def _module_value(value):
    """The value as ansible.posix.sysctl writes it (its _parse_value)."""
    if isinstance(value, bool):
        return '1' if value else '0'
    value = str(value)
    if value.lower() in BOOLEANS_TRUE:
        return '1'
    if value.lower() in BOOLEANS_FALSE:
        return '0'
    return value.strip()


def _file_values(text):
    """key -> value of a sysctl.d file as the module reads it (the last line of a key wins)."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(('#', ';')) or '=' not in line:
            continue
        key, value = line.split('=', 1)
        values[key.strip()] = value.strip()
    return values


def _kernel_values(text):
    """key -> value from ``sysctl -e KEY...`` (lines ``key = value``; a key the kernel lacks has no line)."""
    values = {}
    for line in text.splitlines():
        if ' = ' in line:
            key, value = line.split(' = ', 1)
            values[key.strip()] = value
        elif line.rstrip().endswith(' ='):  # an empty value
            values[line.rstrip()[:-2].strip()] = ''
    return values


def _text(value, what):
    if value is None:
        return ''
    if isinstance(value, (list, tuple)):
        return '\n'.join(str(line) for line in value)
    if not isinstance(value, str):
        raise AnsibleFilterError('sysctl_tuning_plan: %s must be text, got %s' % (what, type(value).__name__))
    return value


def sysctl_tuning_plan(wanted, kernel_output, file_text, not_applied=None, absent=None):
    """{'set': {key: value} the module must be called for, 'remove': [keys of ``absent`` the file still has]}."""
    if not isinstance(wanted, dict):
        raise AnsibleFilterError('sysctl_tuning_plan: the wanted sysctls must be a dict, got %s' % type(wanted).__name__)
    not_applied = set(not_applied or [])
    kernel = _kernel_values(_text(kernel_output, 'the sysctl -e output'))
    persisted = _file_values(_text(file_text, 'the file content'))
    todo = {}
    for key, value in wanted.items():
        want = _module_value(value)
        if persisted.get(key) != want:
            todo[key] = value
        elif key not in not_applied and (key not in kernel or kernel[key].split() != want.split()):
            todo[key] = value
    remove = sorted(k for k in (absent or []) if k in persisted)
    return {'set': todo, 'remove': remove}


class FilterModule(object):
    def filters(self):
        return {'sysctl_tuning_plan': sysctl_tuning_plan}
