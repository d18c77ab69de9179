# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``/proc/net/bonding/<bond>`` (Linux bonding driver) into a dict, with a ``degraded`` verdict.

Pure functions over text (``parse``) or a ``proc_root`` (``read_all``). Unknown lines are ignored,
missing lines are absent keys, so old (v3.6) and new driver layouts parse alike (kernel 6.x adds
``Peer Notification Delay``, ``ARP Missed Max``, ``NS IPv6 target/s``, ``LACP active``, churn states
and LACP PDU details; the system MAC, active aggregator and PDU details are printed only to readers
with CAP_NET_ADMIN).  ``Aggregator ID: N/A`` is None, ``bond X has no active aggregator`` makes
``lacp.active_aggregator`` None, and unknown speeds (``Unknown``, -1, 65535) give ``speed_mbps`` None.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs

MODES = (
    ("round-robin", "balance-rr"),
    ("active-backup", "active-backup"),
    ("(xor)", "balance-xor"),
    ("broadcast", "broadcast"),
    ("802.3ad", "802.3ad"),
    ("transmit load balancing", "balance-tlb"),
    ("adaptive load balancing", "balance-alb"),
)

ZERO_MAC = "00:00:00:00:00:00"

_BOND_KEYS = {
    "transmit hash policy": "xmit_hash_policy",
    "mii status": "mii_status",
    "mii polling interval (ms)": "miimon",
    "up delay (ms)": "updelay",
    "down delay (ms)": "downdelay",
    "peer notification delay (ms)": "peer_notif_delay",
    "arp polling interval (ms)": "arp_interval",
    "arp ip target/s (n.n.n.n form)": "arp_ip_target",
    "arp missed max": "arp_missed_max",
    "ns ipv6 target/s (xx::xx form)": "ns_ip6_target",
}
_LACP_KEYS = {
    "lacp rate": "lacp_rate",
    "lacp active": "lacp_active",
    "min links": "min_links",
    "aggregator selection policy (ad_select)": "ad_select",
    "system priority": "system_priority",
    "system mac address": "system_mac",
}
_AGG_KEYS = {
    "aggregator id": "id",
    "number of ports": "ports",
    "actor key": "actor_key",
    "partner key": "partner_key",
    "partner mac address": "partner_mac",
}
_SLAVE_KEYS = {
    "mii status": "mii_status",
    "speed": "speed",
    "duplex": "duplex",
    "link failure count": "link_failure_count",
    "permanent hw addr": "permanent_hw_addr",
    "slave queue id": "queue_id",
    "aggregator id": "aggregator_id",
    "actor churn state": "actor_churn_state",
    "partner churn state": "partner_churn_state",
    "actor churned count": "actor_churned_count",
    "partner churned count": "partner_churned_count",
}
_INTS = set(["miimon", "updelay", "downdelay", "peer_notif_delay", "arp_interval", "arp_missed_max", "min_links",
             "system_priority", "id", "ports", "actor_key", "partner_key", "link_failure_count", "queue_id",
             "aggregator_id", "actor_churned_count", "partner_churned_count", "port_key", "port_priority",
             "port_number", "port_state", "oper_key"])


def _value(key, text):
    text = text.strip()
    if key in _INTS:
        if text.upper() in ("N/A", ""):
            return None  # "Aggregator ID: N/A": the slave is in no aggregator
        try:
            return int(text)
        except ValueError:
            return text
    return text


# Speeds the driver prints for "unknown" on kernels that predate "Speed: Unknown" (SPEED_UNKNOWN is -1,
# older drivers used 0xffff); a speed of 0 is no link either.
_UNKNOWN_SPEEDS = (0, 65535, 4294967295)


def mode_name(text):
    low = text.lower()
    for needle, name in MODES:
        if needle in low:
            return name
    return None


