# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/docker_daemon_json.py: parse, merge, compare, render, docker.service -H detection,
dockerd --validate outcome. Inputs are hand-made (daemon.json files are user-written)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import docker_daemon_json as ddj

# The unit Debian 12's and 13's docker.io ship (/lib/systemd/system/docker.service), trimmed.
DEBIAN_UNIT = """[Unit]
Description=Docker Application Container Engine
After=network-online.target docker.socket firewalld.service containerd.service
Requires=docker.socket

[Service]
Type=notify
# the default is not to use systemd for cgroups because the delegate issues still
# exists and systemd currently does not support the cgroup feature set required
# for containers run by docker
EnvironmentFile=-/etc/default/docker
ExecStart=/usr/sbin/dockerd -H fd:// $DOCKER_OPTS
ExecReload=/bin/kill -s HUP $MAINPID

[Install]
WantedBy=multi-user.target
"""

UNRELATED = {
    "data-root": "/srv/docker",
    "log-level": "warn",
    "insecure-registries": ["registry.cluster.local:5000"],
    "runtimes": {"runc-custom": {"path": "/opt/runc/bin/runc"}},
    "live-restore": True,
}


class TestParse:
    def test_object(self):
        assert ddj.parse('{"a": 1, "b": {"c": [1, 2]}}', "f") == {"a": 1, "b": {"c": [1, 2]}}

    def test_blank_is_empty_object(self):
        assert ddj.parse("", "f") == {}
        assert ddj.parse(" \n\t", "f") == {}

    def test_error_names_file_line_and_column(self):
        text = '{\n  "log-level": "warn",\n  "debug": true,\n}\n'
        with pytest.raises(ddj.DaemonJsonError) as exc:
            ddj.parse(text, "/etc/docker/daemon.json")
        msg = str(exc.value)
        assert msg.startswith("/etc/docker/daemon.json is not valid JSON: ")
        assert "line 4 column 1" in msg

    def test_truncated(self):
        with pytest.raises(ddj.DaemonJsonError, match=r"config is not valid JSON: .* at line 1 column 7"):
            ddj.parse('{"a": ', "config")

    @pytest.mark.parametrize("text, kind", [("[1]", "a list"), ('"x"', "a string"), ("3", "a number"),
                                            ("null", "null"), ("true", "a boolean")])
    def test_not_an_object(self, text, kind):
        with pytest.raises(ddj.DaemonJsonError, match="must hold a JSON object .*not %s" % kind):
            ddj.parse(text, "f")


