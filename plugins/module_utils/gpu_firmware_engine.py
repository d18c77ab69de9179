# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of gpufleet.cluster.gpu_firmware: check the input, read the running VBIOS of every GPU
(``nvidia-smi -q -x`` through the parser of ``nvidia_smi.py``), plan every GPU against the version the lock wants
for its model - nothing, "updated, waiting for a reset" (from the module's own record of earlier updates), or an
update with the image named for the model - refuse before the first update when any GPU cannot be done, then run the
update command (a pluggable argv list with ``{placeholders}``: NVIDIA's nvfwupd, nvflash, a vendor's BMC/Redfish
CLI), read the VBIOS back and report what waits for a reset, reboot or power cycle.

``run(params, check_mode, diff, find, write)`` returns the module result or raises ``Failure`` (``_runner.Failure``:
the message; ``result`` holds ``changed``, ``gpus`` and, after a failed update, ``updated``). ``find(name)`` is the
executable lookup (``_runner.find``), ``write(path, text)`` the atomic file write (``atomic_write.write_text``; None
or why it failed): the only ties to Ansible. Commands run through ``_runner`` as argv lists, never a shell.

nvidia-smi prints only the VBIOS a GPU runs; a new image usually loads at the next GPU reset, reboot or power cycle.
So the module keeps a record (``state_path``): per GPU (by UUID, else PCI address) the version it updated to and the
boot (``boot_id_path``) it did it in. A GPU that still runs its old VBIOS but was updated to the wanted one in this
boot is "pending-reset" (not updated again); one updated in an earlier boot that still runs the old VBIOS did not load
it with a reboot: "pending-power-cycle" (the image needs a cold power cycle, or the update did not take).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import string
import time

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi

__all__ = ['Failure', 'run', 'input_problems', 'read_gpus', 'plan_gpus', 'command_argv', 'VBIOS_RE']

# The VBIOS version as nvidia-smi prints it: five groups of two hex digits (96.00.99.00.01, 94.02.6D.00.0D).
# The version lock's rule for its key vbios (plugins/plugin_utils/_version_lock.py) is this one.
VBIOS_RE = r'^[0-9A-Fa-f]{2}(\.[0-9A-Fa-f]{2}){4}$'
VBIOS_ALLOWED = 'a VBIOS version as nvidia-smi prints it, five groups of two hex digits such as 96.00.99.00.01'
STATE_FORMAT = 'gpufleet.gpu_firmware/1'
NO_GPU = 'no GPU'
SMI_TIMEOUT = 300
OUTPUT_LINES = 12
# Placeholders of the update command, per scope.
PLACEHOLDERS = {
    'gpu': ('image', 'version', 'model', 'pci', 'bus_id', 'index', 'uuid', 'serial'),
    'node': ('image', 'version', 'model', 'pcis', 'count'),
}
DEFAULT_PENDING = (r'(?i)(?<!no )(?<!not )\b(reboot|reset|power[ -]?cycle|ac[ -]cycle)\b[^\n]*'
                   r'\b(required|needed|pending)\b')


class ToolError(Exception):
    """A command that failed; the message holds the command line and why."""

    def __init__(self, res, why):
        self.res = res
        Exception.__init__(self, '%s %s' % (res['cmd'], why))


def output_of(res):
    """The end of a command's output, one line: ``a | b | c`` (or 'no output')."""
    text = '\n'.join(s for s in (res['stdout'], res['stderr']) if s and s.strip())
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return ' | '.join(lines[-OUTPUT_LINES:]) or 'no output'


def _show(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def same_version(a, b):
    """VBIOS versions compare without case (hex digits) and surrounding blanks."""
    return isinstance(a, str) and isinstance(b, str) and a.strip().lower() == b.strip().lower()


# ---------------------------------------------------------------- input (nothing runs)
def placeholder_errors(command, scope):
    """The ``{placeholders}`` of ``command`` (an argv list) that ``scope`` does not have, or that are not plain
    names (``{0}``, ``{pci.x}``, ``{pci!r}``, ``{pci:>8}``), or broken braces."""
    errors = []
    allowed = PLACEHOLDERS.get(scope, ())
    for i, arg in enumerate(command):
        try:
            fields = list(string.Formatter().parse(arg))
        except ValueError as exc:
            errors.append('command[%d] %s: %s (write a literal brace as {{ or }})' % (i, _show(arg), exc))
            continue
        for dummy, name, spec, conv in fields:
            if name is None:
                continue
            if name not in allowed or spec or conv:
                errors.append('command[%d] %s: {%s%s%s} is not a placeholder of scope %s (allowed: %s)'
                              % (i, _show(arg), name, ('!' + conv) if conv else '', (':' + spec) if spec else '',
                                 scope, ', '.join('{%s}' % n for n in allowed)))
    return errors


def input_problems(p):
    """Every problem of the module's params, each naming the option and what is allowed; [] when usable."""
    errors = ac.nul_errors(p)
    if errors:
        return errors
    vbios = p.get('vbios')
    if isinstance(vbios, dict):
        if not vbios:
            errors.append('vbios: an empty dict pins nothing; give %s, or a dict GPU model -> version' % VBIOS_ALLOWED)
        for model in sorted(vbios, key=str):
            ver = vbios[model]
            if not isinstance(model, str) or not model.strip():
                errors.append('vbios: a key must be a GPU model as nvidia-smi prints it (for example '
                              "'NVIDIA H100 80GB HBM3'), got %s" % _show(model))
            elif not isinstance(ver, str) or not re.match(VBIOS_RE, ver):
                errors.append('vbios[%s] must be %s, got %s' % (model, VBIOS_ALLOWED, _show(ver)))
    elif not isinstance(vbios, str) or not re.match(VBIOS_RE, vbios):
        errors.append('vbios must be %s, or a dict GPU model -> version; got %s' % (VBIOS_ALLOWED, _show(vbios)))
    images = p.get('images') or {}
    if not isinstance(images, dict):
        errors.append('images must be a dict GPU model -> image file, got %s' % type(images).__name__)
        images = {}
    for model in sorted(images, key=str):
        rel = images[model]
        if not isinstance(rel, str) or not rel.strip():
            errors.append('images[%s] must be an image file (relative to bundle_dir, or absolute), got %s'
                          % (model, _show(rel)))
        elif isinstance(vbios, dict) and model not in vbios:
            errors.append('images[%s]: the model is not in vbios (models there: %s); a typo?'
                          % (model, ', '.join(sorted(vbios, key=str))))
    bundle = p.get('bundle_dir')
    if bundle is not None and (not isinstance(bundle, str) or not os.path.isabs(bundle)):
        errors.append('bundle_dir must be an absolute path, got %s' % _show(bundle))
    elif bundle is not None and os.path.lexists(bundle) and not os.path.isdir(bundle):
        errors.append('bundle_dir %s is not a directory; it holds the firmware images' % bundle)
    command = p.get('command') or []
    if any(not isinstance(a, str) for a in command):
        errors.append('command must be a list of strings (an argv list, no shell), got %s' % _show(command))
    else:
        if command and (not command[0] or command[0].startswith('-') or '{' in command[0]):
            errors.append('command[0] must be the update program (a name on PATH or an absolute path, no '
                          'placeholder), got %s' % _show(command[0]))
        errors += placeholder_errors(command, p.get('scope'))
        if command and command[0] and not command[0].startswith('-'):
            errors += ac.executable_errors('command[0]', command[0])
    pattern = p.get('pending_pattern')
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            errors.append('pending_pattern is not a regular expression: %s (%s)' % (exc, _show(pattern)))
    errors += ac.executable_errors('nvidia_smi_path', p.get('nvidia_smi_path'))
    for name in ('state_path', 'boot_id_path'):
        value = p.get(name)
        if not isinstance(value, str) or not os.path.isabs(value):
            errors.append('%s must be an absolute path, got %s' % (name, _show(value)))
    if isinstance(p.get('state_path'), str) and os.path.isabs(p['state_path']):
        why = atomic_write.file_problem(p['state_path'])
        if why:
            errors.append('state_path: %s' % why)
    errors += ac.timeout_range(p.get('timeout'))
    return errors


# ---------------------------------------------------------------- reading
def _norm_pci(bus_id):
    """nvidia-smi's ``00000000:3B:00.0`` -> ``0000:3b:00.0`` (the form lspci and sysfs use)."""
    if not bus_id:
        return None
    text = bus_id.strip().lower()
    parts = text.split(':')
    if len(parts) == 3 and len(parts[0]) > 4:
        parts[0] = parts[0][-4:]
    return ':'.join(parts)


def read_gpus(exe):
    """``[{index, model, pci, bus_id, uuid, serial, running}]`` of ``exe -q -x``; raises ToolError or
    NvidiaSmiParseError (NvidiaSmiNoDevices for a host without a GPU the driver sees)."""
    res = _runner.run([exe, '-q', '-x'], timeout=SMI_TIMEOUT)
    if res['rc'] != 0 and re.search(r'No devices were found', res['stdout'] + res['stderr'], re.IGNORECASE):
        raise nvidia_smi.NvidiaSmiNoDevices('nvidia-smi: No devices were found')
    why = _runner.failure(res, SMI_TIMEOUT)
    if why:
        raise ToolError(res, why)
    parsed = nvidia_smi.parse_query_xml(res['stdout'])
    return [{'index': g['index'], 'model': g['name'], 'pci': _norm_pci(g['pci_bus_id']), 'bus_id': g['pci_bus_id'],
             'uuid': g['uuid'], 'serial': g['serial'], 'running': g['vbios_version']} for g in parsed['gpus']]


def read_boot_id(path):
    """The current boot's id (``/proc/sys/kernel/random/boot_id``), or None when it cannot be read."""
    try:
        with open(path) as handle:
            return handle.read().strip() or None
    except (IOError, OSError, UnicodeDecodeError):
        return None


def read_record(path):
    """``(record, problem)``: the module's record of earlier updates (``{key: {version, boot_id, ...}}``), {} when
    there is none; a record that is not this module's JSON is a problem (not overwritten unasked)."""
    if not os.path.lexists(path):
        return {}, None
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (IOError, OSError, ValueError, UnicodeDecodeError) as exc:
        return {}, 'state_path %s cannot be read as the record of gpu_firmware: %s' % (path, exc)
    if not isinstance(data, dict) or data.get('format') != STATE_FORMAT or not isinstance(data.get('gpus'), dict):
        return {}, ('state_path %s is not a record of gpu_firmware (format %s); move it away or name another '
                    'state_path' % (path, STATE_FORMAT))
    return dict((k, v) for k, v in data['gpus'].items() if isinstance(v, dict)), None


def record_key(gpu):
    return gpu.get('uuid') or gpu.get('pci') or 'index-%s' % gpu['index']


# ---------------------------------------------------------------- plan
def wanted_for(vbios, model):
    if isinstance(vbios, dict):
        return vbios.get(model)
    return vbios


def image_path(p, rel):
    return rel if os.path.isabs(rel) else os.path.join(p['bundle_dir'] or '', rel)


def plan_gpus(p, gpus, record, boot_id):
    """``(planned, errors)``: one entry per GPU - ``wanted``, ``before`` / ``after`` (``{running, staged}``:
    staged is the version updated to that waits for a reset, else null), ``action`` (none, update, pending-reset,
    pending-power-cycle), ``image`` - and the refusals (nothing may run when there is any)."""
    vbios = p['vbios']
    errors = []
    models = sorted(set(g['model'] or '(no model)' for g in gpus))
    if not isinstance(vbios, dict) and len(models) > 1:
        errors.append('vbios is one version (%s) but this node has GPUs of %d models (%s): one VBIOS does not fit '
                      'two models; give vbios as a dict GPU model -> version' % (vbios, len(models), ', '.join(models)))
    missing = sorted(set(g['model'] or '(no model)' for g in gpus if wanted_for(vbios, g['model']) is None))
    if isinstance(vbios, dict) and missing:
        errors.append('vbios has no version for the model(s) %s of this node (vbios lists %s); the GPUs of a node '
                      'must be models the lock pins' % (', '.join(missing), ', '.join(sorted(vbios))))
    planned = []
    for gpu in gpus:
        want = wanted_for(vbios, gpu['model'])
        rec = record.get(record_key(gpu)) or {}
        staged = rec.get('version') if same_version(rec.get('version'), want) else None
        same_boot = bool(boot_id) and rec.get('boot_id') == boot_id
        entry = dict(gpu, wanted=want, image=None)
        if gpu['running'] is None:
            errors.append('GPU %s (%s, %s): nvidia-smi shows no VBIOS version; cannot plan this GPU'
                          % (gpu['index'], gpu['model'], gpu['pci']))
            action = 'none'
        elif want is None or same_version(gpu['running'], want):
            action = 'pending-reset' if staged and rec.get('pending') and same_boot else 'none'
        elif staged:
            action = 'pending-reset' if same_boot else 'pending-power-cycle'
        else:
            action = 'update'
        entry['action'] = action
        entry['before'] = {'running': gpu['running'], 'staged': staged if action.startswith('pending') else None}
        planned.append(entry)
    return planned, errors


def update_errors(p, planned):
    """Refusals of the GPUs that need an update: no command, no image for the model, an image that is not a file."""
    errors = []
    todo = [g for g in planned if g['action'] == 'update']
    if todo and not p.get('command'):
        errors.append('command is empty, but %d GPU(s) need the VBIOS %s: name the update command (an argv list '
                      'with {image} and the like, e.g. NVIDIA nvfwupd or the vendor\'s BMC CLI)'
                      % (len(todo), ', '.join(sorted(set(g['wanted'] for g in todo)))))
    images = p.get('images') or {}
    for model in sorted(set(g['model'] for g in todo)):
        want = wanted_for(p['vbios'], model)
        rel = images.get(model)
        if rel is None:
            errors.append('images has no image for the model %s (VBIOS %s wanted, GPUs %s run %s); images lists %s'
                          % (model, want, ', '.join(str(g['index']) for g in todo if g['model'] == model),
                             ', '.join(sorted(set(g['running'] for g in todo if g['model'] == model))),
                             ', '.join(sorted(images)) or 'no model'))
        elif not os.path.isfile(image_path(p, rel)):
            errors.append('images[%s]: the image %s is not a file on the node (bundle_dir %s)'
                          % (model, image_path(p, rel), p.get('bundle_dir')))
    return errors


def command_argv(p, values):
    """The update command with its placeholders filled from ``values``."""
    return [arg.format(**values) for arg in p['command']]


def make_runs(p, planned):
    """The update commands to run: ``[(argv, [gpus])]`` - one per GPU (scope gpu) or one per model (scope node)."""
    todo = [g for g in planned if g['action'] == 'update']
    runs = []
    if p['scope'] == 'gpu':
        for g in todo:
            values = dict(image=g['image'], version=g['wanted'], model=g['model'], pci=g['pci'] or '',
                          bus_id=g['bus_id'] or '', index=str(g['index']), uuid=g['uuid'] or '',
                          serial=g['serial'] or '')
            runs.append((command_argv(p, values), [g]))
        return runs
    for model in sorted(set(g['model'] for g in todo)):
        group = [g for g in todo if g['model'] == model]
        values = dict(image=group[0]['image'], version=group[0]['wanted'], model=model,
                      pcis=','.join(g['pci'] or '' for g in group), count=str(len(group)))
        runs.append((command_argv(p, values), group))
    return runs


def expected_after(entry):
    if entry['action'] == 'update':
        return {'running': entry['running'], 'staged': entry['wanted']}
    return dict(entry['before'])


# ---------------------------------------------------------------- act
def _record_text(record):
    return json.dumps({'format': STATE_FORMAT, 'gpus': record}, indent=2, sort_keys=True) + '\n'


def apply_runs(p, runs, planned, record, boot_id, exe, write):
    """Run every update command, record each success, read the VBIOS back. Returns the tool's pending messages.
    A failure is a Failure naming the GPU(s), the command and its output, with the GPUs updated before it."""
    updated, said = [], {}

    def failure(msg):
        return Failure('%s; updated before this failure: %s' % (msg, ', '.join(updated) or 'none'), changed=bool(updated),
                       gpus=planned, updated=list(updated), reboot_required=bool(updated),
                       reboot_reason=reboot_text(planned, said) if updated else '')

    pending_re = re.compile(p['pending_pattern']) if p.get('pending_pattern') else None
    for entry in planned:  # until its command ran, a GPU's state after is its state before
        entry['after'] = dict(entry['before'])
    for argv, group in runs:
        label = ', '.join('GPU %s %s (%s, VBIOS %s -> %s)' % (g['index'], g['pci'], g['model'], g['running'], g['wanted'])
                          for g in group)
        res = _runner.run(argv, timeout=p['timeout'])
        why = _runner.failure(res, p['timeout'])
        if why:
            raise failure('VBIOS update failed on %s: %s %s; output: %s' % (label, res['cmd'], why, output_of(res)))
        text = '\n'.join(s for s in (res['stdout'], res['stderr']) if s)
        match = pending_re.search(text) if pending_re else None
        for g in group:
            record[record_key(g)] = {'version': g['wanted'], 'boot_id': boot_id, 'pci': g['pci'], 'model': g['model'],
                                     'before': g['running'], 'pending': bool(match), 'image': g['image'],
                                     'time': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}
            updated.append('GPU %s %s' % (g['index'], g['pci']))
            g['after'] = {'running': g['running'], 'staged': g['wanted']}
            if match:  # the whole line the tool said it on
                start = text.rfind('\n', 0, match.start()) + 1
                end = text.find('\n', match.end())
                said[g['index']] = text[start:end if end >= 0 else len(text)].strip()
        why = write(p['state_path'], _record_text(record))
        if why:
            raise failure('VBIOS updated on %s, but the record state_path %s could not be written: %s'
                          % (label, p['state_path'], why))
    try:
        back = dict((g['index'], g) for g in read_gpus(exe))
    except (ToolError, nvidia_smi.NvidiaSmiParseError) as exc:
        raise failure('VBIOS updated, but reading it back failed: %s' % exc)
    for entry in planned:
        if entry['action'] != 'update':
            continue
        now = back.get(entry['index'])
        running = now['running'] if now else None
        if same_version(running, entry['wanted']):
            entry['after'] = {'running': running, 'staged': entry['wanted'] if entry['index'] in said else None}
        elif same_version(running, entry['running']):
            entry['after'] = {'running': running, 'staged': entry['wanted']}
        else:
            entry['after'] = {'running': running, 'staged': None}
            raise failure('VBIOS update of GPU %s %s ended without an error, but nvidia-smi shows %s - neither the '
                          'VBIOS before (%s) nor the wanted %s'
                          % (entry['index'], entry['pci'], running, entry['running'], entry['wanted']))
    return said


def reboot_text(planned, said=None, check_mode=False):
    """Why a reboot is required: the GPUs whose VBIOS waits for a reset or needs a power cycle. In check mode the GPUs
    only planned for an update are said as such (nothing was updated; their ``after`` is the expected state)."""
    said = said or {}
    parts, would = [], []
    for g in planned:
        after = g.get('after') or g['before']
        if g['action'] == 'pending-power-cycle':
            parts.append('GPU %s %s (%s): runs %s, %s was installed in an earlier boot and a reboot did not load it - '
                         'power-cycle the node (or the update did not take)' % (g['index'], g['pci'], g['model'],
                                                                                g['running'], g['wanted']))
        elif after.get('staged'):
            (would if check_mode and g['action'] == 'update' else parts).append(
                'GPU %s %s (%s): runs %s, %s waits for a reset%s'
                % (g['index'], g['pci'], g['model'], after['running'], after['staged'],
                   (' (the tool said: %s)' % said[g['index']]) if g['index'] in said else ''))
    out = []
    if parts:
        out.append('VBIOS updated, pending until a GPU reset, reboot or power cycle: %s' % '; '.join(parts))
    if would:
        out.append('check mode: VBIOS would be updated, then wait for a GPU reset, reboot or power cycle: %s'
                   % '; '.join(would))
    return '; '.join(out)


# ---------------------------------------------------------------- the module
def run(p, check_mode, diff, find, write):
    """The whole module on its params ``p``: the result for exit_json, or Failure. Every refusal comes before the
    first update; nothing runs but nvidia-smi in check mode or with ``query_only``."""
    errors = input_problems(p)
    if errors:
        raise Failure('; '.join(errors), changed=False, gpus=[])
    empty = dict(changed=False, gpus=[], reboot_required=False, reboot_reason='', commands=[])
    exe = find(p['nvidia_smi_path'])
    if exe is None:
        return dict(empty, skipped_reason='%s: %s not found' % (NO_GPU, p['nvidia_smi_path']))
    try:
        gpus = read_gpus(exe)
    except nvidia_smi.NvidiaSmiNoDevices:
        return dict(empty, skipped_reason='%s: nvidia-smi found no devices (No devices were found)' % NO_GPU)
    except (ToolError, nvidia_smi.NvidiaSmiParseError) as exc:
        raise Failure('reading the VBIOS: %s; nothing was changed' % exc, changed=False, gpus=[])
    if not gpus:
        return dict(empty, skipped_reason='%s: nvidia-smi lists no GPU' % NO_GPU)
    record, problem = read_record(p['state_path'])
    boot_id = read_boot_id(p['boot_id_path'])
    planned, errors = plan_gpus(p, gpus, record, boot_id)
    if problem and any(g['running'] is not None and g['wanted'] is not None
                       and not same_version(g['running'], g['wanted']) for g in planned):
        errors.append(problem)  # only a GPU that does not run the wanted VBIOS needs the record
    for entry in planned:
        if entry['action'] == 'update' and (p.get('images') or {}).get(entry['model']) is not None:
            entry['image'] = image_path(p, p['images'][entry['model']])
    errors += update_errors(p, planned)
    if not p['query_only']:
        if any(g['action'] == 'update' for g in planned) and not boot_id:
            errors.append('boot_id_path %s cannot be read: without the boot id a VBIOS waiting for a reset could not '
                          'be told from one a reboot did not load' % p['boot_id_path'])
    for entry in planned:
        entry['after'] = expected_after(entry)
    if errors and not p['query_only']:
        raise Failure('VBIOS: %s; nothing was updated' % '; '.join(errors), changed=False, gpus=planned)
    runs = make_runs(p, planned) if not p['query_only'] and p.get('command') else []
    result = dict(empty, gpus=planned, commands=[_runner.cmdline(argv) for argv, dummy in runs])
    if p['query_only']:
        result['problems'] = errors
        result['reboot_required'] = any(g['action'].startswith('pending') for g in planned)
        result['reboot_reason'] = reboot_text(planned)
        return result
    changed = bool(runs)
    before = dict((g['pci'] or str(g['index']), g['before']) for g in planned)
    said = {}
    if changed and not check_mode:
        said = apply_runs(p, runs, planned, record, boot_id, exe, write)
    reason = reboot_text(planned, said, check_mode)
    result.update(changed=changed, reboot_required=bool(reason), reboot_reason=reason)
    if changed or diff:
        result['diff'] = dict(before=before, after=dict((g['pci'] or str(g['index']), g['after']) for g in planned))
    return result
