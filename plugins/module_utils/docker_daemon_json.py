# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Docker's ``daemon.json``: parse, merge the managed keys, compare, render, and the checks around it.

Pure functions (no Ansible imports), shared by the ``docker_daemon_json`` module and its unit tests, and at
the end the module's engine (``run(module)``: read, merge, check, validate with ``dockerd --validate`` through
_runner, write atomically), which needs only the AnsibleModule passed in.

Merge rules (``merge``):

- Only the keys named in ``config`` are touched; every other key of the file is kept as it was,
  in its place. No defaults are ever added.
- Dicts merge recursively: ``{"runtimes": {"nvidia": {...}}}`` adds or updates ``runtimes.nvidia``
  and keeps ``runtimes.runc-custom``.
- Lists and scalars are replaced as a whole. daemon.json lists are ordered and complete statements
  (``dns`` and ``registry-mirrors`` are tried in order, ``hosts`` is the full listener set,
  ``default-address-pools`` a full allocation plan): merging would make entries impossible to
  remove and the result depend on what was there before, so the list given is the list written.
- ``state=absent`` removes the named keys; a dict value with keys descends into that dict and
  removes only the keys named there (so the same ``config`` used for ``present`` undoes itself),
  any other value (``null``, a list, an empty dict) removes the key whatever its value. Dicts
  emptied by a removal are removed too.

Values compare as data, type-strictly (``true`` is not ``1``, ``1`` is not ``1.0``), so key order and
formatting never cause a change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import tempfile

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner

DEFAULT_PATH = "/etc/docker/daemon.json"
# daemon.json nests a few levels (runtimes.nvidia.runtimeArgs); far deeper input is a mistake and would
# exhaust Python's recursion limit in json and in the merge.
MAX_DEPTH = 64
UNIT_DIRS = ("etc/systemd/system", "run/systemd/system", "usr/local/lib/systemd/system",
             "usr/lib/systemd/system", "lib/systemd/system")
HOST_FLAG = re.compile(r"^(-H|--host)(=.*|.+)?$")


class DaemonJsonError(Exception):
    """Input or file problem, with a message meant for the user."""


# ---------------------------------------------------------------- the file
def target_path(path):
    """The file to read and replace for ``path``: ``path`` itself, or for a symlink the file it finally points
    to, so the link (and the layout it expresses) is kept and its target is updated.

    Raises DaemonJsonError naming ``path`` when it is empty, a directory, a symlink loop, a symlink into a
    directory that does not exist, not a regular file (a FIFO or device would block or be destroyed), or when
    the nearest existing ancestor of a new file is not a directory.
    """
    if not path:
        raise DaemonJsonError("path must name the daemon.json file (default %s), got an empty string" % DEFAULT_PATH)
    real = path
    if os.path.islink(path):
        real = os.path.realpath(path)
        if os.path.islink(real):  # realpath stops where the links go round in a circle
            raise DaemonJsonError("path %s is a symlink loop; path must name the daemon.json file or a symlink to it"
                                  % path)
        if not os.path.isdir(os.path.dirname(real) or "."):
            raise DaemonJsonError("path %s is a symlink to %s, whose directory does not exist; create it or point "
                                  "path at the file itself" % (path, real))
    if os.path.isdir(real):
        raise DaemonJsonError("path %s is a directory; path must name the daemon.json file (for example %s)"
                              % (path, os.path.join(path, "daemon.json")))
    if os.path.lexists(real) and not os.path.isfile(real):
        raise DaemonJsonError("path %s is not a regular file (a FIFO, socket or device); path must name the "
                              "daemon.json file" % path)
    ancestor = os.path.dirname(os.path.abspath(real))
    while not os.path.lexists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise DaemonJsonError("path %s cannot be created: %s is not a directory" % (path, ancestor))
    return real


# ---------------------------------------------------------------- parse / render
def parse(text, source):
    """JSON object text -> dict. Empty or blank text is an empty object (``touch daemon.json``).

    Raises DaemonJsonError naming ``source`` and the line/column of the first error.
    """
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except RecursionError:
        raise DaemonJsonError("%s nests deeper than %d levels" % (source, MAX_DEPTH))
    except ValueError as exc:
        lineno = getattr(exc, "lineno", None)
        if lineno is not None:
            where = "line %d column %d (char %d)" % (lineno, exc.colno, exc.pos)
            msg = getattr(exc, "msg", str(exc))
            raise DaemonJsonError("%s is not valid JSON: %s at %s" % (source, msg, where))
        raise DaemonJsonError("%s is not valid JSON: %s" % (source, exc))
    if not isinstance(data, dict):
        raise DaemonJsonError("%s must hold a JSON object ({...}), not %s" % (source, type_name(data)))
    if depth(data) > MAX_DEPTH:
        raise DaemonJsonError("%s nests deeper than %d levels" % (source, MAX_DEPTH))
    return data


