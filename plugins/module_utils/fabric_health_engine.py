# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Engine of the ``fabric_health`` module: the health of a node's InfiniBand/RoCE ports between two reads.

Reads every port with ``sysfs_ib.collect`` twice, ``interval`` seconds apart, and checks each selected port:

- state ``ACTIVE`` and physical state ``LinkUp`` in both reads (a port that changed state between the reads is named);
- on InfiniBand ports, a subnet manager: ``sm_lid`` non-zero, and when ``sminfo`` (infiniband-diags) is installed,
  the SM at that LID answers and is ``MASTER``;
- link rate and width not below the profile (``min_rate_gbps``, ``min_width``);
- the growth of each error counter between the two reads against its own threshold (``max_growth``); the absolute
  value says nothing (counters count since the last reset or boot). ``link_downed`` growing is a flapping port.

A missing figure is a failure, never a pass: a counter that is checked but missing or unreadable in either read, a
counter that went down between the reads (cleared: its growth is unknown) or one that sits at its saturation value
(the IBTA PortCounters widths: it can no longer grow, so its growth cannot be seen), an unreadable rate or sm_lid.
``evaluate`` is pure (two facts dicts in, the verdict out); ``run`` reads, sleeps and runs ``sminfo``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import infiniband_diags
from ansible_collections.gpufleet.cluster.plugins.module_utils import sysfs_ib

# Growth allowed between the two reads, per counter (gpufleet policy, documented in docs/thresholds.md): counters
# that mean a link went down or retrained allow none, bit-error counters a few, congestion/discard counters more.
DEFAULT_MAX_GROWTH = {
    'link_downed': 0,
    'link_error_recovery': 0,
    'local_link_integrity_errors': 0,
    'excessive_buffer_overrun_errors': 0,
    'symbol_error': 10,
    'port_rcv_errors': 10,
    'port_rcv_remote_physical_errors': 10,
    'port_xmit_discards': 100,
    'VL15_dropped': 100,
}

# Width in bits of the IBTA PortCounters error counters (sysfs ports/N/counters): they stop at 2^bits - 1.
COUNTER_BITS = {
    'symbol_error': 16, 'link_error_recovery': 8, 'link_downed': 8, 'port_rcv_errors': 16,
    'port_rcv_remote_physical_errors': 16, 'port_rcv_switch_relay_errors': 16, 'port_xmit_discards': 16,
    'port_xmit_constraint_errors': 8, 'port_rcv_constraint_errors': 8, 'local_link_integrity_errors': 4,
    'excessive_buffer_overrun_errors': 4, 'VL15_dropped': 16, 'port_xmit_wait': 32,
}

# Where a counter name is looked up, in this order (rxe has only hw_counters, with its own link_downed).
COUNTER_SOURCES = ('counters', 'counters_ext', 'hw_counters')

WIDTHS = ('1X', '2X', '4X', '8X', '12X')
MAX_INTERVAL = 3600
_COUNTER_NAME_RE = re.compile(r'^[A-Za-z0-9_]+$')
_PORT_SEL_RE = re.compile(r'^[A-Za-z0-9_.:-]+(/[0-9]+)?$')


def input_errors(params):
    """Every message about bad input (naming the option); [] when all is well."""
    errors = ac.nul_errors(params) + ac.root_dir_errors('sysfs_root', params['sysfs_root'])
    errors += ac.int_range('interval', params['interval'], 0, MAX_INTERVAL, 'seconds')
    errors += ac.timeout_range(params['timeout'])
    errors += ac.min_number('min_rate_gbps', params['min_rate_gbps'])
    if params['min_width'] is not None and params['min_width'].upper() not in WIDTHS:
        errors.append('min_width must be one of %s, got %r' % (', '.join(WIDTHS), params['min_width']))
    for i, sel in enumerate(params['devices'] or []):
        if not isinstance(sel, str) or not _PORT_SEL_RE.match(sel) or sel.startswith('-'):
            errors.append('devices[%d] must be a device name (mlx5_0) or device/port (mlx5_0/1), got %r' % (i, sel))
    for name in sorted(params['max_growth'] or {}, key=str):
        value = params['max_growth'][name]
        if not isinstance(name, str) or not _COUNTER_NAME_RE.match(name):
            errors.append('max_growth: counter names are sysfs file names (letters, digits, _), got %r' % (name,))
        elif value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            errors.append('max_growth.%s must be an integer >= 0 (the growth allowed between the two reads) or null '
                          '(do not check it), got %r' % (name, value))
    if params['sminfo_path']:
        errors += ac.executable_errors('sminfo_path', params['sminfo_path'])
    errors += ac.word_errors('rung', params['rung'])
    return errors


