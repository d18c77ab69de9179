# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter sysctl_tuning_plan (plugins/filter/sysctl_tuning.py): roles/sysctl_tuning calls ansible.posix.sysctl only
for the keys this filter names. It must never leave out a key the module would change: every case below is run
through the module's own logic (ansible.posix's SysctlModule, in check mode, its sysctl call answered from the case)
and the filter must name exactly the keys the module reports changed. Files and kernel values are HAND-MADE edge
cases, plus this machine's real ``sysctl -e`` output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.ansible.posix.plugins.modules import sysctl as posix_sysctl
from ansible_collections.gpufleet.cluster.plugins.filter.sysctl_tuning import sysctl_tuning_plan


class FakeModule(object):
    """What SysctlModule uses of AnsibleModule; the kernel's values come from ``kernel`` (None: key missing)."""

    check_mode = True

    def __init__(self, params, kernel):
        self.params = params
        self.kernel = kernel

    def get_bin_path(self, name, required=False):
        return '/sbin/' + name

    def run_command(self, cmd, environ_update=None):
        key = cmd.split()[-1]
        if self.kernel.get(key) is None:
            return 255, '', 'sysctl: cannot stat /proc/sys/%s: No such file or directory' % key.replace('.', '/')
        return 0, self.kernel[key] + '\n', ''

    def fail_json(self, **kw):
        raise AssertionError(kw)


def module_changes(tmp_path, wanted, kernel, file_text, not_applied=()):
    """The keys ansible.posix.sysctl (state present, reload false) reports changed, as the role calls it."""
    path = tmp_path / 'sysctl.conf'
    if file_text is None:
        if path.exists():
            path.unlink()
    else:
        path.write_text(file_text)
    changed = set()
    for key, value in wanted.items():
        params = {'name': key, 'value': ' '.join(str(value).split()), 'state': 'present', 'reload': False,
                  'sysctl_set': key not in not_applied, 'sysctl_file': str(path), 'ignoreerrors': False}
        if posix_sysctl.SysctlModule(FakeModule(params, kernel)).changed:
            changed.add(key)
    return changed


def kernel_output(kernel):
    """``sysctl -e KEY...`` as procps prints it: ``key = value`` per key the kernel has."""
    return '\n'.join('%s = %s' % (k, v) for k, v in sorted(kernel.items()) if v is not None)


WANTED = {'net.core.rmem_max': 67108864, 'net.ipv4.tcp_rmem': '4096 87380 67108864', 'net.ipv4.conf.all.rp_filter': 2}
CONVERGED_FILE = 'net.core.rmem_max=67108864\nnet.ipv4.tcp_rmem=4096 87380 67108864\nnet.ipv4.conf.all.rp_filter=2\n'
CONVERGED_KERNEL = {'net.core.rmem_max': '67108864', 'net.ipv4.tcp_rmem': '4096\t87380\t67108864',
                    'net.ipv4.conf.all.rp_filter': '2'}

CASES = {
    'converged': (CONVERGED_FILE, CONVERGED_KERNEL, ()),
    'fresh host: no file': (None, CONVERGED_KERNEL, ()),
    'empty file': ('', CONVERGED_KERNEL, ()),
    'kernel differs': (CONVERGED_FILE, dict(CONVERGED_KERNEL, **{'net.core.rmem_max': '212992'}), ()),
    'kernel lacks a key': (CONVERGED_FILE, dict(CONVERGED_KERNEL, **{'net.ipv4.conf.all.rp_filter': None}), ()),
    'file differs': (CONVERGED_FILE.replace('=2', '=1'), CONVERGED_KERNEL, ()),
    'file spaced and commented': ('# hand edit\n net.core.rmem_max = 67108864 \n; x\nnet.ipv4.tcp_rmem =4096 87380 67108864\n'
                                  'net.ipv4.conf.all.rp_filter= 2\n', CONVERGED_KERNEL, ()),
    'file tabs inside a value': (CONVERGED_FILE.replace('4096 87380', '4096\t87380'), CONVERGED_KERNEL, ()),
    'file: the last line of a key wins': (CONVERGED_FILE + 'net.core.rmem_max=1\n', CONVERGED_KERNEL, ()),
    'file: an earlier wrong line, the last right': ('net.core.rmem_max=1\n' + CONVERGED_FILE, CONVERGED_KERNEL, ()),
    'container: kernel value not applied': (CONVERGED_FILE, dict(CONVERGED_KERNEL, **{'net.core.rmem_max': None}),
                                            ('net.core.rmem_max',)),
    'container: file differs for a not-applied key': (CONVERGED_FILE.replace('67108864\nnet.ipv4', '1\nnet.ipv4'),
                                                      CONVERGED_KERNEL, ('net.core.rmem_max',)),
}


