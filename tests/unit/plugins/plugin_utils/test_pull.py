# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pull mode, controller side: the bundle's inventory and pins, the aggregation of the nodes' results (hand-made
inventories and results, shaped as ansible-inventory --export and playbooks/drift.yml write them)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._drift import build_report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

VAULT = '$ANSIBLE_VAULT;1.1;AES256\n3365613064\n'
EXPORT = {
    '_meta': {'hostvars': {
        'a1': {'ansible_host': '10.0.0.1', 'ansible_ssh_common_args': '-o X', 'rack': 'r1'},
        'a2': {'ansible_port': 2222},
        'b1': {'ansible_host': '10.0.1.1', 'b_host_secret': 'hunter2'},
    }, 'profile': 'inventory_legacy'},
    'all': {'children': ['ungrouped', 'gpu_nodes', 'slurm_compute', 'login'],
            'vars': {'ansible_user': 'root', 'site': 'dc1', 'ansible_connection': 'ssh'}},
    'gpu_nodes': {'children': ['profile_a', 'profile_b'], 'vars': {'gpufleet_containers': True}},
    'profile_a': {'hosts': ['a1', 'a2'], 'vars': {'gpufleet_profile': 'a', 'secret_a': {'__ansible_vault': VAULT},
                                                  'raw': {'__ansible_unsafe': '{{ not templated }}'}}},
    'profile_b': {'hosts': ['b1'], 'vars': {'secret_b': {'__ansible_vault': VAULT}}},
    'slurm_compute': {'hosts': ['a1', 'b1'], 'vars': {'partition': 'gpu'}},
    'login': {'hosts': ['l1'], 'vars': {'login_secret': 'x'}},
    'ungrouped': {},
}


def test_profile_inventory_keeps_the_profile_and_its_groups_only():
    inv, nodes = _pull.profile_inventory(EXPORT, 'profile_a')
    assert nodes == ['a1', 'a2']
    text = json.dumps(inv)
    for other in ('b1', 'secret_b', 'b_host_secret', 'hunter2', 'login_secret', 'l1', 'profile_b'):
        assert other not in text, other
    a = inv['all']
    assert a['vars'] == {'site': 'dc1'}  # connection variables left out: the node runs locally
    assert sorted(a['children']) == ['gpu_nodes', 'slurm_compute']
    assert a['children']['slurm_compute'] == {'hosts': {'a1': {'rack': 'r1'}}, 'vars': {'partition': 'gpu'}}
    prof = a['children']['gpu_nodes']['children']['profile_a']
    assert prof['hosts'] == {'a1': {'rack': 'r1'}, 'a2': None}
    assert a['children']['gpu_nodes']['vars'] == {'gpufleet_containers': True}


def test_profile_inventory_yaml_keeps_vault_and_unsafe_and_loads_in_ansible():
    from ansible.parsing.dataloader import DataLoader
    inv, _nodes = _pull.profile_inventory(EXPORT, 'profile_a')
    text = _pull.inventory_yaml(inv, '# header\n')
    assert text.startswith('# header\n')
    assert '!vault |' in text and "!unsafe '{{ not templated }}'" in text
    data = DataLoader().load(text)
    pvars = data['all']['children']['gpu_nodes']['children']['profile_a']['vars']
    assert re.search('vault|encrypted', type(pvars['secret_a']).__name__, re.I), type(pvars['secret_a'])
    assert pvars['gpufleet_profile'] == 'a'


