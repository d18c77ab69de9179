# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a pull-mode bundle for one profile (docs/scale.md, "Pull mode"; logic: plugins/plugin_utils/_pull_bundle.py).

    .venv/bin/python tools/pull_bundle.py -i inventories/prod --profile profile_h100_ib --python 3.11 \
        [--lock lock.yml] [--out build/pull/profile_h100_ib]

Writes the bundle directory and <dir>.tar.gz; prints the bundle id, its nodes and size. Exit status 1 on an error
(one line naming the option or step), 0 otherwise."""

from __future__ import absolute_import, division, print_function

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, '.ansible', 'collections'))

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull_bundle  # noqa: E402


def _size(path):
    total = 0
    for base, _dirs, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(base, f)) for f in files)
    return total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    p.add_argument('-i', '--inventory', action='append', required=True, help='inventory source (repeatable)')
    p.add_argument('--profile', required=True, help='the profile group whose nodes the bundle is for')
    p.add_argument('--python', required=True, help="the nodes' Python version, e.g. 3.11 (Debian 12) or 3.12")
    p.add_argument('--lock', help='a version lock file passed to the nodes\' runs as extra vars (-e @lock.yml)')
    p.add_argument('--out', help='bundle directory (default build/pull/<profile>)')
    p.add_argument('--platform', action='append', help='pip wheel platform tag (repeatable; default glibc x86_64)')
    p.add_argument('--wheel-cache', default=os.environ.get('GPUFLEET_PULL_WHEEL_CACHE'),
                   help='where downloaded wheelhouses are kept (default: next to the bundle)')
    p.add_argument('--collection-tarball', help='use this ansible-galaxy collection build tarball instead of building one')
    args = p.parse_args(argv)
    bindir = os.path.dirname(sys.executable)
    tools = dict((t, os.path.join(bindir, t)) for t in ('ansible-inventory', 'ansible-galaxy', 'pip'))
    import ansible_collections
    paths = [os.path.dirname(p) for p in ansible_collections.__path__]
    out = args.out or os.path.join(ROOT, 'build', 'pull', args.profile)
    try:
        manifest = _pull_bundle.build(ROOT, args.inventory, args.profile, args.python, out, tools, lock=args.lock,
                                      platforms=tuple(args.platform or _pull_bundle.DEFAULT_PLATFORMS),
                                      cache_dir=args.wheel_cache, collection_tarball=args.collection_tarball,
                                      collection_paths=paths)
    except _pull_bundle.BundleError as exc:
        print('pull_bundle: error: %s' % exc, file=sys.stderr)
        return 1
    print('pull_bundle: %s (profile %s, Python %s): %d node(s): %s' % (
        manifest['id'], manifest['profile'], manifest['python'], len(manifest['nodes']), ', '.join(manifest['nodes'][:8])
        + (' ...' if len(manifest['nodes']) > 8 else '')))
    print('pull_bundle: %s (%.1f MB), %s (%.1f MB)'
          % (out, _size(out) / 1e6, manifest['archive'], os.path.getsize(manifest['archive']) / 1e6))
    return 0


if __name__ == '__main__':
    sys.exit(main())
