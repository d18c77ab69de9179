# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-apply the RoCE QoS state saved by gpufleet.cluster.roce_qos (persist file format
gpufleet.roce_qos/2) without Ansible: run at boot by gpufleet-roce-qos@IFACE.service.

    gpufleet-roce-qos-replay [--check] /etc/gpufleet/roce_qos/IFACE.json

The file's "replay" plan holds configfs directories to create, absolute tool command lines
(mlnx_qos / dcb; every one sets a state rather than a change, so running them again is harmless)
and sysfs/configfs values. Values already right are not written again. Each value is read back: a
value the kernel did not take is an error. --check changes nothing and exits 1 when a value differs
(the tool part is not checked: the module reports it). Exit 0 ok, 1 failed or drift, 2 bad file.
Python 3.6+ standard library only.
"""

from __future__ import absolute_import, division, print_function

import errno
import json
import os
import subprocess
import sys

FORMAT = "gpufleet.roce_qos/2"
PROG = "gpufleet-roce-qos-replay"


def log(msg):
    print("%s: %s" % (PROG, msg))


def err(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def load(path):
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        err("cannot read %s: %s" % (path, exc))
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        err("%s has format %r, this program replays %s; run the gpufleet.cluster.roce_qos role again"
            % (path, doc.get("format") if isinstance(doc, dict) else None, FORMAT))
        return None
    plan = doc.get("replay")
    if not isinstance(plan, dict) or not isinstance(doc.get("interface"), str):
        err("%s has no interface or no replay plan" % path)
        return None
    return doc


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    if len(paths) != 1:
        err("usage: %s [--check] PERSIST_FILE.json" % PROG)
        return 2
    doc = load(paths[0])
    if doc is None:
        return 2
    iface, plan = doc["interface"], doc["replay"]
    netdir = os.path.join(doc.get("sysfs_root") or "/", "sys", "class", "net", iface)
    if not os.path.isdir(netdir):
        err("netdev %s does not exist (%s)" % (iface, netdir))
        return 1
    failed = []
    if not check:
        for directory in plan.get("mkdir") or []:
            try:
                os.mkdir(directory)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    failed.append("mkdir %s: %s" % (directory, exc))
        env = dict(os.environ, LC_ALL="C")
        for cmd in plan.get("commands") or []:
            try:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
                out = proc.communicate()[0].decode("utf-8", "replace").strip()
                rc = proc.returncode
            except OSError as exc:
                out, rc = str(exc), 127
            if rc != 0:
                failed.append("%s: rc %d: %s" % (" ".join(cmd), rc, out))
    changed, drift = 0, []
    for item in plan.get("writes") or []:
        path, value = item["path"], str(item["value"])
        if read(path) == value:
            continue
        if check:
            drift.append("%s is %r, wanted %r" % (path, read(path), value))
            continue
        if not os.path.exists(path):
            failed.append("%s does not exist" % path)
            continue
        try:
            with open(path, "w") as handle:
                handle.write("%s\n" % value)
        except (IOError, OSError) as exc:
            failed.append("write %s to %s: %s" % (value, path, exc))
            continue
        changed += 1
        if read(path) != value:
            failed.append("%s: the kernel did not take %r (reads %r)" % (path, value, read(path)))
    for line in drift + failed:
        err("%s: %s" % (iface, line))
    if check:
        log("%s: %d of %d value(s) differ" % (iface, len(drift), len(plan.get("writes") or [])))
        return 1 if drift else 0
    log("%s: %d command(s) run, %d of %d value(s) written, %d error(s)"
        % (iface, len(plan.get("commands") or []), changed, len(plan.get("writes") or []), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
