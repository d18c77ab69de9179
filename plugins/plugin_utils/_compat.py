# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

Compatibility rules between the versions a profile's version lock pins, checked before anything changes
(``_version_lock.lock_errors`` calls ``compat_errors`` on the keys whose format is right). Every message names
both versions and the rule's source. Rules that are not here because no public source states them as a rule
(DOCA/OFED against the kernel, DCGM against the driver) are listed in docs/fleet-operations.md.

- CUDA against the driver: every CUDA release the profile declares (``cuda``: "12.4" or a list) needs the
  minimum driver of its major release under CUDA minor version compatibility.
- CDI: the container toolkit generates CDI specs from 1.13 on (``container_toolkit``), and containerd reads
  them from 1.7 on (``containerd``); checked when the profile uses CDI (``cdi=True``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# CUDA major release -> (minimum driver, source). The minimum driver under CUDA minor version compatibility:
# an application built with any CUDA X.y runs (with the limits that page names, e.g. no PTX JIT of a newer
# minor) on a driver of at least this version.
CUDA_MINIMUM_DRIVER = {
    11: ('450.80.02', 'NVIDIA CUDA Toolkit release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA '
                      'Minor Version Compatibility" (CUDA 11.x: >= 450.80.02)'),
    12: ('525.60.13', 'NVIDIA CUDA Toolkit release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA '
                      'Minor Version Compatibility" (CUDA 12.x: >= 525.60.13)'),
    13: ('580', 'NVIDIA CUDA Compatibility guide, "Minor Version Compatibility" table (CUDA 13.x: driver >= 580; '
                'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html)'),
}
CDI_SOURCE = ('operators\' practice for CDI on GPU nodes: nvidia-container-toolkit >= 1.13 for nvidia-ctk cdi generate, '
              'containerd >= 1.7, its first release with CDI device injection (enable_cdi)')
CDI_TOOLKIT_MINIMUM = '1.13.0'
CDI_CONTAINERD_MINIMUM = '1.7.0'

_CUDA = re.compile(r'^(\d+)\.(\d+)(\.\d+)?$')


def version_tuple(text):
    """The leading numeric fields of a version (``550.127.08`` -> (550, 127, 8); ``1.17.3-1`` -> (1, 17, 3));
    None when it does not start with a number."""
    m = re.match(r'^(\d+(?:\.\d+)*)', str(text))
    return tuple(int(f) for f in m.group(1).split('.')) if m else None


def _at_least(version, minimum):
    have, need = version_tuple(version), version_tuple(minimum)
    return have is not None and have >= need


def cuda_list(value):
    """The CUDA releases a lock's ``cuda`` declares: a string (one, or comma-separated) or a list."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else str(value).split(',')
    return [str(i).strip() for i in items if str(i).strip()]


def cuda_format_errors(name, value):
    """Format of the lock's ``cuda`` key: CUDA releases MAJOR.MINOR[.PATCH] of a major release with a known
    minimum driver."""
    if not isinstance(value, (str, list, tuple)) or isinstance(value, bool):
        return ['%s.cuda must be a CUDA release such as "12.4", or a list of them, got %r' % (name, value)]
    errors = []
    for item in cuda_list(value):
        m = _CUDA.match(item)
        if not m:
            errors.append('%s.cuda entry %r is not a CUDA release MAJOR.MINOR such as "12.4" (quote it in YAML)'
                          % (name, item))
        elif int(m.group(1)) not in CUDA_MINIMUM_DRIVER:
            errors.append('%s.cuda entry %s: no minimum driver known for CUDA %s.x (known: %s)'
                          % (name, item, m.group(1), ', '.join('%d.x' % k for k in sorted(CUDA_MINIMUM_DRIVER))))
    return errors


def compat_errors(lock, name='gpufleet_lock', cdi=False):
    """Problems between pinned versions (see the module docstring); [] when compatible or not pinned.
    ``lock`` holds only keys whose format is right."""
    errors = []
    driver = lock.get('nvidia_driver')
    for item in cuda_list(lock.get('cuda')):
        m = _CUDA.match(item)
        if not m or int(m.group(1)) not in CUDA_MINIMUM_DRIVER:
            continue
        minimum, source = CUDA_MINIMUM_DRIVER[int(m.group(1))]
        if driver and not _at_least(driver, minimum):
            errors.append('%s.cuda %s needs a driver >= %s, but %s.nvidia_driver = %s (rule: %s)'
                          % (name, item, minimum, name, driver, source))
    if cdi:
        toolkit = lock.get('container_toolkit')
        if toolkit and not _at_least(toolkit, CDI_TOOLKIT_MINIMUM):
            errors.append('%s.container_toolkit = %s cannot generate CDI specs: CDI needs nvidia-container-toolkit >= %s '
                          '(or set container_toolkit_cdi: never) (rule: %s)' % (name, toolkit, CDI_TOOLKIT_MINIMUM, CDI_SOURCE))
        containerd = lock.get('containerd')
        if containerd and not _at_least(containerd, CDI_CONTAINERD_MINIMUM):
            errors.append('%s.containerd = %s does not read CDI specs: CDI needs containerd >= %s (or set '
                          'container_toolkit_cdi: never) (rule: %s)' % (name, containerd, CDI_CONTAINERD_MINIMUM, CDI_SOURCE))
    return errors
