# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpufleet.cluster.slurm inventory plugin over real recordings of Slurm 22.05.8 and 24.11.5
(tests/unit/fixtures/slurm/inventory/README.md):

* ``ansible-inventory -i <config>`` end to end twice: 24.11's JSON from ``source_file``, and 22.05 through a stand-in
  scontrol that replays what the real one printed (its ``--json`` refusal, exit 1, then the ``-o`` lines), so the
  fallback runs as it does on a 22.05 cluster;
* every other case in one Python (slurm_inventory_driver.py: Ansible's plugin loader, one process for all) - the
  profile rules, Constructable options, the cache and the plugin's bad-input table: every row fails with
  AnsibleParserError naming the option, never a traceback, and a refused configuration never runs scontrol.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[4]
INV = REPO / 'tests' / 'unit' / 'fixtures' / 'slurm' / 'inventory'
JSON_2411 = INV / '24.11.5' / 'scontrol_show_nodes.json'
TEXT_2411 = INV / '24.11.5' / 'scontrol_show_nodes_o.txt'
TEXT_2205 = INV / '22.05.8' / 'scontrol_show_nodes_o.txt'
NOJSON_2205 = INV / '22.05.8' / 'scontrol_show_nodes_json.stderr'
ANSIBLE_INVENTORY = Path(sys.executable).parent / 'ansible-inventory'
RULES = [{'profile': 'h100_ib', 'gres_model': 'h100', 'feature': 'ib_ndr'},
         {'profile': 'a100', 'when': "'a100' in slurm_gpu_models and slurm_gpus == 4"}]


def stand_in(tmp_path, json_out=None, json_err=None, json_rc=0, text_out=None, sleep=0):
    """A stand-in scontrol replaying recorded output: ``show nodes --json`` and ``show nodes -o``; every call is
    logged to calls.log next to it."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / 'scontrol'
    script.write_text('#!/bin/sh\n'
                      'echo "$*" >> %(log)s\n'
                      'sleep %(sleep)s\n'
                      'case "$*" in\n'
                      '  *--json*) %(json)s ;;\n'
                      '  *-o*) %(text)s ;;\n'
                      '  *) echo "stand-in: unexpected $*" >&2; exit 2 ;;\n'
                      'esac\n' % {
                          'log': tmp_path / 'calls.log', 'sleep': sleep,
                          'json': '%s%sexit %d' % ('cat %s; ' % json_out if json_out else '',
                                                   'cat %s >&2; ' % json_err if json_err else '', json_rc),
                          'text': 'cat %s' % text_out if text_out else 'exit 1'})
    script.chmod(0o755)
    return script


def calls(tmp_path):
    log = tmp_path / 'calls.log'
    return log.read_text().splitlines() if log.exists() else []


def config(tmp_path, name='slurm.yml', **options):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(dict({'plugin': 'gpufleet.cluster.slurm'}, **options)))
    return path


# ---------------------------------------------------------------- ansible-inventory end to end

def ansible_inventory(path, *args):
    env = dict(os.environ, ANSIBLE_INVENTORY_UNPARSED_FAILED='true', ANSIBLE_INVENTORY_ENABLED='gpufleet.cluster.slurm',
               ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=str(REPO / '.ansible' / 'collections'))
    res = subprocess.run([str(ANSIBLE_INVENTORY), '-i', str(path), '--list'] + list(args), cwd=str(REPO), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stderr
    # ansible-inventory --list marks some values as unsafe ({"__ansible_unsafe": value}); the value is what counts
    return json.loads(res.stdout, object_hook=lambda d: d['__ansible_unsafe'] if list(d) == ['__ansible_unsafe']
                      else d)


def members(listing, group):
    return sorted(listing.get(group, {}).get('hosts', []))


def test_ansible_inventory_json_2411(tmp_path):
    listing = ansible_inventory(config(tmp_path, source_file=str(JSON_2411), profiles=RULES,
                                       profile_default='cpu_only',
                                       keyed_groups=[{'key': 'slurm_arch', 'prefix': 'arch',
                                                      'default_value': 'unknown'}]))
    hv = listing['_meta']['hostvars']
    assert sorted(hv) == ['gpu-t2', 'gpu-t3', 'slurm2411']
    assert members(listing, 'slurm_partition_gpu') == ['gpu-t2', 'slurm2411']
    assert members(listing, 'slurm_partition_all') == ['gpu-t2', 'gpu-t3', 'slurm2411']
    assert members(listing, 'slurm_state_drain') == members(listing, 'slurm_state_drained') == ['gpu-t2']
    assert members(listing, 'slurm_state_down') == ['gpu-t3']
    assert members(listing, 'slurm_state_mixed') == ['slurm2411']
    assert members(listing, 'slurm_feature_ib_ndr') == members(listing, 'slurm_gpu_h100') == ['slurm2411']
    assert members(listing, 'profile_h100_ib') == ['slurm2411']
    assert members(listing, 'profile_a100') == ['gpu-t2']
    assert members(listing, 'profile_cpu_only') == ['gpu-t3']
    assert sorted(listing['gpu_nodes']['children']) == ['profile_a100', 'profile_cpu_only', 'profile_h100_ib']
    assert members(listing, 'arch_x86_64') == ['slurm2411'] and members(listing, 'arch_unknown') == ['gpu-t2', 'gpu-t3']
    t2 = hv['gpu-t2']
    assert (t2['ansible_host'], t2['gpufleet_expect_gpus'], t2['gpufleet_profile'], t2['slurm_gres']) == \
        ('127.0.0.2', 4, 'a100', 'gpu:a100:4')
    assert (t2['slurm_state'], t2['slurm_drained'], t2['slurm_reason_user']) == ('IDLE+DRAIN', True, 'root')
    assert t2['slurm_reason'] == 'gpufleet[q4-570] FAILED: step apply: HCA firmware burn failed on 0000:3b:00.0'
    assert (hv['gpu-t3']['gpufleet_expect_gpus'], hv['slurm2411']['slurm_cpus_alloc']) == (0, 1)


def test_ansible_inventory_2205_falls_back_to_text(tmp_path):
    """Slurm 22.05's scontrol refuses --json (recorded: exit 1, 'unrecognized option'): the plugin asks again with -o."""
    scontrol = stand_in(tmp_path, json_err=NOJSON_2205, json_rc=1, text_out=TEXT_2205)
    listing = ansible_inventory(config(tmp_path, scontrol_path=str(scontrol), profiles=RULES))
    assert calls(tmp_path) == ['show nodes --json', 'show nodes -o']
    hv = listing['_meta']['hostvars']
    assert sorted(hv) == ['slurminv-n1', 'slurminv-n2', 'slurminv-n3', 'slurminv-n4']
    assert members(listing, 'profile_h100_ib') == ['slurminv-n1', 'slurminv-n2']
    assert members(listing, 'profile_a100') == ['slurminv-n3']
    assert 'profile_cpu_only' not in listing and 'gpufleet_profile' not in hv['slurminv-n4']
    assert members(listing, 'slurm_state_idle') == ['slurminv-n1', 'slurminv-n3']
    assert members(listing, 'slurm_state_drained') == ['slurminv-n3']
    n3 = hv['slurminv-n3']
    assert (n3['ansible_host'], n3['slurm_reason_time'], n3['slurm_partitions']) == \
        ('10.254.77.196', '2026-11-26T10:47:32', ['gpu', 'all'])
    assert hv['slurminv-n4']['slurm_reason'] == 'operator: PSU replaced, ticket 4711'


# ---------------------------------------------------------------- in process (one Python for all cases)

DRIVER = Path(__file__).resolve().parent / 'slurm_inventory_driver.py'


def drive(jobs):
    """Results of slurm_inventory_driver.py for ``jobs`` (one subprocess: Ansible's plugin loader needs a Python
    that has not imported the collection through sys.path, as this one has)."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'))
    env.pop('PYTHONPATH', None)
    res = subprocess.run([sys.executable, str(DRIVER), str(REPO / '.ansible' / 'collections')], cwd=str(REPO), env=env,
                         input=json.dumps(jobs), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


# Bad input: (row name, options, setup, text the AnsibleParserError must contain). Setup None: no stand-in may run
# (the row must be refused before scontrol); else the stand-in scontrol the row runs against.
BAD = [
    ('profiles a string', dict(profiles='h100'), None, 'profiles[0] must be a dict'),
    ('profiles a dict', dict(profiles={'profile': 'x', 'partition': 'gpu'}), None, 'profiles'),
    ('rule not a dict', dict(profiles=['h100']), None, 'profiles[0] must be a dict'),
    ('rule without condition', dict(profiles=[{'profile': 'x'}]), None, 'profiles[0] needs at least one of'),
    ('rule unknown key', dict(profiles=[{'profile': 'x', 'partiton': 'gpu'}]), None, 'unknown key(s) partiton'),
    ('profile name with dash', dict(profiles=[{'profile': 'h100-ib', 'partition': 'gpu'}]), None, 'profiles[0].profile'),
    ('rule partition empty', dict(profiles=[{'profile': 'x', 'partition': ''}]), None, 'profiles[0].partition'),
    ('rule feature list of non-str', dict(profiles=[{'profile': 'x', 'feature': [1]}]), None, 'profiles[0].feature'),
    ('rule when not str', dict(profiles=[{'profile': 'x', 'when': True}]), None, 'profiles[0].when'),
    ('rule when fails', dict(profiles=[{'profile': 'x', 'when': 'no_such_var > 1'}]), 'json', 'profiles[0].when'),
    ('profile_default bad', dict(profile_default='9lives'), None, 'profile_default'),
    ('profile_parent_group bad', dict(profile_parent_group='gpu nodes'), None, 'profile_parent_group'),
    ('timeout zero', dict(timeout=0), None, 'timeout must be'),
    ('format unknown', dict(format='yaml'), None, 'format'),
    ('partitions not list of str', dict(partitions=[['gpu']]), None, 'partitions'),
    ('scontrol missing', dict(scontrol_path='/nonexistent/scontrol'), None, 'scontrol_path'),
    ('scontrol not on PATH', dict(scontrol_path='scontrol-gpufleet-absent'), None, 'scontrol_path'),
    ('scontrol hangs', dict(timeout=1), 'hang', 'option timeout'),
    ('scontrol fails both forms', dict(), 'fail', 'options scontrol_path, command_prefix, format'),
    ('scontrol prints garbage', dict(), 'garbage', 'Slurm node list not read'),
    ('json only, 22.05', dict(format='json'), '2205', 'unrecognized option'),
    ('source_file missing', dict(source_file='/nonexistent/nodes.json'), None, 'source_file'),
    ('source_file not scontrol', dict(source_file=str(INV / 'README.md')), None, 'source_file'),
    ('source_file json forced on text', dict(source_file=str(TEXT_2205), format='json'), None, 'source_file'),
]


def run_all(tmp_path_factory):
    """Every in-process case in one driver run: dict(case name -> (result, its directory))."""
    jobs, names, dirs = [], [], {}

    def add(name, job, where):
        names.append(name)
        jobs.append(job)
        dirs[name] = where

    d = tmp_path_factory.mktemp('forms')
    add('2411-json', {'config': str(config(d, 'a_slurm.yml', source_file=str(JSON_2411), profiles=RULES))}, d)
    add('2411-text', {'config': str(config(d, 'b_slurm.yml', source_file=str(TEXT_2411), profiles=RULES))}, d)
    d = tmp_path_factory.mktemp('options')
    add('options', {'config': str(config(
        d, source_file=str(TEXT_2205), partitions=['gpu'], use_node_addr=False, expect_gpus_from_gres=False,
        profile_parent_group='', profiles=[{'profile': 'drained', 'state': 'drained'},
                                           {'profile': 'gpu', 'partition': ['gpu', 'other']}],
        compose={'rack': "'r01' if slurm_node_name is match('slurminv-n[12]') else 'r02'"},
        groups={'busy': 'slurm_cpus_alloc > 0'}))}, d)
    d = tmp_path_factory.mktemp('cache')
    scontrol = stand_in(d, json_out=JSON_2411)
    path = str(config(d, scontrol_path=str(scontrol), cache=True, cache_plugin='ansible.builtin.jsonfile',
                      cache_connection=str(d / 'cache'), cache_timeout=3600))
    add('cache-1', {'config': path}, d)
    add('cache-2', {'config': path, 'unlink': str(scontrol)}, d)  # the cluster is gone: the cache must answer
    add('cache-3', {'config': path, 'cache': False}, d)  # --flush-cache / refresh_inventory: asks Slurm again
    d = tmp_path_factory.mktemp('json-errors')
    bad = d / 'errors.json'
    bad.write_text('{"nodes": [], "errors": [{"description": "HANDMADE: data_parser plugin not found"}]}')
    add('json-errors', {'config': str(config(d, scontrol_path=str(stand_in(d, json_out=bad, text_out=TEXT_2205))))},
        d)
    for row, options, setup, _want in BAD:
        d = tmp_path_factory.mktemp('bad')
        garbage = d / 'garbage'
        garbage.write_bytes(b'\xff\xfe\x00garbage \x1b[2J NodeName\n{"nodes": 7}\n' * 8)
        kinds = {'json': dict(json_out=JSON_2411), 'hang': dict(json_out=JSON_2411, sleep=30),
                 'fail': dict(json_rc=1), 'garbage': dict(json_out=garbage, text_out=garbage),
                 '2205': dict(json_err=NOJSON_2205, json_rc=1, text_out=TEXT_2205), None: dict(json_out=JSON_2411)}
        options = dict(options)
        if 'source_file' not in options:
            options.setdefault('scontrol_path', str(stand_in(d, **kinds[setup])))
        add(row, {'config': str(config(d, **options))}, d)
    return dict((n, (r, dirs[n])) for n, r in zip(names, drive(jobs)))


def ok(runs, name):
    result = runs[name][0]
    assert result['ok'], result
    return result


def check_forms(runs):
    a, b = ok(runs, '2411-json'), ok(runs, '2411-text')
    assert sorted(a['hosts']) == ['gpu-t2', 'gpu-t3', 'slurm2411']
    assert a['hosts'] == b['hosts'] and a['groups'] == b['groups']
    assert a['groups']['slurm2411'] == ['gpu_nodes', 'profile_h100_ib', 'slurm_feature_h100', 'slurm_feature_ib_ndr',
                                        'slurm_gpu_h100', 'slurm_partition_all', 'slurm_partition_gpu',
                                        'slurm_state_mixed']


def check_options(runs):
    r = ok(runs, 'options')
    assert sorted(r['hosts']) == ['slurminv-n1', 'slurminv-n2', 'slurminv-n3']  # n4 is only in partition all
    n3 = r['hosts']['slurminv-n3']
    assert n3['gpufleet_profile'] == 'drained' and 'ansible_host' not in n3 and 'gpufleet_expect_gpus' not in n3
    assert (r['hosts']['slurminv-n1']['rack'], n3['rack']) == ('r01', 'r02')
    assert r['groups']['slurminv-n2'] == ['busy', 'profile_gpu', 'slurm_feature_h100', 'slurm_feature_ib_ndr',
                                          'slurm_gpu_h100', 'slurm_partition_all', 'slurm_partition_gpu',
                                          'slurm_state_mixed']
    assert 'gpu_nodes' not in r['children']


def check_cache(runs):
    first, second = ok(runs, 'cache-1'), ok(runs, 'cache-2')
    where = runs['cache-1'][1]
    assert calls(where) == ['show nodes --json']  # once: the second parse read the cache
    assert os.listdir(str(where / 'cache'))
    assert second['hosts'] == first['hosts'] and sorted(first['hosts']) == ['gpu-t2', 'gpu-t3', 'slurm2411']
    third = runs['cache-3'][0]
    assert not third['ok'] and 'scontrol_path' in third['error']


def check_json_errors(runs):
    """auto: scontrol prints JSON carrying Slurm's own error list (HANDMADE) -> the text form is used."""
    r = ok(runs, 'json-errors')
    assert calls(runs['json-errors'][1]) == ['show nodes --json', 'show nodes -o'] and len(r['hosts']) == 4


def bad_row_problem(runs, row, setup, want):
    """Why a bad-input row is not right, or None."""
    result, where = runs[row]
    if result['ok']:
        return 'accepted'
    if (result['error_type'], result['traceback']) != ('AnsibleParserError', False):
        return '%s %s' % (result['error_type'], result['traceback'] or result['error'])
    if want not in result['error']:
        return 'message %r lacks %r' % (result['error'], want)
    if setup is None and calls(where):
        return 'scontrol ran before the refusal: %s' % calls(where)
    return None


def test_in_process(tmp_path_factory):
    """One driver run (one Python) for every in-process case: forms, options, cache, fallback, the bad-input table."""
    runs = run_all(tmp_path_factory)
    check_forms(runs)
    check_options(runs)
    check_cache(runs)
    check_json_errors(runs)
    problems = dict((row, bad_row_problem(runs, row, setup, want)) for row, _options, setup, want in BAD)
    print('slurm inventory bad-input table: %d rows, %d right' % (len(BAD), sum(1 for p in problems.values() if not p)))
    assert not [p for p in problems.values() if p], dict((r, p) for r, p in problems.items() if p)