def thresholds(params):
    """The counters to check and the growth each may show: the defaults (unless ``default_counters`` is false)
    updated with ``max_growth``; a null in ``max_growth`` drops that counter."""
    out = dict(DEFAULT_MAX_GROWTH) if params.get('default_counters', True) else {}
    for name, value in (params.get('max_growth') or {}).items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def select_ports(facts, devices):
    """``(ports, errors)``: ``ports`` a sorted list of ``(device, port)`` to check (every port of every device when
    ``devices`` is empty), ``errors`` the selections that name no device or port of ``facts``."""
    errors, chosen = [], []
    if not devices:
        for dev in sorted(facts):
            for port in sorted(facts[dev].get('ports', {}), key=lambda p: (len(p), p)):
                chosen.append((dev, port))
        return chosen, errors
    for sel in devices:
        dev, _sep, port = sel.partition('/')
        if dev not in facts:
            errors.append('%s: no such RDMA device (found: %s)' % (sel, ', '.join(sorted(facts)) or 'none'))
            continue
        ports = facts[dev].get('ports', {})
        wanted = [port] if port else sorted(ports, key=lambda p: (len(p), p))
        if port and port not in ports:
            errors.append('%s: device %s has no port %s (ports: %s)' % (sel, dev, port, ', '.join(sorted(ports)) or 'none'))
            continue
        if not wanted:
            errors.append('%s: device has no ports under ports/' % sel)
        for p in wanted:
            if (dev, p) not in chosen:
                chosen.append((dev, p))
    return chosen, errors


def _counter(port, name):
    for source in COUNTER_SOURCES:
        values = port.get(source)
        if isinstance(values, dict) and name in values:
            return values[name], source
    return None, None


def _is_ib(port):
    return (port.get('link_layer') or 'InfiniBand') == 'InfiniBand'


def _width_num(width):
    try:
        return int(str(width).upper().rstrip('X'))
    except (TypeError, ValueError):
        return None


def _fmt(value):
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _problem(name, check, message, **extra):
    return dict(extra, port=name, check=check, message='%s: %s' % (name, message))


def check_counters(name, first, second, limits, interval):
    """Problems and growth of the checked counters of one port between two reads."""
    problems, growth = [], {}
    for counter in sorted(limits):
        limit = limits[counter]
        v1, src1 = _counter(first, counter)
        v2, src2 = _counter(second, counter)
        if v1 is None or v2 is None:
            which = 'either read' if v1 is None and v2 is None else ('the first read' if v1 is None else 'the second read')
            problems.append(_problem(name, 'counter_missing', 'counter %s missing or unreadable in %s (looked in %s); '
                                     'a missing counter is a failure' % (counter, which, ', '.join(COUNTER_SOURCES)),
                                     counter=counter))
            continue
        bits = COUNTER_BITS.get(counter) if src1 == src2 == 'counters' else None
        top = (1 << bits) - 1 if bits else None
        if v2 < v1:
            problems.append(_problem(name, 'counter_reset', 'counter %s went down from %d to %d between the reads '
                                     '(cleared?): its growth is unknown' % (counter, v1, v2),
                                     counter=counter, first=v1, second=v2))
            continue
        if top is not None and v1 >= top:
            problems.append(_problem(name, 'counter_saturated', 'counter %s is saturated at %d (%d-bit): its growth '
                                     'cannot be seen; clear the port counters (perfquery -x -R) and check again'
                                     % (counter, v1, bits), counter=counter, first=v1, second=v2))
            continue
        delta = v2 - v1
        growth[counter] = delta
        if delta > limit:
            saturated = ' (saturated: at least)' if top is not None and v2 >= top else ''
            what = 'flapping: ' if counter == 'link_downed' else ''
            problems.append(_problem(name, 'counter_growth', '%s%s grew by %d%s in %s s (from %d to %d; max %d)'
                                     % (what, counter, delta, saturated, _fmt(interval), v1, v2, limit),
                                     counter=counter, first=v1, second=v2, growth=delta, max=limit))
    return problems, growth


