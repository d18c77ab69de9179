# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufleet-pull (the node's runner): arguments, the command it runs, its exit status and the delivery of the result
(a directory, or HTTP PUT/POST to a server on 127.0.0.1)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat
import threading

import pytest

from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _pull_runner as R

ENV = {'PATH': '/usr/bin'}


def opts(*argv, **env):
    return R.parse_args(list(argv), dict(ENV, **env), hostname='gpu042.cluster.example')


def test_defaults():
    o = opts('--dest', '/shared/pull')
    assert o['mode'] == 'check' and o['dest_kind'] == 'dir' and o['node'] == 'gpu042' and o['run_id'] is None
    assert o['method'] == 'PUT' and o['timeout'] == 3600 and o['state_dir'] == '/var/lib/gpufleet-pull'


def test_slurm_gives_node_and_run_id():
    o = opts('--dest', 'http://10.0.0.1:8080/pull/', SLURMD_NODENAME='gpu007', SLURM_JOB_ID='4711')
    assert o['node'] == 'gpu007' and o['run_id'] == '4711' and o['dest_kind'] == 'url'
    o = opts('--dest', '/x', '--node', 'n1', '--run-id', 'r1', SLURMD_NODENAME='gpu007', SLURM_JOB_ID='4711')
    assert o['node'] == 'n1' and o['run_id'] == 'r1'
    o = opts(GPUFLEET_PULL_DEST='/from/env', GPUFLEET_PULL_STATE_DIR='/srv/pull')
    assert o['dest'] == '/from/env' and o['state_dir'] == '/srv/pull'


@pytest.mark.parametrize('argv, msg', [
    ([], '--dest is required'),
    (['--dest', 'relative/dir'], '--dest must be an absolute directory path or an http(s):// URL'),
    (['--dest', 'ftp://host/x'], '--dest URL must be http:// or https://'),
    (['--dest', 'http:///nohost'], '--dest URL must be http:// or https://'),
    (['--dest', '/x', '--mode', 'fix'], "--mode must be one of check, apply, got 'fix'"),
    (['--dest', 'http://h/', '--method', 'DELETE'], "--method must be one of PUT, POST, got 'DELETE'"),
    (['--dest', '/x', '--timeout', '0'], '--timeout must be more than 0 seconds'),
    (['--dest', '/x', '--timeout', 'soon'], '--timeout must be a number of seconds'),
    (['--dest', '/x', '--http-timeout', '-1'], '--http-timeout must be more than 0'),
    (['--dest', 'http://h/', '--header', 'no colon'], '--header must be NAME:VALUE'),
    (['--dest', '/x', '--header', 'X-Token: 1'], '--header is for a URL --dest only'),
    (['--dest', '/x', '--node', 'bad name;rm'], '--node must be an inventory host name'),
    (['--dest', '/x', '--state-dir', 'state'], '--state-dir must be an absolute path'),
    (['--dest', '/x', '--no-such-option'], 'unrecognized arguments: --no-such-option'),
])
def test_bad_arguments(argv, msg):
    with pytest.raises(R.UsageError, match=re.escape(msg)):
        opts(*argv)


def test_bad_arguments_exit_3_never_2(capsys):
    """2 means drift: a usage error (argparse's own status is 2) must not look like one."""
    assert R.main(['--mode', 'fix', '--dest', '/x'], ENV) == R.EXIT_USAGE == 3
    err = capsys.readouterr().err
    assert err.startswith('gpufleet-pull: bad arguments: --mode must be one of') and 'Traceback' not in err


def test_result_url():
    assert R.result_url('http://c:8080/pull/', 'n1') == 'http://c:8080/pull/n1.json'
    assert R.result_url('http://c:8080/pull', 'n1') == 'http://c:8080/pull/n1.json'
    assert R.result_url('https://c/api/v1/nodes/{node}/drift', 'n1') == 'https://c/api/v1/nodes/n1/drift'


MANIFEST = {'format': R.BUNDLE_FORMAT, 'id': 'profile_a-abc', 'profile': 'profile_a', 'nodes': ['n1', 'n2'],
            'collection': 'collections/gpufleet-cluster-0.1.0.tar.gz', 'requirements': 'requirements.txt',
            'inventory': 'inventory.yml', 'lock': 'lock.yml', 'ansible_cfg': 'ansible.cfg'}


