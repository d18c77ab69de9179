# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection: the engine of the ``gpufleet.cluster.slurm`` inventory plugin.

The plugin (plugins/inventory/slurm.py) runs scontrol or reads a recording, the parsers of
``module_utils/slurm.py`` turn it into node records, and this file decides - without Ansible's inventory
objects - which hosts, host variables and groups they give:

* ``option_errors(options)``: every bad option value, each message naming the option and what is allowed.
* ``build(nodes, options, evaluate)``: dict(hosts={name: vars}, groups={group: [hosts]}, children={group:
  [child groups]}, warnings=[...]). ``evaluate(expression, hostvars)`` answers a profile rule's ``when``
  (the plugin passes Ansible's templar; tests pass a stand-in).

Group names: ``slurm_partition_<p>``, ``slurm_state_<base state>`` and ``slurm_state_<flag>`` (``drain``,
``not_responding`` ...) plus ``slurm_state_drained`` / ``slurm_state_draining`` (the DRAIN flag on an idle vs a busy
node), ``slurm_feature_<f>``, ``slurm_gpu_<model>``, ``profile_<profile>``; every character that is not a letter,
digit or ``_`` becomes ``_`` (Ansible's rule for a safe group name), states and flags in lower case.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

PROFILE_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*\Z')
GROUP_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*\Z')
RULE_MATCHERS = ('partition', 'feature', 'gres_model', 'state', 'when')
RULE_KEYS = ('profile',) + RULE_MATCHERS
_UNSAFE = re.compile(r'[^A-Za-z0-9_]')


def safe_group(name):
    """A group name Ansible accepts as is: every character that is not a letter, digit or _ becomes _."""
    return _UNSAFE.sub('_', name)


def _str_list(value):
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def option_errors(options):
    """Messages for option values the plugin cannot use (empty list when fine)."""
    errors = []
    rules = options.get('profiles')
    if rules is None:
        rules = []
    if not isinstance(rules, list):
        errors.append('profiles must be a list of rules ({profile: NAME, partition/feature/gres_model/state/when: '
                      '...}), got %s' % type(rules).__name__)
        rules = []
    for i, rule in enumerate(rules):
        where = 'profiles[%d]' % i
        if not isinstance(rule, dict):
            errors.append('%s must be a dict with profile and at least one of %s, got %r'
                          % (where, ', '.join(RULE_MATCHERS), rule))
            continue
        unknown = sorted(set(rule) - set(RULE_KEYS))
        if unknown:
            errors.append('%s has unknown key(s) %s; allowed: %s' % (where, ', '.join(unknown), ', '.join(RULE_KEYS)))
        name = rule.get('profile')
        if not isinstance(name, str) or not PROFILE_RE.match(name):
            errors.append('%s.profile must be a name of letters, digits and _ (not starting with a digit; it becomes '
                          'the group profile_NAME and gpufleet_profile), got %r' % (where, name))
        if not any(k in rule for k in RULE_MATCHERS):
            errors.append('%s needs at least one of %s (a rule without a condition would match every node; use '
                          'profile_default for that)' % (where, ', '.join(RULE_MATCHERS)))
        for key in ('partition', 'feature', 'gres_model', 'state'):
            if key in rule and not (isinstance(rule[key], str) and rule[key].strip() or _str_list(rule[key])):
                errors.append('%s.%s must be a non-empty string or a list of them (any of them matches), got %r'
                              % (where, key, rule[key]))
        if 'when' in rule and not (isinstance(rule['when'], str) and rule['when'].strip()):
            errors.append('%s.when must be a Jinja2 condition without braces (e.g. "slurm_gpus >= 8"), got %r'
                          % (where, rule['when']))
    default = options.get('profile_default')
    if default is not None and (not isinstance(default, str) or not PROFILE_RE.match(default)):
        errors.append('profile_default must be a profile name of letters, digits and _ (not starting with a digit), '
                      'got %r' % (default,))
    parent = options.get('profile_parent_group')
    if parent and (not isinstance(parent, str) or not GROUP_RE.match(parent)):
        errors.append('profile_parent_group must be a group name of letters, digits and _ (or empty for none), got %r'
                      % (parent,))
    parts = options.get('partitions')
    if parts is not None and not (isinstance(parts, list) and all(isinstance(p, str) and p for p in parts)):
        errors.append('partitions must be a list of Slurm partition names, got %r' % (parts,))
    timeout = options.get('timeout')
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
        errors.append('timeout must be a whole number of seconds > 0, got %r' % (timeout,))
    return errors


def host_vars(node, options):
    """The variables of one node's host."""
    hv = {
        'slurm_node_name': node['name'],
        'slurm_node_addr': node.get('node_addr'),
        'slurm_node_hostname': node.get('hostname'),
        'slurm_state': node['state'],
        'slurm_state_base': node['base_state'].lower(),
        'slurm_state_flags': [f.lower() for f in node['flags']],
        'slurm_drain': node['drain'],
        'slurm_drained': node['drained'],
        'slurm_draining': node['draining'],
        'slurm_down': node['down'],
        'slurm_not_responding': node['not_responding'],
        'slurm_reason': node.get('reason') or '',
        'slurm_reason_user': node.get('reason_user'),
        'slurm_reason_time': node.get('reason_time'),
        'slurm_partitions': list(node.get('partitions') or []),
        'slurm_partition': (node.get('partitions') or [None])[0],
        'slurm_features': list(node.get('features') or []),
        'slurm_active_features': list(node.get('active_features') or []),
        'slurm_gres': node.get('gres') or '',
        'slurm_gres_list': [dict(g) for g in node.get('gres_list') or []],
        'slurm_gpus': node.get('gpus') or 0,
        'slurm_gpu_models': list(node.get('gpu_models') or []),
        'slurm_cpus': node.get('cpus_total'),
        'slurm_cpus_alloc': node.get('cpus_alloc'),
        'slurm_real_memory_mb': node.get('real_memory'),
        'slurm_alloc_memory_mb': node.get('alloc_memory'),
        'slurm_free_memory_mb': node.get('free_memory'),
        'slurm_version': node.get('slurm_version'),
        'slurm_arch': node.get('arch'),
        'slurm_os': node.get('os'),
    }
    if options.get('expect_gpus_from_gres', True):
        hv['gpufleet_expect_gpus'] = hv['slurm_gpus']
    addr = node.get('node_addr')
    if options.get('use_node_addr', True) and addr and addr != node['name']:
        hv['ansible_host'] = addr
    return hv


def _any(want, have):
    want = [want] if isinstance(want, str) else want
    return any(w in have for w in want)


def choose_profile(hv, rules, default=None, evaluate=None):
    """(profile, index of the rule that matched or None) for a host's variables: the first rule whose every
    condition holds - partition: the node is in one of them; feature: it has one of them (available features);
    gres_model: it has a GPU of one of these models; state: its base state or a flag is one of them; when: the
    Jinja2 condition is true - else ``default`` (None: no profile)."""
    for i, rule in enumerate(rules or []):
        if 'partition' in rule and not _any(rule['partition'], hv['slurm_partitions']):
            continue
        if 'feature' in rule and not _any(rule['feature'], hv['slurm_features']):
            continue
        if 'gres_model' in rule and not _any(rule['gres_model'], hv['slurm_gpu_models']):
            continue
        if 'state' in rule:
            states = [hv['slurm_state_base']] + hv['slurm_state_flags'] + (
                ['drained'] if hv['slurm_drained'] else []) + (['draining'] if hv['slurm_draining'] else [])
            want = [rule['state']] if isinstance(rule['state'], str) else rule['state']
            if not _any([w.lower() for w in want], states):
                continue
        if 'when' in rule:
            if evaluate is None or not evaluate(rule['when'], hv):
                continue
        return rule['profile'], i
    return default, None


def host_groups(hv):
    """The built-in groups of one host (names made safe)."""
    groups = ['slurm_partition_%s' % p for p in hv['slurm_partitions']]
    groups.append('slurm_state_%s' % hv['slurm_state_base'])
    groups.extend('slurm_state_%s' % f for f in hv['slurm_state_flags'])
    if hv['slurm_drained']:
        groups.append('slurm_state_drained')
    if hv['slurm_draining']:
        groups.append('slurm_state_draining')
    groups.extend('slurm_feature_%s' % f for f in hv['slurm_features'])
    groups.extend('slurm_gpu_%s' % m for m in hv['slurm_gpu_models'])
    out = []
    for g in groups:
        g = safe_group(g)
        if g not in out:
            out.append(g)
    return out


def build(nodes, options, evaluate=None):
    """Hosts, variables and groups from parsed node records (module_utils/slurm.py) and the plugin's options."""
    wanted = options.get('partitions') or []
    rules = options.get('profiles') or []
    parent = options.get('profile_parent_group', 'gpu_nodes')
    hosts, groups, children, warnings = {}, {}, {}, []
    seen = set()
    for node in nodes:
        name = node['name']
        if name in seen:
            warnings.append('Slurm node %s listed twice; the first entry is used' % name)
            continue
        seen.add(name)
        if wanted and not any(p in wanted for p in node.get('partitions') or []):
            continue
        hv = host_vars(node, options)
        profile = choose_profile(hv, rules, options.get('profile_default'), evaluate)[0]
        names = host_groups(hv)
        if profile:
            hv['gpufleet_profile'] = profile
            names.append('profile_%s' % profile)
            if parent:
                children.setdefault(parent, [])
                if 'profile_%s' % profile not in children[parent]:
                    children[parent].append('profile_%s' % profile)
        hosts[name] = hv
        for g in names:
            groups.setdefault(g, []).append(name)
    if wanted:
        missing = [p for p in wanted if not any(p in h['slurm_partitions'] for h in hosts.values())]
        if missing:
            warnings.append('no node in partition(s) %s (option partitions)' % ', '.join(missing))
    if not hosts:
        warnings.append('Slurm listed no node%s' % (' in partitions %s' % ', '.join(wanted) if wanted else ''))
    return {'hosts': hosts, 'groups': groups, 'children': children, 'warnings': warnings}