@pytest.mark.parametrize('name', sorted(CASES))
def test_names_exactly_what_the_module_changes(tmp_path, name):
    file_text, kernel, not_applied = CASES[name]
    plan = sysctl_tuning_plan(WANTED, kernel_output(kernel), file_text or '', list(not_applied))
    assert set(plan['set']) == module_changes(tmp_path, WANTED, kernel, file_text, not_applied), name
    assert plan['set'] == dict((k, WANTED[k]) for k in plan['set'])


def test_converged_means_no_module_call():
    assert sysctl_tuning_plan(WANTED, kernel_output(CONVERGED_KERNEL), CONVERGED_FILE) == {'set': {}, 'remove': []}


def test_boolean_words_are_written_as_the_module_writes_them(tmp_path):
    wanted = {'net.ipv4.ip_forward': 'yes'}
    kernel = {'net.ipv4.ip_forward': '1'}
    for text in ('net.ipv4.ip_forward=1\n', 'net.ipv4.ip_forward=yes\n'):
        plan = sysctl_tuning_plan(wanted, kernel_output(kernel), text)
        assert set(plan['set']) == module_changes(tmp_path, wanted, kernel, text)


def test_absent_keys_only_when_the_file_has_them():
    plan = sysctl_tuning_plan({}, '', 'net.core.somaxconn=4096\n# net.core.rmem_max=1\n',
                              absent=['net.core.rmem_max', 'net.core.somaxconn'])
    assert plan == {'set': {}, 'remove': ['net.core.somaxconn']}


def test_unreadable_inputs_count_as_work():
    # the sysctl read failed (empty output) and the file could not be read: every key goes to the module
    assert set(sysctl_tuning_plan(WANTED, '', '')['set']) == set(WANTED)


@pytest.mark.parametrize('args', [('not a dict', '', ''), (WANTED, 5, ''), (WANTED, '', {'a': 1})])
def test_bad_input_is_refused(args):
    with pytest.raises(AnsibleFilterError, match='sysctl_tuning_plan'):
        sysctl_tuning_plan(*args)


@pytest.mark.skipif(not shutil.which('sysctl') or not os.path.isdir('/proc/sys/net/core'), reason='no sysctl here')
def test_this_machines_real_sysctl_output():
    keys = ['net.core.rmem_max', 'net.core.somaxconn', 'net.ipv4.tcp_rmem']
    out = subprocess.run(['sysctl', '-e', '--'] + keys, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    now = dict((k, subprocess.run(['sysctl', '-n', k], stdout=subprocess.PIPE, universal_newlines=True,
                                  check=True).stdout.strip()) for k in keys)
    wanted = dict((k, ' '.join(v.split())) for k, v in now.items())
    text = ''.join('%s=%s\n' % kv for kv in wanted.items())
    assert sysctl_tuning_plan(wanted, out, text)['set'] == {}
    wanted['net.core.somaxconn'] = str(int(now['net.core.somaxconn']) + 1)
    assert list(sysctl_tuning_plan(wanted, out, text)['set']) == ['net.core.somaxconn']
