# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse iproute2 ``dcb`` output (``pfc show``, ``ets show``, ``app show``) and build its set argvs.

Each parser takes the JSON form (``dcb -j ...``: arrays named ``prio_pfc``, ``tc_bw``, ``tc_tsa``,
``prio_tc`` as printed by iproute2's ``dcb_print_named_array``) or the plain text form
(``prio-pfc 0:off 1:off 2:off 3:on ...``); the kind is detected from the text. Shell prompt lines
(``$ dcb ...``) and carriage returns are ignored. Pure functions, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# DSCP code point names as printed by ``dcb app show`` without ``-N``.
DSCP_NAMES = {"CS0": 0, "CS1": 8, "AF11": 10, "AF12": 12, "AF13": 14, "CS2": 16, "AF21": 18, "AF22": 20,
              "AF23": 22, "CS3": 24, "AF31": 26, "AF32": 28, "AF33": 30, "CS4": 32, "AF41": 34,
              "AF42": 36, "AF43": 38, "CS5": 40, "VA": 44, "EF": 46, "CS6": 48, "CS7": 56}


def _lines(text):
    return [ln.strip() for ln in (text or "").replace("\r", "").splitlines()
            if ln.strip() and not ln.strip().startswith("$")]


def _json(text):
    body = "\n".join(_lines(text))
    if body.startswith("{"):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return None


def _array(value):
    """JSON array or {"0": v} object -> list ordered by index."""
    if isinstance(value, dict):
        return [value[k] for k in sorted(value, key=int)]
    return list(value)


def _onoff(value):
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("on", "true", "1")


def _text_map(text, name):
    """'name 0:a 1:b ...' in text form -> {key: value} (first line that starts with name)."""
    out = {}
    for line in _lines(text):
        words = line.split()
        if name not in words:
            continue
        idx = words.index(name)
        for word in words[idx + 1:]:
            if ":" not in word:
                break
            key, dummy, value = word.partition(":")
            out[key] = value
    return out


def parse_pfc(text):
    """``dcb [-j] pfc show dev X`` -> {pfc_cap, macsec_bypass, delay, pfc (8 booleans)}."""
    data = _json(text)
    out = {}
    if data is not None:
        for key in ("pfc_cap", "delay"):
            if key in data:
                out[key] = int(data[key])
        if "macsec_bypass" in data:
            out["macsec_bypass"] = _onoff(data["macsec_bypass"])
        if "prio_pfc" in data:
            out["pfc"] = [_onoff(v) for v in _array(data["prio_pfc"])]
        return out
    for line in _lines(text):
        m = re.search(r"pfc-cap\s+(\d+)", line)
        if m:
            out["pfc_cap"] = int(m.group(1))
        m = re.search(r"macsec-bypass\s+(\w+)", line)
        if m:
            out["macsec_bypass"] = _onoff(m.group(1))
        m = re.search(r"(?:^|\s)delay\s+(\d+)", line)
        if m:
            out["delay"] = int(m.group(1))
    prio = _text_map(text, "prio-pfc")
    if prio:
        out["pfc"] = [_onoff(prio.get(str(p), "off")) for p in range(8)]
    return out


def parse_ets(text):
    """``dcb [-j] ets show dev X`` -> {willing, ets_cap, cbs, tc_bw, tc_tsa, prio_tc} (present ones)."""
    data = _json(text)
    out = {}
    if data is not None:
        if "willing" in data:
            out["willing"] = _onoff(data["willing"])
        for key in ("ets_cap", "cbs"):
            if key in data:
                out[key] = data[key] if isinstance(data[key], bool) else int(data[key])
        for key in ("tc_bw", "prio_tc"):
            if key in data:
                out[key] = [int(v) for v in _array(data[key])]
        if "tc_tsa" in data:
            out["tc_tsa"] = [str(v) for v in _array(data["tc_tsa"])]
        return out
    for key, name in (("tc_bw", "tc-bw"), ("prio_tc", "prio-tc"), ("tc_tsa", "tc-tsa")):
        values = _text_map(text, name)
        if values:
            ordered = [values[k] for k in sorted(values, key=int)]
            out[key] = ordered if key == "tc_tsa" else [int(v) for v in ordered]
    for line in _lines(text):
        m = re.search(r"willing\s+(\w+)", line)
        if m:
            out["willing"] = _onoff(m.group(1))
        m = re.search(r"ets-cap\s+(\d+)", line)
        if m:
            out["ets_cap"] = int(m.group(1))
    return out


def dscp_value(token):
    """'AF31' / '26' -> 26; ValueError when unknown."""
    token = token.strip()
    if token.isdigit():
        return int(token)
    return DSCP_NAMES[token.upper()]


def parse_app(text):
    """``dcb app show dev X`` (text) -> {dscp2prio: {dscp: prio}, pcp2prio, default_prio}.

    An empty or prompt-only output gives an empty ``dscp2prio``."""
    out = {"dscp2prio": {}}
    data = _json(text)
    if data is not None:
        for key, value in data.items():
            if key == "dscp_prio":
                for item in value:
                    pair = _array(item) if not isinstance(item, dict) else [item.get("dscp"), item.get("prio")]
                    out["dscp2prio"][dscp_value(str(pair[0]))] = int(pair[1])
            elif key == "default_prio":
                out["default_prio"] = [int(v) for v in value]
        return out
    for line in _lines(text):
        words = line.split()
        name = None
        for word in words:
            if ":" not in word:
                name = word
                continue
            key, dummy, value = word.partition(":")
            if name == "dscp-prio":
                try:
                    out["dscp2prio"][dscp_value(key)] = int(value)
                except (KeyError, ValueError):
                    continue
            elif name == "pcp-prio":
                out.setdefault("pcp2prio", {})[key] = int(value)
            elif name == "default-prio":
                out.setdefault("default_prio", []).append(int(value))
    out["dscp2prio"] = dict(sorted(out["dscp2prio"].items()))
    return out


def trust_from_app(app):
    """mlx5 switches to DSCP trust when a dscp-prio APP entry exists, back to PCP when the last goes."""
    return "dscp" if app.get("dscp2prio") else "pcp"


def default_dscp2prio():
    """The conventional map the mlx5 driver uses in DSCP trust: DSCP d -> priority d >> 3."""
    return dict((d, d >> 3) for d in range(64))


def set_argvs(binary, interface, changes, current_app=None):
    """dcb argvs applying ``changes`` (keys trust, pfc, tc_tsa, tc_bw, prio_tc)."""
    argvs = []
    if "pfc" in changes:
        argvs.append([binary, "pfc", "set", "dev", interface, "prio-pfc"]
                     + ["%d:%s" % (p, "on" if v else "off") for p, v in enumerate(changes["pfc"])])
    ets = []
    if "tc_tsa" in changes:
        ets += ["tc-tsa"] + ["%d:%s" % (t, v) for t, v in enumerate(changes["tc_tsa"])]
    if "tc_bw" in changes:
        ets += ["tc-bw"] + ["%d:%d" % (t, v) for t, v in enumerate(changes["tc_bw"])]
    if "prio_tc" in changes:
        ets += ["prio-tc"] + ["%d:%d" % (p, v) for p, v in enumerate(changes["prio_tc"])]
    if ets:
        argvs.append([binary, "ets", "set", "dev", interface] + ets)
    if "trust" in changes:
        if changes["trust"] == "dscp":
            argvs.append([binary, "app", "add", "dev", interface, "dscp-prio"]
                         + ["%d:%d" % kv for kv in sorted(default_dscp2prio().items())])
        else:
            current = (current_app or {}).get("dscp2prio") or {}
            if current:
                argvs.append([binary, "app", "del", "dev", interface, "dscp-prio"]
                             + ["%d:%d" % kv for kv in sorted(current.items())])
    return argvs


def replay_trust_argv(binary, interface, trust):
    """One argv that makes ``trust`` true from any APP table and can run again with the same result:
    ``app replace`` of the default DSCP map for dscp (mlx5 trusts DSCP while a dscp-prio entry
    exists), ``app flush ... dscp-prio`` for pcp."""
    if trust == "dscp":
        return [binary, "app", "replace", "dev", interface, "dscp-prio"] + \
            ["%d:%d" % kv for kv in sorted(default_dscp2prio().items())]
    return [binary, "app", "flush", "dev", interface, "dscp-prio"]
