# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection: the one reader of kernel files (sysfs, procfs, configfs).

A kernel attribute can be missing, unreadable (EIO/EINVAL on some PCI and IB attributes, EACCES), a
directory, or hold bytes that are not UTF-8 (a vendor's VPD string); none of that raises here. Text is
decoded as UTF-8, else as latin-1 (every byte kept, never lone surrogates in the facts).

Pure standard library (Python 3.8+), no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os


def decode(data):
    """Text of ``data``: UTF-8, else latin-1."""
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError:
        return data.decode('latin-1')


def read_text(path, empty=''):
    """Stripped text of a kernel file; None when it is missing or unreadable, ``empty`` when it holds
    nothing but white space (sysfs_pci and roce_sysfs treat an empty attribute as absent: empty=None)."""
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except (IOError, OSError):
        return None
    return decode(data).strip() or empty


def read_int(path, base=10):
    """Integer in a kernel file (``0x`` prefixes allowed with base 16 or 0); None when missing,
    unreadable or not a number."""
    text = read_text(path, empty=None)
    if text is None:
        return None
    try:
        return int(text, base)
    except ValueError:
        return None


def listdir(path):
    """Sorted names in a directory; [] when it is missing or unreadable."""
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []
