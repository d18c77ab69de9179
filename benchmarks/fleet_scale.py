# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Push mode at fleet scale: what one controller pays per host for a converged site.yml and a drift check.

For each size N (--sizes, default 4 8 16) the lab holds N throwaway hosts scale-01..scale-N (scripts/lab,
10.254.77.200-219, odd numbers bookworm, even trixie), in an inventory written to a temp dir with the groups of
inventories/lab (gpu_nodes > profile_lab_cpu) and a copy of its group_vars, so the same roles run. Sizes grow
in place: the hosts of the smaller size stay and only the new ones are brought up and converged. Per size:

  converge   ansible-playbook site.yml (the new hosts only, --limit): reported, not the measured figure
  site       ansible-playbook site.yml on the converged hosts (all N)
  drift      ansible-playbook playbooks/drift.yml --check (GPUFLEET_DRIFT_DIR in the temp dir)

Measured per run: wall; controller CPU-s = user+sys of the whole ansible-playbook process tree (RUSAGE_CHILDREN
deltas; this process is made a child subreaper and ends the run's ssh ControlMasters, which live in a control
path directory of the run's own, so their CPU is counted too); host-tasks per host from the PLAY RECAP (reached
= ok (which includes changed) + failed + unreachable, skipped, total = reached + skipped; mean over hosts); the
load average before and after. Then a projection from the controller CPU-s per host of the largest size: nodes
per controller core for a 10 / 30 / 60 min run and the controller CPU-hours of a 1,000- and 10,000-node run.
The lab hosts share this machine's cores with the controller: walls are upper bounds, the per-host controller
CPU is the figure that projects.

The measured code is a git worktree of HEAD in a temp dir (commit first), with the collection linked into its
.ansible/collections as scripts/setup does: a pull into the checkout during the run changes nothing under it.

  --ref GITREF   the same measurement on 4 hosts for another commit too (a worktree likewise), last: scale-01..04
                 converged with that commit's site.yml, then measured - before/after in one command, same hosts.
  --mitogen      also run site.yml and drift.yml on 4 hosts with Mitogen's strategy (mitogen_linear). Optional:
                 mitogen (PyPI) is not a dependency of the collection; install it into the controller's venv
                 or put it on PYTHONPATH (--mitogen-path). Without it the run says so and skips these rows.
  --until HH:MM  (UTC) start no step estimated to end later (the last wall of its kind, per host, times its
                 hosts, the slowest so far); a converge not run ends the sizes. For shared machines with a quiet window.

Serialised with flock on /work/locks/scale.lock (GPUFLEET_SCALE_LOCK); the hosts are taken down at the end.
Results: build/fleet-scale/results.json and one log per run in build/fleet-scale/ (--out).

Usage (root): .venv/bin/python benchmarks/fleet_scale.py [--sizes 4 8 16] [--ref 9a76c0b] [--mitogen] [--keep]
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / 'scripts' / 'lab'
PREFIX = 'scale-'
BASE_IP = 200  # 10.254.77.200-219: this benchmark's addresses (docs/lab.md)
MAX_HOSTS = 20
RECAP = re.compile(r'^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+'
                   r'skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)')
PR_SET_CHILD_SUBREAPER = 36


def log(msg):
    print('fleet_scale: %s' % msg, flush=True)


def host_name(i):
    return '%s%02d' % (PREFIX, i)


def host_spec(i):
    return {'ansible_host': '10.254.77.%d' % (BASE_IP + i - 1),
            'lab_distro': 'bookworm' if i % 2 else 'trixie',
            'rack': 'lab-a' if i % 2 else 'lab-b'}


def write_inventory(checkout, size, path):
    """An inventory like inventories/lab (same groups, the checkout's group_vars) holding scale-01..size."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    shutil.copytree(checkout / 'inventories' / 'lab' / 'group_vars', path / 'group_vars')
    hosts = {host_name(i): host_spec(i) for i in range(1, size + 1)}
    inv = {'all': {'children': {'gpu_nodes': {'children': {'profile_lab_cpu': {'hosts': hosts}}}}}}
    # JSON is YAML: no YAML library needed in this script
    (path / 'hosts.yml').write_text('---\n# fleet_scale.py: %d throwaway lab hosts\n%s\n' % (size, json.dumps(inv, indent=2)))
    return path


def set_subreaper():
    """Orphaned descendants (ssh ControlMasters that daemonise) become ours, so their CPU is counted."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans(timeout=10.0):
    """Wait for every remaining child (reparented ControlMasters); their rusage joins RUSAGE_CHILDREN."""
    end = time.monotonic() + timeout
    while True:
        try:
            pid, dummy = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            if time.monotonic() > end:
                return False
            time.sleep(0.05)


def run_tree(argv, cwd, env, logf, cp_dir):
    """Run argv in a forked child that is a child subreaper: when the playbook has ended, the child ends the
    run's ssh ControlMasters and waits for every orphan, so RUSAGE_CHILDREN of this process then holds the CPU
    of the whole tree (the forked child's own share is a few milliseconds). Returns (rc, all reaped)."""
    flag = logf.with_suffix('.reaped')
    pid = os.fork()
    if pid == 0:  # child
        code = 125
        try:
            sub = set_subreaper()
            with open(logf, 'a') as fh:
                proc = subprocess.Popen(argv, cwd=str(cwd), env=env, stdout=fh, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
            signal.signal(signal.SIGTERM, lambda signum, frame: proc.terminate())
            proc.wait()
            close_masters(cp_dir)
            flag.write_text('yes' if reap_orphans() and sub else 'no')
            code = proc.returncode if 0 <= proc.returncode < 125 else 124
        finally:
            os._exit(code)
    try:
        dummy, status = os.waitpid(pid, 0)
    except SystemExit:  # SIGTERM: end the playbook, then the child, before the hosts go down
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        raise
    reaped = flag.exists() and flag.read_text() == 'yes'
    if flag.exists():
        flag.unlink()
    return os.waitstatus_to_exitcode(status), reaped


def close_masters(cp_dir):
    for sock in glob.glob(os.path.join(cp_dir, '*')):
        subprocess.run(['ssh', '-o', 'ControlPath=%s' % sock, '-O', 'exit', 'ignored'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def parse_recap(text):
    hosts = {}
    in_recap = False
    for line in text.splitlines():
        if line.startswith('PLAY RECAP'):
            in_recap, hosts = True, {}  # the last recap counts
            continue
        m = RECAP.match(line.strip()) if in_recap else None
        if m:
            ok, changed, unreach, failed, skipped = (int(m.group(k)) for k in range(2, 7))
            hosts[m.group(1)] = {'ok': ok, 'changed': changed, 'unreachable': unreach, 'failed': failed,
                                 'skipped': skipped, 'reached': ok + failed + unreach}
    return hosts


def add_tasks(row, text):
    """Host-tasks per lab host from the log's PLAY RECAP (means over the lab hosts; the controller's own
    tasks - localhost: reports written on the controller - are counted apart), and whether the run is good."""
    recap = parse_recap(text)
    lab = {k: v for k, v in recap.items() if k.startswith(PREFIX)}
    n = len(lab) or 1
    ctl = recap.get('localhost', {})
    row.update({'recap_hosts': len(lab),
                'reached': round(sum(h['reached'] for h in lab.values()) / n, 1),
                'skipped': round(sum(h['skipped'] for h in lab.values()) / n, 1),
                'changed': sum(h['changed'] for h in lab.values()),
                'failed': sum(h['failed'] + h['unreachable'] for h in recap.values()),
                'controller_tasks': ctl.get('reached', 0) + ctl.get('skipped', 0),
                'controller_changed': ctl.get('changed', 0)})
    row['host_tasks'] = round(row['reached'] + row['skipped'], 1)
    if 'drift' in row['playbook']:  # the verdict of the last play (a converged fleet must have no drift)
        m = re.search(r'^\s*msg: (no drift on \d+ node\(s\))', text, re.M)
        row['verdict'] = m.group(1) if m else 'drift (rc %d)' % row['rc']
    ok_rc = (0, 2) if 'drift' in row['playbook'] else (0,)
    row['ok'] = row['rc'] in ok_rc and row['recap_hosts'] == row['hosts'] and row['failed'] == 0
    return row


class Runner:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.venv_bin = Path(args.venv) / 'bin'
        self.results = {'started': time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
                        'commit': git(REPO, 'rev-parse', '--short', 'HEAD'),
                        'ansible_core': ansible_version(self.venv_bin),
                        'cpus': os.cpu_count(), 'forks': args.forks, 'runs': []}
        self.failed = False

    def save(self):
        (self.out / 'results.json').write_text(json.dumps(self.results, indent=2) + '\n')

    def playbook(self, label, checkout, inv, playbook, extra=(), env=None, measured=True, size=0, hosts=0):
        """Run one ansible-playbook; return its row (wall, CPU, host-tasks), or None when --until says no."""
        if self.args.until:
            # estimated from the last run of the same playbook and kind, scaled by the number of hosts
            # (the slowest per host: a Mitogen run's wall says nothing of the next commit's)
            same = [r['wall_s'] / r['hosts'] for r in self.results['runs']
                    if r['playbook'] == playbook and r['measured'] == measured]
            est = max(same) * hosts if same else 0.0
            left = self.args.until - time.time()
            if est > left:
                log('%s not run: about %.0f s estimated, %.0f s left before --until' % (label, est, max(left, 0)))
                self.results.setdefault('not_run', []).append(label)
                self.save()
                return None
        cp_dir = tempfile.mkdtemp(prefix='cp-', dir=self.work)
        drift_dir = tempfile.mkdtemp(prefix='drift-', dir=self.work)
        e = dict(os.environ)
        e.update({'PATH': '%s:%s' % (self.venv_bin, e.get('PATH', '')),
                  'ANSIBLE_CONFIG': str(checkout / 'ansible.cfg'),
                  'ANSIBLE_FORKS': str(self.args.forks),
                  'ANSIBLE_SSH_CONTROL_PATH_DIR': cp_dir,
                  'ANSIBLE_NOCOLOR': '1',
                  'GPUFLEET_DRIFT_DIR': drift_dir})
        e.update(env or {})
        argv = [str(self.venv_bin / 'ansible-playbook'), '-i', str(inv), playbook] + list(extra)
        logf = self.out / ('%02d-%s.log' % (len(self.results['runs']) + 1, label))
        with open(logf, 'w') as fh:
            fh.write('# %s\n# cwd %s\n' % (' '.join(argv), checkout))
        load0 = os.getloadavg()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        rc, reaped = run_tree(argv, checkout, e, logf, cp_dir)
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        load1 = os.getloadavg()
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        row = {'label': label, 'playbook': playbook, 'args': list(extra), 'size': size, 'measured': measured,
               'rc': rc, 'wall_s': round(wall, 1), 'cpu_s': round(cpu, 1), 'hosts': hosts,
               'cpu_s_per_host': round(cpu / hosts, 2), 'load_before': round(load0[0], 1),
               'load_after': round(load1[0], 1), 'masters_reaped': reaped, 'log': str(logf)}
        add_tasks(row, logf.read_text(errors='replace'))
        if not row['ok']:
            self.failed = True
            tail = logf.read_text(errors='replace').splitlines()[-25:]
            log('%s FAILED (rc %d, %d of %d hosts in the recap); the log ends:\n    %s'
                % (label, rc, row['recap_hosts'], row['hosts'], '\n    '.join(tail)))
        log('%-26s rc=%d wall %6.1f s  CPU %6.1f s (%5.2f/host)  host-tasks %5.1f (%5.1f reached, %5.1f skipped)'
            '  changed %d  load %.1f->%.1f'
            % (label, rc, wall, cpu, row['cpu_s_per_host'], row['host_tasks'], row['reached'],
               row['skipped'], row['changed'], load0[0], load1[0]))
        self.results['runs'].append(row)
        self.save()
        shutil.rmtree(cp_dir, ignore_errors=True)
        return row

    def measure(self, tag, checkout, size, env=None):
        inv = write_inventory(checkout, size, self.work / ('inv-%s-%d' % (tag, size)))
        self.playbook('%s-site-%d' % (tag, size), checkout, inv, 'site.yml', env=env, size=size, hosts=size)
        self.playbook('%s-drift-%d' % (tag, size), checkout, inv, 'playbooks/drift.yml', ['--check'], env=env,
                      size=size, hosts=size)

    def converge(self, tag, checkout, size, first):
        inv = write_inventory(checkout, size, self.work / ('inv-%s-%d' % (tag, size)))
        limit = ','.join(host_name(i) for i in range(first, size + 1))
        return self.playbook('%s-converge-%d' % (tag, size), checkout, inv, 'site.yml', ['--limit', limit],
                             measured=False, size=size, hosts=size - first + 1)


def git(cwd, *argv):
    return subprocess.run(['git', '-C', str(cwd)] + list(argv), capture_output=True, text=True,
                          check=True).stdout.strip()


def ansible_version(venv_bin):
    res = subprocess.run([str(venv_bin / 'python'), '-c', 'import ansible.release as r; print(r.__version__)'],
                         capture_output=True, text=True, check=False)
    return res.stdout.strip() or 'unknown'


def lab(*argv):
    res = subprocess.run([sys.executable, str(LAB)] + list(argv), capture_output=True, text=True, check=False)
    if res.returncode:
        sys.exit('fleet_scale: scripts/lab %s failed (rc %d): %s' % (' '.join(argv), res.returncode,
                                                                     (res.stderr or res.stdout).strip()[-800:]))
    return res.stdout


def inotify_check(new_hosts):
    """Every nspawn host's systemd holds inotify instances of root's (about 5 measured); past
    fs.inotify.max_user_instances a booting host dies ('Too many open files') - and so do other users' lab hosts."""
    path = '/proc/sys/fs/inotify/max_user_instances'
    limit = int(Path(path).read_text())
    used = 0
    for fd in glob.glob('/proc/[0-9]*/fd/*'):
        try:
            used += os.readlink(fd) == 'anon_inode:inotify'
        except OSError:
            pass
    need = used + 6 * new_hosts + 16
    if need > limit:
        sys.exit('fleet_scale: %d more lab hosts need about %d inotify instances, %d of %d are in use '
                 '(%s): raise it first, e.g. sysctl fs.inotify.max_user_instances=%d'
                 % (new_hosts, 6 * new_hosts, used, limit, path, max(512, need * 2)))


def hosts_up(first, last, work):
    inotify_check(last - first + 1)
    inv = write_inventory(REPO, last, work / 'inv-lab')
    lab('up', '-i', str(inv))
    log('hosts %s..%s up' % (host_name(first), host_name(last)))


def hosts_down(last):
    subprocess.run([sys.executable, str(LAB), 'down'] + [host_name(i) for i in range(1, last + 1)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def on_sigterm(signum, frame):
    raise SystemExit('fleet_scale: terminated (signal %d); taking the hosts down' % signum)


def worktree(ref, path):
    """A worktree of REF with the collection linked where its ansible.cfg looks (as scripts/setup does)."""
    subprocess.run(['git', '-C', str(REPO), 'worktree', 'add', '--detach', str(path), ref],
                   capture_output=True, text=True, check=True)
    coll = path / '.ansible' / 'collections' / 'ansible_collections' / 'gpufleet'
    coll.mkdir(parents=True)
    (coll / 'cluster').symlink_to(path)
    return path


def mitogen_env(venv_bin, path=None):
    """Environment for Mitogen's strategy, or (None, why not)."""
    extra = {'PYTHONPATH': path} if path else {}
    code = ('import os, ansible_mitogen, mitogen; '
            'print(os.path.dirname(ansible_mitogen.__file__)); print(".".join(map(str, mitogen.__version__)))')
    res = subprocess.run([str(venv_bin / 'python'), '-c', code], capture_output=True, text=True, check=False,
                         env=dict(os.environ, **extra))
    if res.returncode:
        return None, ('mitogen is not importable by %s (it is optional: pip install mitogen into the controller '
                      'venv, or put it on PYTHONPATH)' % (venv_bin / 'python'))
    version = res.stdout.split()[1]
    plugins = res.stdout.split()[0]
    extra.update({'ANSIBLE_STRATEGY_PLUGINS': os.path.join(plugins, 'plugins', 'strategy'),
                  'ANSIBLE_STRATEGY': 'mitogen_linear'})
    return extra, 'mitogen %s (%s)' % (version, plugins)


def table(runs):
    head = ('| run | hosts | wall s | ctl CPU s | CPU s/host | host-tasks/host | reached | skipped | changed |'
            ' localhost tasks | rc | load before->after |')
    lines = [head, '|' + '---|' * 12]
    for r in runs:
        lines.append('| %s%s%s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %d | %d | %d%s | %.1f->%.1f |'
                     % (r['label'], '' if r['measured'] else ' (not measured)',
                        ' (%s)' % r['verdict'] if 'verdict' in r else '', r['hosts'], r['wall_s'], r['cpu_s'],
                        r['cpu_s_per_host'], r['host_tasks'], r['reached'], r['skipped'], r['changed'],
                        r.get('controller_tasks', 0), r['rc'], '' if r['ok'] else ' FAILED', r['load_before'],
                        r['load_after']))
    return '\n'.join(lines)


def projection(runs):
    lines = []
    for kind in ('site', 'drift'):
        rows = [r for r in runs if r['label'].startswith('head-%s-' % kind) and r['ok']]
        if not rows:
            lines.append('%s: no successful measurement - no projection' % kind)
            continue
        r = max(rows, key=lambda x: x['size'])
        per = r['cpu_s_per_host']
        if per <= 0:
            lines.append('%s: CPU per host is 0 - the measurement is broken, no projection' % kind)
            continue
        cores = ', '.join('%d min: %d nodes' % (m, int(m * 60 / per)) for m in (10, 30, 60))
        lines.append('%s (%d hosts, %.2f controller CPU-s/host): nodes per controller core for a run of %s; '
                     'controller CPU-hours: 1,000 nodes %.1f, 10,000 nodes %.1f'
                     % (kind, r['size'], per, cores, per * 1000 / 3600, per * 10000 / 3600))
    lines.append('The lab hosts run on the same %s cores as the controller: walls are upper bounds; the controller '
                 'CPU-s per host is the figure that projects.' % os.cpu_count())
    return '\n'.join(lines)


def uptime():
    return subprocess.run(['uptime'], capture_output=True, text=True, check=False).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--sizes', type=int, nargs='+', default=[4, 8, 16])
    ap.add_argument('--ref', help='also measure this git ref on 4 hosts (before/after, same run)')
    ap.add_argument('--mitogen', action='store_true', help="also run 4 hosts with Mitogen's strategy (optional)")
    ap.add_argument('--mitogen-path', metavar='DIR', help='a directory holding ansible_mitogen and mitogen '
                    '(e.g. an unpacked wheel), put on PYTHONPATH for the Mitogen runs only')
    ap.add_argument('--forks', type=int, default=0, help='ANSIBLE_FORKS (default: the largest size)')
    ap.add_argument('--venv', default=str(REPO / '.venv'))
    ap.add_argument('--out', default=str(REPO / 'build' / 'fleet-scale'))
    ap.add_argument('--keep', action='store_true', help='leave the hosts up at the end')
    ap.add_argument('--lab-pycache', action='store_true',
                    help="give the hosts the test lab's zipimport compile cache (tests/lab/gpufleet_lab_pycache.py; "
                    'default: left out, so a module call costs what it costs on a real node)')
    ap.add_argument('--until', metavar='HH:MM', help='UTC time by which the last playbook must have ended: a step '
                    'estimated to end later (from the last wall of its kind per host) is not started')
    ap.add_argument('--report', metavar='RESULTS_JSON', help='only print the table of an earlier run')
    args = ap.parse_args()
    if args.report:  # the host-task figures are read again from the logs, where they are kept
        res = json.loads(Path(args.report).read_text())
        for row in res['runs']:
            if os.path.exists(row['log']):
                add_tasks(row, Path(row['log']).read_text(errors='replace'))
        print_report(res)
        return 0
    sizes = sorted(set(args.sizes))
    if not sizes or sizes[0] < 1 or sizes[-1] > MAX_HOSTS:
        ap.error('--sizes: between 1 and %d hosts (the addresses 10.254.77.%d-%d are this benchmark\'s)'
                 % (MAX_HOSTS, BASE_IP, BASE_IP + MAX_HOSTS - 1))
    if (args.ref or args.mitogen) and sizes[0] < 4:
        ap.error('--ref and --mitogen measure 4 hosts: --sizes must start at 4 or more')
    args.forks = args.forks or max(sizes[-1], 4)
    if args.until:
        try:
            hh, mm = (int(x) for x in args.until.split(':'))
            now = time.gmtime()
            args.until = time.time() + ((hh * 60 + mm) - (now.tm_hour * 60 + now.tm_min)) * 60 - now.tm_sec
        except ValueError:
            ap.error('--until: HH:MM in UTC, e.g. 12:25')
    if os.geteuid() != 0:
        sys.exit('fleet_scale: run as root (scripts/lab makes the hosts)')
    if not (Path(args.venv) / 'bin' / 'ansible-playbook').exists():
        sys.exit('fleet_scale: no ansible-playbook in %s (run scripts/setup)' % args.venv)

    os.environ['GPUFLEET_LAB_PYCACHE'] = '1' if args.lab_pycache else '0'  # read by scripts/lab up
    lockpath = os.environ.get('GPUFLEET_SCALE_LOCK', '/work/locks/scale.lock')
    os.makedirs(os.path.dirname(lockpath), exist_ok=True)
    lock = open(lockpath, 'w')
    log('waiting for %s' % lockpath)
    fcntl.flock(lock, fcntl.LOCK_EX)

    work = Path(tempfile.mkdtemp(prefix='gpufleet-scale-'))
    runner = Runner(args, work)
    runner.results['uptime_before'] = uptime()
    runner.results['lab_pycache'] = args.lab_pycache
    log('commit %s, ansible-core %s, %d cores, forks %d; %s'
        % (runner.results['commit'], runner.results['ansible_core'], os.cpu_count(), args.forks,
           runner.results['uptime_before']))
    trees = []
    last = 0
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        subprocess.run([sys.executable, str(LAB), 'net'], check=True, stdout=subprocess.DEVNULL)
        for cmd in (['build'], ['start']):
            subprocess.run([sys.executable, str(REPO / 'scripts' / 'localrepo')] + cmd, check=True,
                           stdout=subprocess.DEVNULL)
        # the measured code is a worktree of the commit, not the live checkout (a pull during the run
        # would change the roles under a running playbook)
        trees.append(worktree(runner.results['commit'], work / 'head'))
        for size in sizes:
            first, last = last + 1, size
            hosts_up(first, last, work)
            if runner.converge('head', trees[0], size, first) is None:
                break
            runner.measure('head', trees[0], size)
        if args.mitogen:  # on the hosts the head converged
            env, why = mitogen_env(runner.venv_bin, args.mitogen_path)
            runner.results['mitogen'] = why
            log(why)
            if env:
                runner.measure('mitogen', trees[0], 4, env=env)
        if args.ref:  # last: its converge takes scale-01..04 back to the ref's state
            trees.append(worktree(args.ref, work / 'ref'))
            runner.results['ref'] = git(trees[-1], 'rev-parse', '--short', 'HEAD')
            if runner.converge('ref', trees[-1], 4, 1) is not None:
                runner.measure('ref', trees[-1], 4)
    finally:
        runner.results['uptime_after'] = uptime()
        runner.save()
        if not args.keep and last:
            hosts_down(last)
        for tree in trees:
            subprocess.run(['git', '-C', str(REPO), 'worktree', 'remove', '--force', str(tree)],
                           capture_output=True, check=False)
        shutil.rmtree(work, ignore_errors=True)

    print_report(runner.results)
    return 1 if runner.failed else 0


def print_report(res):
    print()
    print('fleet_scale: commit %s%s, ansible-core %s, %s, %s cores, forks %d'
          % (res['commit'], ', ref %s' % res['ref'] if 'ref' in res else '', res['ansible_core'],
             res['started'], res['cpus'], res['forks']))
    print('before: %s\nafter:  %s' % (res['uptime_before'], res.get('uptime_after', '-')))
    if res.get('lab_pycache'):
        print("hosts: with the test lab's zipimport compile cache (--lab-pycache): not what a real node costs")
    if 'mitogen' in res:
        print('mitogen: %s' % res['mitogen'])
    if res.get('not_run'):
        print('not run (--until): %s' % ', '.join(res['not_run']))
    print(table(res['runs']))
    print()
    print(projection(res['runs']))


if __name__ == '__main__':
    sys.exit(main())
