# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docker_daemon_json's engine (``run`` in module_utils/docker_daemon_json.py) on its own, with a stand-in
module and small scripts standing in for dockerd --validate (run through _runner)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import docker_daemon_json as ddj

from .stand_ins import Failed, StandInModule, script, unstartable


class DockerModule(StandInModule):
    """The stand-in module with what the engine also uses for writing: ``tmpdir`` and ``backup_local``."""

    def backup_local(self, path):
        backup = path + '.bak'
        with open(path, 'rb') as src, open(backup, 'wb') as dst:
            dst.write(src.read())
        return backup


def stand_in(tmp_path, check_mode=False, diff=False, bin_paths=None, **params):
    defaults = dict(path=str(tmp_path / 'daemon.json'), config={}, state='present', validate=True, dockerd_path=None,
                    backup=False, systemd_root=str(tmp_path / 'root'))
    (tmp_path / 'root').mkdir(exist_ok=True)
    (tmp_path / 'mtmp').mkdir(exist_ok=True)
    module = DockerModule(params, defaults, check_mode=check_mode, diff=diff, bin_paths=bin_paths)
    module.tmpdir = str(tmp_path / 'mtmp')
    return module


def dockerd(tmp_path, body):
    return script(tmp_path / 'bin', 'dockerd', body)


@pytest.fixture
def daemon_json(tmp_path):
    path = tmp_path / 'daemon.json'
    path.write_text('{"log-driver": "journald", "runtimes": {"runc-custom": {"path": "/x"}}}\n')
    return path


def test_check_mode_computes_and_writes_nothing(tmp_path, daemon_json):
    before = daemon_json.read_text()
    module = stand_in(tmp_path, check_mode=True, diff=True, validate=False, config={'default-runtime': 'nvidia'})
    out = ddj.run(module)
    assert out['changed'] is True and out['restart_required'] is True and out['changed_keys'] == ['default-runtime']
    assert out['diff']['before'] == before and json.loads(out['diff']['after'])['log-driver'] == 'journald'
    assert daemon_json.read_text() == before


def test_apply_then_nothing_to_do(tmp_path, daemon_json):
    config = '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}'
    out = ddj.run(stand_in(tmp_path, validate=False, backup=True, config=config))
    assert out['changed'] is True and os.path.isfile(out['backup_file'])
    data = json.loads(daemon_json.read_text())
    assert set(data['runtimes']) == {'runc-custom', 'nvidia'} and data['log-driver'] == 'journald'
    again = ddj.run(stand_in(tmp_path, validate=False, config=config))
    assert again == dict(changed=False, config=data, changed_keys=[], restart_required=False, validated=False)


def test_validated_with_dockerd_first_on_path(tmp_path, daemon_json):
    exe = dockerd(tmp_path, 'echo "$PATH" > %s; cat "$3" > %s' % (tmp_path / 'path', tmp_path / 'seen'))
    module = stand_in(tmp_path, check_mode=True, config={'debug': True}, bin_paths={'dockerd': exe})
    out = ddj.run(module)
    assert out['validated'] is True and module.warnings == []
    assert (tmp_path / 'path').read_text().startswith(os.path.dirname(exe) + os.pathsep)
    assert json.loads((tmp_path / 'seen').read_text())['debug'] is True


def test_old_dockerd_without_validate_warns(tmp_path, daemon_json):
    exe = dockerd(tmp_path, 'echo "unknown flag: --validate" >&2; exit 125')
    module = stand_in(tmp_path, check_mode=True, config={'debug': True}, dockerd_path=exe)
    assert ddj.run(module)['validated'] is False
    assert module.warnings == ['daemon.json not validated: %s has no --validate (Docker >= 23.0 has it)' % exe]


def test_rejected_config_fails_untouched(tmp_path, daemon_json):
    before = daemon_json.read_text()
    exe = dockerd(tmp_path, 'echo "unable to configure the Docker daemon with file $3: bad" >&2; exit 1')
    with pytest.raises(Failed) as exc:
        ddj.run(stand_in(tmp_path, config={'debug': True}, dockerd_path=exe))
    res = exc.value.args[0]
    assert res['msg'] == ('dockerd rejects the resulting %s (file untouched): unable to configure the Docker daemon '
                          'with file <result>: bad' % daemon_json)
    assert res['rc'] == 1 and res['cmd'].startswith('%s --validate --config-file ' % exe)
    assert daemon_json.read_text() == before


def test_dockerd_that_cannot_start(tmp_path, daemon_json):
    exe = unstartable(tmp_path / 'bin', 'dockerd', b'\x7fELF garbage')
    with pytest.raises(Failed) as exc:
        ddj.run(stand_in(tmp_path, config={'debug': True}, dockerd_path=exe))
    assert exc.value.args[0]['msg'].startswith('dockerd_path %s could not be started: ' % exe)
    assert exc.value.args[0]['msg'].endswith(' (file untouched)')


def test_no_dockerd_warns(tmp_path, daemon_json):
    module = stand_in(tmp_path, check_mode=True, config={'debug': True})
    assert ddj.run(module)['validated'] is False
    assert 'no dockerd found' in module.warnings[0]


def test_dockerd_path_is_a_path_not_a_name(tmp_path, daemon_json, monkeypatch):
    """A bare dockerd_path names a file in the working directory, as before: never a PATH lookup."""
    monkeypatch.chdir(tmp_path)
    exe = dockerd(tmp_path, 'exit 0')
    with pytest.raises(Failed) as exc:
        ddj.run(stand_in(tmp_path, check_mode=True, config={'debug': True}, dockerd_path='dockerd',
                         bin_paths={'dockerd': exe}))
    assert exc.value.args[0]['msg'] == 'dockerd_path dockerd is not an executable file'


def test_hosts_clash_fails_with_what_was_computed(tmp_path, daemon_json):
    unit = tmp_path / 'root' / 'lib' / 'systemd' / 'system'
    unit.mkdir(parents=True)
    (unit / 'docker.service').write_text('[Service]\nExecStart=/usr/bin/dockerd -H fd://\n')
    with pytest.raises(Failed) as exc:
        ddj.run(stand_in(tmp_path, validate=False, config={'hosts': ['unix:///run/docker.sock']}))
    res = exc.value.args[0]
    assert res['changed'] is False and res['changed_keys'] == ['hosts'] and 'dockerd refuses to start' in res['msg']


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(Failed) as exc:
        ddj.run(stand_in(tmp_path, config='[1]'))
    assert exc.value.args[0]['msg'] == 'config must hold a JSON object ({...}), not a list'
    with pytest.raises(Failed) as exc:
        ddj.run(stand_in(tmp_path, config={}, systemd_root=str(tmp_path / 'nowhere')))
    assert 'systemd_root' in exc.value.args[0]['msg']
