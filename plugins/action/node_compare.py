# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side comparison of one host's hardware facts with its expected profile
(documentation: plugins/modules/node_compare.py; logic: plugins/plugin_utils/_hwcheck.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._hwcheck import (
    check_node,
    facts_errors,
    node_versions,
    summarize_node,
    validate_expected,
)

FACT_KEYS = ('pci', 'infiniband', 'nvidia_gpu', 'firmware', 'kernel', 'packages')

ARGUMENT_SPEC = dict(
    facts=dict(type='dict'),
    expected=dict(type='dict', required=True),
    fail_on_deviation=dict(type='bool', default=True),
    label=dict(type='str'),
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

        expected = args['expected']
        errors = validate_expected(expected)
        if errors:
            result.update(failed=True, msg='node_compare: invalid expected: %s' % '; '.join(errors))
            return result

        facts = args['facts']
        source = 'facts'
        if facts is None:
            host_facts = task_vars.get('ansible_facts') or {}
            facts = dict((k, host_facts[k]) for k in FACT_KEYS if k in host_facts)
            source = 'ansible_facts'
        errors = facts_errors(facts, source)
        if errors:
            result.update(failed=True, msg='node_compare: malformed %s (not as the facts modules return them): %s'
                          % (source, '; '.join(errors)))
            return result

        try:
            deviations = check_node(facts, expected)
            summary = summarize_node(facts, expected)
            versions = node_versions(facts, expected.get('hca_match'))
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
            # a shape facts_errors() does not know yet: a clean failure, never a traceback
            result.update(failed=True, msg='node_compare: cannot compare %s (malformed facts?): %s: %s'
                          % (source, type(exc).__name__, exc))
            return result
        label = args['label'] or task_vars.get('inventory_hostname', 'host')
        result['deviations'] = deviations
        result['checked'] = sorted(k for k, v in expected.items() if v is not None and k != 'hca_match')
        result['summary'] = summary
        result['versions'] = versions
        if deviations:
            result['msg'] = '%s: %d deviation(s) from the expected hardware: %s' % (
                label, len(deviations), '; '.join(d['message'] for d in deviations))
            result['failed'] = bool(args['fail_on_deviation'])
        else:
            result['msg'] = '%s matches the expected hardware (%s)' % (
                label, ', '.join(result['checked']) or 'nothing to check')
        return result
