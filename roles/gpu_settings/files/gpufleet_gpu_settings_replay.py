# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-apply the GPU settings saved by gpufleet.cluster.gpu_settings (persist file format gpufleet.gpu_settings/1)
without Ansible: run at boot by gpufleet-gpu-settings.service.

    gpufleet-gpu-settings-replay PERSIST_FILE.json

For each GPU of the file (addressed by UUID, so a changed enumeration order does not matter) it runs
``nvidia-smi -i UUID ARGS`` for every saved setting (-pm, -c, -pl, -ac, -lgc: each sets a state, so running them
again is harmless) and records locked clocks in the file's lock_record_path (the module reads them from there:
nvidia-smi does not print them). A GPU that is gone or a command that fails is an error; the others still run.
Exit 0 ok, 1 a command failed, 2 bad file. Python 3.6+ standard library only.
"""

from __future__ import absolute_import, division, print_function

import json
import os
import subprocess
import sys
import tempfile

FORMAT = "gpufleet.gpu_settings/1"
LOCK_FORMAT = "gpufleet.gpu_settings.locks/1"
PROG = "gpufleet-gpu-settings-replay"
TIMEOUT = 300


def log(msg):
    print("%s: %s" % (PROG, msg))
    sys.stdout.flush()


def err(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))


def load(path):
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        err("cannot read %s: %s" % (path, exc))
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        err("%s has format %r, this program replays %s; run the gpufleet.cluster.gpu_settings role again"
            % (path, doc.get("format") if isinstance(doc, dict) else None, FORMAT))
        return None
    if not isinstance(doc.get("gpus"), list) or not isinstance(doc.get("nvidia_smi"), str):
        err("%s has no gpus list or no nvidia_smi path" % path)
        return None
    return doc


def run(argv):
    env = dict(os.environ, LC_ALL="C")
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                universal_newlines=True)
        out, dummy = proc.communicate(timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return proc.returncode, (out or "").strip()


def write_locks(path, locks):
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".gpu_settings.")
    with os.fdopen(fd, "w") as handle:
        json.dump({"format": LOCK_FORMAT, "gpus": locks}, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 1:
        err("usage: %s PERSIST_FILE.json" % PROG)
        return 2
    doc = load(argv[0])
    if doc is None:
        return 2
    smi, ran, errors, locks = doc["nvidia_smi"], 0, 0, {}
    for gpu in doc["gpus"]:
        for args in gpu.get("replay") or []:
            argv = [smi, "-i", gpu["uuid"]] + [str(a) for a in args]
            rc, out = run(argv)
            ran += 1
            if rc != 0:
                errors += 1
                err("GPU %s (%s): %s failed (rc %d): %s" % (gpu.get("index"), gpu["uuid"], " ".join(argv), rc,
                                                            out.splitlines()[-1] if out else "no output"))
                continue
            if args and args[0] == "-lgc":
                low, high = [int(x) for x in str(args[1]).split(",")]
                locks[gpu["uuid"]] = {"min_mhz": low, "max_mhz": high}
    if locks and doc.get("lock_record_path"):
        try:
            write_locks(doc["lock_record_path"], locks)
        except (IOError, OSError) as exc:
            errors += 1
            err("cannot write %s: %s" % (doc["lock_record_path"], exc))
    log("%d GPU(s), %d command(s) run, %d error(s)" % (len(doc["gpus"]), ran, errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
