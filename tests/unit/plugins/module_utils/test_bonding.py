# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bonding parser on every recorded ``/proc/net/bonding`` file of the corpus (values from the recordings)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import bonding

# Every recording in corpus/bonding/ with what it shows.
EXPECTED = {
    "telegraf-active-backup-eth3-down.txt": dict(
        mode="active-backup", driver_version="v3.6.0", primary_slave="eth2", primary_reselect="always",
        active_slave="eth2", miimon=100, degraded_reasons=["slave eth3 MII status down"],
        slaves=[("eth3", "down", 1000, "full", 2), ("eth2", "up", 100, "full", 0)]),
    "telegraf-802.3ad-2x10G.txt": dict(
        mode="802.3ad", driver_version="v3.7.1", xmit_hash_policy="layer2", degraded_reasons=[],
        lacp={"lacp_rate": "fast", "min_links": 0, "ad_select": "stable"},
        slaves=[("eth0", "up", 10000, "full", 2), ("eth1", "up", 10000, "full", 1)]),
    "telegraf-802.3ad-one-slave-down.txt": dict(
        mode="802.3ad", xmit_hash_policy="layer2", degraded_reasons=["slave eth1 MII status down"],
        slaves=[("eth0", "up", 10000, "full", 2), ("eth1", "down", None, "Unknown", 1)]),
    "blackmetalz-802.3ad-one-slave-down-lacp-details.txt": dict(
        mode="802.3ad", xmit_hash_policy="layer3+4",
        degraded_reasons=["slave enp1s0f0 MII status down",
                          "slave enp1s0f0 in aggregator 1, not the active aggregator 2",
                          "slave enp1s0f0 actor churned", "slave enp1s0f0 partner churned",
                          "slave enp1s0f1 partner churned", "no LACP partner (partner MAC 00:00:00:00:00:00)"],
        slaves=[("enp1s0f0", "down", None, "Unknown", 2), ("enp1s0f1", "up", 1000, "full", 2)]),
    "insights-active-backup-10G-2slaves.txt": dict(
        mode="active-backup", primary_slave=None, active_slave="enp17s0f0", degraded_reasons=[],
        slaves=[("enp17s0f0", "up", 10000, "full", 0), ("enp17s0f1", "up", 10000, "full", 0)]),
    "insights-balance-rr-2x1G.txt": dict(
        mode="balance-rr", degraded_reasons=[],
        slaves=[("eno1", "up", 1000, "full", 0), ("eno2", "up", 1000, "full", 0)]),
}


def test_every_recording_has_expectations(corpus, corpus_full):
    names = sorted(p.name for p in (corpus / "bonding").iterdir())
    if corpus_full:
        assert names == sorted(EXPECTED)
    else:
        assert set(names) <= set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recording(corpus_file, name):
    got = bonding.parse(corpus_file("bonding/" + name).read_text())
    want = dict(EXPECTED[name])
    slaves = want.pop("slaves")
    for key, value in want.items():
        if key == "lacp":
            assert {k: got["lacp"][k] for k in value} == value
        else:
            assert got[key] == value, key
    assert got["degraded"] is bool(want["degraded_reasons"])
    assert got["mii_status"] == "up"
    assert [(s["name"], s["mii_status"], s["speed_mbps"], s["duplex"], s["link_failure_count"])
            for s in got["slaves"]] == slaves


def test_lacp_details(corpus_file):
    got = bonding.parse(corpus_file("bonding/blackmetalz-802.3ad-one-slave-down-lacp-details.txt").read_text())
    assert got["lacp"]["active_aggregator"] == {"id": 2, "ports": 1, "actor_key": 9, "partner_key": 1,
                                                "partner_mac": "00:00:00:00:00:00"}
    assert got["lacp"]["system_mac"] == "00:25:90:85:81:f2" and got["lacp"]["system_priority"] == 65535
    first = got["slaves"][0]
    assert first["aggregator_id"] == 1 and first["actor_churn_state"] == "churned"
    assert first["partner_churned_count"] == 2
    assert first["actor_lacp_pdu"]["port_state"] == 71 and first["partner_lacp_pdu"]["oper_key"] == 1
    assert got["slaves"][1]["actor_lacp_pdu"]["port_key"] == 9


def test_telegraf_truncated_slave_and_empty_mac(corpus_file):
    got = bonding.parse(corpus_file("bonding/telegraf-active-backup-eth3-down.txt").read_text())
    assert got["slaves"][0]["permanent_hw_addr"] is None and got["slaves"][0]["queue_id"] == 0
    assert "queue_id" not in got["slaves"][1]  # the recording stops before eth2's queue ID


