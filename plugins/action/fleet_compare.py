# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side comparison of firmware/driver/OFED versions across the hosts of each profile
(documentation: plugins/modules/fleet_compare.py; logic: plugins/plugin_utils/_hwcheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

import re

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._hwcheck import (
    FLEET_DEFAULT_ITEMS,
    FLEET_ITEMS,
    facts_errors,
    fleet_compare,
)

ARGUMENT_SPEC = dict(
    hosts=dict(type='dict', required=True),
    profiles=dict(type='dict'),
    items=dict(type='list', elements='str', choices=list(FLEET_ITEMS), default=list(FLEET_DEFAULT_ITEMS)),
    hca_match=dict(type='str'),
    fail_on_deviation=dict(type='bool', default=True),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp  # nothing runs on the target
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        result['changed'] = False

        bad = sorted(h for h, f in args['hosts'].items() if f is not None and not isinstance(f, dict))
        if bad:
            result.update(failed=True, msg='fleet_compare: hosts.<host> must be a dict of facts; not for %s'
                          % ', '.join(bad))
            return result
        errors = []
        for host in sorted(args['hosts'], key=str):
            errors += facts_errors(args['hosts'][host], 'hosts.%s' % host)
        if args['hca_match'] is not None:
            try:
                re.compile(args['hca_match'])
            except re.error as exc:
                errors.append('hca_match must be a regular expression (for example ^mlx5_), got %r: %s'
                              % (args['hca_match'], exc))
        bad_profiles = sorted(h for h, p in (args['profiles'] or {}).items()
                              if p is not None and not isinstance(p, (str, int, float)))
        if bad_profiles:
            errors.append('profiles.<host> must be a profile name (a string); not for %s' % ', '.join(bad_profiles))
        if errors:
            result.update(failed=True, msg='fleet_compare: %s' % '; '.join(errors[:10]))
            return result
        profiles = dict((h, p) for h, p in (args['profiles'] or {}).items())
        try:
            summary, deviations = fleet_compare(args['hosts'], profiles, args['items'], args['hca_match'])
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
            # a shape facts_errors() does not know yet: a clean failure, never a traceback
            result.update(failed=True, msg='fleet_compare: cannot compare the hosts\' facts (malformed facts?): %s: %s'
                          % (type(exc).__name__, exc))
            return result
        outliers = sorted(set(d['host'] for d in deviations))
        result.update(summary=summary, deviations=deviations, outliers=outliers)
        if deviations:
            result['msg'] = 'versions differ across the fleet (%d host(s): %s): %s' % (
                len(outliers), ', '.join(outliers), '; '.join(d['message'] for d in deviations))
            result['failed'] = bool(args['fail_on_deviation'])
        else:
            result['msg'] = '%d host(s) agree on %s' % (len(args['hosts']), ', '.join(args['items']))
        return result
