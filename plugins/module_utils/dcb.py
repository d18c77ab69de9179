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
    """JSON array or {"0": v} object -> list ordered by index; None when it is neither."""
    if isinstance(value, dict):
        try:
            return [value[k] for k in sorted(value, key=int)]
        except (TypeError, ValueError):
            return None
    if isinstance(value, list):
        return list(value)
    return None


def _to_int(value):
    """int of a JSON number or numeric string; None for anything else (bools included)."""
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _ints(values):
    """List of ints, or None when ``values`` is missing or any item is not an integer."""
    if values is None:
        return None
    nums = [_to_int(v) for v in values]
    return None if any(n is None for n in nums) else nums


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
            if _to_int(data.get(key)) is not None:
                out[key] = _to_int(data[key])
        if "macsec_bypass" in data:
            out["macsec_bypass"] = _onoff(data["macsec_bypass"])
        prio = _array(data.get("prio_pfc"))
        if prio is not None and len(prio) == 8 and all(isinstance(v, bool) or str(v) in ("on", "off") for v in prio):
            out["pfc"] = [_onoff(v) for v in prio]
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
    if prio and all(str(p) in prio for p in range(8)):
        out["pfc"] = [_onoff(prio[str(p)]) for p in range(8)]
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
                value = data[key] if isinstance(data[key], bool) else _to_int(data[key])
                if value is not None:
                    out[key] = value
        for key in ("tc_bw", "prio_tc"):
            values = _ints(_array(data.get(key)))
            if values is not None:
                out[key] = values
        tsa = _array(data.get("tc_tsa"))
        if tsa is not None:
            out["tc_tsa"] = [str(v) for v in tsa]
        return out
    for key, name in (("tc_bw", "tc-bw"), ("prio_tc", "prio-tc"), ("tc_tsa", "tc-tsa")):
        values = _text_map(text, name)
        if not values or not all(k.isdigit() for k in values):
            continue
        ordered = [values[k] for k in sorted(values, key=int)]
        if key == "tc_tsa":
            out[key] = ordered
        elif _ints(ordered) is not None:
            out[key] = _ints(ordered)
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
    """``dcb [-j] app show dev X`` -> {dscp2prio: {dscp: prio}, pcp2prio, default_prio}.

    Text keys may be DSCP names (``CS3:3``, from ``/etc/iproute2/rt_dsfield``) or numbers (``-N``);
    JSON always has numbers (``"dscp_prio": [[24, 3], ...]``).  ``default-prio`` lists bare
    priorities (``default-prio 0``).  An entry that does not parse (unknown DSCP name, garbled) is
    left out; an empty or prompt-only output gives an empty ``dscp2prio``."""
    out = {"dscp2prio": {}}
    data = _json(text)
    if data is not None:
        for key, value in data.items():
            if key == "dscp_prio" and isinstance(value, list):
                for item in value:
                    pair = _array(item) if not isinstance(item, dict) else [item.get("dscp"), item.get("prio")]
                    if not pair or len(pair) != 2:
                        continue
                    try:
                        dscp = dscp_value(str(pair[0]))
                    except (KeyError, ValueError):
                        continue
                    prio = _to_int(pair[1])
                    if prio is not None:
                        out["dscp2prio"][dscp] = prio
            elif key == "pcp_prio" and isinstance(value, list):
                for item in value:
                    pair = _array(item)
                    if pair and len(pair) == 2 and _to_int(pair[1]) is not None:
                        out.setdefault("pcp2prio", {})[str(pair[0])] = _to_int(pair[1])
            elif key == "default_prio":
                values = _ints(value if isinstance(value, list) else None)
                if values is not None:
                    out["default_prio"] = values
        out["dscp2prio"] = dict(sorted(out["dscp2prio"].items()))
        return out
    for line in _lines(text):
        words = line.split()
        name = None
        for word in words:
            if name == "default-prio" and word.isdigit():
                # "default-prio 0 1": bare priorities, no key
                out.setdefault("default_prio", []).append(int(word))
                continue
            if ":" not in word:
                name = word
                continue
            key, dummy, value = word.partition(":")
            if not value.isdigit():
                continue
            if name == "dscp-prio":
                try:
                    out["dscp2prio"][dscp_value(key)] = int(value)
                except (KeyError, ValueError):
                    continue
            elif name == "pcp-prio":
                out.setdefault("pcp2prio", {})[key] = int(value)
    out["dscp2prio"] = dict(sorted(out["dscp2prio"].items()))
    return out


APP_SELECTORS = ("default-prio", "ethtype-prio", "stream-port-prio", "dgram-port-prio", "port-prio",
                 "dscp-prio", "pcp-prio")


def app_readable(text):
    """True when ``dcb app show`` output is understood: empty (no APP entries), a JSON object, or lines
    that each start with an APP selector name. Garbage gives False, so an empty ``dscp2prio`` parsed from
    it is not taken for PCP trust."""
    lines = _lines(text)
    if not lines:
        return True
    if _json(text) is not None:
        return True
    return all(line.split()[0] in APP_SELECTORS for line in lines)


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