def test_synthetic_edge_cases():
    assert bonding.parse("")["degraded_reasons"] == ["no slaves"]
    text = ("Bonding Mode: fault-tolerance (active-backup)\nCurrently Active Slave: None\nMII Status: down\n"
            "ARP Polling Interval (ms): 1000\nARP IP target/s (n.n.n.n form): 10.0.0.1, 10.0.0.2\n")
    got = bonding.parse(text)
    assert got["arp_interval"] == 1000 and got["arp_ip_target"] == ["10.0.0.1", "10.0.0.2"]
    assert got["degraded_reasons"] == ["bond MII status down", "no slaves", "no active slave"]


# HANDMADE: layouts of drivers/net/bonding/bond_procfs.c that the corpus has no recording of (format
# strings read in torvalds/linux and gregkh/linux through the search index; values invented).
KERNEL6_ARP_HANDMADE = """Ethernet Channel Bonding Driver: v6.1.0-18-amd64

Bonding Mode: fault-tolerance (active-backup) (fail_over_mac active)
Primary Slave: eno1 (primary_reselect better)
Currently Active Slave: eno2
MII Status: up
MII Polling Interval (ms): 0
Up Delay (ms): 0
Down Delay (ms): 0
Peer Notification Delay (ms): 0
ARP Polling Interval (ms): 500
ARP Missed Max: 2
ARP IP target/s (n.n.n.n form): 10.1.0.1, 10.1.0.2
NS IPv6 target/s (xx::xx form): fd00::1

Slave Interface: eno1
MII Status: going back
Speed: Unknown
Duplex: Unknown
Link Failure Count: 3
Permanent HW addr: 52:54:00:00:00:01
Slave queue ID: 0

Slave Interface: eno2
MII Status: up
Speed: 25000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 52:54:00:00:00:02
Slave queue ID: 0
"""

NO_ACTIVE_AGG_HANDMADE = """Ethernet Channel Bonding Driver: v3.7.1 (April 27, 2011)

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer3+4 (1)
MII Status: down
MII Polling Interval (ms): 100
Up Delay (ms): 0
Down Delay (ms): 0

802.3ad info
LACP rate: slow
Aggregator selection policy (ad_select): stable
bond bond0 has no active aggregator

Slave Interface: eth0
MII Status: down
Speed: -1 Mbps
Duplex: half
Link Failure Count: 1
Permanent HW addr: 52:54:00:00:00:03
Aggregator ID: N/A
Slave queue ID: 0
"""


def test_kernel6_arp_monitoring_layout():
    got = bonding.parse(KERNEL6_ARP_HANDMADE)
    assert got["driver_version"] == "v6.1.0-18-amd64"
    assert (got["mode"], got["primary_slave"], got["primary_reselect"], got["active_slave"]) == \
        ("active-backup", "eno1", "better", "eno2")
    assert (got["arp_interval"], got["arp_missed_max"], got["peer_notif_delay"]) == (500, 2, 0)
    assert got["arp_ip_target"] == ["10.1.0.1", "10.1.0.2"] and got["ns_ip6_target"] == ["fd00::1"]
    assert [(s["name"], s["mii_status"], s["speed_mbps"]) for s in got["slaves"]] == \
        [("eno1", "going back", None), ("eno2", "up", 25000)]
    assert got["degraded_reasons"] == ["slave eno1 MII status going back"]


def test_old_kernel_no_active_aggregator_and_unknown_speed():
    got = bonding.parse(NO_ACTIVE_AGG_HANDMADE)
    assert got["lacp"]["active_aggregator"] is None
    slave = got["slaves"][0]
    assert slave["aggregator_id"] is None and slave["speed_mbps"] is None  # "N/A", "-1 Mbps": unknown
    assert got["degraded_reasons"] == ["bond MII status down", "slave eth0 MII status down",
                                       "no active aggregator", "slave eth0 in no aggregator"]


def test_damaged_recordings_never_crash(corpus, damaged):
    """Every recording (and the HANDMADE layouts) cut and garbled: a bond dict with a verdict back,
    never an exception; a speed that did not parse is None, never a number read from garbage."""
    texts = [p.read_text() for p in sorted((corpus / "bonding").iterdir())]
    for text in texts + [KERNEL6_ARP_HANDMADE, NO_ACTIVE_AGG_HANDMADE]:
        for variant in damaged(text, none=True):
            got = bonding.parse(variant)
            assert isinstance(got["degraded"], bool) and isinstance(got["degraded_reasons"], list)
            for sl in got["slaves"]:
                assert sl["speed_mbps"] is None or (isinstance(sl["speed_mbps"], int) and sl["speed_mbps"] > 0)
