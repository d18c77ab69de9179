# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roce_sysfs on the HANDMADE ecn/ + rdma_cm tree and on recorded sysfs_infiniband trees."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.gpufleet.cluster.plugins.module_utils import roce_sysfs

TREE = Path(__file__).resolve().parents[2] / "fixtures" / "hand_made" / "roce" / "cx6-roce-HANDMADE"


def test_read_ecn():
    got = roce_sysfs.read_ecn(str(TREE), "ens1f0np0")
    assert got["np"]["enable"] == [False] * 8
    assert got["np"]["params"] == {"cnp_802p_prio": 6, "cnp_dscp": 48, "min_time_between_cnps": 0}
    assert got["rp"]["params"]["rpg_time_reset"] == 300 and got["rp"]["params"]["dce_tcp_g"] == 1019
    assert roce_sysfs.read_ecn(str(TREE), "nope") == {}


def test_rdma_cm_and_device():
    assert roce_sysfs.rdma_device_for(str(TREE), "ens1f0np0") == ["mlx5_0"]
    assert roce_sysfs.read_rdma_cm(str(TREE / "configfs"), "mlx5_0", 1) == {
        "default_roce_tos": 0, "default_roce_mode": "IB/RoCE v1"}
    assert roce_sysfs.read_rdma_cm(str(TREE / "configfs"), "mlx5_1", 1) == {}


def test_gids():
    gids = roce_sysfs.read_gids(str(TREE), "mlx5_0", 1)
    assert [g["index"] for g in gids] == [0, 1, 2, 3]  # 4 is unset (all zero)
    assert gids[3]["ipv4"] == "10.10.0.11" and gids[3]["type"] == "RoCE v2"
    assert roce_sysfs.roce_v2_ipv4_gid_index(gids, "ens1f0np0") == 3
    assert roce_sysfs.roce_v2_ipv4_gid_index(gids, "other0") is None


def test_ipv4_of_gid():
    assert roce_sysfs.ipv4_of_gid("0000:0000:0000:0000:0000:ffff:c0a8:0101") == "192.168.1.1"
    assert roce_sysfs.ipv4_of_gid("fe80:0000:0000:0000:0e42:a1ff:fe9a:10b2") is None


def test_recorded_ib_trees_have_no_roce_v2_ipv4(sysfs_ib_root):
    # Recorded trees (prometheus fixtures) have no gid_attrs: no RoCE v2 IPv4 GID to offer.
    root = sysfs_ib_root.parents[2]
    for dev in sorted(p.name for p in sysfs_ib_root.iterdir()):
        gids = roce_sysfs.read_gids(str(root), dev, 1)
        assert roce_sysfs.roce_v2_ipv4_gid_index(gids) is None


def test_param_name_checked():
    import pytest
    with pytest.raises(ValueError):
        roce_sysfs.ecn_param_path("/", "eth0", "np", "../x")
