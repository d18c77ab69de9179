# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # Options shared by the modules that read the kernel's sysfs.
    DOCUMENTATION = r'''
options:
  sysfs_root:
    description:
      - Directory under which C(sys/) is read (C(sys/class/infiniband), C(sys/module), ...).
      - Change it to read a copied or recorded sysfs tree, for tests or offline analysis.
    type: path
    default: /
'''