def parse(text):
    """Parse one ``/proc/net/bonding/<bond>`` file (see module docstring)."""
    bond = {"slaves": []}
    section = "bond"
    slave = None
    pdu = None
    for raw in (text or "").replace("\r", "").splitlines():
        if not raw.strip():
            pdu = None
            continue
        indented = raw[:1] in (" ", "\t")
        line = raw.strip()
        if line.startswith("Ethernet Channel Bonding Driver:"):
            bond["driver_version"] = line.split(":", 1)[1].strip().split()[0]
            continue
        if line == "802.3ad info":
            section = "lacp"
            bond.setdefault("lacp", {})
            continue
        m = re.match(r"bond \S+ has no active aggregator$", line)
        if m:
            bond.setdefault("lacp", {})["active_aggregator"] = None
            section = "lacp"
            continue
        if line.rstrip(":") == "Active Aggregator Info":
            section = "agg"
            bond.setdefault("lacp", {})["active_aggregator"] = {}
            continue
        m = re.match(r"details (actor|partner) lacp pdu:", line)
        if m and slave is not None:
            pdu = slave.setdefault(m.group(1) + "_lacp_pdu", {})
            continue
        m = re.match(r"NS IPv6 target/s \(xx::xx form\):(.*)$", line)  # its key holds colons
        key, sep, value = ("ns ipv6 target/s (xx::xx form)", ":", m.group(1)) if m else line.partition(":")
        if not sep:
            continue
        lkey = key.strip().lower()
        if lkey == "slave interface":
            slave = {"name": value.strip()}
            bond["slaves"].append(slave)
            section, pdu = "slave", None
            continue
        if pdu is not None and indented:
            pdu[lkey.replace(" ", "_")] = _value(lkey.replace(" ", "_"), value)
            continue
        pdu = None
        if section == "agg" and not indented:
            section = "lacp"
        if section == "slave":
            if lkey in _SLAVE_KEYS:
                slave[_SLAVE_KEYS[lkey]] = _value(_SLAVE_KEYS[lkey], value)
        elif section == "agg" and lkey in _AGG_KEYS:
            bond["lacp"]["active_aggregator"][_AGG_KEYS[lkey]] = _value(_AGG_KEYS[lkey], value)
        elif section == "lacp" and lkey in _LACP_KEYS:
            bond["lacp"][_LACP_KEYS[lkey]] = _value(_LACP_KEYS[lkey], value)
        elif lkey == "bonding mode":
            bond["mode_text"] = value.strip()
            bond["mode"] = mode_name(value)
        elif lkey == "primary slave":
            name, dummy, rest = value.strip().partition(" ")
            bond["primary_slave"] = None if name == "None" else name
            m = re.search(r"primary_reselect (\w+)", rest)
            if m:
                bond["primary_reselect"] = m.group(1)
        elif lkey == "currently active slave":
            bond["active_slave"] = None if value.strip() == "None" else value.strip()
        elif lkey in _BOND_KEYS:
            bond[_BOND_KEYS[lkey]] = _value(_BOND_KEYS[lkey], value)
    if "xmit_hash_policy" in bond:
        bond["xmit_hash_policy"] = re.sub(r"\s*\(\d+\)$", "", bond["xmit_hash_policy"])
    for key in ("arp_ip_target", "ns_ip6_target"):
        if key in bond:
            bond[key] = [t.strip() for t in bond[key].split(",") if t.strip()]
    for sl in bond["slaves"]:
        m = re.match(r"(-?\d+)\s*Mbps", str(sl.get("speed", "")))
        speed = int(m.group(1)) if m else None
        sl["speed_mbps"] = speed if speed is not None and speed > 0 and speed not in _UNKNOWN_SPEEDS else None
        if sl.get("permanent_hw_addr") == "":
            sl["permanent_hw_addr"] = None
    bond["degraded_reasons"] = degraded_reasons(bond)
    bond["degraded"] = bool(bond["degraded_reasons"])
    return bond


