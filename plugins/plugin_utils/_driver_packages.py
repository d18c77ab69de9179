# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

What the package database says about the version-pinned packages (roles nvidia_driver and fabricmanager, and
rdma_stack's packages with its pinned OFED meta-package): the rows of
``dpkg-query -W -f '${binary:Package}\\t${Version}\\t${db:Status-Abbrev}\\n' NAME...`` (or ``${Package}``, the name
without the architecture qualifier a Multi-Arch: same package gets) reduced to the sets the install tasks act on,
and the installed driver version from the one-package probe (``dpkg-query -W -f '${db:Status-Abbrev}${Version}'``
or ``rpm -q --qf 'ii %{VERSION}'``). Pure functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# ${db:Status-Abbrev} is three characters: the wanted selection (u)nknown (i)nstall (h)old (r)emove (p)urge,
# the package state (n)ot-installed (c)onfig-files (H)alf-installed (U)npacked (F) half-configured
# (W)/(t) triggers (i)nstalled, and an error flag (a space, or R for reinstall-required).
_INSTALLED_RE = re.compile(r'^[ih]i')      # selected for install or held, and installed
_HELD_RE = re.compile(r'^h')               # on hold, whatever its state
_NOT_INSTALLED_RE = re.compile(r'^.n')     # dpkg knows the name only (e.g. from the available list)
# A driver-versioned package (NNN.x, after an optional epoch): the driver's own packages and fabric manager,
# not e.g. nvidia-container-toolkit (1.17.x) that a glob such as nvidia-* also lists.
_DRIVER_VERSION_RE = re.compile(r'^([0-9]+:)?[0-9]{3}[.][0-9]+')
_EPOCH_RE = re.compile(r'^[0-9]+:')
_REVISION_RE = re.compile(r'-.*$')


class PackageStateError(TypeError):
    """The arguments are not of the shape the filters need; the message says which."""


def _lines(output):
    """``stdout_lines`` (a list) or ``stdout`` (a string); ``None`` is no output."""
    if output is None:
        return []
    if isinstance(output, str):
        return output.splitlines()
    if isinstance(output, (list, tuple)):
        return [str(line) for line in output]
    raise PackageStateError('the dpkg-query output must be its stdout_lines (a list) or its stdout (a string), '
                            'got %s' % type(output).__name__)


def _names(value, what):
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise PackageStateError('%s must be a list of package names, got %r' % (what, value))
    return [str(name) for name in value]


def _unique(names):
    out = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


def dpkg_rows(output):
    """``(name, version, status)`` for each line of ``${binary:Package}\\t${Version}\\t${db:Status-Abbrev}``
    output; other lines (fewer than three tab-separated fields) are left out."""
    rows = []
    for line in _lines(output):
        fields = line.split('\t')
        if len(fields) >= 3:
            rows.append((fields[0], fields[1], fields[2]))
    return rows


def at_version(debian_version, version):
    """True when a Debian version (``[epoch:]upstream-revision``) is at ``version``, whatever the epoch.

    An upstream ``version`` (no ``-``) must be the upstream part exactly, with any Debian revision
    (``1:550.127.08-1`` is at 550.127.08, ``550.127.08.1-1`` and ``550.127.08`` without a revision are not) - what
    apt selects for ``NAME=550.127.08-*``. A ``version`` with its revision (``2.9.1-1``, as ``rdma_stack_ofed_version``
    may give it for apt's ``NAME=2.9.1-1``) must be the whole Debian version (``2.9.1-1gpufleet1`` is not at it)."""
    version = str(version)
    end = '$' if '-' in version else '-'
    return re.match(r'^([0-9]+:)?' + re.escape(version) + end, debian_version or '') is not None


def package_state(output, version, versioned, unversioned=()):
    """Reduce a dpkg-query listing of the driver packages to what the install tasks act on.

    ``versioned`` are the packages that must be installed at exactly ``version`` (any epoch and Debian
    revision; or exactly that Debian version when ``version`` has a revision: ``at_version``), ``unversioned``
    the ones that only must be installed (a precompiled module package, whose version is the kernel's; the
    unpinned packages of rdma_stack). Every list keeps the order of the listing (``missing``: of the arguments),
    each name once:

    - ``installed``: selected for install or held, and installed (status ``ii``/``hi``): a held package is
      installed;
    - ``at_version``: installed at ``version``;
    - ``held``: on hold, whatever the package's state (``h..``);
    - ``held_elsewhere``: on hold at another driver version (NNN.x but not ``version``), e.g. the old branch's
      packages: released before a change;
    - ``known``: in any state but not-installed (``.n``), so ``dpkg --set-selections`` can select them;
    - ``missing``: the versioned packages not installed at ``version`` and the unversioned ones not installed;
    - ``others``: installed packages that are neither versioned nor unversioned (another branch's, or those
      a name glob of the probe added).
    """
    versioned = _names(versioned, 'the versioned packages')
    unversioned = _names(unversioned, 'the unversioned packages')
    rows = dpkg_rows(output)
    installed = [row for row in rows if _INSTALLED_RE.match(row[2])]
    held = [row for row in rows if _HELD_RE.match(row[2])]
    current = _unique(name for name, ver, dummy in installed if at_version(ver, version))
    installed_names = _unique(row[0] for row in installed)
    wanted = versioned + unversioned
    return {
        'installed': installed_names,
        'at_version': current,
        'held': _unique(row[0] for row in held),
        'held_elsewhere': _unique(name for name, ver, dummy in held
                                  if _DRIVER_VERSION_RE.match(ver) and not at_version(ver, version)),
        'known': _unique(row[0] for row in rows if not _NOT_INSTALLED_RE.match(row[2])),
        'missing': _unique([name for name in versioned if name not in current]
                           + [name for name in unversioned if name not in installed_names]),
        'others': [name for name in installed_names if name not in wanted],
    }


def installed_version(output):
    """The upstream version of the installed package from ``${db:Status-Abbrev}${Version}`` (dpkg-query) or
    ``ii %{VERSION}`` (rpm): ``ii 1:550.127.08-1`` -> ``550.127.08``; ``''`` unless the status is ``ii``/``hi``
    (not installed, removed with its config files left, half-installed, rpm's "package ... is not installed")."""
    text = output or ''
    if not isinstance(text, str):
        raise PackageStateError('the package probe output must be its stdout (a string), got %s'
                                % type(output).__name__)
    if not _INSTALLED_RE.match(text):
        return ''
    return _REVISION_RE.sub('', _EPOCH_RE.sub('', text[3:].strip()))
