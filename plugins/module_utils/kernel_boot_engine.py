# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of gpufleet.cluster.kernel_boot: boot the wanted kernel release next, verified first.

Read: the running release (``<proc_root>/proc/sys/kernel/osrelease``), the installed ones (``<boot_dir>/vmlinuz-*``
and ``<modules_dir>/<release>``), the boot loader's default and one-time entry - GRUB on Debian/Ubuntu
(``<boot_dir>/grub/grubenv`` saved_entry/next_entry resolved through the menu of ``<boot_dir>/grub/grub.cfg``) or
grubby on EL (``grubby --default-kernel``, ``grubby --info=ALL``, ``<boot_dir>/grub2/grubenv``) - and
``GRUB_DEFAULT`` in ``/etc/default/grub`` (and ``/etc/default/grub.d/*.cfg``).

Verify, before any boot entry changes: every required kernel module (``required_modules``, and those of
``carry_modules`` the running release has under ``<modules_dir>/<running>``) has a file for the release under
``<modules_dir>/<release>`` (or is built in: ``modules.builtin``), built for that release (``modinfo -F vermagic``
when modinfo is there; ``weak-updates/`` links of EL's kABI are taken as they are), and - when DKMS is there -
every DKMS module is installed for the release. What is missing is built first with ``dkms autoinstall -k RELEASE``;
what is still missing is refused, naming the module and the dkms/modinfo output, with no boot entry changed.

``scope: dkms`` is the trial before the kernel's image is installed: with only the headers there
(``<modules_dir>/<release>/build``), every DKMS module is built for the release (``dkms autoinstall -k RELEASE``);
when one does not build, what this call installed for the release is removed again (``dkms remove -m M -v V -k
RELEASE``, only for modules that stay installed for another kernel) and the release is refused - the caller then
removes the headers it installed, and neither the image nor a boot entry ever changes. ``sources`` are DKMS source
trees (a directory with ``dkms.conf``) of module versions the caller is about to install - the new driver of a
rollout: each is built for the release first, in a scratch tree of its own (``dkms add`` / ``dkms build
--sourcetree --dkmstree --kernelsourcedir <modules_dir>/<release>/build``, removed afterwards, so nothing of the
host's DKMS changes; in check mode only planned); one that does not build refuses the release, naming the module,
its version and the build log. An installed version of a module that ``sources`` replaces need not build for the
release.

Act: the release boots next, once (``grub-reboot`` / ``grub2-reboot``), and becomes the permanent default
(``grub-set-default`` / ``grubby --set-default``) only when it already runs (``make_default: after_verify``, the
run after the reboot) or at once (``make_default: now``). A kernel that does not boot thus falls back to the old
default at the next power cycle.

``run(params, check_mode, diff, find)`` returns the module result or raises ``Failure`` (``_runner.Failure``);
``find(name)`` is the executable lookup (``_runner.find``), the only tie to Ansible. Commands run through
``_runner`` as argv lists with ``LC_ALL=C``. Python 3.8+ standard library.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re
import shlex
import shutil
import tempfile

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import _sysfs
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac

__all__ = ['Failure', 'run', 'input_problems', 'parse_grub_cfg', 'resolve_entry', 'parse_grubenv',
           'parse_dkms_status', 'grub_default_setting', 'find_module_files', 'carried_modules']

# A release as uname -r prints it: 6.1.0-28-amd64, 5.15.0-125-generic, 5.14.0-427.13.1.el9_4.x86_64, 6.6.0+rpt-rpi-v8.
RELEASE_RE = re.compile(r'^[0-9][A-Za-z0-9._+~-]{0,127}$')
RELEASE_ALLOWED = ('a kernel release as uname -r prints it, e.g. 6.1.0-28-amd64 or 5.14.0-427.13.1.el9_4.x86_64 '
                   '(a digit first, then letters, digits, ".", "_", "+", "~", "-"; no spaces or slashes)')
# A module name as modprobe takes it (nvidia_uvm or nvidia-uvm: the kernel treats - and _ alike).
MODULE_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$')
MODULE_ALLOWED = 'a kernel module name such as nvidia_uvm or mlx5_core (letters, digits, "_", "-"; no path, no .ko)'
BOOTLOADERS = ('auto', 'grub', 'grubby')
MAKE_DEFAULT = ('after_verify', 'now')
DKMS_MODES = ('auto', 'never')
SCOPES = ('all', 'dkms')
MODULE_FILE_RE = re.compile(r'^(?P<name>[^/]+)\.ko(?:\.(?:xz|zst|gz))?$')
QUERY_TIMEOUT = 120
OUTPUT_LINES = 15

# The tools of each boot loader: editenv, one-time, permanent default, and the directory of grub.cfg/grubenv.
TOOLS = {
    'grub': {'editenv': 'grub-editenv', 'reboot': 'grub-reboot', 'set_default': 'grub-set-default', 'dir': 'grub'},
    'grubby': {'editenv': 'grub2-editenv', 'reboot': 'grub2-reboot', 'grubby': 'grubby', 'dir': 'grub2'},
}
PATH_OPTIONS = {'editenv': 'grub_editenv_path', 'reboot': 'grub_reboot_path', 'set_default': 'grub_set_default_path',
                'grubby': 'grubby_path'}


def _show(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def _norm(name):
    return name.replace('-', '_')


def _tail(res, lines=OUTPUT_LINES):
    text = '\n'.join(s for s in (res.get('stdout'), res.get('stderr')) if s and s.strip())
    out = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return ' | '.join(out[-lines:]) or 'no output'


# ---------------------------------------------------------------- input (nothing runs)
def input_problems(p):
    """Messages naming the option for every bad input (empty when all is fine); nothing runs."""
    errors = ac.nul_errors(p)
    if errors:
        return errors
    release = p.get('release')
    if not isinstance(release, str) or not RELEASE_RE.match(release):
        errors.append('release must be %s, got %s' % (RELEASE_ALLOWED, _show(release)))
    for option in ('required_modules', 'carry_modules'):
        mods = p.get(option)
        if mods is not None and not isinstance(mods, list):
            errors.append('%s must be a list of module names, got %s' % (option, _show(mods)))
        for i, name in enumerate(mods if isinstance(mods, list) else []):
            if not isinstance(name, str) or not MODULE_RE.match(name):
                errors.append('%s[%d] must be %s, got %s' % (option, i, MODULE_ALLOWED, _show(name)))
    for option, choices in (('bootloader', BOOTLOADERS), ('make_default', MAKE_DEFAULT), ('dkms', DKMS_MODES),
                            ('scope', SCOPES)):
        value = p.get(option, 'all' if option == 'scope' else None)
        if value not in choices:
            errors.append('%s must be one of %s, got %s' % (option, ', '.join(choices), _show(value)))
    for option in ('boot_dir', 'modules_dir', 'proc_root'):
        errors += ac.root_dir_errors(option, p.get(option))
    gdf = p.get('grub_default_file')
    if gdf is not None and (gdf == '' or not os.path.isabs(gdf) or os.path.isdir(gdf)):
        errors.append('grub_default_file must be an absolute path of a file (default /etc/default/grub), got %s'
                      % _show(gdf))
    for option in sorted(set(PATH_OPTIONS.values()) | {'dkms_path', 'modinfo_path'}):
        errors += ac.executable_errors(option, p.get(option))
    errors += ac.timeout_range(p.get('timeout'))
    sources = p.get('sources') or []
    if not isinstance(sources, list):
        errors.append('sources must be a list of DKMS source trees (directories with a dkms.conf), got %s'
                      % _show(sources))
        sources = []
    if sources and p.get('scope', 'all') != 'dkms':
        errors.append('sources is for the trial build before the image (scope: dkms), not scope %s'
                      % _show(p.get('scope', 'all')))
    for i, path in enumerate(sources):
        if not isinstance(path, str) or not os.path.isabs(path):
            errors.append('sources[%d] must be the absolute path of a DKMS source tree (a directory with a '
                          'dkms.conf), got %s' % (i, _show(path)))
        elif not os.path.isfile(os.path.join(path, 'dkms.conf')):
            errors.append('sources[%d]: %s has no dkms.conf (a DKMS source tree such as /usr/src/nvidia-570.133.20 '
                          'is wanted)' % (i, path))
    return errors


# ---------------------------------------------------------------- what is installed and running
def running_release(proc_root):
    return _sysfs.read_text(os.path.join(proc_root, 'proc', 'sys', 'kernel', 'osrelease'), empty=None)


def installed_releases(boot_dir, modules_dir):
    """Releases with a kernel image ``<boot_dir>/vmlinuz-R`` and a module tree ``<modules_dir>/R``, sorted."""
    images = set(n[len('vmlinuz-'):] for n in _sysfs.listdir(boot_dir)
                 if n.startswith('vmlinuz-') and os.path.isfile(os.path.join(boot_dir, n)))
    return sorted(r for r in images if os.path.isdir(os.path.join(modules_dir, r)))


def carried_modules(modules_dir, running, names):
    """Of ``names``, those the running release has (a file under ``<modules_dir>/<running>`` or a line in its
    ``modules.builtin``), in the order given: they must exist for the new release too."""
    files, builtin = find_module_files(modules_dir, running)
    return [n for n in names if _norm(n) in files or _norm(n) in builtin]


def required_list(required, carried):
    """``required`` then ``carried``, each module once (- and _ alike; the first spelling kept)."""
    out, seen = [], set()
    for name in list(required or []) + list(carried or []):
        if _norm(name) not in seen:
            seen.add(_norm(name))
            out.append(name)
    return out


def find_module_files(modules_dir, release):
    """``(files, builtin)``: module name (- as _) -> path of its file under ``<modules_dir>/<release>`` (the first
    found in a sorted walk: updates/ and extra/ before kernel/ as depmod's search order has them), and the names in
    ``modules.builtin``."""
    top = os.path.join(modules_dir, release)
    found = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort(key=lambda d: (d not in ('updates', 'extra', 'weak-updates'), d))
        for name in sorted(filenames):
            match = MODULE_FILE_RE.match(name)
            if match:
                found.setdefault(_norm(match.group('name')), os.path.join(dirpath, name))
    builtin = set()
    text = _sysfs.read_text(os.path.join(top, 'modules.builtin')) or ''
    for line in text.splitlines():
        match = MODULE_FILE_RE.match(os.path.basename(line.strip()))
        if match:
            builtin.add(_norm(match.group('name')))
    return found, builtin


# ---------------------------------------------------------------- GRUB
def parse_grubenv(text):
    """key -> value of a GRUB environment block (``# GRUB Environment Block`` then key=value lines, # padding)."""
    env = {}
    for line in (text or '').splitlines():
        if not line or line.startswith('#') or '=' not in line:
            continue
        key, value = line.split('=', 1)
        env[key] = value
    return env


def _words(line):
    try:
        return shlex.split(line, posix=True)
    except ValueError:
        return line.split()


def _release_of(path):
    base = os.path.basename(path)
    for suffix in ('.efi.signed',):
        if base.endswith(suffix):
            base = base[:-len(suffix)]
    return base[len('vmlinuz-'):] if base.startswith('vmlinuz-') else None


def parse_grub_cfg(text):
    """The menu of a grub.cfg as a tree: ``[{kind, title, id, release, children}]`` (kind menuentry or submenu;
    release from the entry's ``linux`` line; children of a submenu). Other brace blocks (functions) are skipped."""
    top = []
    stack = [('root', top, None)]
    for raw in (text or '').splitlines():
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        words = _words(line)
        if words and words[0] in ('menuentry', 'submenu') and line.endswith('{'):
            item = {'kind': words[0], 'title': words[1] if len(words) > 1 else '', 'id': None, 'release': None,
                    'children': []}
            if '$menuentry_id_option' in words:
                at = words.index('$menuentry_id_option')
                item['id'] = words[at + 1] if at + 1 < len(words) and words[at + 1] != '{' else None
            elif '--id' in words:
                at = words.index('--id')
                item['id'] = words[at + 1] if at + 1 < len(words) else None
            stack[-1][1].append(item)
            stack.append((words[0], item['children'], item))
            continue
        if line.endswith('{'):
            stack.append(('other', [], None))
            continue
        if line == '}':
            if len(stack) > 1:
                stack.pop()
            continue
        kind, dummy, item = stack[-1]
        if kind == 'menuentry' and words and words[0] in ('linux', 'linux16', 'linuxefi') and len(words) > 1:
            item['release'] = item['release'] or _release_of(words[1])
    return top


def _entries(tree, titles=(), ids=(), index=()):
    """Every menuentry of the tree with its paths: ``[{title_path, id_path, index_path, release, recovery}]``."""
    out = []
    for i, item in enumerate(tree):
        t, d, n = titles + (item['title'],), ids + (item['id'],), index + (i,)
        if item['kind'] == 'submenu':
            out.extend(_entries(item['children'], t, d, n))
        else:
            out.append({'title_path': list(t), 'id_path': list(d), 'index_path': list(n), 'release': item['release'],
                        'recovery': 'recovery' in (item['title'] or '').lower() or '-recovery-' in (item['id'] or '')})
    return out


def resolve_entry(tree, spec):
    """The menuentry GRUB boots for ``spec`` (a number, a title or an id, submenu components joined by '>'), or None.
    An empty spec is entry 0."""
    parts = (spec or '0').split('>')
    level, path = tree, []
    for depth, part in enumerate(parts):
        hit = None
        for i, item in enumerate(level):
            if (part.isdigit() and int(part) == i) or part in (item['title'], item['id']):
                hit = (i, item)
                break
        if hit is None:
            return None
        path.append(hit)
        item = hit[1]
        if item['kind'] == 'submenu':
            if depth == len(parts) - 1:
                return None
            level = item['children']
        elif depth != len(parts) - 1:
            return None
    titles = [item['title'] for dummy, item in path]
    return {'title_path': titles, 'id_path': [item['id'] for dummy, item in path],
            'index_path': [i for i, dummy in path], 'release': path[-1][1]['release']}


def entry_spec(entry):
    """How grub-reboot / grub-set-default name an entry: its ids joined by '>', else its titles."""
    if all(entry['id_path']):
        return '>'.join(entry['id_path'])
    return '>'.join(entry['title_path'])


def choose_entry(tree, release):
    """The entry that boots ``release`` for good: not a recovery entry; one in a submenu (Debian's "Advanced
    options", one entry per release) before a top-level one (whose kernel moves to the newest one installed)."""
    fits = [e for e in _entries(tree) if e['release'] == release and not e['recovery']]
    fits.sort(key=lambda e: (len(e['index_path']) < 2, e['index_path']))
    return fits[0] if fits else None


def _unquote(value):
    words = _words(value)
    return words[0] if len(words) == 1 else value.strip()


def grub_default_setting(path):
    """The GRUB_DEFAULT in force: ``{value, file, line, text}`` of the last assignment in ``path`` and then
    ``path.d/*.cfg`` (the order grub-mkconfig reads them); value '0' and line None when none sets it."""
    found = {'value': '0', 'file': path, 'line': None, 'text': None}
    for name in [path] + sorted(glob.glob(path + '.d/*.cfg')):
        text = _sysfs.read_text(name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            match = re.match(r'^\s*(?:export\s+)?GRUB_DEFAULT=(.*)$', line)
            if match:
                found = {'value': _unquote(match.group(1)), 'file': name, 'line': number, 'text': line.strip()}
    return found


# ---------------------------------------------------------------- grubby (EL)
def parse_grubby_info(text):
    """``grubby --info=ALL``: ``[{index, kernel, title, id, release}]``."""
    out, cur = [], None
    for line in (text or '').splitlines():
        if '=' not in line:
            continue
        key, value = line.split('=', 1)
        value = _unquote(value) if value.strip() else ''
        if key == 'index':
            cur = {'index': value}
            out.append(cur)
        elif cur is not None:
            cur[key] = value
    for entry in out:
        entry['release'] = _release_of(entry.get('kernel') or '')
    return out


# ---------------------------------------------------------------- DKMS
def parse_dkms_status(text):
    """``dkms status`` lines: ``[{module, version, kernel, arch, status, line}]`` (kernel/arch None for "added").
    Both formats: dkms 3 (``nvidia/535.261.03, 6.1.0-28-amd64, x86_64: installed``) and dkms 2
    (``nvidia, 535.104.05, 5.15.0-86-generic, x86_64: installed``)."""
    out = []
    for line in (text or '').splitlines():
        line = line.strip()
        head, sep, status = line.rpartition(': ')
        if not sep:
            continue
        status = status.split(' ', 1)[0].strip().rstrip(',')
        fields = [f.strip() for f in head.split(',')]
        if '/' in fields[0]:
            module, version = fields[0].split('/', 1)
            rest = fields[1:]
        elif len(fields) >= 2:
            module, version, rest = fields[0], fields[1], fields[2:]
        else:
            continue
        out.append({'module': module, 'version': version, 'kernel': rest[0] if rest else None,
                    'arch': rest[1] if len(rest) > 1 else None, 'status': status, 'line': line})
    return out


def dkms_missing(entries, release):
    """DKMS modules (module/version, the newest version of each module) not installed for ``release``."""
    newest = {}
    for e in entries:
        newest.setdefault(e['module'], set()).add(e['version'])
    out = []
    for module in sorted(newest):
        versions = sorted(newest[module], key=_version_key)
        version = versions[-1]
        ok = any(e['module'] == module and e['version'] == version and e['kernel'] == release
                 and e['status'] == 'installed' for e in entries)
        if not ok:
            out.append('%s/%s' % (module, version))
    return out


def _version_key(text):
    return [(0, int(x), '') if x.isdigit() else (1, 0, x) for x in re.split(r'[.\-+~]', text)]


DKMS_CONF_RE = re.compile(r'^\s*(PACKAGE_NAME|PACKAGE_VERSION)=(.*)$')
DKMS_VALUE_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._+~-]{0,127}$')


def dkms_conf_identity(path):
    """``(name, version)`` from ``<path>/dkms.conf`` (PACKAGE_NAME, PACKAGE_VERSION as literal values, quoted or
    not), or raise Failure naming the file: a value computed by the shell cannot be read without running it."""
    conf = os.path.join(path, 'dkms.conf')
    found = {}
    try:
        with open(conf) as handle:
            lines = handle.read().splitlines()
    except (IOError, OSError, UnicodeDecodeError) as exc:
        raise Failure('sources: %s cannot be read (%s); nothing was changed' % (conf, exc), changed=False)
    for line in lines:
        match = DKMS_CONF_RE.match(line)
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
                value = value[1:-1]
            found[match.group(1)] = value
    for key in ('PACKAGE_NAME', 'PACKAGE_VERSION'):
        if not DKMS_VALUE_RE.match(found.get(key, '')):
            raise Failure('sources: %s: %s must be a literal name or version (letters, digits, ".", "_", "+", "~", '
                          '"-"), got %s; nothing was changed' % (conf, key, _show(found.get(key))), changed=False)
    return found['PACKAGE_NAME'], found['PACKAGE_VERSION']


# ---------------------------------------------------------------- the engine
class Engine(object):
    """One run: params, the tools found, the commands run (``actions``)."""

    def __init__(self, p, check_mode, find):
        self.p, self.check_mode, self.find = p, check_mode, find
        self.actions = []
        self.required = list(p.get('required_modules') or [])

    def tool(self, key, loader, required=True):
        option = PATH_OPTIONS.get(key, '%s_path' % key)
        name = self.p.get(option) or TOOLS.get(loader, {}).get(key) or key
        exe = self.find(name)
        if exe is None and required:
            raise Failure('%s: %s not found (%s); nothing was changed' % (
                option, name, 'not an executable file' if os.sep in name else 'not on PATH'), changed=False)
        return exe

    def query(self, argv, what):
        res = _runner.run(argv, timeout=QUERY_TIMEOUT)
        why = _runner.failure(res, QUERY_TIMEOUT)
        if why:
            raise Failure('%s: %s %s (%s); nothing was changed' % (what, res['cmd'], why, _tail(res)), changed=False)
        return res['stdout']

    def act(self, argv, what, timeout=QUERY_TIMEOUT, **result):
        """Run a change (not in check mode: only recorded). A failure is a Failure with ``result``."""
        self.actions.append(_runner.cmdline(argv))
        if self.check_mode:
            return None
        res = _runner.run(argv, timeout=timeout)
        why = _runner.failure(res, timeout)
        if why:
            raise Failure('%s: %s %s; output: %s' % (what, res['cmd'], why, _tail(res)), **result)
        return res

    # ------------------------------------------------------------ boot loader state
    def detect_loader(self):
        p = self.p
        if p['bootloader'] != 'auto':
            return p['bootloader']
        if os.path.isfile(os.path.join(p['boot_dir'], 'grub', 'grub.cfg')):
            return 'grub'
        if self.find(p.get('grubby_path') or 'grubby'):
            return 'grubby'
        raise Failure('bootloader auto: neither %s (GRUB of Debian/Ubuntu) nor grubby (EL) was found; set bootloader '
                      'to grub or grubby; nothing was changed' % os.path.join(p['boot_dir'], 'grub', 'grub.cfg'),
                      changed=False)

    def grub_state(self):
        p = self.p
        gdir = os.path.join(p['boot_dir'], 'grub')
        cfg_path = os.path.join(gdir, 'grub.cfg')
        cfg = _sysfs.read_text(cfg_path)
        if cfg is None:
            raise Failure('bootloader grub: %s cannot be read (is GRUB installed, and boot_dir right?); nothing was '
                          'changed' % cfg_path, changed=False)
        tree = parse_grub_cfg(cfg)
        env = parse_grubenv(_sysfs.read_text(os.path.join(gdir, 'grubenv')) or '')
        setting = grub_default_setting(p['grub_default_file'])
        saved = setting['value'] == 'saved'
        spec = env.get('saved_entry', '') if saved else setting['value']
        default = resolve_entry(tree, spec)
        note = None
        if default is None:
            note = 'the default %s is not in %s: GRUB boots entry 0' % (_show(spec), cfg_path)
            default = resolve_entry(tree, '0')
        nxt = resolve_entry(tree, env['next_entry']) if env.get('next_entry') else None
        return {'loader': 'grub', 'tree': tree, 'env': env, 'setting': setting, 'saved': saved, 'cfg_path': cfg_path,
                'cfg_uses_saved': '${saved_entry}' in cfg, 'grubenv': os.path.join(gdir, 'grubenv'),
                'default': default, 'default_spec': spec, 'default_note': note,
                'next': nxt, 'next_spec': env.get('next_entry') or None}

    def grubby_state(self):
        p = self.p
        grubby = self.tool('grubby', 'grubby')
        default_kernel = self.query([grubby, '--default-kernel'], 'reading the default kernel').strip()
        info = parse_grubby_info(self.query([grubby, '--info=ALL'], 'reading the boot entries'))
        gdir = os.path.join(p['boot_dir'], 'grub2')
        env = parse_grubenv(_sysfs.read_text(os.path.join(gdir, 'grubenv')) or '')
        setting = grub_default_setting(p['grub_default_file'])
        by_id = dict((e.get('id'), e) for e in info if e.get('id'))
        nxt = None
        if env.get('next_entry'):
            spec = env['next_entry']
            hit = by_id.get(spec) or next((e for e in info if spec in (e.get('index'), e.get('title'))), None)
            nxt = {'release': hit['release'] if hit else None, 'spec': env['next_entry']}
        default = {'release': _release_of(default_kernel), 'spec': default_kernel}
        return {'loader': 'grubby', 'info': info, 'env': env, 'setting': setting,
                'saved': setting['value'] == 'saved', 'cfg_uses_saved': True, 'grubenv': os.path.join(gdir, 'grubenv'),
                'default': default, 'default_spec': default_kernel, 'default_note': None, 'next': nxt,
                'next_spec': env.get('next_entry') or None}

    # ------------------------------------------------------------ modules
    def check_modules(self, release):
        """``{name: {status, path, detail}}`` for every required module; status ok | missing | wrong-release."""
        p = self.p
        files, builtin = find_module_files(p['modules_dir'], release)
        modinfo = self.find(p.get('modinfo_path') or 'modinfo')
        out = {}
        for name in self.required:
            key = _norm(name)
            path = files.get(key)
            if path is None:
                if key in builtin:
                    out[name] = {'status': 'ok', 'path': '(builtin)', 'detail': 'built into the kernel (modules.builtin)'}
                else:
                    out[name] = {'status': 'missing', 'path': None,
                                 'detail': 'no %s.ko* under %s and not in modules.builtin'
                                           % (name, os.path.join(p['modules_dir'], release))}
                continue
            entry = {'status': 'ok', 'path': path, 'detail': 'file'}
            if modinfo and '%sweak-updates%s' % (os.sep, os.sep) not in path:
                res = _runner.run([modinfo, '-F', 'vermagic', path], timeout=QUERY_TIMEOUT)
                magic = (res['stdout'] or '').strip().split()
                if _runner.failure(res, QUERY_TIMEOUT) or not magic:
                    entry = {'status': 'wrong-release', 'path': path,
                             'detail': '%s gives no vermagic (%s)' % (res['cmd'], _tail(res))}
                elif magic[0] != release:
                    entry = {'status': 'wrong-release', 'path': path,
                             'detail': '%s was built for %s (modinfo vermagic: %s), not %s'
                                       % (path, magic[0], ' '.join(magic), release)}
                else:
                    entry['detail'] = 'vermagic %s' % ' '.join(magic)
            elif modinfo:
                entry['detail'] = 'weak-updates link (kABI-compatible build of another release)'
            out[name] = entry
        return out

    def dkms_status(self, dkms, release):
        res = _runner.run([dkms, 'status', '-k', release], timeout=QUERY_TIMEOUT)
        if _runner.failure(res, QUERY_TIMEOUT):
            raise Failure('reading DKMS: %s %s (%s); nothing was changed'
                          % (res['cmd'], _runner.failure(res, QUERY_TIMEOUT), _tail(res)), changed=False)
        # dkms status -k lists the modules built for that kernel; "added" ones (not built anywhere) have no kernel
        all_res = _runner.run([dkms, 'status'], timeout=QUERY_TIMEOUT)
        entries = parse_dkms_status(res['stdout'])
        known = parse_dkms_status(all_res['stdout'] if not _runner.failure(all_res, QUERY_TIMEOUT) else '')
        return entries, known, (res['stdout'] or '').strip()

    def verify(self, release):
        """Modules and DKMS for ``release``; builds with dkms autoinstall when something is missing. Returns
        ``(modules, dkms_report, built)``; raises Failure (nothing changed) when something cannot be had."""
        p = self.p
        modules = self.check_modules(release)
        bad = [n for n in modules if modules[n]['status'] != 'ok']
        dkms = self.find(p.get('dkms_path') or 'dkms') if p['dkms'] == 'auto' else None
        report = {'used': bool(dkms), 'missing_before': [], 'status_before': '', 'status_after': '', 'output': ''}
        if dkms is None:
            if bad:
                raise Failure(self._refusal(release, modules, bad, report, 'and DKMS is %s' % (
                    'not used (dkms: never)' if p['dkms'] == 'never' else 'not installed (no dkms on PATH)')),
                    changed=False, modules=modules, dkms=report)
            return modules, report, False
        entries, known, text = self.dkms_status(dkms, release)
        missing = dkms_missing(known + entries, release)
        report.update(missing_before=missing, status_before=text)
        if not bad and not missing:
            return modules, report, False
        if not known and not entries and bad:
            raise Failure(self._refusal(release, modules, bad, report, 'and DKMS has no module that could build it '
                                        '(dkms status lists none)'), changed=False, modules=modules, dkms=report)
        argv = [dkms, 'autoinstall', '-k', release]
        self.actions.append(_runner.cmdline(argv))
        if self.check_mode:
            report['output'] = 'check mode: would run %s' % _runner.cmdline(argv)
            return modules, report, True
        res = _runner.run(argv, timeout=p['timeout'])
        report['output'] = _tail(res, 40)
        entries, known, text = self.dkms_status(dkms, release)
        report['status_after'] = text
        still = dkms_missing(known + entries, release)
        modules = self.check_modules(release)
        bad = [n for n in modules if modules[n]['status'] != 'ok']
        if bad or still:
            what = ('DKMS modules not installed for %s: %s' % (release, ', '.join(still))) if still else 'still'
            why = '%s%s after %s %s' % ('and ' if bad else '', what, res['cmd'],
                                        _runner.failure(res, p['timeout']) or 'ended (rc 0)')
            # changed: DKMS installed something for the release (another module) before it failed
            raise Failure(self._refusal(release, modules, bad, report, why), changed=report['status_after'] != report['status_before'],
                          modules=modules, dkms=report)
        return modules, report, True

    def _refusal(self, release, modules, bad, report, why):
        parts = ['%s: %s (%s)' % (n, modules[n]['status'], modules[n]['detail']) for n in bad]
        text = 'kernel %s refused, no boot entry was changed: %s %s' % (
            release, '; '.join(parts) if parts else 'the required modules are there, but', why)
        if report.get('status_before') or report.get('status_after'):
            text += '; dkms status -k %s: %s' % (release, (report.get('status_after') or report.get('status_before'))
                                                 .replace('\n', ' | '))
        if report.get('output') and not report['output'].startswith('check mode'):
            text += '; dkms autoinstall output: %s' % report['output']
        return text


# ---------------------------------------------------------------- plan and act
def _rel(entry):
    return entry['release'] if entry else None


def _grub_plan(p, st, release, running):
    """``(target, spec, default_ok, want_default, want_next, stale_next)`` for GRUB: the entry that boots ``release``,
    how the tools name it, whether the default boots it already (the chosen entry; with GRUB_DEFAULT other than
    saved, any entry of the release: it cannot be pinned), and which changes are due."""
    target = choose_entry(st['tree'], release)
    if target is None:
        boots = ', '.join(sorted(set(e['release'] for e in _entries(st['tree']) if e['release']))) or 'nothing'
        raise Failure('kernel %s has no boot entry in %s (menu entries boot %s); run update-grub (the kernel '
                      'package\'s hook normally does); nothing was changed' % (release, st['cfg_path'], boots),
                      changed=False)
    spec = entry_spec(target)
    default_ok = _rel(st['default']) == release and (st['default']['index_path'] == target['index_path']
                                                     or not st['saved'])
    want_default = not default_ok and (running == release or p['make_default'] == 'now')
    want_next = running != release and not (default_ok or want_default) and _rel(st['next']) != release
    stale_next = st['next_spec'] is not None and _rel(st['next']) != release and not want_next and not want_default
    return target, spec, default_ok, want_default, want_next, stale_next


def _saved_problem(st, need_default):
    setting = st['setting']
    if setting['value'] != 'saved':
        where = ('%s line %d (%s)' % (setting['file'], setting['line'], setting['text']) if setting['line'] else
                 'no GRUB_DEFAULT line in %s or %s.d/*.cfg (GRUB then boots entry 0)' % (setting['file'], setting['file']))
        return ('GRUB_DEFAULT is %s: %s; the permanent default can only be set with GRUB_DEFAULT=saved - change that '
                'one line to GRUB_DEFAULT=saved and run update-grub (grub2-mkconfig on EL), then run again; nothing was '
                'changed' % (_show(setting['value']), where))
    if need_default and not st['cfg_uses_saved']:
        return ('GRUB_DEFAULT=saved in %s line %s, but %s does not use it (no set default="${saved_entry}"): run '
                'update-grub, then run again; nothing was changed' % (setting['file'], setting['line'], st['cfg_path']))
    return None


def _installed_for(entries, release):
    return set('%s/%s' % (e['module'], e['version']) for e in entries
               if e['kernel'] == release and e['status'] == 'installed')


def trial(eng, p, release, running):
    """``scope: dkms``: build every DKMS module for ``release`` with only its headers installed; on a failure undo
    what this call installed for it and raise Failure. Reads no boot loader and needs no image."""
    base = dict(release=release, running=running, scope='dkms')
    build = os.path.join(p['modules_dir'], release, 'build')
    if not os.path.isdir(build):
        raise Failure('kernel %s: its headers are not installed (%s is missing) and the DKMS trial build needs them: '
                      'install linux-headers-%s (kernel-devel-%s on EL) first; nothing was changed'
                      % (release, build, release, release), changed=False, **base)
    sources = [dict(zip(('module', 'version'), dkms_conf_identity(path)), path=path)
               for path in p.get('sources') or []]
    dkms = eng.find(p.get('dkms_path') or 'dkms') if p['dkms'] == 'auto' else None
    report = {'used': bool(dkms), 'missing_before': [], 'status_before': '', 'status_after': '', 'output': '',
              'undone': [], 'left': [], 'sources': []}
    if dkms is None:
        if sources:
            raise Failure('sources: %s cannot be built for kernel %s: DKMS is %s; nothing was changed' % (
                ', '.join('%s/%s' % (s['module'], s['version']) for s in sources), release,
                'not used (dkms: never)' if p['dkms'] == 'never' else 'not installed (no dkms on PATH)'),
                changed=False, dkms=report, **base)
        report['output'] = 'nothing to build: DKMS is %s' % (
            'not used (dkms: never)' if p['dkms'] == 'never' else 'not installed (no dkms on PATH)')
        return dict(base, changed=False, dkms=report, actions=eng.actions)
    # the versions about to be installed first: a scratch tree each, nothing of the host's DKMS changes
    for source in sources:
        report['sources'].append(_trial_source(eng, p, dkms, source, release, build))
    failed = [s for s in report['sources'] if s['built'] is False]
    if failed:
        why = '; '.join('%s/%s (DKMS source %s, the version this run installs) does not build for %s: %s; build log: %s'
                        % (s['module'], s['version'], s['path'], release, s['why'], s['log']) for s in failed)
        raise Failure('kernel %s refused before its image is installed: %s; nothing was changed' % (release, why),
                      changed=False, dkms=report, actions=eng.actions, **base)
    replaced = set(s['module'] for s in sources)
    before, known, text = eng.dkms_status(dkms, release)
    # an installed version of a module the sources replace need not build for the release: the new one did
    missing = [m for m in dkms_missing(known + before, release) if m.split('/', 1)[0] not in replaced]
    report.update(missing_before=missing, status_before=text)
    if not missing:
        return dict(base, changed=False, dkms=report, actions=eng.actions)
    argv = [dkms, 'autoinstall', '-k', release]
    eng.actions.append(_runner.cmdline(argv))
    shown = dict(before={'dkms_status': text or '(none)', 'missing': missing})
    if eng.check_mode:
        report['output'] = 'check mode: would run %s' % _runner.cmdline(argv)
        shown['after'] = {'dkms_status': report['output'], 'missing': []}
        return dict(base, changed=True, dkms=report, actions=eng.actions, diff=shown)
    res = _runner.run(argv, timeout=p['timeout'])
    report['output'] = _tail(res, 40)
    after, known, text = eng.dkms_status(dkms, release)
    report['status_after'] = text
    still = [m for m in dkms_missing(known + after, release) if m.split('/', 1)[0] not in replaced]
    if not still:
        shown['after'] = {'dkms_status': text or '(none)', 'missing': []}
        return dict(base, changed=True, dkms=report, actions=eng.actions, diff=shown)
    # undo what this call installed for the release; a module built for no other kernel is left (dkms remove of its
    # last kernel would unregister it) and named
    elsewhere = set('%s/%s' % (e['module'], e['version']) for e in known
                    if e['kernel'] not in (None, release) and e['status'] == 'installed')
    for head in sorted(_installed_for(after, release) - _installed_for(before, release)):
        if head not in elsewhere:
            report['left'].append(head)
            continue
        module, version = head.split('/', 1)
        undo = [dkms, 'remove', '-m', module, '-v', version, '-k', release]
        eng.actions.append(_runner.cmdline(undo))
        out = _runner.run(undo, timeout=p['timeout'])
        why = _runner.failure(out, p['timeout'])
        (report['left'] if why else report['undone']).append(head if not why else '%s (%s %s: %s)' % (
            head, out['cmd'], why, _tail(out, 5)))
    final, known, text = eng.dkms_status(dkms, release)
    report['status_after'] = text
    changed = _installed_for(final, release) != _installed_for(before, release)
    msg = ('kernel %s refused before its image is installed: DKMS modules not installed for %s: %s after %s %s; '
           'dkms status -k %s: %s; dkms autoinstall output: %s' % (
               release, release, ', '.join(still), res['cmd'], _runner.failure(res, p['timeout']) or 'ended (rc 0)',
               release, (text or '(none)').replace('\n', ' | '), report['output']))
    if report['undone']:
        msg += '; undone (built for %s by this run): %s' % (release, ', '.join(report['undone']))
    if report['left']:
        msg += ('; left installed for %s (built for no other kernel, or the removal failed - remove with dkms remove '
                '-m MODULE -v VERSION -k %s): %s' % (release, release, ', '.join(report['left'])))
    raise Failure(msg, changed=changed, dkms=report, actions=eng.actions, **base)


def _trial_source(eng, p, dkms, source, release, build):
    """Build one DKMS source tree for ``release`` in a scratch DKMS tree, removed again (in check mode: only listed in
    the actions, ``built`` None): ``{module, version, path, built, why, log}``."""
    out = dict(source, built=False, why='', log='')
    if eng.check_mode:
        eng.actions.append('%s add/build -m %s -v %s -k %s in a scratch DKMS tree (%s)' % (
            dkms, source['module'], source['version'], release, source['path']))
        return dict(out, built=None, why='check mode: not built')
    scratch = tempfile.mkdtemp(prefix='gpufleet-dkms-trial-')
    try:
        tree, srcs = os.path.join(scratch, 'dkms'), os.path.join(scratch, 'source')
        os.mkdir(tree)
        os.mkdir(srcs)
        os.symlink(source['path'], os.path.join(srcs, '%s-%s' % (source['module'], source['version'])))
        trees = ['--sourcetree', srcs, '--dkmstree', tree]
        head = ['-m', source['module'], '-v', source['version']]
        for argv in ([dkms, 'add'] + head + trees,
                     [dkms, 'build'] + head + ['-k', release, '--kernelsourcedir', build] + trees):
            eng.actions.append(_runner.cmdline(argv).replace(scratch, '<scratch>'))
            res = _runner.run(argv, timeout=p['timeout'])
            why = _runner.failure(res, p['timeout'])
            if why:
                out['why'] = ('%s %s: %s' % (argv[1], why, _tail(res, 8))).replace(scratch, '<scratch>')
                log = os.path.join(tree, source['module'], source['version'], 'build', 'make.log')
                if os.path.isfile(log):
                    with open(log, errors='replace') as handle:
                        out['log'] = ' | '.join(line.strip() for line in handle.read().splitlines()[-OUTPUT_LINES:]
                                                if line.strip()) or 'empty'
                out['log'] = out['log'] or 'none written'
                return out
        out['built'] = True
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(p, check_mode, diff, find):
    """The whole module on its params ``p``: the result for exit_json, or Failure. Every refusal comes before the
    first change; nothing changes in check mode."""
    errors = input_problems(p)
    if errors:
        raise Failure('; '.join(errors), changed=False)
    eng = Engine(p, check_mode, find)
    release = p['release']
    running = running_release(p['proc_root'])
    if running is None:
        raise Failure('proc_root: %s cannot be read; nothing was changed'
                      % os.path.join(p['proc_root'], 'proc', 'sys', 'kernel', 'osrelease'), changed=False)
    if p.get('scope', 'all') == 'dkms':
        return trial(eng, p, release, running)
    installed = installed_releases(p['boot_dir'], p['modules_dir'])
    if release not in installed:
        raise Failure('kernel %s is not installed: %s%s; installed: %s (install linux-image-%s / kernel-%s first); '
                      'nothing was changed' % (
                          release, os.path.join(p['boot_dir'], 'vmlinuz-' + release),
                          ' is missing' if not os.path.isfile(os.path.join(p['boot_dir'], 'vmlinuz-' + release))
                          else ' is there but %s is not' % os.path.join(p['modules_dir'], release),
                          ', '.join(installed) or 'none', release, release),
                      changed=False, running=running, installed=installed)
    carried = carried_modules(p['modules_dir'], running, p.get('carry_modules') or [])
    eng.required = required_list(p.get('required_modules'), carried)
    loader = eng.detect_loader()
    st = eng.grub_state() if loader == 'grub' else eng.grubby_state()
    before = {'running': running, 'default': _rel(st['default']), 'next': _rel(st['next'])}
    base = dict(release=release, running=running, installed=installed, bootloader=loader, carried_modules=carried)

    # verify the modules first: a refusal here changes no boot entry
    try:
        modules, dkms_report, built = eng.verify(release)
    except Failure as exc:
        exc.result.setdefault('carried_modules', carried)
        raise
    base.update(modules=modules, dkms=dkms_report)

    steps = []  # (what, argv)
    if loader == 'grub':
        target, spec, default_ok, want_default, want_next, stale_next = _grub_plan(p, st, release, running)
        base['entry'] = spec
        gdir = os.path.join(p['boot_dir'], 'grub')
        if want_default or want_next:
            problem = _saved_problem(st, want_default or p['make_default'] == 'after_verify')
            if problem:
                raise Failure(problem, changed=built, **base)
        if p.get('manage_boot', True):
            if want_default:
                steps.append(('setting the default boot entry', [eng.tool('set_default', 'grub'), '--boot-directory',
                                                                 p['boot_dir'], spec]))
            elif want_next:
                steps.append(('setting the next boot entry', [eng.tool('reboot', 'grub'), '--boot-directory',
                                                              p['boot_dir'], spec]))
            if stale_next:
                steps.append(('clearing a one-time boot entry of another kernel',
                              [eng.tool('editenv', 'grub'), os.path.join(gdir, 'grubenv'), 'unset', 'next_entry']))
    else:
        default_ok = _rel(st['default']) == release
        want_default = not default_ok and (running == release or p['make_default'] == 'now')
        want_next = running != release and not (default_ok or want_default) and _rel(st['next']) != release
        stale_next = st['next_spec'] is not None and _rel(st['next']) != release and not want_next and not want_default
        kernel_path = os.path.join(p['boot_dir'], 'vmlinuz-' + release)
        hit = next((e for e in st['info'] if e['release'] == release), None)
        base['entry'] = (hit or {}).get('id') or kernel_path
        if hit is None and (want_default or want_next):
            raise Failure('kernel %s has no boot entry in grubby --info=ALL (entries boot %s); nothing was changed'
                          % (release, ', '.join(e['release'] or '?' for e in st['info']) or 'nothing'),
                          changed=built, **base)
        if want_default or want_next:
            problem = _saved_problem(st, False)
            if problem:
                raise Failure(problem, changed=built, **base)
        if p.get('manage_boot', True):
            if want_default:
                steps.append(('setting the default kernel', [eng.tool('grubby', 'grubby'), '--set-default', kernel_path]))
            elif want_next:
                steps.append(('setting the next boot entry', [eng.tool('reboot', 'grubby'), '--boot-directory',
                                                              p['boot_dir'], hit.get('id') or hit['title']]))
            if stale_next:
                steps.append(('clearing a one-time boot entry of another kernel',
                              [eng.tool('editenv', 'grubby'), st['grubenv'], 'unset', 'next_entry']))

    after = dict(before)
    manage = p.get('manage_boot', True)
    if manage and want_default:
        after.update(default=release, next=None)
    elif manage and want_next:
        after['next'] = release
    if manage and stale_next:
        after['next'] = None
    done = []
    for what, argv in steps:
        eng.act(argv, 'kernel %s: %s failed' % (release, what), changed=bool(done) or built, **dict(
            base, actions=list(eng.actions)))
        done.append(what)

    boots = after['next'] or after['default']
    reasons = []
    if running != release:
        if boots == release:
            reasons.append('kernel %s is installed and verified and boots %s (running %s; the permanent default %s)' % (
                release, 'next, once' if after['next'] == release and after['default'] != release else 'by default',
                running, 'stays %s until the node runs %s' % (after['default'], release)
                if after['default'] != release else 'is %s' % release))
        else:
            reasons.append('kernel %s is installed and verified but is not set to boot (running %s, default %s; '
                           'manage_boot is false)' % (release, running, after['default']))
    changed = bool(steps) or built
    result = dict(base, changed=changed, default=after['default'], next=after['next'],
                  default_before=before['default'], next_before=before['next'], actions=eng.actions,
                  reboot_required=running != release, reboot_reason='; '.join(reasons),
                  grub_default=st['setting'])
    if st.get('default_note'):
        result['default_note'] = st['default_note']
    if changed or diff:
        result['diff'] = dict(before=before, after=after)
    return result