class TestMerge:
    def test_unrelated_keys_kept_in_order(self):
        out = ddj.merge(UNRELATED, {"default-runtime": "nvidia"})
        assert list(out) == list(UNRELATED) + ["default-runtime"]
        for key, value in UNRELATED.items():
            assert out[key] == value

    def test_input_not_modified(self):
        cur = json.loads(json.dumps(UNRELATED))
        cfg = {"runtimes": {"nvidia": {"path": "x"}}}
        ddj.merge(cur, cfg)
        assert cur == UNRELATED
        assert cfg == {"runtimes": {"nvidia": {"path": "x"}}}

    def test_nested_dicts_merge(self):
        nvidia = {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}
        out = ddj.merge(UNRELATED, {"runtimes": {"nvidia": nvidia}})
        assert out["runtimes"] == {"runc-custom": {"path": "/opt/runc/bin/runc"},
                                   "nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}}

    def test_deep_merge_updates_one_leaf(self):
        cur = {"log-opts": {"max-size": "10m", "max-file": "3", "labels": "a"}}
        out = ddj.merge(cur, {"log-opts": {"max-size": "100m"}})
        assert out == {"log-opts": {"max-size": "100m", "max-file": "3", "labels": "a"}}

    def test_lists_are_replaced(self):
        cur = {"dns": ["10.0.0.1", "10.0.0.2"]}
        assert ddj.merge(cur, {"dns": ["10.0.0.3"]}) == {"dns": ["10.0.0.3"]}

    def test_dict_replaces_scalar_and_scalar_replaces_dict(self):
        assert ddj.merge({"a": "x"}, {"a": {"b": 1}}) == {"a": {"b": 1}}
        assert ddj.merge({"a": {"b": 1}}, {"a": "x"}) == {"a": "x"}

    def test_no_defaults_added(self):
        assert ddj.merge({}, {}) == {}
        assert ddj.merge({}, {"debug": False}) == {"debug": False}

    def test_absent_removes_named_keys_only(self):
        out = ddj.merge(UNRELATED, {"log-level": None, "not-there": None}, "absent")
        assert "log-level" not in out and len(out) == len(UNRELATED) - 1

    def test_absent_nested(self):
        cur = {"runtimes": {"runc-custom": {"path": "r"}, "nvidia": {"path": "n"}}, "default-runtime": "nvidia"}
        out = ddj.merge(cur, {"runtimes": {"nvidia": None}, "default-runtime": None}, "absent")
        assert out == {"runtimes": {"runc-custom": {"path": "r"}}}

    def test_absent_undoes_present_and_prunes_emptied_dicts(self):
        cfg = {"runtimes": {"nvidia": {"path": "n", "runtimeArgs": []}}, "default-runtime": "nvidia"}
        base = {"log-level": "warn"}
        assert ddj.merge(ddj.merge(base, cfg), cfg, "absent") == base

    def test_absent_empty_dict_value_removes_the_key(self):
        assert ddj.merge({"log-opts": {"a": "1"}, "x": 1}, {"log-opts": {}}, "absent") == {"x": 1}

    def test_bad_state(self):
        with pytest.raises(ddj.DaemonJsonError):
            ddj.merge({}, {}, "latest")

    def test_check_config_rejects_null_under_present(self):
        with pytest.raises(ddj.DaemonJsonError, match=r"runtimes\.nvidia is null; to remove a key use state=absent"):
            ddj.check_config({"runtimes": {"nvidia": None}})

    def test_check_config_rejects_non_json_values(self):
        with pytest.raises(ddj.DaemonJsonError, match="cannot hold"):
            ddj.check_config({"a": {1, 2}})


class TestCompare:
    @pytest.mark.parametrize("a, b, equal", [
        ({"a": True}, {"a": 1}, False),
        ({"a": 1}, {"a": 1.0}, False),
        ({"a": "1"}, {"a": 1}, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # key order is not a change
        ({"a": [1, 2]}, {"a": [2, 1]}, False),  # list order is
        ({"a": {"b": [True]}}, {"a": {"b": [True]}}, True),
        ({}, {"a": None}, False),
    ])
    def test_same(self, a, b, equal):
        assert ddj.same(a, b) is equal

    def test_changed_keys(self):
        before = {"a": 1, "r": {"x": 1, "y": 2}, "gone": 1}
        after = {"a": 1, "r": {"x": 1, "y": 3, "z": 1}, "new": True}
        assert ddj.changed_keys(before, after) == ["r.y", "r.z", "gone", "new"]


class TestRender:
    def test_round_trip_and_format(self):
        data = {"b": 1, "a": {"ü": ["x"]}}
        text = ddj.render(data)
        assert text.endswith("}\n")
        assert text.index('"b"') < text.index('"a"')  # existing order, not sorted
        assert '"ü"' in text
        assert json.loads(text) == data
        assert '\n  "b": 1,\n' in text


class TestUnit:
    def write(self, root, rel, text):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def test_debian_unit_has_host_flag(self, tmp_path):
        self.write(tmp_path, "lib/systemd/system/docker.service", DEBIAN_UNIT)
        frags = ddj.unit_fragments(str(tmp_path))
        assert [p for p, _t in frags] == [str(tmp_path / "lib/systemd/system/docker.service")]
        assert ddj.exec_start(frags) == [(frags[0][0], "/usr/sbin/dockerd -H fd:// $DOCKER_OPTS")]
        msg = ddj.hosts_clash({"hosts": ["unix:///var/run/docker.sock"]}, frags)
        assert "-H fd://" in msg
        assert "ExecStart=\nExecStart=/usr/sbin/dockerd $DOCKER_OPTS\n" in msg
        assert "daemon-reload" in msg

    def test_no_hosts_key_no_clash(self, tmp_path):
        self.write(tmp_path, "lib/systemd/system/docker.service", DEBIAN_UNIT)
        assert ddj.hosts_clash({"debug": True}, ddj.unit_fragments(str(tmp_path))) is None

    def test_dropin_reset_removes_clash(self, tmp_path):
        self.write(tmp_path, "lib/systemd/system/docker.service", DEBIAN_UNIT)
        self.write(tmp_path, "etc/systemd/system/docker.service.d/hosts.conf",
                   "[Service]\nExecStart=\nExecStart=/usr/sbin/dockerd $DOCKER_OPTS\n")
        frags = ddj.unit_fragments(str(tmp_path))
        assert len(frags) == 2
        assert ddj.hosts_clash({"hosts": ["tcp://0.0.0.0:2376"]}, frags) is None

    def test_etc_unit_overrides_lib_and_dropins_sorted_by_name(self, tmp_path):
        self.write(tmp_path, "lib/systemd/system/docker.service", DEBIAN_UNIT)
        self.write(tmp_path, "etc/systemd/system/docker.service", "[Service]\nExecStart=/usr/bin/dockerd\n")
        self.write(tmp_path, "run/systemd/system/docker.service.d/10-a.conf",
                   "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd --host=tcp://127.0.0.1:2375\n")
        self.write(tmp_path, "etc/systemd/system/docker.service.d/20-b.conf", "[Service]\nLimitNOFILE=1048576\n")
        frags = ddj.unit_fragments(str(tmp_path))
        assert [p.split(str(tmp_path))[1] for p, _t in frags] == [
            "/etc/systemd/system/docker.service",
            "/run/systemd/system/docker.service.d/10-a.conf",
            "/etc/systemd/system/docker.service.d/20-b.conf"]
        assert "--host=tcp://127.0.0.1:2375" in ddj.hosts_clash({"hosts": []}, frags)

    def test_continuation_lines_and_other_sections(self, tmp_path):
        unit = "[Unit]\nExecStart=-H ignored\n[Service]\nExecStart=/usr/bin/dockerd \\\n  --containerd=/run/c.sock \\\n  -Hunix:///x\n"
        self.write(tmp_path, "usr/lib/systemd/system/docker.service", unit)
        cmds = ddj.exec_start(ddj.unit_fragments(str(tmp_path)))
        assert len(cmds) == 1 and cmds[0][1].endswith("-Hunix:///x")
        assert ddj.host_flags(cmds[0][1]) == ["-Hunix:///x"]

    def test_host_gateway_flag_is_not_a_host_flag(self):
        assert ddj.host_flags("/usr/bin/dockerd --host-gateway-ip=10.0.0.1") == []

    def test_no_unit(self, tmp_path):
        assert ddj.unit_fragments(str(tmp_path)) == []
        assert ddj.hosts_clash({"hosts": ["fd://"]}, []) is None


class TestValidateOutcome:
    def test_ok(self):
        assert ddj.validate_outcome(0, "configuration OK\n", "") == ("ok", "configuration OK")

    def test_unknown_key(self):
        # dockerd 26.1.5 (Debian 13), recorded.
        err = ("unable to configure the Docker daemon with file /tmp/x.json: the following directives "
               "don't match any configuration option: foo\n")
        assert ddj.validate_outcome(1, "", err)[0] == "invalid"

    def test_docker_20_10_has_no_validate(self):
        # dockerd 20.10.24+dfsg1-1+deb12u1+b6 (Debian 12), recorded: rc 1, on stderr.
        err = "Status: unknown flag: --validate\nSee 'dockerd --help'., Code: 125\n"
        assert ddj.validate_outcome(1, "", err)[0] == "unsupported"
        assert ddj.validate_argv("/usr/sbin/dockerd", "/t/x.json") == [
            "/usr/sbin/dockerd", "--validate", "--config-file", "/t/x.json"]