def test_build_command_check_and_apply():
    o = opts('--dest', '/x', '--node', 'n1', '--tags', 'ssh', '-vv')
    argv = R.build_command(o, '/b', MANIFEST, '/s/venv', '/s/coll', '/s/run')
    assert argv == ['/s/venv/bin/ansible-playbook', '-i', '/b/inventory.yml', '-c', 'local', '--limit', 'n1',
                    '-e', '@/b/lock.yml', '-e', '@/s/run/pull-vars.json', '--check', '--diff', '--tags', 'ssh', '-vv',
                    '/s/coll/ansible_collections/gpufleet/cluster/playbooks/drift.yml']
    o = opts('--dest', '/x', '--node', 'n1', '--mode', 'apply', '--vault-password-file', '/etc/v')
    argv = R.build_command(o, '/b', dict(MANIFEST, lock=None), '/s/venv', '/s/coll', '/s/run')
    assert '--check' not in argv and '@/b/lock.yml' not in argv and argv[-3:-1] == ['--vault-password-file', '/etc/v']
    assert R.pull_vars(o, '/s/run', '/usr/bin/python3') == {
        'ansible_connection': 'local', 'ansible_python_interpreter': '/usr/bin/python3',
        'gpufleet_drift_dir': '/s/run/drift', 'gpufleet_pull_result_file': '/s/run/result.json'}


def test_build_env_drops_the_callers_ansible_settings():
    env = R.build_env({'ANSIBLE_CONFIG': '/etc/other.cfg', 'ANSIBLE_STRATEGY': 'free', 'HOME': '/root'}, '/b', MANIFEST,
                      '/s/coll', '/s/run', '/s')
    assert env['ANSIBLE_CONFIG'] == '/b/ansible.cfg' and 'ANSIBLE_STRATEGY' not in env and env['HOME'] == '/root'
    assert env['ANSIBLE_COLLECTIONS_PATH'] == '/s/coll:/b/collections/deps'
    assert env['GPUFLEET_DRIFT_DIR'] == '/s/run/drift'


def node_result(drift=False, settings=0, messages=0, check=True):
    return {'format': R.RESULT_FORMAT, 'node': 'n1', 'drift': drift, 'settings': [{}] * settings,
            'check': {'messages': ['m'] * messages} if check else None}


@pytest.mark.parametrize('result, rc, mode, status, code', [
    (node_result(), 0, 'check', 'clean', 0),
    (node_result(True, 2), 2, 'check', 'drift', 2),
    (node_result(True, 0, 1), 2, 'check', 'drift', 2),
    (node_result(), 2, 'check', 'error', 1),                 # failed, but nothing recorded: not "clean"
    (node_result(check=False), 2, 'check', 'error', 1),      # failed before the comparison
    (None, 0, 'check', 'error', 1),                          # no result at all is never clean
    (None, 4, 'apply', 'error', 1),
    (node_result(True, 3), 0, 'apply', 'remediated', 0),
    (node_result(), 0, 'apply', 'clean', 0),
    (node_result(True, 1, 1), 0, 'apply', 'drift', 2),       # a version lock deviation is left (rollout.yml's job)
    (node_result(True, 1), 2, 'apply', 'error', 1),
])
def test_decide(result, rc, mode, status, code):
    got = R.decide(result, rc, mode)
    assert got[:2] == (status, code), got


def test_read_result(tmp_path):
    p = tmp_path / 'result.json'
    assert R.read_result(str(p), 'n1') is None
    p.write_text('{"format": "gpufleet.pull-result/1", "node": "n2"}')
    assert R.read_result(str(p), 'n1') is None  # another node's
    p.write_text('{"format": "gpufleet.pull-result/1", "node": "n1"}')
    assert R.read_result(str(p), 'n1') == {'format': 'gpufleet.pull-result/1', 'node': 'n1'}
    p.write_text('{')
    assert R.read_result(str(p), 'n1') is None


def test_deliver_to_a_directory(tmp_path):
    o = opts('--dest', str(tmp_path), '--node', 'n1')
    where = R.deliver({'node': 'n1', 'x': 1}, o)
    assert where == str(tmp_path / 'n1.json') and json.loads((tmp_path / 'n1.json').read_text()) == {'node': 'n1', 'x': 1}
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o644 and sorted(os.listdir(str(tmp_path))) == ['n1.json']
    with pytest.raises(R.PullError, match='does not exist'):
        R.deliver({}, opts('--dest', str(tmp_path / 'nope'), '--node', 'n1'))


@pytest.mark.skipif(os.geteuid() == 0, reason='root writes into a read-only directory')
def test_deliver_to_a_read_only_directory(tmp_path):
    os.chmod(str(tmp_path), 0o555)
    try:
        with pytest.raises(R.PullError, match='cannot write into destination directory'):
            R.deliver({}, opts('--dest', str(tmp_path), '--node', 'n1'))
    finally:
        os.chmod(str(tmp_path), 0o755)


def test_check_dest_fails_before_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(R.os, 'access', lambda path, mode: False)
    with pytest.raises(R.PullError, match='is not writable by this user'):
        R._check_dest(opts('--dest', str(tmp_path), '--node', 'n1'))