def degraded_reasons(bond):
    """Why the bond is not at full strength; [] when it is."""
    reasons = []
    if bond.get("mii_status") not in (None, "up"):
        reasons.append("bond MII status %s" % bond["mii_status"])
    if not bond["slaves"]:
        reasons.append("no slaves")
    for sl in bond["slaves"]:
        if sl.get("mii_status") not in (None, "up"):
            reasons.append("slave %s MII status %s" % (sl["name"], sl["mii_status"]))
    if bond.get("mode") == "active-backup" and "active_slave" in bond and bond["active_slave"] is None:
        reasons.append("no active slave")
    if bond.get("mode") == "802.3ad":
        lacp = bond.get("lacp") or {}
        if "active_aggregator" in lacp and lacp["active_aggregator"] is None:
            reasons.append("no active aggregator")
        for sl in bond["slaves"]:
            if "aggregator_id" in sl and sl["aggregator_id"] is None:
                reasons.append("slave %s in no aggregator" % sl["name"])
        active = lacp.get("active_aggregator") or {}
        agg_ids = set(sl["aggregator_id"] for sl in bond["slaves"] if sl.get("aggregator_id") is not None)
        active_id = active.get("id")
        if active_id is None and len(agg_ids) > 1:
            reasons.append("slaves in different aggregators (%s)" % ", ".join(str(i) for i in sorted(agg_ids, key=str)))
        for sl in bond["slaves"]:
            if active_id is not None and sl.get("aggregator_id") is not None and sl["aggregator_id"] != active_id:
                reasons.append("slave %s in aggregator %s, not the active aggregator %s" % (
                    sl["name"], sl["aggregator_id"], active_id))
            for side in ("actor", "partner"):
                if sl.get(side + "_churn_state") == "churned":
                    reasons.append("slave %s %s churned" % (sl["name"], side))
        if active.get("partner_mac") == ZERO_MAC:
            reasons.append("no LACP partner (partner MAC %s)" % ZERO_MAC)
    return reasons


class BondingReadError(Exception):
    """A bonding file that is not the kernel's text (not UTF-8)."""


def read_error_msg(exc):
    """The module failure for a BondingReadError (bond_facts and node_facts)."""
    return "proc_root: %s; proc_root must hold the kernel's proc/net/bonding files (ASCII text)" % exc


def read_all(proc_root):
    """{bond name: parse(file)} for every file in ``<proc_root>/proc/net/bonding``; {} when absent.
    Entries that cannot be read (a directory, permissions) are skipped; a file that is not UTF-8 text
    raises BondingReadError naming it and the first bad byte (the kernel writes ASCII there)."""
    base = os.path.join(proc_root, "proc", "net", "bonding")
    out = {}
    for name in _sysfs.listdir(base):
        path = os.path.join(base, name)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except (IOError, OSError):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BondingReadError("%s is not UTF-8 text (byte %d)" % (path, exc.start))
        out[name] = parse(text)
    return out


def _shown(value, unset="unset"):
    return unset if value is None else value


def expected_problems(seen, expected, mtus=None):
    """{bond name: [problem, ...]} for each bond of ``expected`` (entries of expected_entries: name, mode
    and members set, the others compared only when set) against ``seen`` (read_all's result) and
    ``mtus`` ({bond name: kernel MTU}); an empty list means the bond is as wanted. The bond's own
    degraded_reasons count as problems."""
    mtus = mtus or {}
    out = {}
    for want in expected:
        name = want["name"]
        bond = seen.get(name)
        if bond is None:
            out[name] = ["bond %s does not exist (no /proc/net/bonding/%s)" % (name, name)]
            continue
        problems = []
        names = [sl["name"] for sl in bond["slaves"]]
        if bond.get("mode") != want["mode"]:
            problems.append("mode is %s, wanted %s" % (bond.get("mode"), want["mode"]))
        problems.extend("member %s is not enslaved" % m for m in want["members"] if m not in names)
        problems.extend("%s is enslaved but not in members" % m for m in names if m not in want["members"])
        problems.extend(bond["degraded_reasons"])
        primary = want.get("primary")
        if primary is not None and bond.get("mode") == "active-backup":
            up = [sl for sl in bond["slaves"] if sl["name"] == primary and sl.get("mii_status") == "up"]
            if bond.get("primary_slave") != primary:
                problems.append("primary slave is %s, wanted %s" % (_shown(bond.get("primary_slave"), "none"), primary))
            elif up and bond.get("active_slave") != primary:
                problems.append("active slave is %s while primary %s is up" % (bond.get("active_slave"), primary))
        if want.get("miimon") is not None and (bond.get("miimon") or 0) != want["miimon"]:
            problems.append("miimon is %s, wanted %s" % (_shown(bond.get("miimon")), want["miimon"]))
        lacp_rate = (bond.get("lacp") or {}).get("lacp_rate")
        if want.get("lacp_rate") is not None and lacp_rate != want["lacp_rate"]:
            problems.append("lacp_rate is %s, wanted %s" % (_shown(lacp_rate), want["lacp_rate"]))
        policy = bond.get("xmit_hash_policy")
        if want.get("xmit_hash_policy") is not None and policy != want["xmit_hash_policy"]:
            problems.append("xmit_hash_policy is %s, wanted %s" % (_shown(policy), want["xmit_hash_policy"]))
        if want.get("mtu") is not None and mtus.get(name) is not None and mtus[name] != want["mtu"]:
            problems.append("MTU is %s, wanted %s" % (mtus[name], want["mtu"]))
        out[name] = problems
    return out


