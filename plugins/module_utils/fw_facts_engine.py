# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the fw_facts module: HCA firmware from sysfs and the flash (mstflint/flint), the OFED version,
kernel module versions, Fabric Manager (version, service state, log) and mlxup, as the ``firmware`` facts.

Every command runs through the collection's runner (``_runner``); the output is read by the parsers of
``mlx_fw``, ``ofed_info``, ``fabricmanager`` and ``sysfs_ib``. Every tool is optional: one that is not found
gives null values, one that fails (or cannot be started) adds ``<command line> failed (rc=N) - <why>`` to the
facts' ``errors`` and a warning. The module passed in needs ``warn``, ``fail_json`` and ``get_bin_path``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils.fabricmanager import parse_log, parse_version
from ansible_collections.gpufleet.cluster.plugins.module_utils.mlx_fw import (
    adapter_key, has_flash, parse_flint_query, parse_mlxup_query)
from ansible_collections.gpufleet.cluster.plugins.module_utils.ofed_info import parse_ofed_info_short
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_ib import collect, read_text

LOG_TAIL_BYTES = 1024 * 1024
HCA_KEYS = ('fw_ver', 'board_id', 'hca_type', 'pci_address', 'sys_image_guid', 'node_guid', 'driver')
TOOL_OPTIONS = ('mstflint_path', 'flint_path', 'mlxup_path', 'ofed_info_path', 'fabricmanager_path')


class Probe(object):
    """The tools found (``tools``: name to path or None) and the failed commands (``errors``) of one gather."""

    def __init__(self, module):
        self.module = module
        self.errors = []
        self.tools = {}

    def find(self, name, path):
        """``path`` (a name or a path, empty to skip) through ``_runner.find``, recorded under ``name``."""
        self.tools[name] = runner.find(self.module, path) if path else None
        return self.tools[name]

    def error(self, msg):
        self.errors.append(msg)
        self.module.warn(msg)

    def output(self, argv, check_rc=True):
        """stdout of ``argv`` (text, bytes that are not UTF-8 as U+FFFD), or None when it failed (an error)."""
        res = runner.run(argv)
        rc, out, err = res['rc'], res['stdout'], res['stderr']
        if res['start_error']:  # found and executable, but the OS cannot start it
            err = 'cannot be started: %s' % res['start_error']
        elif not check_rc or rc == 0:
            return out
        detail = (err.strip() or out.strip() or 'no output').splitlines()[-1]
        self.error('%s failed (rc=%d) - %s' % (res['cmd'], rc, detail))
        return None


def hca_facts(probe, devices, flash_tool):
    """sysfs keys of every RDMA device plus its flash query (once per adapter, virtual functions skipped)."""
    hca = {}
    flashed = {}
    for name in sorted(devices):
        dev = devices[name]
        entry = dict((k, dev[k]) for k in HCA_KEYS if k in dev)
        hca[name] = entry
        if not flash_tool or not has_flash(name, dev):
            continue
        pci = dev['pci_address']
        card = adapter_key(dev)
        if card not in flashed:
            out = probe.output([flash_tool, '-d', pci, 'q'])
            flashed[card] = parse_flint_query(out) if out is not None else None
        entry['flash_tool'] = '%s -d %s q' % (flash_tool, pci)
        if flashed[card] is not None:
            entry['flash'] = flashed[card]
    return hca


def read_log_tail(path):
    """The last LOG_TAIL_BYTES of ``path`` as text (bytes that are not UTF-8 as U+FFFD)."""
    with open(path, 'rb') as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - LOG_TAIL_BYTES))
        return f.read().decode('utf-8', 'replace')


def fabricmanager_facts(probe, params):
    facts = {'version': None, 'service_state': None, 'log': None}
    exe = probe.find('nv-fabricmanager', params['fabricmanager_path'])
    if exe:
        out = probe.output([exe, '--version'])
        if out is not None:
            facts['version'] = parse_version(out)
    if params['fabricmanager_service']:
        systemctl = probe.find('systemctl', 'systemctl')
        if systemctl:
            # is-active: rc 0 active, 3 inactive/failed/unknown unit; stdout says which
            out = probe.output([systemctl, 'is-active', params['fabricmanager_service']], check_rc=False)
            state = (out or '').strip().splitlines()
            facts['service_state'] = state[0] if state else None
    log = params['fabricmanager_log']
    if log and os.path.isfile(log):
        try:
            facts['log'] = parse_log(read_log_tail(log))
        except (IOError, OSError) as exc:
            probe.module.warn('cannot read %s: %s' % (log, exc))
    return facts


def kernel_module_versions(root, names):
    """``/sys/module/<name>/version`` of each module in ``names`` that has one."""
    modules = {}
    for name in names:
        version = read_text(os.path.join(root, 'sys', 'module', name, 'version'))
        if version:
            modules[name] = version
    return modules


def input_errors(p):
    """Messages naming the option for every bad input (empty list when all is fine); nothing runs."""
    errors = ac.nul_errors(p)
    if errors:
        return errors
    errors += ac.root_dir_errors('sysfs_root', p['sysfs_root'])
    for opt in TOOL_OPTIONS:
        if p[opt]:
            errors += ac.executable_errors(opt, p[opt])
    for i, name in enumerate(p['kernel_modules']):
        if not re.match(r'^[A-Za-z0-9_-]+$', name or ''):
            errors.append('kernel_modules[%d] must be a kernel module name (letters, digits, "_" and "-"), got %r'
                          % (i, name))
    service = p['fabricmanager_service']
    if service and (service.startswith('-') or not re.match(r'^[A-Za-z0-9@._:\\-]+$', service)):
        errors.append('fabricmanager_service must be a systemd unit name (or an empty string to skip), got %r'
                      % p['fabricmanager_service'])
    log = p['fabricmanager_log']
    if log and os.path.lexists(log) and not os.path.isfile(log):
        errors.append('fabricmanager_log %s is %s; fabricmanager_log must be a log file (or an empty string to skip)'
                      % (log, 'a directory' if os.path.isdir(log) else 'not a regular file'))
    return errors


def gather(module, p, devices=None):
    """The ``firmware`` facts for the module's params ``p`` (see the module's RETURN). ``devices``: the RDMA
    devices ``sysfs_ib.collect`` read from ``p['sysfs_root']`` already (node_facts reads them once for both)."""
    probe = Probe(module)
    flash_tool = None
    if p['query_flash']:
        flash_tool = probe.find('mstflint', p['mstflint_path']) or probe.find('flint', p['flint_path'])
    if devices is None:
        devices = collect(p['sysfs_root'])
    facts = {'hca': hca_facts(probe, devices, flash_tool)}

    facts['ofed'] = None
    ofed = probe.find('ofed_info', p['ofed_info_path'])
    if ofed:
        out = probe.output([ofed, '-s'])
        if out is not None:
            facts['ofed'] = parse_ofed_info_short(out)

    facts['kernel_modules'] = kernel_module_versions(p['sysfs_root'], p['kernel_modules'])
    facts['fabricmanager'] = fabricmanager_facts(probe, p)

    facts['mlxup'] = None
    if p['mlxup_path']:
        mlxup = probe.find('mlxup', p['mlxup_path'])
        if mlxup:
            out = probe.output([mlxup, '--query'])
            if out is not None:
                facts['mlxup'] = parse_mlxup_query(out)

    facts['tools'] = probe.tools
    facts['errors'] = probe.errors
    return facts