@pytest.fixture
def http_server():
    from http.server import BaseHTTPRequestHandler, HTTPServer
    got = []

    class Handler(BaseHTTPRequestHandler):
        def _take(self):
            body = self.rfile.read(int(self.headers['Content-Length']))
            got.append((self.command, self.path, dict(self.headers), json.loads(body)))
            self.send_response(404 if 'refuse' in self.path else 201)
            self.end_headers()
        do_PUT = do_POST = _take

        def log_message(self, *args):
            pass

    server = HTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=server.serve_forever)
    thread.daemon = True
    thread.start()
    yield 'http://127.0.0.1:%d' % server.server_address[1], got
    server.shutdown()
    server.server_close()


def test_deliver_over_http(http_server):
    url, got = http_server
    where = R.deliver({'node': 'n1'}, opts('--dest', url + '/pull/', '--node', 'n1', '--header', 'X-Token: s3'))
    assert where == url + '/pull/n1.json'
    assert got[-1][0] == 'PUT' and got[-1][1] == '/pull/n1.json' and got[-1][3] == {'node': 'n1'}
    assert got[-1][2]['X-Token'] == 's3' and got[-1][2]['Content-Type'] == 'application/json'
    R.deliver({'node': 'n1'}, opts('--dest', url + '/ingest?node={node}', '--node', 'n1', '--method', 'post'))
    assert got[-1][:2] == ('POST', '/ingest?node=n1')
    with pytest.raises(R.PullError, match=re.escape('PUT %s/refuse/n1.json failed: HTTP 404' % url)):
        R.deliver({}, opts('--dest', url + '/refuse/', '--node', 'n1'))
    with pytest.raises(R.PullError, match='failed'):
        R.deliver({}, opts('--dest', 'http://127.0.0.1:9/', '--node', 'n1', '--http-timeout', '2'))


def test_bundle_problems_are_one_line_errors(tmp_path, capsys):
    assert R.main(['--dest', str(tmp_path), '--node', 'n1', '--bundle', str(tmp_path / 'none')], ENV) == 1
    err = capsys.readouterr().err
    assert err.startswith('gpufleet-pull: error: n1: no bundle at') and 'Traceback' not in err
    (tmp_path / 'b').mkdir()
    (tmp_path / 'b' / 'MANIFEST.json').write_text('{"format": "other"}')
    assert R.main(['--dest', str(tmp_path), '--node', 'n1', '--bundle', str(tmp_path / 'b')], ENV) == 1
    assert 'is not a gpufleet pull bundle manifest' in capsys.readouterr().err
    (tmp_path / 'b' / 'MANIFEST.json').write_text(json.dumps(MANIFEST))
    assert R.main(['--dest', str(tmp_path), '--node', 'n9', '--bundle', str(tmp_path / 'b')], ENV) == 1
    assert 'node n9 is not in profile profile_a of this bundle (its nodes: n1, n2)' in capsys.readouterr().err


def test_a_failure_after_the_checks_is_delivered_as_an_error_result(tmp_path, capsys):
    """The venv cannot be made (no wheelhouse): the node's error reaches the aggregation, which names it."""
    bundle, dest = tmp_path / 'b', tmp_path / 'dest'
    bundle.mkdir()
    dest.mkdir()
    (bundle / 'MANIFEST.json').write_text(json.dumps(MANIFEST))
    code = R.main(['--dest', str(dest), '--node', 'n1', '--bundle', str(bundle), '--state-dir', str(tmp_path / 's'),
                   '--run-id', '7'], ENV)
    assert code == 1
    assert "wheelhouse or requirements are missing" in capsys.readouterr().err
    res = json.loads((dest / 'n1.json').read_text())
    assert res['status'] == 'error' and res['run_id'] == '7' and 'wheelhouse' in res['error'] and res['check'] is None


def test_one_run_at_a_time(tmp_path):
    with R._Lock(str(tmp_path / 'lock')):
        with pytest.raises(R.PullError, match='another gpufleet-pull run holds'):
            with R._Lock(str(tmp_path / 'lock')):
                pass


def test_venv_key_changes_with_python_pins_and_wheels():
    a = R.venv_key('3.11.2', 'ansible-core==2.19.14\n', ['a.whl'])
    assert a == R.venv_key('3.11.2', 'ansible-core==2.19.14\n', ['a.whl'])
    assert len({a, R.venv_key('3.11.9', 'ansible-core==2.19.14\n', ['a.whl']),
                R.venv_key('3.11.2', 'ansible-core==2.19.13\n', ['a.whl']),
                R.venv_key('3.11.2', 'ansible-core==2.19.14\n', ['b.whl'])}) == 4
