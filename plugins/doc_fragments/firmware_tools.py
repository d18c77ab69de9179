# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # The firmware, OFED and Fabric Manager tools read by fw_facts and by node_facts' firmware subset.
    DOCUMENTATION = r'''
options:
  mstflint_path:
    description:
      - Name or path of C(mstflint). Preferred over O(flint_path) when both are found.
    type: str
    default: mstflint
  flint_path:
    description:
      - Name or path of C(flint) (NVIDIA MFT).
    type: str
    default: flint
  ofed_info_path:
    description:
      - Name or path of C(ofed_info) (MLNX_OFED and DOCA-OFED).
    type: str
    default: ofed_info
  fabricmanager_path:
    description:
      - Name or path of C(nv-fabricmanager).
    type: str
    default: nv-fabricmanager
  fabricmanager_service:
    description:
      - systemd unit whose C(systemctl is-active) state is reported. Empty string to skip.
    type: str
    default: nvidia-fabricmanager
  fabricmanager_log:
    description:
      - Fabric Manager log file to summarise (last MiB only). Empty string to skip.
    type: path
    default: /var/log/fabricmanager.log
'''
