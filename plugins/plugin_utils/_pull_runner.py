# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufleet-pull: the pull-mode runner (docs/scale.md, "Pull mode"). Private to this collection: the bundle builder
(tools/pull_bundle.py) copies this file into each bundle as ``gpufleet-pull``; it runs on the node with the node's
own python3 and the standard library only.

    gpufleet-pull --dest /shared/gpufleet/pull                  drift check (check mode) of this node
    gpufleet-pull --dest http://collector:8080/pull/ --mode apply   remediate, report what changed

It makes (or reuses) a venv from the bundle's wheelhouse (offline: pip --no-index --find-links), installs the
bundle's collection tarball into its state directory, runs the collection's playbooks/drift.yml against this node
alone with a local connection (the bundle's inventory: the node's profile groups with their variables), and
delivers the node's result - the part of the fleet drift report playbooks/pull_report.yml merges - to a directory
(<dest>/<node>.json, written atomically) or an HTTP endpoint (PUT <url>/<node>.json, or POST to the URL).

Exit status: 0 no drift (or remediated, --mode apply), 2 drift found (--mode check), 1 error (said in the last
line: the run failed before the node was checked, the result could not be delivered, ...), 3 bad arguments.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import errno
import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

try:
    from http.client import HTTPConnection, HTTPSConnection
    from urllib.parse import urlsplit, quote
except ImportError:  # pragma: no cover - Python 2 is not a node runtime here
    HTTPConnection = HTTPSConnection = urlsplit = quote = None

RESULT_FORMAT = 'gpufleet.pull-result/1'
BUNDLE_FORMAT = 'gpufleet.pull-bundle/1'
EXIT_CLEAN, EXIT_ERROR, EXIT_DRIFT, EXIT_USAGE = 0, 1, 2, 3
MODES = ('check', 'apply')
METHODS = ('PUT', 'POST')
DEFAULT_STATE_DIR = '/var/lib/gpufleet-pull'
NODE_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')


class PullError(Exception):
    """An error the runner reports in one line (exit status EXIT_ERROR)."""


