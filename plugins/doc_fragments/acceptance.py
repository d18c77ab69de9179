# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # What every acceptance-ladder module (dcgm_diag, gpu_burn, p2p_bandwidth, nccl_bench, rdma_bw)
    # supports. List this fragment before ansible.builtin.action_common_attributes, which adds the
    # attribute descriptions.
    DOCUMENTATION = r'''
attributes:
  check_mode:
    support: full
    details: In check mode nothing runs; the module returns C(skipped=true), the reason and the command line.
  diff_mode:
    support: none
  platform:
    platforms: posix
'''
