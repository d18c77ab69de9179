# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine of gpufleet.cluster.hca_firmware: check the input, find the cards (sysfs, one PCI function per
adapter, virtual functions skipped), query each card's flash (``<tool> -d BDF q``, parsed by ``mlx_fw``), plan
every card against the wanted version - nothing, a reset, or a burn of the bundle image whose own query shows the
card's PSID and the wanted version - refuse before the first burn when any card cannot be done, then burn
(``<tool> -d BDF -i IMAGE -y b``), query again, and reset with mlxfwreset or report that a reboot is required.

``run(params, check_mode, diff, find)`` returns the module result or raises ``Failure`` (``_runner.Failure``: the
message; ``result`` holds ``changed``, ``cards`` and, after a failed burn, ``burned``). ``find(name)`` is the
executable lookup (``_runner.find``), the only tie to Ansible. Commands run through ``_runner`` as argv lists.

The flash query prints ``FW Version`` (what is burned, the next boot's firmware) and, only while a burned image
waits for a reset, ``FW Version(Running)``. A card is done when both are the wanted version; a card whose flash is
the wanted version but still runs another one is "pending reset": nothing is burned again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils._runner import Failure
from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac
from ansible_collections.gpufleet.cluster.plugins.module_utils.mlx_fw import has_flash, parse_flint_query
from ansible_collections.gpufleet.cluster.plugins.module_utils.sysfs_ib import collect

__all__ = ['Failure', 'run', 'input_problems', 'find_cards', 'plan_card', 'version_key']

VERSION_RE = re.compile(r'^\d+\.\d+\.\d+$')
VERSION_ALLOWED = 'a firmware version MAJOR.MINOR.SUBMINOR such as 28.42.1000'
# MT_0000000228, SM_2001000001034, HP_1380110017, DEL0000000010, IBM1080110023: at most 16 characters.
PSID_RE = re.compile(r'^(?=.*[0-9])[A-Z][A-Z0-9_]{2,15}$')
PSID_ALLOWED = 'a PSID (board id) such as MT_0000000838: 3 to 16 upper-case letters, digits or "_", starting with a letter'
PCI_RE = re.compile(r'^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')
PCI_ALLOWED = 'a PCI address such as 0000:3b:00.0 (or 3b:00.0)'
# The reset tool that comes with each flash tool: mstflint's package has mstfwreset, NVIDIA MFT has mlxfwreset
# (the same command line: -d DEVICE -y reset).
RESET_TOOLS = {'mstflint': 'mstfwreset', 'flint': 'mlxfwreset'}
INSTALL_HINT = {'mstflint': 'install the mstflint package (Debian, Ubuntu, EL; it brings mstfwreset too)',
                'flint': 'install NVIDIA MFT (flint, mlxfwreset), or use tool: mstflint'}
QUERY_TIMEOUT = 120
NO_HCA = 'no Mellanox/NVIDIA HCA'
OUTPUT_LINES = 12


class ToolError(Exception):
    """A command that failed; the message holds the command line, why, and the end of its output."""

    def __init__(self, res, why):
        self.res = res
        Exception.__init__(self, '%s %s' % (res['cmd'], why))

    def output(self):
        text = '\n'.join(s for s in (self.res['stdout'], self.res['stderr']) if s and s.strip())
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        return ' | '.join(lines[-OUTPUT_LINES:]) or 'no output'


# ---------------------------------------------------------------- input (nothing runs)
def _show(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def version_key(text):
    """'28.42.1000' -> (28, 42, 1000); None when it is not MAJOR.MINOR.SUBMINOR."""
    if not isinstance(text, str) or not VERSION_RE.match(text):
        return None
    return tuple(int(x) for x in text.split('.'))


def _version_problem(name, value):
    if isinstance(value, str) and VERSION_RE.match(value):
        return []
    return ['%s must be %s, got %s' % (name, VERSION_ALLOWED, _show(value))]


def _psid_problem(name, key):
    if isinstance(key, str) and PSID_RE.match(key):
        return []
    return ['%s has the key %s, which is not %s' % (name, _show(key), PSID_ALLOWED)]


def image_path(p, rel):
    """An image of ``images``: relative to ``bundle_dir`` unless absolute."""
    return rel if os.path.isabs(rel) else os.path.join(p['bundle_dir'], rel)


def input_problems(p):
    """Messages naming the option for every bad input (empty when all is fine); nothing runs."""
    errors = ac.nul_errors(p)
    if errors:
        return errors
    version, versions = p.get('version'), p.get('versions')
    if version is not None and versions is not None:
        errors.append('version and versions are mutually exclusive: give version (one version for every card) or '
                      'versions (a dict PSID -> version)')
    elif version is None and versions is None:
        errors.append('one of version or versions is required: version (one version for every card) or versions '
                      '(a dict PSID -> version)')
    if version is not None:
        errors += _version_problem('version', version)
    if versions is not None:
        if not isinstance(versions, dict) or not versions:
            errors.append('versions must be a non-empty dict PSID -> version (e.g. {MT_0000000838: 28.42.1000}), '
                          'got %s' % _show(versions))
        else:
            for key in sorted(versions, key=str):
                errors += _psid_problem('versions', key)
                errors += _version_problem('versions.%s' % key, versions[key])
    bundle = p.get('bundle_dir')
    if not bundle:
        errors.append('bundle_dir must be the directory holding the firmware images, got %s'
                      % _show(bundle))
    elif not os.path.isdir(bundle):
        errors.append('bundle_dir must be an existing directory holding the firmware images; %s %s'
                      % (bundle, 'does not exist' if not os.path.lexists(bundle) else 'is not a directory'))
    images = p.get('images')
    if images is not None:
        if not isinstance(images, dict):
            errors.append('images must be a dict PSID -> image file (relative to bundle_dir or absolute), got %s'
                          % _show(images))
        else:
            for key in sorted(images, key=str):
                errors += _psid_problem('images', key)
                rel = images[key]
                if not isinstance(rel, str) or not rel:
                    errors.append('images.%s must be an image file name or path, got %s'
                                  % (key, _show(rel)))
                elif bundle and not os.path.isfile(image_path(p, rel)):
                    errors.append('images.%s: %s is not a regular file; images maps a PSID to an image file in '
                                  'bundle_dir (or an absolute path)' % (key, image_path(p, rel)))
    for i, dev in enumerate(p.get('devices') or []):
        if not isinstance(dev, str) or not PCI_RE.match(dev):
            errors.append('devices[%d] must be %s, got %s' % (i, PCI_ALLOWED, _show(dev)))
    errors += ac.root_dir_errors('sysfs_root', p.get('sysfs_root'))
    errors += ac.executable_errors('tool_path', p.get('tool_path'))
    errors += ac.executable_errors('mlxfwreset_path', p.get('mlxfwreset_path'))
    errors += ac.timeout_range(p.get('timeout'))
    return errors


# ---------------------------------------------------------------- the cards
def _norm_pci(pci):
    pci = pci.lower()
    return pci if len(pci.split(':')) == 3 else '0000:' + pci


def find_cards(sysfs_root, devices=None):
    """The cards to manage: ``[{pci, devices, guid}]``. Without ``devices``, every Mellanox/NVIDIA RDMA device
    (name or driver mlx*) in ``<sysfs_root>/sys/class/infiniband`` with a PCI function, one per adapter (by
    sys_image_guid, the lowest PCI function), virtual functions skipped - ``mlx_fw.has_flash``, the rule fw_facts
    queries by too. With
    ``devices`` (PCI addresses), those, one per adapter where sysfs knows the adapter."""
    ib = collect(sysfs_root)
    by_pci = {}
    for name in sorted(ib):
        dev = ib[name]
        if dev.get('pci_address'):
            by_pci.setdefault(_norm_pci(dev['pci_address']), []).append((name, dev))
    if devices:
        wanted = [(pci, by_pci.get(_norm_pci(pci), [])) for pci in devices]
    else:
        wanted = [(pci, entries) for pci, entries in sorted(by_pci.items())
                  if any(has_flash(n, d) for n, d in entries)]
    cards, seen = [], {}
    for pci, entries in wanted:
        guid = next((d.get('sys_image_guid') for n, d in entries if d.get('sys_image_guid')), None)
        key = guid or _norm_pci(pci)
        names = [n for n, d in entries]
        if key in seen:
            seen[key]['devices'] = sorted(set(seen[key]['devices'] + names))
            continue
        seen[key] = {'pci': pci, 'devices': names, 'guid': guid}
        cards.append(seen[key])
    return cards


# ---------------------------------------------------------------- the tools
def tool_run(argv, timeout):
    res = _runner.run(argv, timeout=timeout)
    why = _runner.failure(res, timeout)
    if why:
        raise ToolError(res, why)
    return res['stdout']


def query_card(exe, pci):
    """``{flash, running, psid}`` of one card (running = flash when no image waits for a reset); raises ToolError."""
    facts = parse_flint_query(tool_run([exe, '-d', pci, 'q'], QUERY_TIMEOUT))
    flash = facts.get('fw_version')
    return {'flash': flash, 'running': facts.get('fw_version_running') or flash, 'psid': facts.get('psid')}


def read_bundle(exe, bundle_dir):
    """Every regular file of ``bundle_dir`` (not hidden, not in subdirectories) queried with ``exe -i FILE q``:
    ``(images, others)`` - images ``[{file, psid, version}]`` (sorted by file name), others ``[file: why]`` (files
    the tool does not read as a firmware image)."""
    images, others = [], []
    for name in sorted(os.listdir(bundle_dir)):
        path = os.path.join(bundle_dir, name)
        if name.startswith('.') or not os.path.isfile(path):
            continue
        try:
            facts = parse_flint_query(tool_run([exe, '-i', path, 'q'], QUERY_TIMEOUT))
        except ToolError as exc:
            others.append('%s: %s' % (name, _runner.last_line(exc.res)))
            continue
        if facts.get('psid') and facts.get('fw_version'):
            images.append({'file': path, 'psid': facts['psid'], 'version': facts['fw_version']})
        else:
            others.append('%s: its query shows no PSID or FW Version' % name)
    return images, others


def _holds(images):
    if not images:
        return 'no firmware image'
    return ', '.join('%s (%s %s)' % (os.path.basename(i['file']), i['psid'], i['version']) for i in images)


# ---------------------------------------------------------------- plan
def wanted_version(p, psid):
    if p.get('version') is not None:
        return p['version']
    return (p.get('versions') or {}).get(psid)


def plan_card(p, card, state, bundle):
    """(action, image, errors) of one card: ``none``, ``pending-reset`` / ``reset`` (flash is the wanted version,
    the running firmware is not) or ``burn`` with the image chosen; ``bundle()`` gives ``(images, others, mapped)``
    (read once, on first use)."""
    pci, psid, flash, running = card['pci'], state['psid'], state['flash'], state['running']
    label = '%s (PSID %s)' % (pci, psid)
    if not psid or not flash:
        return None, None, ['%s: the flash query shows no %s; cannot plan this card'
                            % (pci, 'PSID' if not psid else 'FW Version')]
    want = wanted_version(p, psid)
    if want is None:
        return None, None, ['versions has no entry for PSID %s of card %s (versions lists %s); add one, or leave the '
                            'card out with devices' % (psid, pci, ', '.join(sorted(p['versions'])))]
    if flash == want:
        if running == want:
            return 'none', None, []
        return ('reset' if p['reset'] == 'mlxfwreset' else 'pending-reset'), None, []
    errors = []
    if not p['allow_downgrade'] and version_key(flash) and version_key(want) < version_key(flash):
        errors.append('%s: %s is a downgrade from the flash version %s; refused unless allow_downgrade: true'
                      % (label, want, flash))
    images, others, mapped = bundle()
    if psid in mapped:
        image = mapped[psid]
        if image.get('error'):
            errors.append('images.%s: %s' % (psid, image['error']))
        elif image['psid'] != psid:
            errors.append('images.%s: %s is an image for PSID %s (version %s), not for card %s; refused (a burn would '
                          'change the card\'s PSID)' % (psid, image['file'], image['psid'], image['version'], label))
        elif image['version'] != want:
            errors.append('images.%s: %s holds version %s, not the wanted %s for card %s'
                          % (psid, image['file'], image['version'], want, label))
        return 'burn', image['file'], errors
    fits = [i for i in images if i['psid'] == psid and i['version'] == want]
    if not fits:
        errors.append('no image for PSID %s version %s (card %s, flash %s) in bundle_dir %s; the bundle holds %s%s'
                      % (psid, want, pci, flash, p['bundle_dir'], _holds(images),
                         ('; not images: %s' % '; '.join(others)) if others else ''))
        return 'burn', None, errors
    return 'burn', fits[0]['file'], errors


def make_plan(exe, p, cards):
    """Query every card, plan each; refuse (Failure, nothing changed) when any card cannot be done."""
    cache = {}

    def bundle():
        if 'images' not in cache:
            cache['images'], cache['others'] = read_bundle(exe, p['bundle_dir'])
            mapped = {}
            for psid, rel in sorted((p.get('images') or {}).items()):
                path = image_path(p, rel)
                try:
                    facts = parse_flint_query(tool_run([exe, '-i', path, 'q'], QUERY_TIMEOUT))
                    mapped[psid] = {'file': path, 'psid': facts.get('psid'), 'version': facts.get('fw_version')}
                except ToolError as exc:
                    mapped[psid] = {'file': path, 'error': '%s is not an image the tool reads: %s'
                                                           % (path, _runner.last_line(exc.res))}
            cache['mapped'] = mapped
        return cache['images'], cache['others'], cache['mapped']

    planned, errors = [], []
    for card in cards:
        try:
            state = query_card(exe, card['pci'])
        except ToolError as exc:
            raise Failure('querying the HCA firmware: %s (%s); nothing was changed' % (exc, exc.output()), changed=False,
                          cards=planned)
        action, image, why = plan_card(p, card, state, bundle)
        errors += why
        entry = {'pci': card['pci'], 'devices': card['devices'], 'psid': state['psid'],
                 'wanted': wanted_version(p, state['psid']) if state['psid'] else None,
                 'before': {'flash': state['flash'], 'running': state['running']},
                 'action': action, 'image': image}
        entry['after'] = expected_after(p, entry)
        planned.append(entry)
    if errors:
        raise Failure('HCA firmware: %s; nothing was burned' % '; '.join(errors), changed=False, cards=planned)
    return planned, cache.get('images')


def expected_after(p, card):
    before, want = card['before'], card['wanted']
    if card['action'] == 'burn':
        return {'flash': want, 'running': want if p['reset'] == 'mlxfwreset' else before['running']}
    if card['action'] == 'reset':
        return {'flash': before['flash'], 'running': want}
    return dict(before)


# ---------------------------------------------------------------- act
def apply_plan(exe, reset_exe, p, planned):
    """Burn, check each burn by a new query, then reset (mlxfwreset). A failure is a Failure naming the card, the
    command and its output, with the cards burned before it."""
    done = {'burned': [], 'reset': []}
    for card in planned:  # until a card is done, its state after is its state before
        card['after'] = dict(card['before'])

    def failure(msg):
        did = done['burned'] + ['%s (reset)' % c for c in done['reset']]
        reasons = reboot_reasons(planned)
        return Failure('%s; burned before this failure: %s' % (msg, ', '.join(done['burned']) or 'none'),
                       changed=bool(did), cards=planned, burned=list(done['burned']), reboot_required=any(reasons),
                       reboot_reason=reboot_text(reasons))

    for card in planned:
        if card['action'] != 'burn':
            continue
        label = '%s (PSID %s, flash %s -> %s)' % (card['pci'], card['psid'], card['before']['flash'], card['wanted'])
        try:
            tool_run([exe, '-d', card['pci'], '-i', card['image'], '-y', 'b'], p['timeout'])
        except ToolError as exc:
            card['after'] = _state_or_none(exe, card['pci'])
            raise failure('HCA firmware burn failed on %s: %s; output: %s' % (label, exc, exc.output()))
        try:
            state = query_card(exe, card['pci'])
        except ToolError as exc:
            raise failure('HCA firmware burned on %s, but the query after it failed: %s (%s)' % (label, exc, exc.output()))
        done['burned'].append(card['pci'])
        card['after'] = {'flash': state['flash'], 'running': state['running']}
        if state['flash'] != card['wanted']:
            raise failure('HCA firmware burn on %s ended without an error, but the flash shows %s, not %s'
                          % (label, state['flash'], card['wanted']))
    if p['reset'] != 'mlxfwreset':
        return done
    for card in planned:
        if card['action'] not in ('burn', 'reset') or card['after']['running'] == card['wanted']:
            continue
        after = card['after']
        label = '%s (PSID %s, running %s, flash %s)' % (card['pci'], card['psid'], after['running'], after['flash'])
        try:
            tool_run([reset_exe, '-d', card['pci'], '-y', 'reset'], p['timeout'])
            state = query_card(exe, card['pci'])
        except ToolError as exc:
            raise failure('HCA firmware reset failed on %s: %s; output: %s' % (label, exc, exc.output()))
        done['reset'].append(card['pci'])
        card['after'] = {'flash': state['flash'], 'running': state['running']}
        if state['running'] != card['wanted']:
            raise failure('HCA firmware reset of %s ended without an error, but the card runs %s, not %s'
                          % (label, state['running'], card['wanted']))
    return done


def _state_or_none(exe, pci):
    """The flash and running versions of a card after a failed burn, or None when it cannot be queried."""
    try:
        state = query_card(exe, pci)
    except ToolError:
        return None
    return {'flash': state['flash'], 'running': state['running']}


def reboot_reasons(planned, check_mode=False):
    """The cards whose flash holds firmware they do not run yet: ``(burned, would)`` lists of card texts - ``would``
    the cards a check-mode run would burn (nothing is burned then; their ``after`` is the expected state)."""
    burned, would = [], []
    for c in planned:
        if c['after'] and c['after']['flash'] and c['after']['running'] != c['after']['flash']:
            (would if check_mode and c['action'] == 'burn' else burned).append(
                '%s (PSID %s): flash %s, running %s' % (c['pci'], c['psid'], c['after']['flash'], c['after']['running']))
    return burned, would


def reboot_text(reasons):
    burned, would = reasons
    parts = []
    if burned:
        parts.append('HCA firmware burned, waiting for a reset or reboot: %s' % '; '.join(burned))
    if would:
        parts.append('check mode: HCA firmware would be burned, then wait for a reset or reboot: %s' % '; '.join(would))
    return '; '.join(parts)


def _find_tool(p, find, option, name):
    exe = find(p.get(option) or name)
    if exe is None:
        raise Failure('%s: %s not found (%s); %s' % (option, p.get(option) or name,
                                                     'not an executable file' if os.sep in (p.get(option) or name)
                                                     else 'not on PATH', INSTALL_HINT[p['tool']]), changed=False,
                      cards=[])
    return exe


def run(p, check_mode, diff, find):
    """The whole module on its params ``p``: the result for exit_json, or Failure. Every refusal comes before the
    first burn; nothing is burned or reset in check mode."""
    errors = input_problems(p)
    if errors:
        raise Failure('; '.join(errors), changed=False, cards=[])
    empty = dict(changed=False, cards=[], reboot_required=False, reboot_reason='')
    cards = find_cards(p['sysfs_root'], p.get('devices'))
    if not cards:
        return dict(empty, skipped_reason='%s: no RDMA device of a Mellanox/NVIDIA card with a PCI function in %s'
                    % (NO_HCA, os.path.join(p['sysfs_root'], 'sys', 'class', 'infiniband')))
    exe = _find_tool(p, find, 'tool_path', p['tool'])
    reset_exe = None
    if p['reset'] == 'mlxfwreset':
        reset_exe = _find_tool(p, find, 'mlxfwreset_path', RESET_TOOLS[p['tool']])
    planned, images = make_plan(exe, p, cards)
    changed = any(c['action'] in ('burn', 'reset') for c in planned)
    before = dict((c['pci'], c['before']) for c in planned)
    if changed and not check_mode:
        apply_plan(exe, reset_exe, p, planned)
    reasons = reboot_reasons(planned, check_mode)
    result = dict(changed=changed, cards=planned, reboot_required=any(reasons), reboot_reason=reboot_text(reasons))
    if images is not None:
        result['bundle'] = images
    if changed or diff:
        result['diff'] = dict(before=before, after=dict((c['pci'], c['after']) for c in planned))
    return result
