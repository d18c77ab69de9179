# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docker_daemon_json end to end: in-process (``main()`` on tmp files) and through
``ansible localhost -m gpufleet.cluster.docker_daemon_json --check --diff``, with a real
``dockerd --validate`` (Debian 13's docker.io, fetched once by ``scripts/localrepo dockerd``).

The real-dockerd tests skip cleanly when it is unavailable. ``GPUFLEET_DOCKERD=/path/to/dockerd``
picks one; ``GPUFLEET_DOCKERD=none`` skips them; otherwise, as root, ``scripts/localrepo dockerd`` is
asked (it downloads docker.io from trixie into /var/lib/gpufleet-lab once, ~23 MB).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.modules import docker_daemon_json as mod

REPO_ROOT = Path(__file__).resolve().parents[4]
LAB_DIR = Path(os.environ.get("GPUFLEET_LAB_DIR", "/var/lib/gpufleet-lab"))

# Five keys the module must never touch (and a sixth, nested, that a runtime merge must keep).
UNRELATED_TEXT = """{
    "data-root": "/srv/docker",
    "log-level": "warn",
    "insecure-registries": ["registry.cluster.local:5000"],
    "live-restore": true,
    "runtimes": {"runc-custom": {"path": "/opt/runc/bin/runc"}}
}
"""
UNRELATED = json.loads(UNRELATED_TEXT)
NVIDIA = {"default-runtime": "nvidia",
          "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}},
          "log-opts": {"max-size": "100m", "max-file": "3"}}
DEBIAN_UNIT = "[Service]\nType=notify\nExecStart=/usr/sbin/dockerd -H fd:// $DOCKER_OPTS\n"


def snapshot(path):
    st = os.stat(path)
    return Path(path).read_bytes(), st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns


@pytest.fixture
def daemon_json(tmp_path):
    path = tmp_path / "docker" / "daemon.json"
    path.parent.mkdir()
    path.write_text(UNRELATED_TEXT)
    return path


@pytest.fixture
def no_dockerd(monkeypatch):
    """Pretend no dockerd is installed (whatever this machine has)."""
    monkeypatch.setattr(AnsibleModule, "get_bin_path", lambda self, *a, **kw: None)


@pytest.fixture(scope="session")
def dockerd():
    """A dockerd with --validate, or skip."""
    env = os.environ.get("GPUFLEET_DOCKERD")
    if env:
        if env == "none" or not os.access(env, os.X_OK):
            pytest.skip("GPUFLEET_DOCKERD=%s: no dockerd to validate with" % env)
        return env
    script = REPO_ROOT / "scripts" / "localrepo"
    if os.geteuid() != 0 or not script.exists():
        pytest.skip("real dockerd --validate needs root and scripts/localrepo dockerd (or set GPUFLEET_DOCKERD)")
    try:
        res = subprocess.run([str(script), "dockerd"], capture_output=True, text=True,
                             timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip("scripts/localrepo dockerd failed: %s" % exc)
    path = res.stdout.strip()
    if res.returncode != 0 or not os.access(path, os.X_OK):
        pytest.skip("scripts/localrepo dockerd could not provide dockerd: %s" % res.stderr.strip()[-300:])
    return path


@pytest.fixture(scope="session")
def old_dockerd(tmp_path_factory):
    """Debian 12's dockerd 20.10 (no --validate), from the local bookworm repo if it was built."""
    debs = glob.glob(str(LAB_DIR / "repo" / "bookworm" / "docker.io_20.10*.deb"))
    if not debs or not shutil.which("dpkg-deb"):
        pytest.skip("no docker.io 20.10 in %s (scripts/localrepo build --distro bookworm)" % (LAB_DIR / "repo/bookworm"))
    root = tmp_path_factory.mktemp("docker-20.10")
    subprocess.run(["dpkg-deb", "-x", debs[0], str(root)], check=True)
    return str(root / "usr" / "sbin" / "dockerd")


@pytest.fixture
def adhoc():
    """``ansible localhost -m gpufleet.cluster.docker_daemon_json -a JSON [--check] [--diff]`` from the repo;
    returns (rc, result, diff_text_printed)."""
    ansible = Path(sys.executable).parent / "ansible"
    link = REPO_ROOT / ".ansible" / "collections" / "ansible_collections" / "gpufleet" / "cluster"
    if not ansible.is_file() or not link.exists():
        pytest.skip("ansible or the collection link is missing (run scripts/setup)")

    def _run(args, check=False, diff=False):
        cmd = [str(ansible), "localhost", "-i", "localhost,", "-c", "local",
               "-e", "ansible_python_interpreter=%s" % sys.executable,
               "-m", "gpufleet.cluster.docker_daemon_json", "-a", json.dumps(args)]
        cmd += ["--check"] if check else []
        cmd += ["--diff"] if diff else []
        env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
                   ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
        proc = subprocess.run(cmd, cwd=str(REPO_ROOT), env=env, capture_output=True, text=True, timeout=120, check=False)
        head, sep, body = proc.stdout.partition("localhost | ")
        assert sep, "unexpected ansible output: %s %s" % (proc.stdout, proc.stderr)
        return proc.returncode, json.loads(body.partition("=> ")[2]), head

    return _run


# ---------------------------------------------------------------- through the ansible CLI
class TestAdhoc:
    def test_check_diff_keeps_five_unrelated_keys_and_leaves_file_untouched(self, adhoc, daemon_json):
        before = snapshot(daemon_json)
        rc, res, printed = adhoc({"path": str(daemon_json), "config": NVIDIA, "validate": False}, check=True, diff=True)
        assert rc == 0 and res["changed"] is True
        assert snapshot(daemon_json) == before
        # the diff is shown: every old key still there, new ones added
        assert "--- before: %s" % daemon_json in printed and "+++ after: %s" % daemon_json in printed
        assert '+  "default-runtime": "nvidia",' in printed
        for key, value in UNRELATED.items():
            assert res["config"][key] == (value if key != "runtimes" else dict(value, **NVIDIA["runtimes"]))
        assert res["config"]["runtimes"]["runc-custom"] == {"path": "/opt/runc/bin/runc"}
        assert res["restart_required"] is True

    def test_apply_then_noop(self, adhoc, daemon_json):
        rc, res, _p = adhoc({"path": str(daemon_json), "config": NVIDIA, "validate": False})
        assert rc == 0 and res["changed"] is True
        data = json.loads(daemon_json.read_text())
        assert list(data)[:5] == list(UNRELATED)  # in their places
        assert data["runtimes"] == {"runc-custom": {"path": "/opt/runc/bin/runc"}, **NVIDIA["runtimes"]}
        before = snapshot(daemon_json)
        rc, res, printed = adhoc({"path": str(daemon_json), "config": NVIDIA, "validate": False}, check=True, diff=True)
        assert rc == 0 and res["changed"] is False and res["restart_required"] is False
        assert "--- before" not in printed
        rc, res, _p = adhoc({"path": str(daemon_json), "config": NVIDIA, "validate": False})
        assert rc == 0 and res["changed"] is False
        assert snapshot(daemon_json) == before  # not rewritten

    def test_invalid_json_input_fails_file_untouched(self, adhoc, daemon_json):
        before = snapshot(daemon_json)
        rc, res, _p = adhoc({"path": str(daemon_json), "config": '{"default-runtime": "nvidia",}'}, check=True, diff=True)
        assert rc != 0
        assert res["msg"] == ("config is not valid JSON: Expecting property name enclosed in double quotes "
                              "at line 1 column 30 (char 29)")
        assert snapshot(daemon_json) == before

    def test_existing_invalid_file_fails_naming_file_and_position(self, adhoc, daemon_json):
        daemon_json.write_text('{\n  "log-level": "warn"\n  "debug": true\n}\n')
        before = snapshot(daemon_json)
        rc, res, _p = adhoc({"path": str(daemon_json), "config": {"debug": False}})
        assert rc != 0
        assert res["msg"].startswith("%s is not valid JSON: Expecting ',' delimiter at line 3 column 3" % daemon_json)
        assert snapshot(daemon_json) == before

    def test_hosts_clash_fails_with_the_fix(self, adhoc, daemon_json, tmp_path):
        unit = tmp_path / "sysroot" / "lib/systemd/system/docker.service"
        unit.parent.mkdir(parents=True)
        unit.write_text(DEBIAN_UNIT)
        before = snapshot(daemon_json)
        rc, res, _p = adhoc({"path": str(daemon_json), "config": {"hosts": ["unix:///run/docker.sock", "tcp://127.0.0.1:2375"]},
                             "systemd_root": str(tmp_path / "sysroot"), "validate": False}, check=True, diff=True)
        assert rc != 0
        assert "-H fd://" in res["msg"] and str(unit) in res["msg"]
        assert "ExecStart=\nExecStart=/usr/sbin/dockerd $DOCKER_OPTS" in res["msg"]
        assert snapshot(daemon_json) == before

    def test_real_dockerd_validate_accepts_and_rejects(self, adhoc, daemon_json, dockerd):
        rc, res, _p = adhoc({"path": str(daemon_json), "config": NVIDIA, "dockerd_path": dockerd}, check=True, diff=True)
        assert rc == 0 and res["changed"] and res["validated"] is True, res
        before = snapshot(daemon_json)
        rc, res, _p = adhoc({"path": str(daemon_json), "config": {"not-a-docker-option": 1, "log-level": "warn"},
                             "dockerd_path": dockerd})
        assert rc != 0
        assert "dockerd rejects the resulting %s (file untouched)" % daemon_json in res["msg"]
        assert "don't match any configuration option: not-a-docker-option" in res["msg"]
        assert snapshot(daemon_json) == before


# ---------------------------------------------------------------- in-process
class TestModule:
    def test_nested_merge_and_absent_round_trip(self, run_module, daemon_json, no_dockerd):
        res = run_module(mod.main, {"path": str(daemon_json), "config": NVIDIA})
        assert res["changed"] and res["changed_keys"] == ["runtimes.nvidia", "default-runtime", "log-opts"]
        assert res["validated"] is False and "no dockerd found" in warnings(res)
        res = run_module(mod.main, {"path": str(daemon_json), "config": NVIDIA, "state": "absent"})
        assert res["changed"] and json.loads(daemon_json.read_text()) == UNRELATED

    def test_absent_nested_key_only(self, run_module, daemon_json):
        res = run_module(mod.main, {"path": str(daemon_json), "state": "absent",
                                    "config": {"runtimes": {"runc-custom": None}, "log-level": None}})
        assert res["changed_keys"] == ["log-level", "runtimes"]
        data = json.loads(daemon_json.read_text())
        assert "runtimes" not in data and "log-level" not in data and len(data) == 3

    def test_mode_and_owner_preserved_and_backup(self, run_module, daemon_json, no_dockerd):
        os.chmod(daemon_json, 0o600)
        if os.geteuid() == 0:
            os.chown(daemon_json, 65534, 65534)
        res = run_module(mod.main, {"path": str(daemon_json), "config": {"debug": True}, "backup": True})
        st = os.stat(daemon_json)
        assert st.st_mode & 0o7777 == 0o600
        if os.geteuid() == 0:
            assert (st.st_uid, st.st_gid) == (65534, 65534)
        assert Path(res["backup_file"]).read_text() == UNRELATED_TEXT
        assert not [p for p in daemon_json.parent.iterdir() if p.name.startswith(".daemon.json.")]

    def test_new_file_and_parent_created(self, run_module, tmp_path, no_dockerd):
        path = tmp_path / "etc" / "docker" / "daemon.json"
        res = run_module(mod.main, {"path": str(path), "config": '{"log-driver": "journald"}'})
        assert res["changed"] and "backup_file" not in res
        assert path.read_text() == '{\n  "log-driver": "journald"\n}\n'
        assert os.stat(path).st_mode & 0o777 == 0o644 & ~_umask()

    def test_absent_on_missing_file_is_noop(self, run_module, tmp_path):
        path = tmp_path / "daemon.json"
        res = run_module(mod.main, {"path": str(path), "config": {"debug": None}, "state": "absent"})
        assert res["changed"] is False and res["config"] == {} and not path.exists()

    def test_type_change_is_a_change(self, run_module, tmp_path):
        path = tmp_path / "daemon.json"
        path.write_text('{"debug": 1}')
        res = run_module(mod.main, {"path": str(path), "config": {"debug": True}, "validate": False})
        assert res["changed"] and json.loads(path.read_text()) == {"debug": True}

    def test_formatting_only_is_no_change(self, run_module, tmp_path):
        path = tmp_path / "daemon.json"
        path.write_text('{"b":{"y":2,"x":1},"a":[1,2]}')
        res = run_module(mod.main, {"path": str(path), "config": {"b": {"x": 1, "y": 2}, "a": [1, 2]}})
        assert res["changed"] is False and path.read_text() == '{"b":{"y":2,"x":1},"a":[1,2]}'

    def test_null_under_present_fails(self, run_module, daemon_json):
        res = run_module(mod.main, {"path": str(daemon_json), "config": {"default-runtime": None}})
        assert res["failed"] and "default-runtime is null; to remove a key use state=absent" in res["msg"]

    def test_not_an_object(self, run_module, daemon_json):
        res = run_module(mod.main, {"path": str(daemon_json), "config": "[1, 2]"})
        assert res["failed"] and res["msg"] == "config must hold a JSON object ({...}), not a list"

    def test_not_utf8(self, run_module, tmp_path):
        path = tmp_path / "daemon.json"
        path.write_bytes(b'{"a": "\xff"}')
        res = run_module(mod.main, {"path": str(path), "config": {"b": 1}})
        assert res["failed"] and res["msg"] == "%s is not UTF-8 text (byte 7)" % path

    def test_hosts_clash_also_on_noop(self, run_module, tmp_path):
        (tmp_path / "lib/systemd/system").mkdir(parents=True)
        (tmp_path / "lib/systemd/system/docker.service").write_text(DEBIAN_UNIT)
        path = tmp_path / "daemon.json"
        path.write_text('{"hosts": ["fd://"]}')
        res = run_module(mod.main, {"path": str(path), "config": {"hosts": ["fd://"]}, "systemd_root": str(tmp_path)})
        assert res["failed"] and "dockerd refuses to start" in res["msg"] and res["changed"] is False
        # a run that does not manage hosts and changes nothing does not fail on it
        res = run_module(mod.main, {"path": str(path), "config": {}, "systemd_root": str(tmp_path)})
        assert res["changed"] is False and not res.get("failed")

    def test_dockerd_20_10_without_validate_warns(self, run_module, daemon_json, old_dockerd):
        res = run_module(mod.main, {"path": str(daemon_json), "config": {"debug": True}, "dockerd_path": old_dockerd})
        assert res["changed"] and res["validated"] is False
        assert "has no --validate (Docker >= 23.0 has it)" in warnings(res)

    def test_bad_dockerd_path(self, run_module, daemon_json, tmp_path):
        res = run_module(mod.main, {"path": str(daemon_json), "config": {"debug": True},
                                    "dockerd_path": str(tmp_path / "nope")})
        assert res["failed"] and "is not an executable file" in res["msg"]
        assert json.loads(daemon_json.read_text()) == UNRELATED


def warnings(res):
    """Warning texts (plain strings before ansible-core 2.19, structured events since)."""
    return json.dumps(res.get("warnings", []))


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
