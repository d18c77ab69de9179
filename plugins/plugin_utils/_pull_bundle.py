# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side): builds a pull-mode bundle for one profile (docs/scale.md, "Pull
mode"); the entry point is tools/pull_bundle.py. A bundle is a directory (and a .tar.gz of it):

    MANIFEST.json        format, id (a digest of every file), profile, nodes, Python, what is where
    gpufleet-pull        the runner (plugins/plugin_utils/_pull_runner.py), python3 + standard library
    gpufleet-pull.sbatch the Slurm batch script (playbooks/files/gpufleet-pull.sbatch)
    ansible.cfg          the drift callback, no retry files
    inventory.yml        the profile's nodes and groups with their variables (plugins/plugin_utils/_pull.py)
    lock.yml             the version lock given with --lock (extra vars), if any
    requirements.txt     meta/requirements-pull.txt resolved for the nodes' Python
    wheels/              those pins as wheels for the nodes' Python and platform, and pip
    collections/         gpufleet-cluster-<version>.tar.gz (ansible-galaxy collection build) and deps/ (the
                         collections of meta/ee-requirements.yml, copied from the controller's installation)

Errors are BundleError with a message naming the option or the step."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull

# glibc platforms of pip's wheel tags a Debian 12 / Ubuntu 22.04 / RHEL 9 node takes (manylinux2014 = 2_17)
DEFAULT_PLATFORMS = ('manylinux_2_34_x86_64', 'manylinux_2_28_x86_64', 'manylinux_2_17_x86_64', 'manylinux2014_x86_64')


class BundleError(Exception):
    pass


def _run(argv, what, cwd=None):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, check=False)
    except OSError as exc:
        raise BundleError('%s: cannot run %s: %s' % (what, argv[0], exc.strerror or exc))
    if proc.returncode != 0:
        err = proc.stderr.decode('utf-8', 'replace').strip().splitlines()
        raise BundleError('%s failed (exit %d): %s\n  command: %s'
                          % (what, proc.returncode, ' | '.join(err[-5:]), ' '.join(argv)))
    return proc.stdout.decode('utf-8', 'replace')


