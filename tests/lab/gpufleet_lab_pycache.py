# Lab hosts only (the nspawn ones), never a cluster node: scripts/lab puts this module and a .pth file that imports
# it and calls install() into the lab's hosts (GPUFLEET_LAB_PYCACHE=0 leaves them out; benchmarks/fleet_scale.py
# does, to measure what a real node costs).
"""Cache the code objects that zipimport compiles from an AnsiballZ payload.

Every Ansible module call ships ansible.module_utils in a zip and Python compiles each imported file from source,
as zipimport writes no bytecode: about 0.1 CPU-s of the 0.2-0.3 a module run takes on a lab host. This keeps the
compiled code in /var/cache/gpufleet-lab-pycache/<cache tag>/, keyed by the interpreter's bytecode tag, the file's
path inside the zip and its source (two Pythons sharing a cache directory never load each other's code: a 3.11 given
3.12's code fails with "unknown opcode"), and gives it back with the running payload's file name. The modules run the
same code; only the compile is saved.
"""

import marshal
import os
import sys
import zipimport

CACHE = os.path.join("/var/cache/gpufleet-lab-pycache", sys.implementation.cache_tag or "none")


def _named(code, filename):
    """The code object (and the ones nested in it) with co_filename set to this payload's path."""
    consts = tuple(_named(c, filename) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def install(cache=CACHE):
    compile_source = getattr(zipimport, "_compile_source", None)
    if compile_source is None or getattr(compile_source, "gpufleet_lab", False):
        return False

    def cached_compile(pathname, source):
        import hashlib  # pylint: disable=import-outside-toplevel  # only when a zip is imported from

        inner = pathname.rpartition(".zip" + os.sep)[2]
        tag = (sys.implementation.cache_tag or "none").encode()
        path = os.path.join(cache, hashlib.sha256(tag + b"\0" + inner.encode() + b"\0" + source).hexdigest())
        try:
            with open(path, "rb") as f:
                return _named(marshal.load(f), pathname)
        except Exception:  # pylint: disable=broad-except  # absent or unreadable: compile as Python would
            pass
        code = compile_source(pathname, source)
        try:
            os.makedirs(cache, exist_ok=True)
            tmp = "%s.%d" % (path, os.getpid())
            with open(tmp, "wb") as f:
                marshal.dump(code, f)
            os.replace(tmp, path)
        except OSError:
            pass
        return code

    cached_compile.gpufleet_lab = True
    zipimport._compile_source = cached_compile  # pylint: disable=protected-access
    return True