def check_link(name, first, second, params):
    """Problems of the link of one port (state, rate, width, subnet manager by sm_lid)."""
    problems = []
    if params.get('require_active', True):
        for label, port in (('first', first), ('second', second)):
            state, phys = port.get('state'), port.get('phys_state')
            if state != 'ACTIVE' or phys != 'LinkUp':
                problems.append(_problem(name, 'state', 'state %s, physical state %s in the %s read (expected ACTIVE, '
                                         'LinkUp)' % (state or 'unreadable', phys or 'unreadable', label),
                                         state=state, phys_state=phys))
                break
    for key in ('state', 'phys_state', 'rate'):
        if first.get(key) != second.get(key) and first.get(key) is not None and second.get(key) is not None:
            problems.append(_problem(name, 'changed', '%s changed between the reads: %s -> %s'
                                     % (key, first.get(key), second.get(key))))
    if params.get('min_rate_gbps') is not None:
        rate = second.get('rate_gbps')
        if not isinstance(rate, (int, float)):
            problems.append(_problem(name, 'rate', 'rate unreadable (%r): cannot compare with the profile\'s %s Gb/s'
                                     % (second.get('rate'), _fmt(params['min_rate_gbps']))))
        elif rate < params['min_rate_gbps']:
            problems.append(_problem(name, 'rate', 'rate %s Gb/s (%s) below the profile\'s %s Gb/s'
                                     % (_fmt(rate), second.get('rate'), _fmt(params['min_rate_gbps'])),
                                     rate_gbps=rate, min_rate_gbps=params['min_rate_gbps']))
    if params.get('min_width'):
        width = _width_num(second.get('width'))
        want = _width_num(params['min_width'])
        if width is None:
            problems.append(_problem(name, 'width', 'link width unreadable (rate %r): cannot compare with %s'
                                     % (second.get('rate'), params['min_width'].upper())))
        elif width < want:
            problems.append(_problem(name, 'width', 'link width %s below the profile\'s %s (%s)'
                                     % (second.get('width'), params['min_width'].upper(), second.get('rate')),
                                     width=second.get('width')))
    if params.get('check_sm', True) and _is_ib(second):
        sm_lid = second.get('sm_lid')
        if sm_lid is None:
            problems.append(_problem(name, 'subnet_manager', 'sm_lid unreadable: cannot tell whether a subnet '
                                     'manager serves this port'))
        elif sm_lid == 0:
            problems.append(_problem(name, 'subnet_manager', 'no subnet manager: sm_lid is 0 (start opensm or the '
                                     'fabric\'s SM)', sm_lid=0))
    return problems


def check_sminfo(name, res, parsed, sm_lid, timeout):
    """Problems of one ``sminfo`` run (rc, no SMInfo line, SM not MASTER, another LID than the port's sm_lid)."""
    why = runner.failure(res, timeout)
    if why:
        return [_problem(name, 'subnet_manager', 'sminfo %s; cmd: %s' % (why, res['cmd']))]
    if parsed is None:
        return [_problem(name, 'subnet_manager', 'sminfo printed no SMInfo line (%s); cmd: %s'
                         % (runner.last_line(res), res['cmd']))]
    problems = []
    if parsed['state'] != 'MASTER':
        problems.append(_problem(name, 'subnet_manager', 'the subnet manager at LID %d is %s, not MASTER'
                                 % (parsed['sm_lid'], parsed['state']), sminfo=parsed))
    if sm_lid and parsed['sm_lid'] != sm_lid:
        problems.append(_problem(name, 'subnet_manager', 'sminfo reports the master SM at LID %d, the port at sm_lid %d'
                                 % (parsed['sm_lid'], sm_lid), sminfo=parsed))
    return problems


