# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing a file the modules own: through a temp file in the same directory and ``atomic_move``, cleaning up
after itself on any failure. One owner for roce_qos's persist file and irq_affinity's irqbalance file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def file_problem(path):
    """None when ``path`` can be written as a regular file (it is one, or the first of its parents that exists
    is a directory); else why not."""
    if os.path.lexists(path) and not os.path.isfile(path):
        return "%s exists and is not a regular file" % path
    ancestor = os.path.dirname(path)
    while not os.path.lexists(ancestor) and os.path.dirname(ancestor) != ancestor:
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        return "%s cannot be created: %s is not a directory" % (path, ancestor)
    return None


def write_text(module, path, text, prefix=".gpufleet."):
    """Write ``text`` to ``path`` through a temp file in the same directory and ``atomic_move``.

    Returns None, or the reason of the failure; then the temp file and the directories made here are
    gone again (also when ``atomic_move`` ends the module itself, as older ansible-core does)."""
    directory = os.path.dirname(path)
    made, tmp = [], None
    try:
        missing = []
        while not os.path.isdir(directory) and os.path.dirname(directory) != directory:
            missing.append(directory)
            directory = os.path.dirname(directory)
        for item in reversed(missing):
            os.mkdir(item, 0o755)
            made.append(item)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=prefix)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        module.atomic_move(tmp, path, unsafe_writes=False)
        tmp, made = None, []
        return None
    except Exception as exc:  # pylint: disable=broad-except  # atomic_move raises a bare Exception
        return str(exc) or exc.__class__.__name__
    finally:
        if tmp is not None and os.path.lexists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for item in reversed(made):
            try:
                os.rmdir(item)
            except OSError:
                pass
