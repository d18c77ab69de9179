# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

The acceptance tools of roles/bench_tools (DCGM, gpu-burn, CUDA samples / nvbandwidth, nccl-tests, perftest,
Open MPI), installed at the versions of the version lock. Pure functions over the role's probes:

- ``apt_pin``: the APT preferences ``Pin: version`` of a lock version - the lock's own matching rule
  (``_version_lock.version_matches``: no revision = any revision, epoch ignored) written as an APT regex;
- ``package_state``: a ``dpkg-query`` listing reduced to what the install acts on;
- ``install_specs``: ``apt-cache madison`` output -> the exact ``NAME=VERSION`` to install for each pinned
  package (the newest version the mirror has that matches the lock), or a message naming what is not there;
- ``missing_tools``: the ``stat`` of every program the acceptance ladder runs -> a message per missing one,
  naming the tool, the path and the package that brings it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._driver_packages import dpkg_rows
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock import version_matches

_INSTALLED_RE = re.compile(r'^[ih]i')
_HELD_RE = re.compile(r'^h')
_NOT_INSTALLED_RE = re.compile(r'^.n')
_EPOCH_RE = re.compile(r'^[0-9]+:')


class BenchToolsError(TypeError):
    """The arguments are not of the shape the filters need; the message says which."""


def _wanted(wanted):
    if not isinstance(wanted, dict):
        raise BenchToolsError('the wanted packages must be a dict package name -> version ("" = any), got %s'
                              % type(wanted).__name__)
    return dict((str(k), '' if v is None else str(v)) for k, v in wanted.items())


def _lines(output, what):
    if output is None:
        return []
    if isinstance(output, str):
        return output.splitlines()
    if isinstance(output, (list, tuple)):
        return [str(line) for line in output]
    raise BenchToolsError('%s must be stdout_lines (a list) or stdout (a string), got %s' % (what, type(output).__name__))


def apt_pin(version):
    """``Pin: version`` value for a lock version: an APT (POSIX extended) regular expression matching what
    ``version_matches`` accepts - ``3.3.9`` matches ``3.3.9``, ``1:3.3.9`` and ``3.3.9-1``; ``4.5-1`` matches
    ``4.5-1`` and ``1:4.5-1`` only."""
    text = str(version or '').strip()
    if not text:
        raise BenchToolsError('apt_pin needs a version, got %r' % (version,))
    text = _EPOCH_RE.sub('', text)
    body = re.sub(r'([.+*?^$()\[\]{}|\\])', r'\\\1', text)
    return '/^([0-9]+:)?%s%s$/' % (body, '' if '-' in text else '(-[^-]+)?')


def package_state(output, wanted):
    """Reduce ``dpkg-query -W -f '${binary:Package}\\t${Version}\\t${db:Status-Abbrev}\\n' NAME...`` to:

    - ``installed``: name -> version of the installed packages (``ii``/``hi``);
    - ``missing``: the wanted packages not installed, or not at their version (in the order of ``wanted``);
    - ``held``: on hold, any state; ``held_elsewhere``: held and in ``missing`` (released before the change);
    - ``known``: in any state but not-installed, so dpkg can select them.
    """
    wanted = _wanted(wanted)
    rows = dpkg_rows(_lines(output, 'the dpkg-query output'))
    installed = dict((name, ver) for name, ver, status in rows if _INSTALLED_RE.match(status))
    held = [name for name, dummy, status in rows if _HELD_RE.match(status)]
    missing = [name for name, ver in wanted.items()
               if name not in installed or (ver and not version_matches(ver, installed[name]))]
    return {
        'installed': installed,
        'missing': missing,
        'held': sorted(set(held)),
        'held_elsewhere': [name for name in missing if name in held],
        'known': sorted(set(name for name, dummy, status in rows if not _NOT_INSTALLED_RE.match(status))),
    }


def madison_versions(output):
    """``apt-cache madison`` lines (``NAME | VERSION | SOURCE``) -> name -> versions, newest first (madison's
    order), each once."""
    out = {}
    for line in _lines(output, 'the apt-cache madison output'):
        fields = [f.strip() for f in line.split('|')]
        if len(fields) < 3 or not fields[0] or not fields[1]:
            continue
        versions = out.setdefault(fields[0], [])
        if fields[1] not in versions:
            versions.append(fields[1])
    return out