class UsageError(Exception):
    """Bad arguments (exit status EXIT_USAGE; never 2, which means drift)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parser():
    p = _Parser(prog='gpufleet-pull', description='Pull-mode drift check / remediation of this node (gpufleet.cluster).')
    p.add_argument('--dest', default=None,
                   help='where the result goes: an absolute directory path (shared file system) or an http(s):// URL '
                        '(PUT <url>/<node>.json, "{node}" in the URL is replaced); default $GPUFLEET_PULL_DEST')
    p.add_argument('--mode', default='check', help='check (drift.yml --check, the default) or apply (remediate)')
    p.add_argument('--node', default=None,
                   help='this node\'s inventory name (default $SLURMD_NODENAME, else the short host name)')
    p.add_argument('--bundle', default=None, help='the bundle directory (default: the directory of this script)')
    p.add_argument('--state-dir', default=None,
                   help='venvs, the installed collection, run directories (default $GPUFLEET_PULL_STATE_DIR, else %s)'
                        % DEFAULT_STATE_DIR)
    p.add_argument('--run-id', default=None,
                   help='an id the aggregation can select results by (default $SLURM_JOB_ID, else none)')
    p.add_argument('--method', default='PUT', help='HTTP method for a URL destination: PUT (default) or POST')
    p.add_argument('--header', action='append', default=[], metavar='NAME:VALUE',
                   help='an HTTP header for a URL destination (repeatable), e.g. "Authorization: Bearer ..."')
    p.add_argument('--timeout', default='3600', help='seconds the playbook may run (default 3600)')
    p.add_argument('--http-timeout', default='30', help='seconds for the HTTP request (default 30)')
    p.add_argument('--tags', default=None, help='passed to ansible-playbook --tags')
    p.add_argument('--vault-password-file', default=None, help='passed to ansible-playbook')
    p.add_argument('--python', default=None,
                   help='the interpreter the venv is made from and modules run with (default: this python3)')
    p.add_argument('-v', '--verbose', action='count', default=0, help='passed to ansible-playbook')
    return p


def _positive(name, value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError('%s must be a number of seconds, got %r' % (name, value))
    if number <= 0:
        raise UsageError('%s must be more than 0 seconds, got %r' % (name, value))
    return number


def parse_args(argv, environ=None, hostname=None):
    """The checked options as a dict. Raises UsageError naming the option and what is allowed."""
    environ = os.environ if environ is None else environ
    args = parser().parse_args(argv)
    opts = vars(args).copy()
    if opts['mode'] not in MODES:
        raise UsageError('--mode must be one of %s, got %r' % (', '.join(MODES), opts['mode']))
    method = (opts['method'] or '').upper()
    if method not in METHODS:
        raise UsageError('--method must be one of %s, got %r' % (', '.join(METHODS), opts['method']))
    opts['method'] = method
    opts['timeout'] = _positive('--timeout', opts['timeout'])
    opts['http_timeout'] = _positive('--http-timeout', opts['http_timeout'])
    dest = opts['dest'] = opts['dest'] or environ.get('GPUFLEET_PULL_DEST')
    opts['state_dir'] = opts['state_dir'] or environ.get('GPUFLEET_PULL_STATE_DIR') or DEFAULT_STATE_DIR
    if not dest:
        raise UsageError('--dest is required (or $GPUFLEET_PULL_DEST): a directory (absolute path) or an http(s):// URL')
    if '://' in dest:
        parts = urlsplit(dest)
        if parts.scheme not in ('http', 'https') or not parts.netloc:
            raise UsageError('--dest URL must be http:// or https:// with a host, got %r' % dest)
        opts['dest_kind'] = 'url'
    else:
        if not os.path.isabs(dest):
            raise UsageError('--dest must be an absolute directory path or an http(s):// URL, got %r' % dest)
        opts['dest_kind'] = 'dir'
    headers = {}
    for h in opts['header']:
        name, sep, value = h.partition(':')
        if not sep or not name.strip() or not re.match(r'^[A-Za-z0-9-]+$', name.strip()):
            raise UsageError('--header must be NAME:VALUE, got %r' % h)
        headers[name.strip()] = value.strip()
    opts['headers'] = headers
    if opts['header'] and opts['dest_kind'] != 'url':
        raise UsageError('--header is for a URL --dest only')
    node = opts['node'] or environ.get('SLURMD_NODENAME') or (hostname or socket.gethostname()).split('.')[0]
    if not NODE_RE.match(node or ''):
        raise UsageError('--node must be an inventory host name (letters, digits, . _ -), got %r' % node)
    opts['node'] = node
    if opts['run_id'] is None:
        opts['run_id'] = environ.get('SLURM_JOB_ID') or None
    if not os.path.isabs(opts['state_dir']):
        raise UsageError('--state-dir must be an absolute path, got %r' % opts['state_dir'])
    return opts


def result_url(dest, node):
    """The URL a result goes to: "{node}" in it replaced, else <dest>/<node>.json."""
    if '{node}' in dest:
        return dest.replace('{node}', quote(node))
    return dest.rstrip('/') + '/' + quote(node) + '.json'


def load_bundle(bundle_dir):
    path = os.path.join(bundle_dir, 'MANIFEST.json')
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (IOError, OSError) as exc:
        raise PullError('no bundle at %s (%s): run gpufleet-pull from an unpacked bundle or give --bundle'
                        % (bundle_dir, exc.strerror or exc))
    except ValueError as exc:
        raise PullError('%s is not valid JSON: %s' % (path, exc))
    if not isinstance(manifest, dict) or manifest.get('format') != BUNDLE_FORMAT:
        raise PullError('%s is not a gpufleet pull bundle manifest (format %s expected)' % (path, BUNDLE_FORMAT))
    for key in ('profile', 'nodes', 'collection', 'requirements', 'inventory', 'id'):
        if key not in manifest:
            raise PullError('%s lacks "%s": rebuild the bundle with tools/pull_bundle.py' % (path, key))
    return manifest


def check_node(manifest, node):
    nodes = manifest.get('nodes') or []
    if node not in nodes:
        shown = ', '.join(nodes[:10]) + (' ... (%d in all)' % len(nodes) if len(nodes) > 10 else '')
        raise PullError('node %s is not in profile %s of this bundle (its nodes: %s): give --node, or build the '
                        'bundle from an inventory that has this node' % (node, manifest['profile'], shown or 'none'))


def _key(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode('utf-8') if not isinstance(p, bytes) else p)
        h.update(b'\0')
    return h.hexdigest()[:16]


def _file_sha(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def venv_key(python_version, requirements_text, wheel_names):
    return _key(python_version, requirements_text, *sorted(wheel_names))


def build_command(opts, bundle_dir, manifest, venv, collections_dir, work):
    """argv of the ansible-playbook run (pure: unit-tested)."""
    playbook = os.path.join(collections_dir, 'ansible_collections', 'gpufleet', 'cluster', 'playbooks', 'drift.yml')
    argv = [os.path.join(venv, 'bin', 'ansible-playbook'),
            '-i', os.path.join(bundle_dir, manifest['inventory']),
            '-c', 'local', '--limit', opts['node']]
    if manifest.get('lock'):
        argv += ['-e', '@' + os.path.join(bundle_dir, manifest['lock'])]
    argv += ['-e', '@' + os.path.join(work, 'pull-vars.json')]
    if opts['mode'] == 'check':
        argv += ['--check']
    argv += ['--diff']
    if opts.get('tags'):
        argv += ['--tags', opts['tags']]
    if opts.get('vault_password_file'):
        argv += ['--vault-password-file', opts['vault_password_file']]
    if opts.get('verbose'):
        argv += ['-' + 'v' * min(int(opts['verbose']), 6)]
    argv += [playbook]
    return argv


def pull_vars(opts, work, python):
    """The extra vars of the run: the node alone, locally; where drift.yml writes the node's result."""
    return {
        'ansible_connection': 'local',
        'ansible_python_interpreter': python,
        'gpufleet_drift_dir': os.path.join(work, 'drift'),
        'gpufleet_pull_result_file': os.path.join(work, 'result.json'),
    }