def check(seen, expected, sysfs_root):
    """bond_facts' C(bond_check): {bond: {ok, problems}} with each expected bond's MTU read from
    ``<sysfs_root>/sys/class/net/<bond>/mtu`` (unreadable: not compared)."""
    mtus = dict((want["name"], _sysfs.read_int(os.path.join(sysfs_root, "sys", "class", "net", want["name"], "mtu")))
                for want in expected if want.get("mtu") is not None and want["name"] in seen)
    return dict((name, {"ok": not problems, "problems": problems})
                for name, problems in expected_problems(seen, expected, mtus).items())


_IFNAME = re.compile(r"^[^/\s:]{1,15}$")

# bond_facts' O(expected) entries. Validated here, entry by entry, rather than by AnsibleModule's suboptions:
# ansible-core reports a string given for a list of dicts with suboptions without naming the option.
EXPECTED_SPEC = dict(
    name=dict(type="str", required=True),
    mode=dict(type="str", required=True, choices=[name for dummy, name in MODES]),
    members=dict(type="list", elements="str", required=True),
    primary=dict(type="str"),
    miimon=dict(type="int"),
    lacp_rate=dict(type="str", choices=["slow", "fast"]),
    xmit_hash_policy=dict(type="str"),
    mtu=dict(type="int"),
)


def expected_entries(expected):
    """(entries, errors) for bond_facts' O(expected): each entry checked against EXPECTED_SPEC (types, required
    and unknown keys) and the value rules - an interface name the kernel could have, unique bonds, distinct
    members, a primary among them, an MTU of 68..65535, a miimon of 0 or more. Every error names the entry."""
    entries, errors, names = [], [], set()
    for i, raw in enumerate(expected or []):
        where = "expected[%d]" % i
        result = ArgumentSpecValidator(EXPECTED_SPEC).validate(raw)
        if result.error_messages:
            errors.extend("%s: %s" % (where, err) for err in result.error_messages)
            continue
        want = result.validated_parameters
        name, members = want["name"], want["members"]
        if not _IFNAME.match(name) or name in (".", ".."):
            errors.append("%s.name must be an interface name (1..15 characters, no '/', ':' or white space), got %r"
                          % (where, name))
        elif name in names:
            errors.append("%s.name: bond %s is listed twice" % (where, name))
        names.add(name)
        if not members or len(set(members)) != len(members) or not all(_IFNAME.match(m) for m in members):
            errors.append("%s.members must be a non-empty list of distinct interface names, got %r" % (where, members))
        if want["mtu"] is not None and not 68 <= want["mtu"] <= 65535:
            errors.append("%s.mtu must be 68..65535, got %d" % (where, want["mtu"]))
        if want["miimon"] is not None and want["miimon"] < 0:
            errors.append("%s.miimon must be 0 or more, got %d" % (where, want["miimon"]))
        if want["primary"] is not None and want["primary"] not in members:
            errors.append("%s.primary %r is not one of the members %r" % (where, want["primary"], members))
        entries.append(want)
    return entries, errors
