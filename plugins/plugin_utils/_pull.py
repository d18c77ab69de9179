# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side): pull mode (docs/scale.md, "Pull mode").

- the bundle's inventory: the profile's nodes and every group they are in, with those groups' and nodes'
  variables, from ``ansible-inventory --list --export`` (nothing of groups without a node of the profile);
- the bundle's pins: meta/requirements-pull.txt resolved for the nodes' Python;
- the aggregation: every node's result (gpufleet-pull, plugins/plugin_utils/_pull_runner.py) merged into the same
  drift report push mode writes (plugins/plugin_utils/_drift.py build_report), naming the nodes that did not report.

Errors are ValueError with a message naming the input and what is allowed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._drift import build_report

RESULT_FORMAT = 'gpufleet.pull-result/1'
BUNDLE_FORMAT = 'gpufleet.pull-bundle/1'
# how the controller reaches a node: meaningless on the node itself (it runs with a local connection)
CONNECTION_VARS = re.compile(r'^ansible_(host|port|user|connection|password|ssh_.*|private_key_file|'
                             r'host_key_checking|paramiko_.*|winrm_.*|psrp_.*|network_os)$')
RESULT_KEYS = ('format', 'node', 'mode')


# ---------------------------------------------------------------------------------------------- bundle: inventory

def _hosts_under(export, group, seen=None):
    seen = set() if seen is None else seen
    if group in seen:
        return set()
    seen.add(group)
    entry = export.get(group) or {}
    hosts = set(entry.get('hosts') or [])
    for child in entry.get('children') or []:
        hosts |= _hosts_under(export, child, seen)
    return hosts


def _strip(variables):
    return dict((k, v) for k, v in (variables or {}).items() if not CONNECTION_VARS.match(k))


def profile_inventory(export, profile):
    """The bundle's inventory for group ``profile``: (inventory dict in YAML-inventory form, sorted node list)."""
    if not isinstance(export, dict) or not isinstance(export.get('all'), dict):
        raise ValueError('the inventory export is not ansible-inventory --list --export output (no "all" group)')
    if not isinstance(profile, str) or not profile:
        raise ValueError('profile must be the name of an inventory group (e.g. profile_h100_ib), got %r' % (profile,))
    groups = [g for g in export if g != '_meta']
    if profile not in groups:
        raise ValueError('profile group %r is not in the inventory (groups: %s)' % (profile, ', '.join(sorted(groups))))
    nodes = _hosts_under(export, profile)
    if not nodes:
        raise ValueError('profile group %r has no hosts: nothing to bundle' % profile)
    hostvars = (export.get('_meta') or {}).get('hostvars') or {}
    under = dict((g, _hosts_under(export, g) & nodes) for g in groups)
    keep = set(g for g in groups if under[g]) | {'all'}

    def entry(group):
        src = export.get(group) or {}
        out = {}
        hosts = sorted(h for h in src.get('hosts') or [] if h in nodes)
        if hosts:
            out['hosts'] = dict((h, _strip(hostvars.get(h)) or None) for h in hosts)
        variables = _strip(src.get('vars'))
        if variables:
            out['vars'] = variables
        children = [c for c in src.get('children') or [] if c in keep and c != 'ungrouped']
        if children:
            out['children'] = dict((c, entry(c)) for c in children)
        return out

    # a host listed directly in 'all' or 'ungrouped' keeps its host vars there
    inv = {'all': entry('all')}
    loose = sorted(h for h in (export.get('ungrouped') or {}).get('hosts') or [] if h in nodes)
    if loose:
        inv['all'].setdefault('hosts', {}).update((h, _strip(hostvars.get(h)) or None) for h in loose)
    return inv, sorted(nodes)


class _Tagged(str):
    tag = None


class _Vault(_Tagged):
    tag = '!vault'


class _Unsafe(_Tagged):
    tag = '!unsafe'


