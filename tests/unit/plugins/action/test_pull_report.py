# -*- coding: utf-8 -*-
"""pull_report action plugin, called as ansible does (``ansible localhost -m ...``), on hand-made node results shaped
as playbooks/drift.yml writes them: the report files, check mode, a second run, the fleet comparison, a malformed
file."""

from __future__ import annotations

import json

SSH = {'task': 'Write the hardening drop-in', 'role': 'gpufleet.cluster.ssh_hardening',
       'kind': 'gpufleet.cluster.ssh_hardening', 'action': 'ansible.builtin.template',
       'diff': [{'path': '/etc/ssh/sshd_config.d/00-gpufleet-hardening.conf',
                 'unified': '--- before\n+++ after\n-PermitRootLogin yes\n+PermitRootLogin prohibit-password'}]}


def result(node, settings=(), driver='570.133.20'):
    return {'format': 'gpufleet.pull-result/1', 'kind': 'drift', 'mode': 'check', 'node': node, 'profile': 'lab_stack',
            'drift': bool(settings), 'settings': list(settings), 'consequences': [],
            'check': {'status': 'passed', 'messages': [], 'deviations': []},
            'fleet': {'fleet': True, 'items': ['driver'],
                      'entry': {'profile': 'lab_stack', 'versions': {'driver': driver}}},
            'status': 'drift' if settings else 'clean', 'run_id': '9', 'written_unix': 1,
            'runner': {'wall_s': 60.5, 'cpu_s': 30.25}}


def test_report_check_mode_and_second_run(tmp_path, run_adhoc):
    res, out = tmp_path / 'res', tmp_path / 'out'
    res.mkdir()
    (res / 'n1.json').write_text(json.dumps(result('n1', [SSH])))
    (res / 'n2.json').write_text(json.dumps(result('n2')))
    (res / 'n3.json').write_text(json.dumps(result('n3', driver='550.127.08')))
    (res / 'n4.json').write_text('{"format": "gpufleet.pull-result/1", "node": ')
    args = {'results': str(res), 'dest': str(out), 'expected': ['n1', 'n2', 'n3', 'n4', 'n5'], 'run_id': '9'}
    rc, r = run_adhoc('pull_report', args, check=True)
    assert rc == 0 and r['changed'] is True and not out.exists(), r
    rc, r = run_adhoc('pull_report', args)
    assert rc == 0 and r['changed'] is True, r
    assert r['drifted_nodes'] == ['n1', 'n3'] and r['unchecked'] == ['n4', 'n5'] and r['nodes'] == 5
    assert r['pull']['not_reported'] == {'n5': 'no result'} and list(r['pull']['errors']) == ['n4']
    assert 'n4.json: not valid JSON' in r['pull']['errors']['n4']
    report = json.loads((out / 'drift.json').read_text())
    assert report['nodes']['n3']['version_lock'][0].startswith('n3: driver'), report['nodes']['n3']
    assert report['summary'] == {'gpufleet.cluster.ssh_hardening': 1, 'version lock / hardware': 1}
    md = (out / 'drift.md').read_text()
    assert 'Did not report: n5 (no result).' in md and '+PermitRootLogin prohibit-password' in md
    assert r['msg'].startswith('drift on n1, n3: ') and r['msg'].endswith('3 of 5 node(s) reported')
    rc, r = run_adhoc('pull_report', args)
    assert rc == 0 and r['changed'] is False and r['written'] == [], r
    rc, r = run_adhoc('pull_report', args, check=True)
    assert rc == 0 and r['changed'] is False, r