def evaluate(first, second, params, interval, sminfo=None):
    """The verdict of two reads (``sysfs_ib.collect`` results) under ``params``. ``sminfo`` maps
    ``'dev/port'`` to ``(run result, parsed)`` of the ``sminfo`` runs. Returns the module's result keys."""
    sminfo = sminfo or {}
    limits = thresholds(params)
    chosen, select_errors = select_ports(first, params.get('devices') or [])
    problems = [dict(port=e.split(':', 1)[0], check='selection', message=e) for e in select_errors]
    ports = []
    for dev, port in chosen:
        name = '%s/%s' % (dev, port)
        one = first[dev]['ports'][port]
        two = ((second.get(dev) or {}).get('ports') or {}).get(port)
        if two is None:
            found = [_problem(name, 'vanished', 'port disappeared between the reads')]
            growth = {}
        else:
            found = check_link(name, one, two, params)
            more, growth = check_counters(name, one, two, limits, interval)
            found += more
            if name in sminfo:
                res, parsed = sminfo[name]
                found += check_sminfo(name, res, parsed, two.get('sm_lid'), params.get('timeout'))
        problems += found
        last = two or one
        entry = dict(device=dev, port=port, link_layer=last.get('link_layer'), state=last.get('state'),
                     phys_state=last.get('phys_state'), rate=last.get('rate'), rate_gbps=last.get('rate_gbps'),
                     width=last.get('width'), sm_lid=last.get('sm_lid'), growth=growth,
                     status='fail' if found else 'pass', problems=[p['message'] for p in found])
        if name in sminfo and sminfo[name][1]:
            entry['sminfo'] = sminfo[name][1]
        ports.append(entry)
    failures = [p['message'] for p in problems]
    rung = params.get('rung') or 'fabric_health'
    if failures:
        msg = '%s: %d problem(s) on %d port(s): %s' % (rung, len(failures), len(ports), '; '.join(failures))
        status = 'fail'
    else:
        msg = '%s: %d port(s) healthy over %s s (%s)' % (
            rung, len(ports), _fmt(interval), ', '.join('%s/%s' % (p['device'], p['port']) for p in ports))
        status = 'pass'
    return dict(changed=False, status=status, msg=msg, failures=failures, problems=problems, ports=ports,
                interval=interval, checked_counters=limits)


def _sminfo_runs(module, params, facts):
    """Run ``sminfo -C dev -P port`` for every selected InfiniBand port with a non-zero sm_lid when the tool is
    installed; returns ``({'dev/port': (res, parsed)}, path or None)``."""
    runs = {}
    if not params['check_sm'] or not params['sminfo_path']:
        return runs, None
    exe = runner.find(module, params['sminfo_path'])
    if not exe:
        return runs, None
    chosen, _errors = select_ports(facts, params['devices'] or [])
    for dev, port in chosen:
        info = facts[dev]['ports'][port]
        if not _is_ib(info) or not info.get('sm_lid'):
            continue
        res = runner.run([exe, '-C', dev, '-P', port], timeout=params['timeout'])
        runs['%s/%s' % (dev, port)] = (res, infiniband_diags.parse_sminfo(res['stdout']))
    return runs, exe


def _sleep(seconds):
    """The wait between the two reads (unit tests replace it to change the tree between the reads)."""
    time.sleep(seconds)


def run(module):
    """Refuse bad input, read the ports twice ``interval`` seconds apart, run ``sminfo`` where it helps, and check.
    Returns the result: for ``fail_json`` when ``failures`` is not empty, else for ``exit_json`` (``skipped`` on a
    host without RDMA devices when no device was asked for). Only reads: check mode runs the same."""
    params = module.params
    errors = input_errors(params)
    if errors:
        return dict(changed=False, msg='; '.join(errors), failures=errors)
    root = params['sysfs_root']
    t0 = time.monotonic()
    first = sysfs_ib.collect(root)
    if not first and not params['devices']:
        rung = params['rung'] or 'fabric_health'
        return dict(changed=False, skipped=True, status='skipped', failures=[], problems=[], ports=[],
                    interval=params['interval'], checked_counters=thresholds(params),
                    msg='skipped: no HCA (%s: no RDMA device under %s)' % (rung, sysfs_ib.class_dir(root)))
    started = time.monotonic()
    _sleep(params['interval'])
    second = sysfs_ib.collect(root)
    interval = round(max(time.monotonic() - started, float(params['interval'])), 1)
    sminfo, exe = _sminfo_runs(module, params, second)
    result = evaluate(first, second, params, interval, sminfo)
    result['sminfo_path'] = exe
    result['elapsed'] = round(time.monotonic() - t0, 3)
    if params['check_sm'] and params['sminfo_path'] and not exe:
        result['sminfo_note'] = 'sminfo not installed (infiniband-diags): subnet manager checked by sm_lid only'
    return result