@pytest.mark.parametrize('export, profile, msg', [
    ({}, 'profile_a', 'not ansible-inventory --list --export output'),
    (EXPORT, 'profile_z', "profile group 'profile_z' is not in the inventory (groups: all, gpu_nodes, login"),
    (EXPORT, 'ungrouped', "profile group 'ungrouped' has no hosts"),
    (EXPORT, '', 'profile must be the name of an inventory group'),
    (EXPORT, None, 'profile must be the name of an inventory group'),
])
def test_profile_inventory_refuses(export, profile, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        _pull.profile_inventory(export, profile)


def _pins(path):
    out = {}
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if '==' in line:
                name, version = line.split(';')[0].split('==')
                out[name.strip().lower()] = version.strip()
    return out


def test_requirements_resolve_per_python_and_agree_with_the_ci_pins():
    with open(os.path.join(ROOT, 'meta', 'requirements-pull.txt')) as f:
        text = f.read()
    new, old = _pull.resolve_requirements(text, '3.12'), _pull.resolve_requirements(text, '3.11.2')
    assert 'ansible-core==2.21.5' in new and 'ansible-core==2.19.14' in old
    assert not any(p.startswith('ansible-core==2.19') for p in new)
    main, compat = _pins('requirements.txt'), _pins('requirements-compat.txt')
    for pins, ref in ((new, main), (old, compat)):
        for pin in pins:
            name, version = pin.split('==')
            if name == 'pip':
                continue
            assert ref.get(name.lower()) == version, (pin, ref.get(name.lower()))
    # ansible-core's own dependencies are all pinned (the wheelhouse is downloaded with --no-deps)
    names = set(p.split('==')[0].lower() for p in old)
    assert {'jinja2', 'markupsafe', 'pyyaml', 'cryptography', 'cffi', 'pycparser', 'packaging', 'resolvelib', 'pip'} <= names


@pytest.mark.parametrize('text, version, msg', [
    ('ansible-core==2.21.5\n', '2.7', 'python_version must be a Python 3 version'),
    ('ansible-core==2.21.5\n', None, 'python_version must be a Python 3 version'),
    ('ansible-core>=2.19\n', '3.11', 'every pin must be name==version'),
    ('ansible-core==2.19.14\nansible_core==2.19.14\n', '3.11', 'pinned twice'),
    ('jinja2==3.1.6\n', '3.11', 'pin no ansible-core'),
    ('ansible-core==2.21.5; python_version >= "3.12"\n', '3.11', 'pin no ansible-core for Python 3.11'),
    ('this is not a requirement!\n', '3.11', 'requirements line 1'),
])
def test_requirements_refused(text, version, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        _pull.resolve_requirements(text, version)


# ----------------------------------------------------------------------------------------------- aggregation

SSH = {'task': 'Write the hardening drop-in', 'role': 'gpufleet.cluster.ssh_hardening',
       'kind': 'gpufleet.cluster.ssh_hardening', 'action': 'ansible.builtin.template', 'diff': []}
HOLD = {'task': 'Hold the driver packages', 'role': 'gpufleet.cluster.nvidia_driver',
        'kind': 'gpufleet.cluster.nvidia_driver', 'action': 'ansible.builtin.dpkg_selections', 'diff': []}


def result(node, settings=(), messages=(), mode='check', versions=None, **extra):
    r = {'format': _pull.RESULT_FORMAT, 'kind': 'drift', 'mode': mode, 'node': node, 'profile': 'lab_stack',
         'drift': bool(settings or messages), 'settings': list(settings), 'consequences': [],
         'check': {'status': 'failed' if messages else 'passed', 'messages': list(messages), 'deviations': []},
         'fleet': {'fleet': True, 'items': ['driver', 'hca_firmware'],
                   'entry': {'profile': 'lab_stack', 'versions': versions or {'driver': '570.133.20'}}},
         'status': 'drift' if settings or messages else 'clean', 'run_id': '42', 'written_unix': 1000,
         'runner': {'wall_s': 50.0, 'cpu_s': 40.0}}
    r.update(extra)
    return r


def item(data, source=None, error=None):
    return {'source': source or '%s.json' % data['node'], 'data': data, 'error': error}


def test_merge_names_the_nodes_that_did_not_report():
    m = _pull.merge_results([item(result('n1', [SSH, HOLD])), item(result('n2'))], expected=['n1', 'n2', 'n3', 'n4'])
    assert m['reported'] == ['n1', 'n2'] and m['not_reported'] == ['n3', 'n4'] and m['errors'] == {}
    r = _pull.drift_report(m)
    assert r['drifted_nodes'] == ['n1'] and r['unchecked'] == ['n3', 'n4']
    assert r['pull']['not_reported'] == {'n3': 'no result', 'n4': 'no result'}
    assert r['pull']['expected'] == 4 and r['pull']['reported'] == 2
    assert r['pull']['node_wall_s'] == {'min': 50.0, 'median': 50.0, 'max': 50.0, 'n': 2}


def test_merged_report_equals_push_modes_for_the_same_runs():
    """The pull report's nodes/summary are build_report's over the same record and checks (push mode's report)."""
    m = _pull.merge_results([item(result('n1', [SSH, HOLD])), item(result('n2', [HOLD], ['kernel: expected 6.1']))],
                            expected=['n1', 'n2'])
    r = _pull.drift_report(m)
    push = build_report({'hosts': {'n1': [SSH, HOLD], 'n2': [HOLD]}, 'consequences': {}}, ['n1', 'n2'],
                        {'n1': {'messages': []}, 'n2': {'messages': ['kernel: expected 6.1']}}, ['n1', 'n2'], True)
    pull = dict(r)
    del pull['pull']
    assert pull == push


def test_fleet_deviations_become_version_lock_messages():
    m = _pull.merge_results([item(result('n1')), item(result('n2')),
                             item(result('n3', versions={'driver': '550.127.08'}))], expected=['n1', 'n2', 'n3'])
    assert sorted(m['fleet']['hosts']) == ['n1', 'n2', 'n3'] and m['fleet']['items'] == ['driver', 'hca_firmware']
    dev = {'host': 'n3', 'item': 'driver', 'message': 'driver 550.127.08 differs from the fleet majority 570.133.20'}
    r = _pull.drift_report(m, [dev, {'host': 'nX', 'message': 'not a reported node'}])
    assert r['drifted_nodes'] == ['n3'] and r['nodes']['n3']['version_lock'] == [dev['message']]
    assert m['checks']['n3']['messages'] == []  # the merge's input is left as it was


@pytest.mark.parametrize('bad, why', [
    (item({'format': 'other/1', 'node': 'n2', 'mode': 'check'}), "format is 'other/1'"),
    (item(result('n2', mode='sometimes')), 'mode must be check or apply'),
    (item(dict(result('n2'), node=None), source='n2.json'), '"node" is missing'),
    (item(dict(result('n2'), settings='everything')), '"settings" must be a list of objects'),
    (item(dict(result('n2'), check=['x'])), '"check" must be an object'),
    (item(dict(result('n2'), fleet='yes')), '"fleet" must be an object'),
    ({'source': 'n2.json', 'data': [1, 2], 'error': None}, 'not a JSON object'),
    ({'source': 'n2.json', 'data': None, 'error': 'not valid JSON: Expecting value'}, 'not valid JSON'),
    (item(result('n2', status='error', check=None, error='apt failed: E: broken source')), 'apt failed'),
])
def test_a_bad_result_makes_its_node_an_error_and_the_rest_merges(bad, why):
    m = _pull.merge_results([item(result('n1', [SSH])), bad], expected=['n1', 'n2'])
    assert list(m['errors']) == ['n2'] and why in m['errors']['n2'] and 'n2.json' in m['errors']['n2']
    r = _pull.drift_report(m)
    assert r['unchecked'] == ['n2'] and r['drifted_nodes'] == ['n1'] and r['pull']['not_reported'] == {}


def test_two_results_for_one_node():
    m = _pull.merge_results([item(result('n1')), item(result('n1'), source='n1-copy.json')], expected=['n1'])
    assert 'a second result for n1 (the other is n1.json)' in m['errors']['n1']


def test_other_runs_and_old_results_do_not_count():
    m = _pull.merge_results([item(result('n1')), item(result('n2', run_id='41')), item(result('n3', written_unix=10))],
                            expected=['n1', 'n2', 'n3'], run_id=42)
    assert m['reported'] == ['n1', 'n3'] and m['stale'] == {'n2': 'its result is of run 41, not 42'}
    m = _pull.merge_results([item(result('n1')), item(result('n3', written_unix=10))], expected=['n1', 'n3'],
                            max_age=100, now=1050)
    assert m['stale'] == {'n3': 'its result is older than 100 s'} and m['reported'] == ['n1']
    r = _pull.drift_report(m)
    assert r['pull']['not_reported'] == {'n3': 'its result is older than 100 s'} and r['unchecked'] == ['n3']


def test_unexpected_nodes_are_merged_and_named():
    m = _pull.merge_results([item(result('n1')), item(result('n9', [SSH]))], expected=['n1'])
    assert m['unexpected'] == ['n9'] and _pull.drift_report(m)['drifted_nodes'] == ['n9']


@pytest.mark.parametrize('args, msg', [
    (([item(result('n1')), item(result('n2', mode='apply'))], ['n1', 'n2']), 'check and apply runs are mixed'),
    (('x', None), 'must be a list'),
    (([], 'n1'), 'expected nodes must be a list'),
])
def test_merge_refuses(args, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        _pull.merge_results(*args)


def test_merge_refuses_bad_max_age():
    with pytest.raises(ValueError, match='max_age must be a number'):
        _pull.merge_results([], expected=[], max_age='soon', now=1)
    with pytest.raises(ValueError, match='more than 0'):
        _pull.merge_results([], expected=[], max_age=0, now=1)


def test_drift_report_refuses_other_input():
    with pytest.raises(ValueError, match='merged pull results'):
        _pull.drift_report({'nodes': []})
    with pytest.raises(ValueError, match='fleet deviations must be a list'):
        _pull.drift_report(_pull.merge_results([], expected=['n1']), 'x')


def test_read_results_from_a_directory(tmp_path):
    (tmp_path / 'n1.json').write_text(json.dumps(result('n1')))
    (tmp_path / 'n2.json').write_text('{"format": "gpufleet.pull-result/1", ')  # cut off
    (tmp_path / '.n3.abc.tmp').write_text('{}')  # a runner's temporary file
    (tmp_path / 'README').write_text('x')
    got = _pull.read_results(str(tmp_path))
    assert [g['source'] for g in got] == ['n1.json', 'n2.json']
    assert got[0]['data']['node'] == 'n1' and got[1]['error'].startswith('not valid JSON')
    m = _pull.merge_results(got, expected=['n1', 'n2', 'n3'])
    assert m['not_reported'] == ['n3'] and 'n2.json: not valid JSON' in m['errors']['n2']
    with pytest.raises(ValueError, match='is not a directory'):
        _pull.read_results(str(tmp_path / 'nope'))
    with pytest.raises(ValueError, match='give the directory'):
        _pull.read_results('')


def test_pull_report_template_names_who_did_not_report():
    """drift.md from the report (the template of push mode, with its pull lines)."""
    from ansible.template import Templar, trust_as_template
    from ansible.parsing.dataloader import DataLoader
    m = _pull.merge_results([item(result('n1', [SSH])),
                             item(result('n2', status='error', check=None, error='apt failed'))],
                            expected=['n1', 'n2', 'n3'], run_id='42')
    report = _pull.drift_report(m)
    with open(os.path.join(ROOT, 'playbooks', 'templates', 'drift.md.j2')) as f:
        src = f.read()
    text = Templar(loader=DataLoader(), variables={'__report': report}).template(trust_as_template(src))
    # the action renders it with plain Jinja2 (65 s -> 3 s for 10,000 nodes): the same text as Ansible's templating,
    # for a pull report and for push mode's (no pull key, a version lock deviation, consequences, a clean report)
    assert _pull.render_drift_md(src, report) == text
    push = build_report({'hosts': {'n1': [SSH, dict(HOLD, diff=[{'path': '/x', 'before': 'a', 'after': 'b'},
                                                                {'prepared': 'x'}])]},
                         'consequences': {'n1': [{'task': 'Reload sshd'}]}},
                        ['n1', 'n2'], {'n1': {'messages': ['kernel: expected 6.1']}}, ['n1', 'n2'])
    for rep in (push, build_report({}, ['n1'], {'n1': {'messages': []}}, ['n1'])):
        assert _pull.render_drift_md(src, rep) == \
            Templar(loader=DataLoader(), variables={'__report': rep}).template(trust_as_template(src))
    assert 'Nodes with drift: n1.' in text
    assert 'Pull mode: 2 of 3 node(s) reported (run 42).' in text
    assert 'Did not report: n3 (no result).' in text
    assert 'Failed: n2 (result n2.json: apt failed).' in text
    assert '## n1' in text and 'Write the hardening drop-in' in text


def test_inventory_yaml_round_trip_plain():
    inv, _nodes = _pull.profile_inventory(EXPORT, 'profile_b')
    data = yaml.safe_load(_pull.inventory_yaml({'all': {'vars': {'x': 1}}}))
    assert data == {'all': {'vars': {'x': 1}}}
    assert 'b1' in json.dumps(inv) and 'a1' not in json.dumps(inv)  # slurm_compute keeps b1 only


def test_findings_name_drift_missing_and_failed_nodes():
    m = _pull.merge_results([item(result('n1', [SSH, HOLD])),
                             item(result('n2', status='error', check=None, error='apt failed'))],
                            expected=['n1', 'n2', 'n3'])
    assert _pull.drift_report(m)['pull']['findings'] == [
        'drift on n1: gpufleet.cluster.nvidia_driver 1, gpufleet.cluster.ssh_hardening 1',
        'did not report: n3 (no result)',
        'failed: n2 (result n2.json: apt failed)']
    assert _pull.drift_report(_pull.merge_results([item(result('n1'))], expected=['n1']))['pull']['findings'] == []


RECORDED = os.path.join(ROOT, 'tests', 'fixtures', 'pull', 'recorded')


def test_recorded_results_merge():
    """REAL results gpufleet-pull delivered on lab hosts (tests/fixtures/pull/recorded/README.md)."""
    if not os.path.isdir(RECORDED):
        pytest.skip('no recorded results')
    got = _pull.read_results(RECORDED)
    assert got, 'no recorded results'
    nodes = [g['data']['node'] for g in got]
    m = _pull.merge_results(got, expected=nodes + ['never-reported'])
    assert m['errors'] == {} and m['reported'] == sorted(nodes) and m['not_reported'] == ['never-reported']
    r = _pull.drift_report(m)
    for g in got:
        d = g['data']
        assert r['nodes'][d['node']]['drift'] == d['drift'] and r['nodes'][d['node']]['settings'] == d['settings']
        assert d['runner']['wall_s'] > 0 and d['runner']['cpu_s'] > 0 and d['status'] in ('clean', 'drift')