def digest(paths_root):
    """sha256 over every file's relative path and content under the bundle (MANIFEST.json excluded)."""
    h = hashlib.sha256()
    for base, dirs, files in os.walk(paths_root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(base, name)
            rel = os.path.relpath(path, paths_root)
            if rel == 'MANIFEST.json':
                continue
            h.update(rel.encode('utf-8') + b'\0')
            with open(path, 'rb') as f:
                for chunk in iter(lambda: f.read(1 << 20), b''):
                    h.update(chunk)
    return h.hexdigest()


def dependency_collections(ee_requirements_text):
    """Collection names from meta/ee-requirements.yml."""
    import yaml
    data = yaml.safe_load(ee_requirements_text) or {}
    names = [c.get('name') if isinstance(c, dict) else c for c in data.get('collections') or []]
    if not names or not all(isinstance(n, str) and n.count('.') == 1 for n in names):
        raise BundleError('meta/ee-requirements.yml lists no collections (namespace.name)')
    return names


def find_collection(name, search_paths):
    ns, coll = name.split('.')
    for base in search_paths:
        path = os.path.join(base, 'ansible_collections', ns, coll)
        if os.path.isfile(os.path.join(path, 'MANIFEST.json')) or os.path.isfile(os.path.join(path, 'galaxy.yml')):
            return path
    raise BundleError('collection %s is not installed on this controller (looked in %s): install it (the ansible '
                      'package of requirements.txt has it)' % (name, ', '.join(search_paths)))


def pip_download_argv(pip, python_version, platforms, requirements, dest):
    major, minor = python_version.split('.')[:2]
    argv = [pip, 'download', '--only-binary=:all:', '--no-deps', '--disable-pip-version-check', '--quiet',
            '--python-version', '%s.%s' % (major, minor), '--implementation', 'cp', '--abi', 'cp%s%s' % (major, minor),
            '--abi', 'abi3', '--abi', 'none']
    for p in platforms:
        argv += ['--platform', p]
    argv += ['--platform', 'any', '-d', dest, '-r', requirements]
    return argv


def wheelhouse(pins, python_version, platforms, cache_dir, pip):
    """A directory holding exactly the pinned wheels (cached by pins, Python and platforms)."""
    key = hashlib.sha256(json.dumps([pins, python_version, list(platforms)]).encode('utf-8')).hexdigest()[:16]
    path = os.path.join(cache_dir, 'wheels-%s' % key)
    if os.path.exists(os.path.join(path, '.complete')):
        return path
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    req = os.path.join(path, '.requirements.txt')
    with open(req, 'w') as f:
        f.write('\n'.join(pins) + '\n')
    _run(pip_download_argv(pip, python_version, platforms, req, path),
         'downloading the wheels for Python %s (pip download)' % python_version)
    names = [n for n in os.listdir(path) if n.endswith('.whl')]
    for pin in pins:
        dist = pin.split('==')[0].lower().replace('-', '_')
        if not any(n.lower().startswith(dist + '-') for n in names):
            raise BundleError('no wheel of %s for Python %s on %s' % (pin, python_version, ', '.join(platforms)))
    with open(os.path.join(path, '.complete'), 'w') as f:
        f.write('\n'.join(sorted(names)) + '\n')
    return path


ANSIBLE_CFG = """# gpufleet pull bundle: the runner (gpufleet-pull) points ANSIBLE_CONFIG here
[defaults]
callbacks_enabled = gpufleet.cluster.drift
stdout_callback = ansible.builtin.default
callback_result_format = yaml
retry_files_enabled = False
host_key_checking = False
forks = 1
"""


def build(collection_root, inventory_sources, profile, python_version, out_dir, tools, lock=None,
          platforms=DEFAULT_PLATFORMS, cache_dir=None, collection_tarball=None, collection_paths=(), archive=True,
          now=None):
    """Build the bundle into ``out_dir`` (replaced); returns the manifest. ``tools``: paths of ansible-inventory,
    ansible-galaxy and pip on this controller."""
    if not inventory_sources:
        raise BundleError('give the inventory (-i) the profile\'s nodes are in')
    if lock is not None and not os.path.isfile(lock):
        raise BundleError('--lock %s is not a file' % lock)
    with open(os.path.join(collection_root, 'meta', 'requirements-pull.txt')) as f:
        req_text = f.read()
    try:
        pins = _pull.resolve_requirements(req_text, python_version)
    except ValueError as exc:
        raise BundleError('--python: %s' % exc)
    argv = [tools['ansible-inventory']]
    for src in inventory_sources:
        argv += ['-i', src]
    export = json.loads(_run(argv + ['--list', '--export'], 'reading the inventory (ansible-inventory --list --export)',
                             cwd=collection_root))
    try:
        inventory, nodes = _pull.profile_inventory(export, profile)
    except ValueError as exc:
        raise BundleError('--profile: %s' % exc)

    parent = os.path.dirname(os.path.abspath(out_dir)) or '.'
    if not os.path.isdir(parent):
        os.makedirs(parent)
    work = tempfile.mkdtemp(prefix='.pull-bundle-', dir=parent)
    try:
        os.makedirs(os.path.join(work, 'collections', 'deps', 'ansible_collections'))
        header = ('# gpufleet pull bundle: profile %s - the inventory\'s variables for the groups of its %d node(s) '
                  '(connection variables left out: the node runs locally)\n' % (profile, len(nodes)))
        with open(os.path.join(work, 'inventory.yml'), 'w') as f:
            f.write(_pull.inventory_yaml(inventory, header))
        if lock:
            shutil.copyfile(lock, os.path.join(work, 'lock.yml'))
        with open(os.path.join(work, 'requirements.txt'), 'w') as f:
            f.write('\n'.join(pins) + '\n')
        with open(os.path.join(work, 'ansible.cfg'), 'w') as f:
            f.write(ANSIBLE_CFG)
        runner_src = os.path.join(collection_root, 'plugins', 'plugin_utils', '_pull_runner.py')
        with open(runner_src) as f:
            runner = f.read()
        with open(os.path.join(work, 'gpufleet-pull'), 'w') as f:
            f.write('#!/usr/bin/python3\n' + runner)
        os.chmod(os.path.join(work, 'gpufleet-pull'), 0o755)
        shutil.copyfile(os.path.join(collection_root, 'playbooks', 'files', 'gpufleet-pull.sbatch'),
                        os.path.join(work, 'gpufleet-pull.sbatch'))
        os.chmod(os.path.join(work, 'gpufleet-pull.sbatch'), 0o755)
        # the collection
        if collection_tarball:
            if not os.path.isfile(collection_tarball):
                raise BundleError('--collection-tarball %s is not a file' % collection_tarball)
            tar_name = os.path.basename(collection_tarball)
            shutil.copyfile(collection_tarball, os.path.join(work, 'collections', tar_name))
        else:
            tmp = tempfile.mkdtemp(dir=work)
            _run([tools['ansible-galaxy'], 'collection', 'build', collection_root, '--output-path', tmp, '--force'],
                 'building the collection (ansible-galaxy collection build)')
            built = [n for n in os.listdir(tmp) if n.endswith('.tar.gz')]
            if len(built) != 1:
                raise BundleError('ansible-galaxy collection build wrote %s' % (built or 'nothing'))
            tar_name = built[0]
            shutil.move(os.path.join(tmp, tar_name), os.path.join(work, 'collections', tar_name))
            shutil.rmtree(tmp)
        with open(os.path.join(collection_root, 'meta', 'ee-requirements.yml')) as f:
            deps = dependency_collections(f.read())
        for name in deps:
            src = find_collection(name, list(collection_paths))
            ns, coll = name.split('.')
            shutil.copytree(src, os.path.join(work, 'collections', 'deps', 'ansible_collections', ns, coll),
                            ignore=shutil.ignore_patterns('__pycache__', '*.pyc', 'tests'))
        # the wheels
        cache = cache_dir or os.path.join(parent, '.wheel-cache')
        house = wheelhouse(pins, python_version, platforms, cache, tools['pip'])
        os.makedirs(os.path.join(work, 'wheels'))
        for name in sorted(os.listdir(house)):
            if name.endswith('.whl'):
                shutil.copyfile(os.path.join(house, name), os.path.join(work, 'wheels', name))
        manifest = {
            'format': _pull.BUNDLE_FORMAT,
            'profile': profile,
            'nodes': nodes,
            'python': python_version,
            'platforms': list(platforms),
            'requirements': 'requirements.txt',
            'inventory': 'inventory.yml',
            'lock': 'lock.yml' if lock else None,
            'ansible_cfg': 'ansible.cfg',
            'collection': 'collections/' + tar_name,
            'dependencies': deps,
            'built_unix': int(now if now is not None else time.time()),
        }
        manifest['id'] = '%s-%s' % (profile, digest(work)[:12])
        with open(os.path.join(work, 'MANIFEST.json'), 'w') as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write('\n')
        os.chmod(work, 0o755)
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        os.rename(work, out_dir)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if archive:
        tgz = out_dir.rstrip('/') + '.tar.gz'
        with tarfile.open(tgz + '.tmp', 'w:gz') as tar:
            tar.add(out_dir, arcname=os.path.basename(out_dir.rstrip('/')))
        os.rename(tgz + '.tmp', tgz)
        manifest['archive'] = tgz
    return manifest