def _tag(value):
    """The export's JSON forms of vaulted and unsafe values back to YAML tags."""
    if isinstance(value, dict):
        if list(value) == ['__ansible_vault']:
            return _Vault(value['__ansible_vault'])
        if list(value) == ['__ansible_unsafe']:
            return _Unsafe(value['__ansible_unsafe'])
        return dict((k, _tag(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_tag(v) for v in value]
    return value


def inventory_yaml(inventory, header=''):
    """YAML text of the bundle's inventory; vaulted values stay encrypted (!vault), unsafe ones !unsafe."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def tagged(dumper, data):
        style = '|' if data.tag == '!vault' else None
        return dumper.represent_scalar(data.tag, str(data), style=style)

    Dumper.add_representer(_Vault, tagged)
    Dumper.add_representer(_Unsafe, tagged)
    return header + yaml.dump(_tag(inventory), Dumper=Dumper, default_flow_style=False, sort_keys=True, width=120)


# ----------------------------------------------------------------------------------------------- bundle: the pins

def resolve_requirements(text, python_version):
    """meta/requirements-pull.txt for one Python version ("3.11"): the pins whose markers hold, as 'name==version'
    lines. Every line must be pinned with ==."""
    from packaging.markers import InvalidMarker
    from packaging.requirements import Requirement, InvalidRequirement
    if not re.match(r'^3\.\d+(\.\d+)?$', str(python_version or '')):
        raise ValueError('python_version must be a Python 3 version such as 3.11, got %r' % (python_version,))
    parts = str(python_version).split('.')
    env = {'python_version': '.'.join(parts[:2]), 'python_full_version': '.'.join((parts + ['0'])[:3])}
    out, names = [], set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise ValueError('requirements line %d %r: %s' % (number, raw, exc))
        try:
            if req.marker is not None and not req.marker.evaluate(env):
                continue
        except InvalidMarker as exc:  # pragma: no cover - Requirement() parsed it already
            raise ValueError('requirements line %d: %s' % (number, exc))
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != '==':
            raise ValueError('requirements line %d %r: every pin must be name==version' % (number, raw))
        key = req.name.lower().replace('_', '-')
        if key in names:
            raise ValueError('requirements line %d: %s is pinned twice for Python %s' % (number, req.name, python_version))
        names.add(key)
        out.append('%s==%s' % (req.name, specs[0].version))
    if 'ansible-core' not in names:
        raise ValueError('the requirements pin no ansible-core for Python %s' % python_version)
    return out


# --------------------------------------------------------------------------------------------- aggregation

def _problem(source, msg):
    return 'result %s: %s' % (source, msg)


def _check_result(data):
    """What is wrong with a parsed result (None: nothing)."""
    if not isinstance(data, dict):
        return 'not a JSON object'
    if data.get('format') != RESULT_FORMAT:
        return 'format is %r, not %s (not a gpufleet-pull result)' % (data.get('format'), RESULT_FORMAT)
    for key in RESULT_KEYS:
        if not isinstance(data.get(key), str) or not data.get(key):
            return '"%s" is missing or not a string' % key
    if data['mode'] not in ('check', 'apply'):
        return 'mode must be check or apply, got %r' % data['mode']
    for key in ('settings', 'consequences'):
        value = data.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(s, dict) for s in value)):
            return '"%s" must be a list of objects' % key
    check = data.get('check')
    if check is not None and (not isinstance(check, dict) or not isinstance(check.get('messages', []), list)):
        return '"check" must be an object with a list "messages"'
    fleet = data.get('fleet')
    if fleet is not None and not isinstance(fleet, dict):
        return '"fleet" must be an object'
    return None


def read_results(directory):
    """[{'source', 'data', 'error'}] for every *.json in ``directory`` (not recursive; dot files are skipped: the
    runner's temporary files). Unreadable or unparsable files come back with 'error'."""
    if not isinstance(directory, str) or not directory:
        raise ValueError('pull results: give the directory the nodes deliver to (gpufleet-pull --dest)')
    if not os.path.isdir(directory):
        raise ValueError('pull results: %s is not a directory' % directory)
    out = []
    for name in sorted(os.listdir(directory)):
        if name.startswith('.') or not name.endswith('.json'):
            continue
        path = os.path.join(directory, name)
        item = {'source': name, 'data': None, 'error': None}
        try:
            with open(path, 'rb') as f:
                item['data'] = json.loads(f.read().decode('utf-8'))
        except (IOError, OSError) as exc:
            item['error'] = 'cannot read: %s' % (exc.strerror or exc)
        except ValueError as exc:
            item['error'] = 'not valid JSON: %s' % exc
        out.append(item)
    return out


def merge_results(results, expected=None, run_id=None, max_age=None, now=None):
    """The nodes' results merged: the inputs of build_report (changes, checks), fleet_compare's input over every
    node that compares versions, and who did not report. ``expected``: the nodes that must report (inventory);
    ``run_id``: only results of that run count; ``max_age`` (s, with ``now``): older results do not count."""
    if not isinstance(results, list):
        raise ValueError('pull results must be a list, got %s' % type(results).__name__)
    if expected is not None and (not isinstance(expected, list) or not all(isinstance(h, str) for h in expected)):
        raise ValueError('the expected nodes must be a list of host names')
    if max_age is not None:
        try:
            max_age = float(max_age)
        except (TypeError, ValueError):
            raise ValueError('max_age must be a number of seconds, got %r' % (max_age,))
        if max_age <= 0 or now is None:
            raise ValueError('max_age must be more than 0 seconds (and needs the current time)')
    changes = {'hosts': {}, 'consequences': {}}
    checks, errors, stale, sources, runner = {}, {}, {}, {}, {}
    fleet = {'hosts': {}, 'profiles': {}, 'items': []}
    modes = {}
    for item in results:
        source = item.get('source') if isinstance(item, dict) else None
        source = source or '?'
        data = item.get('data') if isinstance(item, dict) else None
        stem = re.sub(r'\.json$', '', os.path.basename(source))
        problem = item.get('error') if isinstance(item, dict) else 'not a result item'
        if not problem:
            problem = _check_result(data)
        if problem:
            errors[stem] = _problem(source, problem)
            continue
        node = data['node']
        if node in sources:
            errors[node] = _problem(source, 'a second result for %s (the other is %s): one file per node'
                                    % (node, sources[node]))
            continue
        sources[node] = source
        if run_id is not None and str(data.get('run_id')) != str(run_id):
            stale[node] = 'its result is of run %s, not %s' % (data.get('run_id'), run_id)
            continue
        written = data.get('written_unix')
        if max_age is not None and (not isinstance(written, (int, float)) or now - written > max_age):
            stale[node] = 'its result is older than %d s' % max_age if isinstance(written, (int, float)) \
                else 'its result has no time (written_unix)'
            continue
        modes.setdefault(data['mode'], []).append(node)
        if data.get('status') == 'error' or not isinstance(data.get('check'), dict):
            errors[node] = _problem(source, data.get('error') or 'the node was not checked')
        else:
            check = dict(data['check'])
            check['messages'] = list(check.get('messages') or [])
            check['deviations'] = list(check.get('deviations') or [])
            checks[node] = check
        if data.get('settings'):
            changes['hosts'][node] = data['settings']
        if data.get('consequences'):
            changes['consequences'][node] = data['consequences']
        fl = data.get('fleet') or {}
        if fl.get('fleet') and isinstance(fl.get('entry'), dict):
            fleet['hosts'][node] = fl['entry']
            fleet['profiles'][node] = fl['entry'].get('profile')
            for i in fl.get('items') or []:
                if i not in fleet['items']:
                    fleet['items'].append(i)
        if isinstance(data.get('runner'), dict):
            runner[node] = data['runner']
    if len(modes) > 1:
        raise ValueError('pull results of check and apply runs are mixed (apply: %s): keep one run\'s results'
                         % ', '.join(sorted(modes.get('apply', []))[:10]))
    reported = sorted(n for n in sources if n not in stale)
    expected = sorted(set(expected)) if expected is not None else None
    not_reported = sorted(set(expected or []) - set(reported) - set(errors))
    unexpected = sorted(set(reported) - set(expected)) if expected is not None else []
    nodes = sorted(set(expected or []) | set(reported) | set(errors))
    return {
        'mode': (list(modes) or ['check'])[0],
        'nodes': nodes,
        'expected': expected,
        'reported': reported,
        'not_reported': not_reported,
        'stale': stale,
        'errors': errors,
        'unexpected': unexpected,
        'changes': changes,
        'checks': checks,
        'fleet': fleet,
        'runner': runner,
        'run_id': run_id,
    }


def _spread(values):
    values = sorted(v for v in values if isinstance(v, (int, float)))
    if not values:
        return None
    return {'min': values[0], 'median': values[len(values) // 2], 'max': values[-1], 'n': len(values)}


def drift_report(merged, fleet_deviations=None):
    """The fleet drift report (the same as push mode's, plugins/plugin_utils/_drift.py) from merge_results' output and
    fleet_compare's deviations over the reported nodes, with ``pull``: who did not report and why."""
    if not isinstance(merged, dict) or 'checks' not in merged or 'nodes' not in merged:
        raise ValueError('pull_drift_report needs the merged pull results (lookup gpufleet.cluster.pull_results)')
    if fleet_deviations is not None and not isinstance(fleet_deviations, list):
        raise ValueError('fleet deviations must be a list (fleet_compare\'s deviations)')
    checks = dict(merged['checks'])
    # what node_facts_check adds in a push run: each node's deviations from its profile's majority
    for dev in fleet_deviations or []:
        host = dev.get('host') if isinstance(dev, dict) else None
        if host not in checks:
            continue
        check = dict(checks[host])
        check['deviations'] = list(check.get('deviations') or []) + [dev]
        check['messages'] = list(check.get('messages') or []) + [dev.get('message')]
        check['status'] = 'failed'
        checks[host] = check
    report = build_report(merged['changes'], merged['nodes'], checks, merged['nodes'], merged['mode'] == 'check')
    not_reported = dict((n, 'no result') for n in merged['not_reported'])
    not_reported.update(merged.get('stale') or {})
    runner = merged.get('runner') or {}
    findings = []
    if report['drift']:
        findings.append('%s on %s: %s' % ('drift' if report['mode'] == 'check' else 'changed (remediated)',
                                          ', '.join(report['drifted_nodes']),
                                          ', '.join('%s %d' % kv for kv in sorted(report['summary'].items()))))
    if not_reported:
        findings.append('did not report: ' + ', '.join('%s (%s)' % kv for kv in sorted(not_reported.items())))
    if merged.get('errors'):
        findings.append('failed: ' + ', '.join('%s (%s)' % kv for kv in sorted(merged['errors'].items())))
    report['pull'] = {
        'findings': findings,
        'expected': len(merged['expected']) if merged.get('expected') is not None else None,
        'reported': len(merged['reported']),
        'not_reported': dict(sorted(not_reported.items())),
        'errors': dict(sorted((merged.get('errors') or {}).items())),
        'unexpected': merged.get('unexpected') or [],
        'run_id': merged.get('run_id'),
        'node_wall_s': _spread(r.get('wall_s') for r in runner.values()),
        'node_cpu_s': _spread(r.get('cpu_s') for r in runner.values()),
    }
    return report


def render_drift_md(template_text, report):
    """drift.md from push mode's template (playbooks/templates/drift.md.j2) with plain Jinja2 and the template module's
    whitespace settings: the same text as ansible.builtin.template gives (a unit test holds them equal), without its
    per-value overhead - 65 s instead of seconds for 10,000 nodes."""
    import jinja2
    from ansible.plugins.filter.core import dict_to_list_of_dict_key_value_elements
    env = jinja2.Environment(trim_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             autoescape=False)
    env.filters['dict2items'] = dict_to_list_of_dict_key_value_elements
    return env.from_string(template_text).render(__report=report)