def install_specs(output, wanted, names):
    """What to hand apt for ``names`` (a list, the packages to install): ``NAME=VERSION`` for a pinned package
    (the first version madison lists that matches the lock), ``NAME`` for an unpinned one. Returns
    ``{'install': [...], 'unavailable': [message, ...]}``; a message names the package, the version and what
    the sources have."""
    wanted = _wanted(wanted)
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise BenchToolsError('the packages to install must be a list of names, got %r' % (names,))
    available = madison_versions(output)
    install, unavailable = [], []
    for name in names:
        want = wanted.get(name, '')
        if not want:
            install.append(name)
            continue
        have = available.get(name, [])
        match = [v for v in have if version_matches(want, v)]
        if match:
            install.append('%s=%s' % (name, match[0]))
        else:
            unavailable.append('%s %s is not in the configured sources (they have: %s)'
                               % (name, want, ', '.join(have) if have else 'no version of it'))
    return {'install': install, 'unavailable': unavailable}


def program_results(lines, programs):
    """The programs found by one ``find -L PATH... -maxdepth 0 -printf '%y %m %p\\n'`` call, as the results a
    ``stat`` loop over ``programs`` (items ``{tool, path}``) would give: ``{item, stat: {exists, executable}}``.

    ``%y`` is the type of what the path resolves to (``f`` a regular file, ``l`` a dangling link), ``%m`` its
    permission bits in octal; a path find does not print does not exist. Executable means a regular file with an
    execute bit (the acceptance ladder runs as root)."""
    if not isinstance(programs, (list, tuple)):
        raise BenchToolsError('the programs must be a list of {tool, path}, got %s' % type(programs).__name__)
    found = {}
    for line in _lines(lines, 'find'):
        parts = line.split(' ', 2)
        if len(parts) != 3 or not re.match(r'^[0-7]+$', parts[1]):
            raise BenchToolsError('cannot read the find output line %r (want "TYPE MODE PATH")' % line)
        found[parts[2]] = (parts[0], int(parts[1], 8))
    out = []
    for item in programs:
        if not isinstance(item, dict) or 'path' not in item or 'tool' not in item:
            raise BenchToolsError('each program needs {tool, path}, got %r' % (item,))
        kind, mode = found.get(item['path'], (None, 0))
        out.append({'item': item, 'stat': {'exists': kind is not None,
                                           'executable': kind == 'f' and bool(mode & 0o111)}})
    return out


def missing_tools(results, packages, installed=None):
    """Messages for the programs that are missing or not executable.

    ``results`` are the ``results`` of a ``stat`` loop over items ``{tool, path}``; ``packages`` maps a tool to
    the packages that bring it; ``installed`` (name -> version, ``package_state``'s) says whether each package
    is installed, so the message tells a missing package from an incomplete one."""
    if not isinstance(results, (list, tuple)):
        raise BenchToolsError('the stat results must be a list, got %s' % type(results).__name__)
    if not isinstance(packages, dict):
        raise BenchToolsError('the packages must be a dict tool -> list of packages, got %s' % type(packages).__name__)
    installed = installed or {}
    out = []
    for res in results:
        item = res.get('item') if isinstance(res, dict) else None
        if not isinstance(item, dict) or 'tool' not in item or 'path' not in item:
            raise BenchToolsError('each stat result needs an item {tool, path}, got %r' % (res,))
        stat = res.get('stat') or {}
        if stat.get('exists') and stat.get('executable'):
            continue
        pkgs = list(packages.get(item['tool']) or [])
        state = '; '.join(('%s is installed (%s) but lacks it: reinstall it' % (p, installed[p]))
                          if p in installed else ('%s is not installed' % p) for p in pkgs)
        out.append('%s: %s is %s - install package %s (%s)'
                   % (item['tool'], item['path'], 'not executable' if stat.get('exists') else 'missing',
                      ' '.join(pkgs) or '(none named in bench_tools_packages)', state or 'no package named'))
    return out
