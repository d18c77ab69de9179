# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of the gpu_facts module: runs ``nvidia-smi -q -x`` (and ``topo -m``) through the collection's
runner and turns the output into the ``nvidia_gpu`` facts with the parsers of ``nvidia_smi.py`` (which stay
pure: no command runs there).

Every failure ends the module through ``module.fail_json`` with the command line in the message; a
``topo -m`` that fails only leaves the topology empty, with a warning. The module passed in needs
``fail_json``, ``warn`` and ``get_bin_path`` (an AnsibleModule, or a stand-in in unit tests).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils.nvidia_smi import (
    NvidiaSmiNoDevices,
    NvidiaSmiParseError,
    gpu_topology,
    parse_query_xml,
    parse_topo_matrix,
)

NOT_FOUND_MSG = 'skipped: no GPU (nvidia-smi not found)'
_NO_DEVICES_RE = re.compile(r'^\s*No devices were found\s*$', re.IGNORECASE | re.MULTILINE)


def empty_facts():
    """The facts of a host without nvidia-smi."""
    return dict(executable=None, driver_version=None, cuda_version=None, attached_gpus=0, count=0, gpus=[],
                topology={})


def run_smi(module, argv):
    """Run nvidia-smi: ``(rc, stdout, stderr, bad_byte)``, stdout decoded as UTF-8 (nvidia-smi prints
    ASCII/UTF-8), or '' with the offset of the first byte that is not UTF-8 in ``bad_byte``; stderr decoded
    leniently. A program the OS cannot start (no #!, wrong architecture) fails the module."""
    res = runner.run(argv, binary=True)
    if res['start_error']:
        module.fail_json(msg='%s could not be started: %s; executable must be nvidia-smi'
                             % (res['cmd'], res['start_error']), cmd=res['cmd'])
    err = res['stderr'].decode('utf-8', 'replace')
    try:
        return res['rc'], res['stdout'].decode('utf-8'), err, None
    except UnicodeDecodeError as exc:
        return res['rc'], '', err, exc.start


def fail_no_devices(module, cmd, rc, out, err):
    """nvidia-smi ran (the driver answered) but sees no GPU: a fault of the host, not unreadable output."""
    module.fail_json(msg='%s: nvidia-smi found no GPU ("No devices were found", rc=%d): the NVIDIA driver answers but '
                         'no GPU is visible - a GPU fallen off the bus (see dmesg for Xid 79), a GPU not passed '
                         'through, or one bound to another driver' % (cmd, rc),
                     reason='no_devices', cmd=cmd, rc=rc, stdout=out, stderr=err)


def query(module, exe):
    """Facts from ``exe -q -x`` (the ``executable`` key set); fails the module when they cannot be read."""
    argv = [exe, '-q', '-x']
    cmd = runner.cmdline(argv)
    rc, out, err, bad_byte = run_smi(module, argv)
    if bad_byte is not None:
        module.fail_json(msg='%s printed output that is not UTF-8 text (byte %d, rc=%d); executable must be nvidia-smi, '
                             'whose -q -x output is UTF-8 XML' % (cmd, bad_byte, rc),
                         cmd=cmd, rc=rc, stderr=err)
    if rc != 0 and _NO_DEVICES_RE.search(out + '\n' + err):
        fail_no_devices(module, cmd, rc, out, err)
    if rc != 0:
        detail = (err.strip() or out.strip() or 'no output')
        module.fail_json(msg='%s failed (rc=%d): %s' % (cmd, rc, detail), cmd=cmd, rc=rc, stdout=out, stderr=err)
    try:
        facts = parse_query_xml(out)
    except NvidiaSmiNoDevices:
        fail_no_devices(module, cmd, rc, out, err)
    except NvidiaSmiParseError as exc:
        module.fail_json(msg='%s: %s' % (cmd, exc), cmd=cmd, rc=rc, stdout=out, stderr=err)
    facts['executable'] = exe
    return facts


def topology(module, exe):
    """Parsed ``exe topo -m``, or {} with a warning when it fails or prints something that is not UTF-8."""
    argv = [exe, 'topo', '-m']
    cmd = runner.cmdline(argv)
    rc, out, err, bad_byte = run_smi(module, argv)
    if bad_byte is not None:
        module.warn('%s printed output that is not UTF-8 text (byte %d); topology left empty' % (cmd, bad_byte))
        return {}
    if rc != 0:
        module.warn('%s failed (rc=%d): %s; topology left empty' % (cmd, rc, err.strip() or out.strip() or 'no output'))
        return {}
    return parse_topo_matrix(out)


def gather(module, executable, with_topology=True):
    """The module's result (``changed=False``, ``ansible_facts.nvidia_gpu``, and ``msg`` when nvidia-smi is
    not found: that is no failure, the host has no GPU)."""
    exe = runner.find(module, executable)
    if exe is None:
        return dict(changed=False, msg=NOT_FOUND_MSG, ansible_facts=dict(nvidia_gpu=empty_facts()))
    facts = query(module, exe)
    topo = topology(module, exe) if with_topology and facts['count'] else {}
    facts['topology'] = topo
    for gpu in facts['gpus']:
        gpu['topology'] = gpu_topology(topo, gpu['index'])
    return dict(changed=False, ansible_facts=dict(nvidia_gpu=facts))
