# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test runs only: the lab hosts' zipimport compile cache (tests/lab/gpufleet_lab_pycache.py) in the controller's
own Pythons.

scripts/test puts this directory on PYTHONPATH for the jobs that run Ansible (unit, compat's pytest, site, the fleet,
molecule, the VM tier). A module Ansible runs on the controller (a unit test's local playbook or ad-hoc call, a task
delegated to localhost) is an AnsiballZ payload like on a lab host, and its Python compiles ansible.module_utils from
the zip every time: measured on this machine, the unit tier took 338 CPU-s without the cache and 289 with it. The
modules run the same code; only the compile is saved. The cache is GPUFLEET_CONTROLLER_PYCACHE (default
/var/cache/gpufleet/controller-pycache), one directory per interpreter's bytecode tag, entries keyed by source.

Whatever sitecustomize the interpreter had (Debian's /usr/lib/python3.X/sitecustomize.py) still runs after this one.
Users' runs never load this file: it is not in the collection and only scripts/test sets PYTHONPATH to it.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _install():
    lab = os.path.dirname(_HERE)
    sys.path.insert(0, lab)
    try:
        import gpufleet_lab_pycache  # pylint: disable=import-outside-toplevel
        top = os.environ.get("GPUFLEET_CONTROLLER_PYCACHE") or "/var/cache/gpufleet/controller-pycache"
        gpufleet_lab_pycache.install(os.path.join(top, sys.implementation.cache_tag or "none"))
    except Exception:  # pylint: disable=broad-except  # a test aid: never stop a Python from starting
        pass
    finally:
        sys.path.remove(lab)


def _chain():
    """Run the next sitecustomize on sys.path, the one this file hides."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    for entry in sys.path:
        if os.path.abspath(entry or os.curdir) == _HERE:
            continue
        path = os.path.join(entry or os.curdir, "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_gpufleet_next_sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception:  # pylint: disable=broad-except  # as site.py does: report and go on
                sys.stderr.write("Error in sitecustomize %s (run after gpufleet's); ignored\n" % path)
            return


_install()
_chain()
