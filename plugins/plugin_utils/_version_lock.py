# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

The version lock: one manifest per hardware profile (inventory ``gpufleet_lock``) pinning the kernel,
GPU driver, Fabric Manager, OFED/DOCA, container toolkit, HCA firmware, VBIOS and the acceptance tools (DCGM,
nccl-tests, gpu-burn, CUDA samples / nvbandwidth, perftest, Open MPI). The provision roles install exactly
that, the checks report every node that differs, and a rollout changes it.

This module validates a manifest (``lock_errors``; given the hosts' ``rdma_stack_provider``, an OFED key
that nothing would install or check is an error too), turns it into the expectations the node checks use
(``lock_expectations``) and compares installed package versions with it (``package_deviations``).
It owns the Fabric Manager rule - Fabric Manager is exactly the driver's version - for the lock
(``lock_errors``), for the version a lock implies (``lock_fabricmanager``) and for any two versions a role
holds (``fabricmanager_errors``).
Pure functions: used by the ``version_lock_*`` filters on the controller before any host is touched,
and by the node checks (``hwcheck``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_firmware_engine
from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _compat

# A package version without epoch and Debian revision or with them: 2.13.11, 1:3.3.9, 4.1.4-3+b1.
BENCH_VERSION_RE = r'^(\d+:)?\d[\w.+~]*(-[\w.+~]+)*$'
# key -> (regular expression, what is allowed, in words)
LOCK_FORMATS = {
    'kernel': (r'^\d+\.\d+(\.\d+)?[-+.~\w]*$', 'a kernel release as uname -r prints it, e.g. 5.15.0-125-generic'),
    'nvidia_driver': (r'^\d{3}\.\d{2,3}(\.\d{2,3})?$', 'a driver version BRANCH.MINOR[.PATCH], e.g. 550.127.08'),
    'nvidia_driver_branch': (r'^\d{3}$', 'a three-digit driver branch, e.g. "550" (quote it in YAML)'),
    'fabricmanager': (r'^\d{3}\.\d{2,3}(\.\d{2,3})?$', 'a Fabric Manager version, equal to nvidia_driver'),
    'doca_ofed': (r'^\d+\.\d+(\.\d+)?(-[\w.]+)?$', 'a DOCA release, e.g. 2.9.1'),
    'mlnx_ofed': (r'^\d+\.\d+-\d+\.\d+\.\d+(\.\d+)?$', 'an MLNX_OFED version as ofed_info -s prints it, e.g. 5.8-1.0.1.1'),
    'ofed_version': (r'^[\w.-]+$', 'the exact ofed_info -s version, e.g. 24.10-1.1.4'),
    'container_toolkit': (r'^\d+\.\d+\.\d+(-[\w.~+]+)?$', 'an nvidia-container-toolkit version, e.g. 1.17.3'),
    'containerd': (r'^(\d+:)?\d+\.\d+(\.\d+)?([-~+][\w.~+-]*)?$',
                   'a containerd version, e.g. 1.7.24 (checked against the CDI rule; nothing installs it)'),
    'hca_firmware': (r'^\d+\.\d+\.\d+$',
                     'an HCA firmware version MAJOR.MINOR.SUBMINOR (e.g. 28.42.1000), or a dict board id (PSID) -> version'),
    'vbios': (gpu_firmware_engine.VBIOS_RE,
              'a VBIOS version like 96.00.99.00.01, or a dict GPU product name -> version'),
    # The acceptance tools (roles/bench_tools): a package version with or without its Debian revision and epoch.
    'dcgm': (r'^(\d+:)?[34]\.\d+\.\d+(-[\w.~+]+)?$', 'a DCGM 3.x or 4.x version, e.g. 3.3.9 or 1:4.1.1-1'),
    'nccl_tests': (BENCH_VERSION_RE, 'an nccl-tests package version, e.g. 2.13.11 or 2.13.11-1'),
    'gpu_burn': (BENCH_VERSION_RE, 'a gpu-burn package version, e.g. 1.1 or 1.1-1'),
    'cuda_samples': (BENCH_VERSION_RE, 'a CUDA samples (p2pBandwidthLatencyTest) package version, e.g. 12.8'),
    'nvbandwidth': (BENCH_VERSION_RE, 'an nvbandwidth package version, e.g. 0.7'),
    'perftest': (BENCH_VERSION_RE, 'a perftest package version, e.g. 4.5 or 4.5-1'),
    'openmpi': (BENCH_VERSION_RE, 'an Open MPI package version, e.g. 4.1.4 or 4.1.4-3'),
    # NVIDIA's dcgm-exporter (roles/monitoring_node): DCGM release - exporter release, e.g. 4.1.1-4.0.4.
    'dcgm_exporter': (r'^(\d+:)?\d+\.\d+\.\d+-\d+\.\d+\.\d+(-[\w.~+]+)?$',
                      'a dcgm-exporter version DCGM-EXPORTER, e.g. 4.1.1-4.0.4 or 3.3.9-3.6.1-1'),
}
# Keys whose value may be a dict (per board id / GPU product) instead of one version.
PER_DEVICE_KEYS = ('hca_firmware', 'vbios')
LOCK_KEYS = tuple(sorted(set(LOCK_FORMATS) | {'packages', 'cuda'}))

# Packages whose version a lock key pins, by key (the same name on every supported distribution).
KEY_PACKAGES = {
    'container_toolkit': ('nvidia-container-toolkit', 'nvidia-container-toolkit-base'),
}
# rdma_stack_provider (roles/rdma_stack) -> what it installs, in words.
RDMA_PROVIDERS = {
    'distro': "installs the distribution's rdma-core, which has no ofed_info",
    'doca_ofed': 'installs DOCA-OFED (doca-ofed)',
    'mlnx_ofed': 'installs MLNX_OFED (mlnx-ofed-all)',
    'none': 'installs nothing (the node image brings the stack)',
}
# OFED keys of the manifest -> (providers under which something installs or checks the key, what would).
# doca_ofed is installed (and held) by rdma_stack with provider doca_ofed and read by nothing else (a DOCA
# release is not what ofed_info -s prints); mlnx_ofed and ofed_version are compared with ofed_info -s by
# the node checks, which needs DOCA-OFED or MLNX_OFED on the node.
OFED_KEY_PROVIDERS = {
    'doca_ofed': (('doca_ofed',),
                  'rdma_stack_provider doca_ofed installs and holds it (with rdma_stack_apt_repo pointing at your '
                  'DOCA mirror); the node checks do not read it (to check the ofed_info -s version of a DOCA-OFED '
                  'the node image brings, pin ofed_version)'),
    'mlnx_ofed': (('mlnx_ofed', 'none'),
                  'rdma_stack_provider mlnx_ofed installs MLNX_OFED (with rdma_stack_apt_repo pointing at your '
                  'mirror), or none when the node image has it; the node checks compare it with ofed_info -s '
                  '(with DOCA-OFED pin doca_ofed, and ofed_version for the ofed_info -s check)'),
    'ofed_version': (('doca_ofed', 'mlnx_ofed', 'none'),
                     'rdma_stack_provider doca_ofed or mlnx_ofed installs an OFED that has ofed_info (or none when '
                     'the node image has one); the node checks compare it with ofed_info -s'),
}
PACKAGE_NAME_RE = r'^[a-z0-9][a-z0-9+._-]*$'
PACKAGE_VERSION_RE = r'^(\d+:)?[0-9][\w.+~:-]*$'
# Why Fabric Manager must be the driver's version exactly (the end of every message of the rule).
FABRICMANAGER_RULE = 'Fabric Manager refuses to start against another driver version'


def _text(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    return value if isinstance(value, str) else None


def lock_errors(lock, name='gpufleet_lock', provider=None, cdi=False):
    """Every problem of the manifest ``lock`` as a list of messages naming ``name.key``; empty when usable.
    ``None`` values mean "not pinned" and are allowed. ``provider`` is the ``rdma_stack_provider`` of the
    profile's hosts (``none`` where rdma_stack does not run): an OFED key that nothing installs or checks
    under it is an error. ``None`` leaves that rule out. The compatibility rules between pinned versions
    (``_compat``: CUDA against the driver; with ``cdi``, the container toolkit and containerd) run on the keys
    whose format is right."""
    errors = _provider_errors(provider)
    if lock is None:
        return errors
    if not isinstance(lock, dict):
        return errors + ['%s must be a dict of pinned versions (keys: %s), got %s'
                         % (name, ', '.join(LOCK_KEYS), type(lock).__name__)]
    bad = set()
    for key in sorted(lock, key=str):
        value = lock[key]
        before = len(errors)
        errors.extend(_key_errors(name, key, value))
        if len(errors) > before:
            bad.add(key)
    good = dict((k, v) for k, v in lock.items() if k not in bad)
    errors.extend(_cross_errors(name, good, bad))
    errors.extend(_compat.compat_errors(good, name, cdi))
    if isinstance(provider, str) and provider in RDMA_PROVIDERS:
        errors.extend(_unused_key_errors(name, good, provider))
    return errors


def _provider_errors(provider):
    if provider is None or (isinstance(provider, str) and provider in RDMA_PROVIDERS):
        return []
    return ['rdma_stack_provider must be one of %s (got %r)' % (', '.join(sorted(RDMA_PROVIDERS)), provider)]


def _unused_key_errors(name, lock, provider):
    """Pinned OFED keys that nothing installs or checks under ``provider``."""
    errors = []
    for key in sorted(OFED_KEY_PROVIDERS):
        if lock.get(key) is None:
            continue
        providers, which = OFED_KEY_PROVIDERS[key]
        if provider not in providers:
            errors.append('%s.%s = %s is pinned, but rdma_stack_provider %s %s: %s. Set that provider (and its '
                          'mirror) or remove the key' % (name, key, lock[key], provider, RDMA_PROVIDERS[provider], which))
    return errors


def _key_errors(name, key, value):
    """Format problems of one key of the manifest."""
    if key not in LOCK_KEYS:
        return ['%s.%s is not a known key (allowed: %s)' % (name, key, ', '.join(LOCK_KEYS))]
    if value is None:
        return []
    if key == 'packages':
        return package_errors(value, '%s.packages' % name)
    if key == 'cuda':
        return _compat.cuda_format_errors(name, value)
    pattern, allowed = LOCK_FORMATS[key]
    if key in PER_DEVICE_KEYS and isinstance(value, dict):
        if not value:
            return ['%s.%s: an empty dict pins nothing; use null or %s' % (name, key, allowed)]
        return ['%s.%s[%s] = %r is not %s' % (name, key, dev, ver, allowed)
                for dev, ver in sorted(value.items(), key=lambda kv: str(kv[0]))
                if _text(ver) is None or not re.match(pattern, _text(ver))]
    text = _text(value)
    if text is None or not re.match(pattern, text):
        return ['%s.%s = %r is not %s' % (name, key, value, allowed)]
    return []


def _cross_errors(name, lock, bad):
    """Problems between keys (only keys whose format is right are in ``lock``; ``bad`` are the others)."""
    errors = []
    driver = _text(lock.get('nvidia_driver'))
    branch = _text(lock.get('nvidia_driver_branch'))
    fm = _text(lock.get('fabricmanager'))
    if driver and branch and driver.split('.')[0] != branch:
        errors.append('%s.nvidia_driver_branch = %s does not match %s.nvidia_driver = %s (branch %s)'
                      % (name, branch, name, driver, driver.split('.')[0]))
    if fm and driver and fm != driver:
        errors.append(_fabricmanager_mismatch('%s.fabricmanager = %s' % (name, fm), '%s.nvidia_driver = %s' % (name, driver)))
    if fm and not driver and 'nvidia_driver' not in bad:
        errors.append('%s.fabricmanager is pinned but %s.nvidia_driver is not: pin both, to the same version' % (name, name))
    if lock.get('doca_ofed') is not None and lock.get('mlnx_ofed') is not None:
        errors.append('%s: pin either doca_ofed or mlnx_ofed, not both (DOCA-OFED replaces MLNX_OFED)' % name)
    return errors


def _fabricmanager_mismatch(fabricmanager, driver):
    """The message of the rule; ``fabricmanager`` and ``driver`` name each side with its value."""
    return '%s must equal %s exactly: %s' % (fabricmanager, driver, FABRICMANAGER_RULE)


def lock_fabricmanager(lock):
    """The Fabric Manager version the manifest ``lock`` pins: its ``fabricmanager``, else its ``nvidia_driver``
    (Fabric Manager is always exactly the driver's version); ``''`` when it pins neither or is not a dict."""
    if not isinstance(lock, dict):
        return ''
    return _text(lock.get('fabricmanager')) or _text(lock.get('nvidia_driver')) or ''


def fabricmanager_errors(fabricmanager, driver, fabricmanager_name='fabricmanager_version',
                         driver_name='nvidia_driver_version'):
    """The rule for two versions a role holds: ``[]`` when ``fabricmanager`` equals ``driver`` exactly, or when
    either is empty or None (not pinned: nothing to compare); else one message naming both (``fabricmanager_name
    fabricmanager must equal driver_name driver exactly: ...``)."""
    fm, drv = _text(fabricmanager), _text(driver)
    if not fm or not drv or fm == drv:
        return []
    return [_fabricmanager_mismatch('%s %s' % (fabricmanager_name, fm), '%s %s' % (driver_name, drv))]


def package_errors(packages, where):
    if not isinstance(packages, dict):
        return ['%s must be a dict package name -> version, got %s' % (where, type(packages).__name__)]
    errors = []
    for pkg, ver in sorted(packages.items(), key=lambda kv: str(kv[0])):
        if not isinstance(pkg, str) or not re.match(PACKAGE_NAME_RE, pkg):
            errors.append('%s: %r is not a package name (lower case letters, digits, + . - _)' % (where, pkg))
            continue
        text = _text(ver)
        if text is None or not re.match(PACKAGE_VERSION_RE, text):
            errors.append('%s.%s = %r is not a package version (e.g. 1.17.3 or 1.17.3-1)' % (where, pkg, ver))
    return errors


def lock_packages(lock):
    """Package name -> pinned version from the manifest: the ``packages`` dict plus the packages a key pins
    (``container_toolkit``)."""
    lock = lock or {}
    out = {}
    for key, names in KEY_PACKAGES.items():
        value = _text(lock.get(key))
        if value:
            for pkg in names:
                out[pkg] = value
    for pkg, ver in sorted((lock.get('packages') or {}).items()):
        if _text(ver):
            out[pkg] = _text(ver)
    return out


def lock_expectations(lock):
    """The node-check expectations (``hwcheck.EXPECTED_KEYS``) the manifest implies; keys it does not pin
    are left out."""
    lock = lock or {}
    exp = {}
    pairs = (('kernel', 'kernel'), ('nvidia_driver', 'driver_version'), ('nvidia_driver_branch', 'driver_branch'),
             ('fabricmanager', 'fabricmanager_version'), ('hca_firmware', 'hca_firmware'), ('vbios', 'vbios'),
             ('ofed_version', 'ofed_version'), ('mlnx_ofed', 'ofed_version'))
    for key, item in pairs:
        if lock.get(key) is not None:
            exp[item] = lock[key] if isinstance(lock[key], dict) else str(lock[key])
    packages = lock_packages(lock)
    if packages:
        exp['packages'] = packages
    return exp


def upstream_version(version):
    """Debian/RPM version without epoch and packaging revision: ``1:550.127.08-0ubuntu1`` -> ``550.127.08``."""
    text = str(version or '')
    if ':' in text:
        text = text.split(':', 1)[1]
    return text.rsplit('-', 1)[0] if '-' in text else text


def version_matches(pinned, installed):
    """A pin without a revision matches any packaging revision of that upstream version; a pin with one
    (``1.17.3-1``) must match exactly (epoch ignored)."""
    pinned, installed = str(pinned), str(installed or '')
    strip_epoch = installed.split(':', 1)[1] if ':' in installed else installed
    pinned_no_epoch = pinned.split(':', 1)[1] if ':' in pinned else pinned
    if '-' in pinned_no_epoch:
        return pinned_no_epoch == strip_epoch
    return upstream_version(installed) == pinned_no_epoch


def package_deviations(pinned, installed):
    """Deviations of ``installed`` (``ansible.builtin.package_facts`` ``packages``: name -> list of
    ``{version, release, ...}``) from ``pinned`` (name -> version). Returns a list of
    ``(package, expected, found)``; found is None when the package is not installed."""
    out = []
    installed = installed or {}
    for pkg in sorted(pinned):
        want = str(pinned[pkg])
        entries = installed.get(pkg) or []
        versions = []
        for entry in entries:
            ver = str(entry.get('version', ''))
            if entry.get('release'):
                ver = '%s-%s' % (ver, entry['release'])
            if entry.get('epoch') not in (None, '', 0, '0'):
                ver = '%s:%s' % (entry['epoch'], ver)
            versions.append(ver)
        if not versions:
            out.append((pkg, want, None))
        elif not any(version_matches(want, v) for v in versions):
            out.append((pkg, want, ', '.join(versions)))
    return out