def depth(value):
    """Nesting depth of dicts and lists (a scalar is 0), without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict):
            todo.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, level + 1) for v in item)
        else:
            continue
        deepest = max(deepest, level + 1)
    return deepest


def render(data):
    """The text written: 2-space indent, keys in their order, non-ASCII kept, trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, separators=(",", ": ")) + "\n"


def type_name(value):
    for kind, name in ((bool, "a boolean"), (dict, "an object"), (list, "a list"), (str, "a string"),
                       (int, "a number"), (float, "a number")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


# ---------------------------------------------------------------- merge / compare
def check_config(config, source="config", path=""):
    """Raise DaemonJsonError for values JSON cannot hold or a null under state=present."""
    if not path and depth(config) > MAX_DEPTH:
        raise DaemonJsonError("%s nests deeper than %d levels" % (source, MAX_DEPTH))
    for key, value in config.items():
        here = "%s.%s" % (path, key) if path else key
        if value is None:
            raise DaemonJsonError("%s: %s is null; to remove a key use state=absent" % (source, here))
        if isinstance(value, dict):
            check_config(value, source, here)
        elif not isinstance(value, (list, str, bool, int, float)):
            raise DaemonJsonError("%s: %s has a value JSON cannot hold (%s)" % (source, here, type(value).__name__))


def _copy(value):
    return json.loads(json.dumps(value))


def merge(current, config, state="present"):
    """New dict: ``current`` with ``config``'s keys merged in (present) or removed (absent)."""
    if depth(config) > MAX_DEPTH:
        raise DaemonJsonError("config nests deeper than %d levels" % MAX_DEPTH)
    result = _copy(current)
    if state == "present":
        _merge_into(result, config)
    elif state == "absent":
        _remove_from(result, config)
    else:
        raise DaemonJsonError("state must be present or absent, not %r" % (state,))
    return result


def _merge_into(target, config):
    for key, value in config.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge_into(target[key], value)
        else:
            target[key] = _copy(value)


def _remove_from(target, config):
    for key, value in config.items():
        if key not in target:
            continue
        if isinstance(value, dict) and value and isinstance(target[key], dict):
            _remove_from(target[key], value)
            if not target[key]:
                del target[key]
        else:
            del target[key]


def same(a, b):
    """Data equality that tells true from 1 and 1 from 1.0 (Python's == does not)."""
    if type(a) is not type(b):  # pylint: disable=unidiomatic-typecheck
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def changed_keys(before, after, prefix=""):
    """Dotted paths of keys added, removed or changed, for messages."""
    out = []
    for key in list(before) + [k for k in after if k not in before]:
        here = prefix + key
        if key not in after or key not in before:
            out.append(here)
        elif isinstance(before[key], dict) and isinstance(after[key], dict):
            out.extend(changed_keys(before[key], after[key], here + "."))
        elif not same(before[key], after[key]):
            out.append(here)
    return out


# ---------------------------------------------------------------- docker.service and -H
def unit_fragments(systemd_root="/", unit="docker.service"):
    """[(path, text)] of the unit file systemd would load and its drop-ins, in the order systemd applies
    them. The first unit directory holding the unit wins; drop-ins (``<unit>.d/*.conf``) from every
    directory are applied sorted by file name, a name in an earlier directory masking a later one."""
    frags = []
    for d in UNIT_DIRS:
        path = os.path.join(systemd_root, d, unit)
        if os.path.isfile(path):
            frags.append((path, _read(path)))
            break
    if not frags:
        return []
    dropins = {}
    for d in UNIT_DIRS:
        dd = os.path.join(systemd_root, d, unit + ".d")
        if os.path.isdir(dd):
            for name in os.listdir(dd):
                if name.endswith(".conf") and name not in dropins:
                    dropins[name] = os.path.join(dd, name)
    for name in sorted(dropins):
        frags.append((dropins[name], _read(dropins[name])))
    return frags


def _read(path):
    """Text of a unit file or drop-in; DaemonJsonError (naming systemd_root) when it is not a readable file."""
    if not os.path.isfile(path):
        raise DaemonJsonError("systemd_root: %s is %s; unit files and drop-ins (*.conf) must be regular files, "
                              "remove or rename it" % (path, "a directory" if os.path.isdir(path) else "not a regular file"))
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except (IOError, OSError) as exc:
        raise DaemonJsonError("systemd_root: cannot read %s: %s" % (path, exc.strerror or exc))


def exec_start(fragments):
    """The effective ExecStart= command lines [(path, line)] of the [Service] sections: an empty
    ``ExecStart=`` clears the ones before it, as systemd does."""
    lines = []
    for path, text in fragments:
        section = None
        pending = ""
        for raw in text.splitlines():
            line = pending + raw.strip()
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            pending = ""
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            if section != "Service" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            if key.strip() != "ExecStart":
                continue
            value = value.strip()
            if not value:
                lines = []
            else:
                lines.append((path, value))
    return lines


def host_flags(command):
    """The ``-H``/``--host`` arguments of a dockerd command line (prefixes like ``-`` or ``@`` ignored)."""
    words = command.split()
    out = []
    for i, w in enumerate(words):
        m = HOST_FLAG.match(w)
        if not m or w.startswith("--host-"):
            continue
        if m.group(2):
            out.append(w)
        elif i + 1 < len(words):
            out.append("%s %s" % (w, words[i + 1]))
        else:
            out.append(w)
    return out


def hosts_clash(merged, fragments):
    """None, or a message explaining that daemon.json ``hosts`` and the unit's ``-H`` cannot both be set."""
    if "hosts" not in merged:
        return None
    for path, command in exec_start(fragments):
        flags = host_flags(command)
        if flags:
            return (
                "daemon.json would set \"hosts\" while docker.service starts dockerd with %s (%s: ExecStart=%s); "
                "dockerd refuses to start when both are given (\"the following directives are specified both "
                "as a flag and in the configuration file: hosts\"). Fix one side: either leave \"hosts\" out "
                "of the config (state=absent with config {\"hosts\": null} removes it), or add a drop-in "
                "/etc/systemd/system/docker.service.d/hosts.conf with\n[Service]\nExecStart=\nExecStart=%s\n"
                "(the same command without the -H flag), then systemctl daemon-reload."
                % (", ".join(flags), path, command, strip_host_flags(command)))
    return None


def strip_host_flags(command):
    words = command.split()
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        m = HOST_FLAG.match(w)
        if m and not w.startswith("--host-"):
            skip = not m.group(2)
            continue
        out.append(w)
    return " ".join(out)


# ---------------------------------------------------------------- dockerd --validate
def validate_argv(dockerd, config_file):
    return [dockerd, "--validate", "--config-file", config_file]


def validate_outcome(rc, stdout, stderr):
    """('ok'|'unsupported'|'invalid', message) of a ``dockerd --validate`` run. dockerd before 23.0
    (Debian 12's 20.10) has no --validate and says so: that is 'unsupported', not a verdict."""
    text = "\n".join(x.strip() for x in (stderr, stdout) if x and x.strip())
    if rc == 0:
        return "ok", text
    if re.search(r"unknown (flag|shorthand flag).*validate|flag provided but not defined: -+validate", text):
        return "unsupported", text
    return "invalid", text


# ---------------------------------------------------------------- the module's engine
DOCKERD_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/bin")


def _encode(text):
    """Bytes written for ``text`` (UTF-8; surrogate escapes back to their bytes, as Ansible's to_bytes)."""
    return text.encode("utf-8", "surrogateescape")


def read_current(path):
    """(text or None when absent, data) of the file at ``path``."""
    if not os.path.exists(path):
        return None, {}
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DaemonJsonError("%s is not UTF-8 text (byte %d)" % (path, exc.start))
    return text, parse(text, path)


def find_dockerd(module):
    """dockerd_path (fails when it is not an executable file), else ``dockerd`` from PATH and DOCKERD_DIRS, else None."""
    wanted = module.params["dockerd_path"]
    if wanted:
        # dockerd_path is a path: a bare name is a file in the working directory, never a PATH lookup
        if not runner.find(module, wanted if os.sep in wanted else os.path.join(os.curdir, wanted)):
            module.fail_json(msg="dockerd_path %s is not an executable file" % wanted)
        return wanted
    return runner.find(module, "dockerd", DOCKERD_DIRS)


def validate(module, text):
    """True when dockerd accepted ``text``; False when skipped (warned); fails on a rejection."""
    dockerd = find_dockerd(module)
    if not dockerd:
        module.warn("daemon.json not validated: no dockerd found (set dockerd_path, or validate=false)")
        return False
    fd, tmp = tempfile.mkstemp(prefix="daemon.", suffix=".json", dir=module.tmpdir)
    with os.fdopen(fd, "wb") as f:
        f.write(_encode(text))
    argv = validate_argv(dockerd, tmp)
    # dockerd's own directory first on PATH, so it finds its docker-proxy
    res = runner.run(argv, env_update={"PATH": os.path.dirname(dockerd) + os.pathsep + os.environ.get("PATH", "")})
    if res["start_error"]:  # exists and is executable, but the OS cannot start it
        module.fail_json(msg="dockerd_path %s could not be started: %s (file untouched)" % (dockerd, res["start_error"]),
                         cmd=" ".join(argv))
    outcome, message = validate_outcome(res["rc"], res["stdout"], res["stderr"])
    if outcome == "unsupported":
        module.warn("daemon.json not validated: %s has no --validate (Docker >= 23.0 has it)" % dockerd)
        return False
    if outcome == "invalid":
        module.fail_json(msg="dockerd rejects the resulting %s (file untouched): %s"
                         % (module.params["path"], message.replace(tmp, "<result>")),
                         cmd=" ".join(argv), rc=res["rc"], stdout=res["stdout"], stderr=res["stderr"])
    return True


def write(module, path, text):
    """Temp file in the same directory, then atomic_move (keeps the old file's mode, owner, context).
    ``path`` is the resolved target (never a symlink, see target_path)."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, tmp = tempfile.mkstemp(prefix=".daemon.json.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_encode(text))
            f.flush()
            os.fsync(f.fileno())
        module.atomic_move(tmp, path, unsafe_writes=False)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _fail(module, result, msg):
    """Fail with everything computed so far; nothing was written, so changed is false."""
    out = dict(result)
    out.update(changed=False, msg=msg)
    module.fail_json(**out)


def refuse_bad_input(module, p):
    """Fail naming the option before anything is read."""
    errors = ac.nul_errors(p)
    if not errors:
        errors += ac.root_dir_errors("systemd_root", p["systemd_root"])
        if p["dockerd_path"] is not None:
            errors += ac.executable_errors("dockerd_path", p["dockerd_path"] or "")
    ac.refuse(module, errors)


def plan(module):
    """(real path, config, before text, before, after) for ``module.params``; fails on bad input or an
    unreadable file."""
    p = module.params
    try:
        real_path = target_path(p["path"])
        config = p["config"]
        if isinstance(config, str):
            config = parse(config, "config")
        elif not isinstance(config, dict):
            raise DaemonJsonError("config must be a dict or JSON object text, not %s" % type(config).__name__)
        ac.refuse(module, ac.nul_errors({"config": config}))
        if p["state"] == "present":
            check_config(config)
        before_text, before = read_current(real_path)
        after = merge(before, config, p["state"])
    except DaemonJsonError as exc:
        module.fail_json(msg=str(exc))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read %s: %s" % (p["path"], exc))
    return real_path, config, before_text, before, after


def run(module):
    """Compute the merged file, check it (docker.service -H, dockerd --validate) and write it when it changed
    and not in check mode. Returns the result for exit_json; fails (fail_json) with nothing written."""
    p = module.params
    path = p["path"]
    refuse_bad_input(module, p)
    real_path, config, before_text, before, after = plan(module)
    changed = not same(before, after)
    # A file that does not exist and stays empty is not created.
    after_text = render(after) if changed else (before_text or "")
    result = dict(changed=changed, config=after, changed_keys=changed_keys(before, after),
                  restart_required=changed, validated=False)
    if changed or module._diff:
        result["diff"] = dict(before=before_text or "", after=after_text,
                              before_header=path, after_header=path)

    if changed or "hosts" in config:
        try:
            clash = hosts_clash(after, unit_fragments(p["systemd_root"]))
        except DaemonJsonError as exc:
            _fail(module, result, "%s (file untouched)" % exc)
        if clash:
            _fail(module, result, "%s (file untouched): %s" % (path, clash))
    if changed:
        if p["validate"]:
            result["validated"] = validate(module, after_text)
        if not module.check_mode:
            if p["backup"] and before_text is not None:
                result["backup_file"] = module.backup_local(real_path)
            try:
                write(module, real_path, after_text)
            except (IOError, OSError) as exc:
                _fail(module, result, "cannot write %s: %s" % (path, exc))
    return result