def build_env(environ, bundle_dir, manifest, collections_dir, work, state_dir):
    env = dict((k, v) for k, v in environ.items() if not k.startswith('ANSIBLE_'))
    env.update({
        'ANSIBLE_CONFIG': os.path.join(bundle_dir, manifest.get('ansible_cfg', 'ansible.cfg')),
        'ANSIBLE_COLLECTIONS_PATH': os.pathsep.join([collections_dir, os.path.join(bundle_dir, 'collections', 'deps')]),
        'ANSIBLE_HOME': os.path.join(state_dir, 'ansible-home'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(work, 'tmp'),
        'ANSIBLE_FORCE_COLOR': '0', 'ANSIBLE_NOCOLOR': '1',
        'GPUFLEET_DRIFT_DIR': os.path.join(work, 'drift'),
        'LC_ALL': 'C.UTF-8',
    })
    return env


def _run(argv, log, env=None, timeout=None, echo=True):
    """Run argv, its output into the log file (and to stdout when echo); returns the exit status."""
    with open(log, 'ab') as out:
        out.write(('$ %s\n' % ' '.join(argv)).encode('utf-8'))
        out.flush()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + timeout if timeout else None
        try:
            for line in iter(proc.stdout.readline, b''):
                out.write(line)
                if echo:
                    sys.stdout.write(line.decode('utf-8', 'replace'))
                    sys.stdout.flush()
                if deadline and time.time() > deadline:
                    proc.kill()
                    raise PullError('%s ran longer than %d s (--timeout); its output: %s' % (argv[0], timeout, log))
        finally:
            proc.stdout.close()
        return proc.wait()


def _tail(log, lines=4, pattern=r'^(\s*msg:|\[ERROR\]|ERROR!)'):
    try:
        with open(log, 'rb') as f:
            text = f.read().decode('utf-8', 'replace').splitlines()
    except (IOError, OSError):
        return ''
    hits = [t.strip() for t in text if re.search(pattern, t)]
    return ' | '.join((hits or text)[-lines:])[-600:]


class _Lock(object):
    def __init__(self, path):
        self.path = path
        self.fd = None

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (IOError, OSError) as exc:
            os.close(self.fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise PullError('another gpufleet-pull run holds %s: one run per node at a time' % self.path)
            raise
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def ensure_venv(bundle_dir, manifest, state_dir, python, log):
    """The venv from the wheelhouse (offline), reused while the Python and the pins stay the same."""
    wheels = os.path.join(bundle_dir, 'wheels')
    req = os.path.join(bundle_dir, manifest['requirements'])
    try:
        names = sorted(os.listdir(wheels))
        with open(req) as f:
            req_text = f.read()
    except (IOError, OSError) as exc:
        raise PullError('the bundle\'s wheelhouse or requirements are missing (%s): rebuild the bundle' % exc)
    pips = [n for n in names if n.startswith('pip-') and n.endswith('.whl')]
    if not pips:
        raise PullError('no pip wheel in %s: rebuild the bundle' % wheels)
    version = subprocess.check_output([python, '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])']).decode().strip()
    venv = os.path.join(state_dir, 'venv-' + venv_key(version, req_text, names))
    done = os.path.join(venv, '.gpufleet-complete')
    if os.path.exists(done):
        return venv
    if os.path.isdir(venv):
        shutil.rmtree(venv)  # a run that stopped half way
    # --without-pip: Debian's python3 has the venv module but not ensurepip (python3-venv); pip runs from its wheel
    if _run([python, '-m', 'venv', '--without-pip', venv], log, echo=False) != 0:
        raise PullError('%s -m venv failed (see %s)' % (python, log))
    pip = [os.path.join(venv, 'bin', 'python'), os.path.join(wheels, pips[-1], 'pip'), 'install', '--no-index',
           '--find-links', wheels, '--no-cache-dir', '--disable-pip-version-check', '--quiet', '-r', req]
    if _run(pip, log, echo=False) != 0:
        raise PullError('installing the wheelhouse into %s failed: %s (log %s)' % (venv, _tail(log), log))
    with open(done, 'w') as f:
        f.write(version + '\n')
    return venv


def ensure_collection(bundle_dir, manifest, state_dir, venv, log):
    tarball = os.path.join(bundle_dir, manifest['collection'])
    if not os.path.isfile(tarball):
        raise PullError('the bundle\'s collection %s is missing: rebuild the bundle' % tarball)
    path = os.path.join(state_dir, 'collections-' + _file_sha(tarball)[:16])
    done = os.path.join(path, '.gpufleet-complete')
    if os.path.exists(done):
        return path
    if os.path.isdir(path):
        shutil.rmtree(path)
    argv = [os.path.join(venv, 'bin', 'ansible-galaxy'), 'collection', 'install', '--offline', '--no-deps',
            '-p', path, tarball]
    if _run(argv, log, env=dict(os.environ, ANSIBLE_HOME=os.path.join(state_dir, 'ansible-home')), echo=False) != 0:
        raise PullError('installing %s failed: %s (log %s)' % (tarball, _tail(log), log))
    with open(done, 'w') as f:
        f.write(manifest['collection'] + '\n')
    return path


def read_result(path, node):
    """The node's result as drift.yml wrote it, or None (missing or not a result)."""
    try:
        with open(path) as f:
            result = json.load(f)
    except (IOError, OSError, ValueError):
        return None
    if not isinstance(result, dict) or result.get('format') != RESULT_FORMAT or result.get('node') != node:
        return None
    return result


def decide(result, rc, mode):
    """(status, exit status, message) from the node's result and ansible-playbook's exit status (pure)."""
    if result is None:
        return 'error', EXIT_ERROR, 'the playbook (exit %d) wrote no result: the node was not checked' % rc
    if not isinstance(result.get('check'), dict):
        return 'error', EXIT_ERROR, 'the node was not checked (it failed before the comparison with its profile; exit %d)' % rc
    n_set, n_lock = len(result.get('settings') or []), len((result['check'].get('messages') or []))
    what = '%d setting(s), %d version lock / hardware' % (n_set, n_lock)
    if mode == 'check':
        if result.get('drift'):
            return 'drift', EXIT_DRIFT, 'drift: ' + what
        if rc != 0:
            return 'error', EXIT_ERROR, 'the playbook failed (exit %d) although no drift was recorded' % rc
        return 'clean', EXIT_CLEAN, 'no drift'
    if rc != 0:
        return 'error', EXIT_ERROR, 'remediation failed (exit %d): %s' % (rc, what)
    if n_lock:
        # a version lock / hardware deviation is not remediated by drift.yml (rollout.yml does that)
        return 'drift', EXIT_DRIFT, 'remediated %d setting(s); left: %d version lock / hardware' % (n_set, n_lock)
    return ('remediated' if n_set else 'clean'), EXIT_CLEAN, ('remediated ' + what) if n_set else 'no drift'


def error_result(opts, manifest, message):
    return {'format': RESULT_FORMAT, 'kind': 'drift', 'mode': opts['mode'], 'node': opts['node'],
            'profile': manifest.get('profile') if manifest else None, 'status': 'error', 'error': message,
            'drift': None, 'settings': [], 'consequences': [], 'check': None, 'fleet': None,
            'run_id': opts.get('run_id'), 'bundle': manifest.get('id') if manifest else None,
            'written_unix': int(time.time())}


def deliver(result, opts):
    """Write the result to the destination; returns where it went. Raises PullError."""
    data = (json.dumps(result, indent=1, sort_keys=True) + '\n').encode('utf-8')
    node = opts['node']
    if opts['dest_kind'] == 'dir':
        dest = opts['dest']
        if not os.path.isdir(dest):
            raise PullError('destination directory %s does not exist (or is not a directory)' % dest)
        try:
            fd, tmp = tempfile.mkstemp(prefix='.%s.' % node, suffix='.tmp', dir=dest)
        except (IOError, OSError) as exc:
            raise PullError('cannot write into destination directory %s: %s' % (dest, exc.strerror or exc))
        try:
            with os.fdopen(fd, 'wb') as f:
                f.write(data)
            os.chmod(tmp, 0o644)
            final = os.path.join(dest, node + '.json')
            os.rename(tmp, final)
        except (IOError, OSError) as exc:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise PullError('cannot write %s/%s.json: %s' % (dest, node, exc.strerror or exc))
        return final
    url = result_url(opts['dest'], node) if opts['method'] == 'PUT' else opts['dest'].replace('{node}', quote(node))
    headers = dict(opts.get('headers') or {})
    headers.setdefault('Content-Type', 'application/json')
    # http.client, not urllib's opener: no proxy from the environment, no redirects - the URL given is the one used
    parts = urlsplit(url)
    conn_class = HTTPSConnection if parts.scheme == 'https' else HTTPConnection
    path = (parts.path or '/') + ('?' + parts.query if parts.query else '')
    try:
        conn = conn_class(parts.netloc, timeout=opts['http_timeout'])
        try:
            conn.request(opts['method'], path, body=data, headers=headers)
            resp = conn.getresponse()
            code, reason = resp.status, resp.reason
            resp.read()
        finally:
            conn.close()
    except Exception as exc:  # socket errors, TLS errors, a bad answer: one message
        raise PullError('%s %s failed: %s' % (opts['method'], url, exc))
    if not 200 <= code < 300:
        raise PullError('%s %s failed: HTTP %d %s' % (opts['method'], url, code, reason))
    return url


def _check_dest(opts):
    """Fail before the check when a directory destination cannot take the result (a URL is tried at the end)."""
    if opts['dest_kind'] == 'dir':
        if not os.path.isdir(opts['dest']):
            raise PullError('destination directory %s does not exist (or is not a directory)' % opts['dest'])
        if not os.access(opts['dest'], os.W_OK | os.X_OK):
            raise PullError('destination directory %s is not writable by this user' % opts['dest'])


def run(opts, environ=None):
    """One pull run; returns (exit status, message)."""
    environ = os.environ if environ is None else environ
    bundle_dir = os.path.abspath(opts['bundle'] or os.path.dirname(os.path.abspath(__file__)))
    manifest = load_bundle(bundle_dir)
    check_node(manifest, opts['node'])
    _check_dest(opts)
    state = opts['state_dir']
    try:
        os.makedirs(state, 0o700)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise PullError('cannot create --state-dir %s: %s' % (state, exc.strerror))
    python = opts['python'] or sys.executable or '/usr/bin/python3'
    try:
        return _run_checked(opts, environ, bundle_dir, manifest, state, python)
    except PullError as exc:
        # say it where the aggregation looks (best effort): the node is then named with its error, not as silent
        try:
            deliver(error_result(opts, manifest, str(exc)), opts)
        except PullError:
            pass
        raise


def _run_checked(opts, environ, bundle_dir, manifest, state, python):
    t0 = time.time()
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with _Lock(os.path.join(state, 'lock')):
        work = tempfile.mkdtemp(prefix='run-%s-' % time.strftime('%Y%m%dT%H%M%S', time.gmtime()), dir=state)
        os.makedirs(os.path.join(work, 'tmp'))
        log = os.path.join(work, 'gpufleet-pull.log')
        venv = ensure_venv(bundle_dir, manifest, state, python, log)
        collections = ensure_collection(bundle_dir, manifest, state, venv, log)
        t_setup = time.time() - t0
        with open(os.path.join(work, 'pull-vars.json'), 'w') as f:
            json.dump(pull_vars(opts, work, python), f)
        argv = build_command(opts, bundle_dir, manifest, venv, collections, work)
        env = build_env(environ, bundle_dir, manifest, collections, work, state)
        t1 = time.time()
        rc = _run(argv, log, env=env, timeout=opts['timeout'])
        t_play = time.time() - t1
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = read_result(os.path.join(work, 'result.json'), opts['node'])
        status, code, message = decide(result, rc, opts['mode'])
        if result is None or status == 'error':
            detail = _tail(log)
            result = error_result(opts, manifest, message + ((': ' + detail) if detail else ''))
        result.update({'status': status, 'run_id': opts['run_id'], 'bundle': manifest['id'],
                       'written_unix': int(time.time()),
                       'runner': {'rc': rc, 'wall_s': round(time.time() - t0, 2), 'setup_s': round(t_setup, 2),
                                  'playbook_s': round(t_play, 2),
                                  'cpu_s': round((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), 2),
                                  'log': log}})
        where = deliver(result, opts)
    return code, '%s: %s (%s mode, %.1f s) -> %s' % (opts['node'], message, opts['mode'], time.time() - t0, where)


def main(argv=None, environ=None):
    try:
        opts = parse_args(sys.argv[1:] if argv is None else argv, environ)
    except UsageError as exc:
        print('gpufleet-pull: bad arguments: %s' % exc, file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # --help
        return exc.code or 0
    try:
        code, message = run(opts, environ)
    except PullError as exc:
        print('gpufleet-pull: error: %s: %s' % (opts['node'], exc), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print('gpufleet-pull: error: interrupted', file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # never a traceback: one line with what failed
        print('gpufleet-pull: error: %s: %s: %s' % (opts['node'], type(exc).__name__, exc), file=sys.stderr)
        return EXIT_ERROR
    print('gpufleet-pull: ' + message)
    return code


if __name__ == '__main__':
    sys.exit(main())
