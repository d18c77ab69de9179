# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loading a filter file imports none of the collection's logic (docs/architecture.md, "Filter plugins load cheaply").

ansible-core resolves a gpufleet.cluster.* filter by loading every file in plugins/filter, in each task's worker
process, compiling the collection's Python from source each time. A filter file that imports its plugin_utils (or
netaddr) at load time makes every task that uses any of the collection's filters pay for all of them. Checked in a
fresh interpreter, as a worker starts: the names the files pull in at load time, then that one filter still imports
its logic when called (every filter's own unit tests run it through FilterModule)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

FILTER_DIR = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'plugins', 'filter')

PROBE = r'''
import importlib, json, os, sys
before = set(sys.modules)
for name in sorted(f[:-3] for f in os.listdir(sys.argv[1]) if f.endswith('.py') and f != '__init__.py'):
    importlib.import_module('ansible_collections.gpufleet.cluster.plugins.filter.' + name)
new = sorted(set(sys.modules) - before)
loaded = [m for m in new if m.startswith(('ansible_collections.gpufleet.cluster.plugins.plugin_utils.',
                                          'ansible_collections.gpufleet.cluster.plugins.module_utils.'))
          or m == 'netaddr' or m.startswith('netaddr.')]
from ansible_collections.gpufleet.cluster.plugins.filter.version_lock import version_lock_errors
called = version_lock_errors({}) is not None and \
    'ansible_collections.gpufleet.cluster.plugins.plugin_utils._version_lock' in sys.modules
print(json.dumps({'files': len([m for m in new if '.plugins.filter.' in m]), 'loaded': loaded, 'called': called}))
'''


def test_loading_every_filter_file_imports_no_logic():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    # ansible.errors and Display are imported first: a worker has them already, they are not the collection's cost
    out = subprocess.run([sys.executable, '-c', 'import ansible.errors, ansible.utils.display\n' + PROBE,
                          os.path.abspath(FILTER_DIR)], env=env, capture_output=True, text=True, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got['files'] == len([f for f in os.listdir(FILTER_DIR) if f.endswith('.py') and f != '__init__.py'])
    assert got['loaded'] == [], 'imported at load time (move the import into the filter): %s' % got['loaded']
    assert got['called'], 'a filter run did not import its logic'
