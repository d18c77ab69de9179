# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_exporter textfile collectors of gpufleet.cluster.monitoring_node, run by systemd timers (no Ansible on
the node):

    gpufleet-textfile-collector [--config FILE] [--lib DIR] ib|status|fs

  ib      every RDMA port under <sysfs_root>/sys/class/infiniband: state, physical state, rate, the profile's
          rate, and every counter of counters/ and hw_counters/ (symbol_error, link_downed, port_rcv_errors,
          excessive_buffer_overrun_errors, port_xmit_discards, ...). Read by the collection's own sysfs_ib.py
          (gpufleet.cluster.ib_port_facts's parser), installed next to this program from the role's
          files/module_utils/ - byte for byte the collection's plugins/module_utils (a unit test pins it).
  status  the last acceptance result per rung and the last drift check of this node, with the time each was
          written, from the JSON records the acceptance role and playbooks/drift.yml leave in status_dir
          (format gpufleet.status/1); a missing record is reported as missing, never as a pass.
  fs      used ratio of each file system the profile lists, its threshold, and whether it is mounted.

Each run writes <textfile_dir>/gpufleet_<collector>.prom atomically (a temporary file in the same directory,
then rename), including gpufleet_textfile_collector_ok and _last_run_timestamp_seconds, so a failing or
stopped collector shows. Exit 0 ok, 1 the collector failed (the file then says ok 0), 2 bad config.
Python 3.6+ standard library only.
"""

from __future__ import absolute_import, division, print_function

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
import types

FORMAT = "gpufleet.monitoring/1"
STATUS_FORMAT = "gpufleet.status/1"
PROG = "gpufleet-textfile-collector"
DEFAULT_CONFIG = "/etc/gpufleet/monitoring/collectors.json"
DEFAULT_LIB = "/usr/local/lib/gpufleet/module_utils"
PKG = "ansible_collections.gpufleet.cluster.plugins.module_utils"
COLLECTORS = ("ib", "status", "fs")


def err(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))


def load_module_utils(lib, names=("_sysfs", "sysfs_ib")):
    """Load the collection's module_utils files from ``lib`` under their own package name, so their imports
    (``from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs``) resolve to these files
    and to nothing else installed on the node."""
    parts = PKG.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        pkg = types.ModuleType(name)
        pkg.__path__ = []
        sys.modules[name] = pkg
        if i > 1:
            setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], pkg)
    loaded = {}
    for name in names:
        spec = importlib.util.spec_from_file_location(PKG + "." + name, os.path.join(lib, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[PKG + "." + name] = module
        setattr(sys.modules[PKG], name, module)
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded


# ------------------------------------------------------------------ exposition format
def escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def number(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(int(value))


class Metrics(object):
    """Metric families in the order first seen; one HELP/TYPE per family."""

    def __init__(self):
        self.families = []
        self.samples = {}

    def add(self, name, kind, helptext, value, **labels):
        if name not in self.samples:
            self.families.append((name, kind, helptext))
            self.samples[name] = []
        self.samples[name].append((labels, value))

    def text(self):
        out = []
        for name, kind, helptext in self.families:
            out.append("# HELP %s %s" % (name, helptext))
            out.append("# TYPE %s %s" % (name, kind))
            for labels, value in self.samples[name]:
                lbl = ",".join('%s="%s"' % (k, escape(v)) for k, v in sorted(labels.items()))
                out.append("%s%s %s" % (name, "{%s}" % lbl if lbl else "", number(value)))
        return "\n".join(out) + "\n"


def write_atomic(path, text):
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ------------------------------------------------------------------ collectors
IB_COUNTER_SOURCES = ("counters", "hw_counters")


def collect_ib(cfg, metrics, lib):
    sysfs_ib = load_module_utils(lib)["sysfs_ib"]
    devices = sysfs_ib.collect(cfg.get("sysfs_root") or "/")
    wanted = cfg.get("ib_devices") or []
    expected = cfg.get("expected_rate_gbps")
    for dev_name in sorted(devices):
        if wanted and dev_name not in wanted:
            continue
        for port_name, port in sorted(devices[dev_name].get("ports", {}).items()):
            lbl = {"device": dev_name, "port": port_name}
            metrics.add("gpufleet_ib_port_info", "gauge",
                        "RDMA port facts as labels (value 1).", 1,
                        link_layer=port.get("link_layer", ""), state=port.get("state", ""),
                        phys_state=port.get("phys_state", ""), width=port.get("width", ""),
                        speed=port.get("speed", ""), netdevs=",".join(port.get("netdevs", [])), **lbl)
            if port.get("state_num") is not None:
                metrics.add("gpufleet_ib_port_state", "gauge",
                            "Port state number from sysfs (1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE).", port["state_num"], **lbl)
            metrics.add("gpufleet_ib_port_active", "gauge", "1 when the port state is ACTIVE, else 0.",
                        1 if port.get("state_num") == 4 else 0, **lbl)
            if port.get("phys_state_num") is not None:
                metrics.add("gpufleet_ib_port_phys_linkup", "gauge", "1 when the physical state is LinkUp, else 0.",
                            1 if port["phys_state_num"] == 5 else 0, **lbl)
            if port.get("rate_gbps") is not None:
                metrics.add("gpufleet_ib_port_rate_gbps", "gauge", "Port rate in Gb/s (sysfs rate).",
                            port["rate_gbps"], **lbl)
            if expected:
                metrics.add("gpufleet_ib_port_expected_rate_gbps", "gauge",
                            "Port rate in Gb/s the node's profile expects.", expected, **lbl)
            for source in IB_COUNTER_SOURCES:
                for counter, value in sorted(port.get(source, {}).items()):
                    metrics.add("gpufleet_ib_port_stat_total", "counter",
                                "RDMA port counter from sysfs (counters/ or hw_counters/).", value,
                                counter=counter, source=source, **lbl)
    return "%d RDMA device(s)" % len(devices)


def read_record(path, kind):
    """(record, problem): the JSON record or None, and why it is not usable (None when it is)."""
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except (IOError, OSError) as exc:
        return None, None if getattr(exc, "errno", None) == 2 else "cannot read %s: %s" % (path, exc)
    except ValueError as exc:
        return None, "%s is not JSON: %s" % (path, exc)
    if not isinstance(doc, dict) or doc.get("format") != STATUS_FORMAT or doc.get("kind") != kind \
            or not isinstance(doc.get("written_unix"), (int, float)) or isinstance(doc.get("written_unix"), bool):
        return None, "%s is not a %s %s record with written_unix" % (path, STATUS_FORMAT, kind)
    return doc, None


def collect_status(cfg, metrics, lib):
    problems = []
    status_dir = cfg.get("status_dir") or "/var/lib/gpufleet/status"
    if cfg.get("expected_gpus") is not None:
        metrics.add("gpufleet_node_expected_gpus", "gauge", "GPUs the node's profile expects.", cfg["expected_gpus"])
    acc, problem = read_record(os.path.join(status_dir, "acceptance.json"), "acceptance")
    if problem:
        problems.append(problem)
    metrics.add("gpufleet_acceptance_record_present", "gauge",
                "1 when the node has a readable record of its last acceptance run, else 0.", 1 if acc else 0)
    if acc:
        metrics.add("gpufleet_acceptance_last_run_timestamp_seconds", "gauge",
                    "Time the last acceptance run of this node was recorded (Unix seconds).", acc["written_unix"])
        if acc.get("status") in ("passed", "failed"):
            metrics.add("gpufleet_acceptance_last_pass", "gauge",
                        "1 when every rung the last acceptance run ran passed, 0 when one failed.",
                        1 if acc["status"] == "passed" else 0)
        for rung in acc.get("rungs") or []:
            if not isinstance(rung, dict) or rung.get("status") not in ("pass", "fail"):
                continue
            metrics.add("gpufleet_acceptance_last_rung_pass", "gauge",
                        "1 when the rung passed in the last acceptance run, 0 when it failed (skipped rungs absent).",
                        1 if rung["status"] == "pass" else 0,
                        rung=rung.get("rung") or "", device=rung.get("device") or "")
    drift, problem = read_record(os.path.join(status_dir, "drift.json"), "drift")
    if problem:
        problems.append(problem)
    metrics.add("gpufleet_drift_record_present", "gauge",
                "1 when the node has a readable record of its last drift check, else 0.", 1 if drift else 0)
    if drift:
        metrics.add("gpufleet_drift_last_run_timestamp_seconds", "gauge",
                    "Time the last drift check of this node was recorded (Unix seconds).", drift["written_unix"])
        metrics.add("gpufleet_drift_detected", "gauge", "1 when the last drift check found drift on this node.",
                    1 if drift.get("drift") else 0)
        metrics.add("gpufleet_drift_differences", "gauge",
                    "Settings and version-lock deviations the last drift check found on this node.",
                    int(drift.get("differences") or 0))
    if problems:
        raise CollectorError("; ".join(problems))
    return "acceptance %s, drift %s" % ("recorded" if acc else "missing", "recorded" if drift else "missing")


def collect_fs(cfg, metrics, lib):
    problems = []
    for fs in cfg.get("filesystems") or []:
        path = fs["path"]
        mounted = os.path.ismount(path)
        metrics.add("gpufleet_filesystem_mounted", "gauge", "1 when the watched path is a mount point, else 0.",
                    1 if mounted else 0, mountpoint=path)
        metrics.add("gpufleet_filesystem_used_threshold_ratio", "gauge",
                    "Used ratio above which the profile wants a ticket.", fs["max_used_percent"] / 100.0,
                    mountpoint=path)
        if not mounted:
            continue
        try:
            st = os.statvfs(path)
        except OSError as exc:
            problems.append("statvfs %s: %s" % (path, exc))
            continue
        used = (st.f_blocks - st.f_bfree) * st.f_frsize
        avail = st.f_bavail * st.f_frsize
        metrics.add("gpufleet_filesystem_size_bytes", "gauge", "File system size in bytes.",
                    st.f_blocks * st.f_frsize, mountpoint=path)
        metrics.add("gpufleet_filesystem_avail_bytes", "gauge", "Bytes available to unprivileged users.",
                    avail, mountpoint=path)
        # as df computes Use%: used / (used + available to users)
        metrics.add("gpufleet_filesystem_used_ratio", "gauge", "Used ratio as df computes it (0..1).",
                    round(float(used) / (used + avail), 6) if used + avail else 0.0, mountpoint=path)
    if problems:
        raise CollectorError("; ".join(problems))
    return "%d file system(s)" % len(cfg.get("filesystems") or [])


class CollectorError(Exception):
    pass


RUNNERS = {"ib": collect_ib, "status": collect_status, "fs": collect_fs}


def load_config(path):
    try:
        with open(path) as handle:
            cfg = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        err("cannot read %s: %s" % (path, exc))
        return None
    if not isinstance(cfg, dict) or cfg.get("format") != FORMAT or not isinstance(cfg.get("textfile_dir"), str):
        err("%s is not a %s file with a textfile_dir; run the gpufleet.cluster.monitoring_node role again"
            % (path, FORMAT))
        return None
    for fs in cfg.get("filesystems") or []:
        if not isinstance(fs, dict) or not isinstance(fs.get("path"), str) \
                or not isinstance(fs.get("max_used_percent"), (int, float)):
            err("%s: filesystems entries need path and max_used_percent, got %r" % (path, fs))
            return None
    return cfg


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description="gpufleet textfile collectors for node_exporter")
    parser.add_argument("--config", default=DEFAULT_CONFIG)
    parser.add_argument("--lib", default=DEFAULT_LIB, help="directory of sysfs_ib.py and _sysfs.py")
    parser.add_argument("collector", choices=COLLECTORS)
    args = parser.parse_args(argv)
    cfg = load_config(args.config)
    if cfg is None:
        return 2
    metrics = Metrics()
    ok, rc = 1, 0
    try:
        summary = RUNNERS[args.collector](cfg, metrics, args.lib)
    except Exception as exc:  # pylint: disable=broad-except
        # The file still says the collector failed: a missing figure is a failure, never a pass.
        ok, rc, summary = 0, 1, "failed: %s" % exc
        err("%s collector %s" % (args.collector, summary))
    metrics.add("gpufleet_textfile_collector_ok", "gauge",
                "1 when the gpufleet textfile collector's last run succeeded, else 0.", ok, collector=args.collector)
    metrics.add("gpufleet_textfile_collector_last_run_timestamp_seconds", "gauge",
                "Time the gpufleet textfile collector last ran (Unix seconds).", int(time.time()),
                collector=args.collector)
    target = os.path.join(cfg["textfile_dir"], "gpufleet_%s.prom" % args.collector)
    try:
        write_atomic(target, metrics.text())
    except (IOError, OSError) as exc:
        err("cannot write %s: %s" % (target, exc))
        return 1
    if rc == 0:
        print("%s: %s: %s -> %s" % (PROG, args.collector, summary, target))
    return rc


if __name__ == "__main__":
    sys.exit(main())
