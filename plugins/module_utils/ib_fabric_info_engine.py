# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Engine of the ``ib_fabric_info`` module: the fabric-wide view from one host on the fabric.

Runs ``ibswitches`` and ``iblinkinfo -l`` (infiniband-diags) through a local port, and reads an ``ibdiagnet2.db_csv``
(NVIDIA MFT's ibdiagnet) when one is given; returns the switches, the links running below what both ends support
(iblinkinfo's own ``Could be ...``) or below the profile's width/lane speed, connected ports that are not Active,
and the switch firmware per model (PSID) with its inconsistencies. Findings are returned in ``problems``; a tool that
fails, or prints nothing it can parse, is a failure (a missing figure is never a clean fabric).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import ibdiagnet
from ansible_collections.gpufleet.cluster.plugins.module_utils import infiniband_diags as diags

WIDTHS = ('1X', '2X', '4X', '8X', '12X')


def input_errors(params):
    errors = ac.nul_errors(params) + ac.timeout_range(params['timeout'])
    errors += ac.word_errors('ca', params['ca']) + ac.int_range('ca_port', params['ca_port'], 1, 255)
    for name in ('ibswitches_path', 'iblinkinfo_path'):
        errors += ac.executable_errors(name, params[name])
    errors += ac.min_number('min_lane_gbps', params['min_lane_gbps'])
    if params['min_width'] is not None and params['min_width'].upper() not in WIDTHS:
        errors.append('min_width must be one of %s, got %r' % (', '.join(WIDTHS), params['min_width']))
    if params['expect_switch_fw'] is not None and not params['expect_switch_fw'].replace('.', '').isdigit():
        errors.append('expect_switch_fw must be a version like 27.2010.6102, got %r' % params['expect_switch_fw'])
    path = params['ibdiagnet_db_csv']
    if path is not None and '\x00' not in path:
        if path == '':
            errors.append('ibdiagnet_db_csv must be the path of an ibdiagnet2.db_csv file, got an empty string')
        elif os.path.isdir(path):
            errors.append('ibdiagnet_db_csv %s is a directory; give the ibdiagnet2.db_csv file in it' % path)
        elif os.path.lexists(path) and not os.path.isfile(path):
            errors.append('ibdiagnet_db_csv %s is not a regular file; give an ibdiagnet2.db_csv file' % path)
    return errors


def _port_args(params):
    args = []
    if params['ca']:
        args += ['-C', params['ca']]
    if params['ca_port']:
        args += ['-P', str(params['ca_port'])]
    return args


def _run_tool(module, params, name, extra, failures):
    exe = runner.find(module, params[name + '_path'])
    if not exe:
        return None, None
    res = runner.run([exe] + extra + _port_args(params), timeout=params['timeout'])
    why = runner.failure(res, params['timeout'])
    if why:
        failures.append('%s %s; cmd: %s' % (name, why, res['cmd']))
    return exe, res


def evaluate(switches_text, links_text, db_csv_text, params):
    """The fabric view from the tools' texts (None: not run). Returns the result keys and the failures (output that
    holds nothing to check)."""
    failures, problems = [], []
    result = dict(switches=[], links_total=None, links_below=[], ports_down=[], firmware=None)
    if switches_text is not None:
        parsed = diags.parse_ibswitches(switches_text)
        result['switches'] = parsed['switches']
        result['ibswitches_unparsed'] = parsed['unparsed']
        if not parsed['switches']:
            failures.append('ibswitches printed no switch line (%d other line(s)): no fabric seen'
                            % len(parsed['unparsed']))
    if links_text is not None:
        parsed = diags.parse_iblinkinfo(links_text)
        result['links_total'] = len(parsed['links'])
        result['iblinkinfo_unparsed'] = parsed['unparsed']
        if not parsed['links']:
            failures.append('iblinkinfo printed no port line (%d other line(s)): no fabric seen' % len(parsed['unparsed']))
        below = diags.links_below(parsed['links'], params.get('min_width'), params.get('min_lane_gbps'))
        down = diags.ports_down(parsed['links'])
        result['links_below'], result['ports_down'] = below, down
        for b in below:
            problems.append('link %s port %d -> %s port %s runs %s %s Gbps: %s' % (
                b['node_desc'], b['port'], b['peer_desc'], b['peer_port'], b['width'], b['speed_gbps'],
                ', '.join(b['reasons'])))
        for d in down:
            problems.append('port %s %d (to %s) is %s/%s' % (d['node_desc'], d['port'], d['peer_desc'], d['state'],
                                                             d['phys_state']))
    if db_csv_text is not None:
        tables = ibdiagnet.parse_db_csv(db_csv_text)
        sws = ibdiagnet.switches(tables)
        if not sws:
            failures.append('ibdiagnet db_csv has no switch in its NODES table (tables: %s)'
                            % (', '.join(sorted(k for k in tables if not k.startswith('_'))) or 'none'))
        fw = ibdiagnet.firmware_consistency(sws, params.get('expect_switch_fw'))
        result['firmware'] = dict(switches=sws, groups=fw['groups'], unknown=fw['unknown'])
        problems += fw['problems']
    result['problems'] = problems
    return result, failures


def run(module):
    params = module.params
    errors = input_errors(params)
    if errors:
        return dict(changed=False, msg='; '.join(errors), failures=errors)
    failures = []
    sw_exe, sw_res = _run_tool(module, params, 'ibswitches', [], failures)
    ln_exe, ln_res = _run_tool(module, params, 'iblinkinfo', ['-l'], failures)
    db_text = None
    if params['ibdiagnet_db_csv']:
        db_text = _sysfs.read_text(params['ibdiagnet_db_csv'])
        if db_text is None:
            failures.append('ibdiagnet_db_csv %s cannot be read (missing or unreadable)' % params['ibdiagnet_db_csv'])
    if sw_exe is None and ln_exe is None and params['ibdiagnet_db_csv'] is None:
        return dict(changed=False, skipped=True, failures=[], problems=[], status='skipped',
                    msg='skipped: infiniband-diags not installed (no %s, no %s) and no ibdiagnet_db_csv given'
                        % (params['ibswitches_path'], params['iblinkinfo_path']))

    def usable(res):
        return res is not None and not runner.failure(res, params['timeout'])

    result, more = evaluate(sw_res['stdout'] if usable(sw_res) else None, ln_res['stdout'] if usable(ln_res) else None,
                            db_text, params)
    failures += more
    result.update(changed=False, failures=failures,
                  commands=[r['cmd'] for r in (sw_res, ln_res) if r is not None],
                  status='fail' if failures else ('problems' if result['problems'] else 'ok'))
    if failures:
        result['msg'] = 'ib_fabric_info: ' + '; '.join(failures)
    elif result['problems']:
        result['msg'] = 'ib_fabric_info: %d switch(es), %s port line(s), %d problem(s): %s' % (
            len(result['switches']), result['links_total'], len(result['problems']), '; '.join(result['problems']))
    else:
        result['msg'] = 'ib_fabric_info: %d switch(es), %s port line(s), no problem' % (
            len(result['switches']), result['links_total'])
    if result['problems'] and params['fail_on_problems'] and not failures:
        result['failures'] = list(result['problems'])
    return result
