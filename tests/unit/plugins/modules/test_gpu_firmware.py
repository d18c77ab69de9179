# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_firmware: the read-back on REAL recorded ``nvidia-smi -q -x`` outputs of the corpus (every XML of
nvidia_smi/, skipped when the corpus is absent), and the module end to end (main() -> engine -> the one runner ->
the stateful HANDMADE stand-in of tests/fixtures/hand_made/gpu_firmware, which prints a real recording with only the
VBIOS replaced by its state): query -> update -> pending -> "reboot" -> running, refusals before anything runs,
check mode, scope node, a planted failure, the GPU-less skip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner
from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_firmware_engine as engine
from ansible_collections.gpufleet.cluster.plugins.module_utils import nvidia_smi
from ansible_collections.gpufleet.cluster.plugins.modules import gpu_firmware

UNIT = Path(__file__).resolve().parents[2]
REPO = UNIT.parents[1]
STANDIN = REPO / 'tests' / 'fixtures' / 'hand_made' / 'gpu_firmware' / 'vbios_standin_HANDMADE.py'
BUNDLED = UNIT / 'fixtures' / 'corpus' / 'nvidia_smi'
# Recorded (MIT, influxdata/telegraf; tests/unit/fixtures/corpus/SOURCES.tsv): 2x RTX A5000 at 94.02.6D.00.0D,
# 1x A10G at 94.02.75.00.01.
A5000 = BUNDLED / 'xml-telegraf-2xA5000-590-v13.xml'
A10G = BUNDLED / 'xml-telegraf-A10G-515.xml'
A5000_MODEL, A5000_OLD, NEW = 'NVIDIA RTX A5000', '94.02.6D.00.0D', '94.02.6D.00.1A'


def test_read_back_on_every_recorded_xml(nvsmi_xml_file, tmp_path):
    """The read-back is the module's own read of a REAL recording: every GPU with its model, PCI address and the
    VBIOS the recording shows (an XML without GPUs or a VBIOS field gives what the recording has, never a guess)."""
    text = nvsmi_xml_file.read_text(errors='replace')
    exe = tmp_path / 'nvidia-smi'
    exe.write_text('#!/bin/sh\ncat %s\n' % nvsmi_xml_file)
    exe.chmod(0o755)
    try:
        want = nvidia_smi.parse_query_xml(text)['gpus']
    except nvidia_smi.NvidiaSmiParseError:
        with pytest.raises(nvidia_smi.NvidiaSmiParseError):
            engine.read_gpus(str(exe))
        return
    got = engine.read_gpus(str(exe))
    assert [g['running'] for g in got] == [g['vbios_version'] for g in want]
    assert [g['model'] for g in got] == [g['name'] for g in want]
    for g in got:
        if g['bus_id']:
            assert g['pci'] == g['pci'].lower() and len(g['pci'].split(':')[0]) == 4, g


def test_recorded_values(corpus_file):
    """Values read from the recordings by hand: what the plan compares with the lock."""
    exe = corpus_file('nvidia_smi/xml-telegraf-2xA5000-590-v13.xml')
    gpus = engine.read_gpus(_cat(exe))
    assert [(g['index'], g['pci'], g['model'], g['running']) for g in gpus] == [
        (0, '0000:81:00.0', A5000_MODEL, A5000_OLD), (1, '0000:c1:00.0', A5000_MODEL, A5000_OLD)]


_CATS = {}


def _cat(path):
    import tempfile
    if path not in _CATS:
        d = tempfile.mkdtemp(prefix='gpufw-cat.')
        exe = Path(d) / 'nvidia-smi'
        exe.write_text('#!/bin/sh\ncat %s\n' % path)
        exe.chmod(0o755)
        _CATS[path] = str(exe)
    return _CATS[path]


class Lab(object):
    """A host with GPUs: the stand-in behind wrappers named nvidia-smi and gpu-flash, a bundle, a boot id file."""

    def __init__(self, tmp_path, base=A5000):
        self.tmp = tmp_path
        (tmp_path / 'standin').mkdir()
        self.state = tmp_path / 'standin' / 'state.json'
        self.boot = tmp_path / 'boot_id'
        self.boot.write_text('boot-1\n')
        self.bundle = tmp_path / 'bundle'
        self.bundle.mkdir()
        bindir = tmp_path / 'bin'
        bindir.mkdir()
        common = '%s %s --state %s --base %s --boot-id-file %s' % (sys.executable, STANDIN, self.state, base, self.boot)
        self.smi = self._wrapper(bindir / 'nvidia-smi', common + ' smi')
        self.flash = self._wrapper(bindir / 'gpu-flash', common + ' flash')
        self.common = common

    @staticmethod
    def _wrapper(path, cmd):
        path.write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real tool\nexec %s "$@"\n' % cmd)
        path.chmod(0o755)
        return str(path)

    def image(self, name, model, version, planted=False):
        subprocess.run(self.common.split() + ['--standin-make-image', str(self.bundle / name), model, version]
                       + (['planted_failure'] if planted else []), check=True)
        return name

    def reboot(self, n=2):
        self.boot.write_text('boot-%d\n' % n)

    def params(self, **kw):
        base = dict(vbios={A5000_MODEL: NEW}, images={A5000_MODEL: 'a5000.img'}, bundle_dir=str(self.bundle),
                    command=[self.flash, '--bus', '{pci}', '--image', '{image}'], nvidia_smi_path=self.smi,
                    state_path=str(self.tmp / 'var' / 'gpu-firmware-state.json'), boot_id_path=str(self.boot))
        base.update(kw)
        return base

    def calls(self):
        log = self.tmp / 'standin' / 'calls.log'
        return [c for c in log.read_text().splitlines() if c.startswith('flash')] if log.exists() else []


def _run(run_module, params, check=False, diff=True):
    args = dict(params, _ansible_check_mode=check, _ansible_diff=diff)
    return run_module(gpu_firmware.main, args)


def test_update_pending_reboot_running(tmp_path, run_module):
    lab = Lab(tmp_path)
    lab.image('a5000.img', A5000_MODEL, NEW)
    # check mode: the plan and the commands, nothing run
    res = _run(run_module, lab.params(), check=True)
    assert res['changed'] and not res.get('failed'), res
    assert [g['action'] for g in res['gpus']] == ['update', 'update']
    assert res['commands'] == ['%s --bus 0000:81:00.0 --image %s/a5000.img' % (lab.flash, lab.bundle),
                               '%s --bus 0000:c1:00.0 --image %s/a5000.img' % (lab.flash, lab.bundle)]
    assert res['diff']['after']['0000:81:00.0'] == {'running': A5000_OLD, 'staged': NEW}
    assert lab.calls() == [] and not (tmp_path / 'var').exists()
    # a plan, not an update: check mode's reboot reason says what would happen (a rollout --check journals it)
    assert res['reboot_required'], res
    assert res['reboot_reason'].startswith('check mode: VBIOS would be updated, then wait for a GPU reset'), res
    assert 'VBIOS updated' not in res['reboot_reason'], res
    # the update: read back shows the old VBIOS (pending), the tool says a reboot is required
    res = _run(run_module, lab.params())
    assert res['changed'] and res['reboot_required'], res
    assert len(lab.calls()) == 2
    assert [g['after'] for g in res['gpus']] == [{'running': A5000_OLD, 'staged': NEW}] * 2
    assert 'GPU 0 0000:81:00.0 (NVIDIA RTX A5000): runs 94.02.6D.00.0D, 94.02.6D.00.1A waits for a reset' in res['reboot_reason']
    assert 'Reboot required to activate' in res['reboot_reason']
    record = json.loads((tmp_path / 'var' / 'gpu-firmware-state.json').read_text())
    assert record['format'] == engine.STATE_FORMAT and len(record['gpus']) == 2
    # again before the reboot: pending, not updated again
    res = _run(run_module, lab.params())
    assert not res['changed'] and res['reboot_required'], res
    assert [g['action'] for g in res['gpus']] == ['pending-reset'] * 2
    assert len(lab.calls()) == 2
    # "reboot": the new VBIOS runs; nothing to do, nothing required
    lab.reboot()
    res = _run(run_module, lab.params())
    assert not res['changed'] and not res['reboot_required'], res
    assert [g['running'] for g in res['gpus']] == [NEW, NEW]
    assert [g['action'] for g in res['gpus']] == ['none', 'none']
    assert len(lab.calls()) == 2


def test_reboot_that_did_not_load_it_is_a_power_cycle(tmp_path, run_module):
    lab = Lab(tmp_path)
    lab.image('a5000.img', A5000_MODEL, NEW)
    assert _run(run_module, lab.params())['changed']
    state = json.loads(lab.state.read_text())
    for gpu in state['gpus'].values():  # the GPUs lose what was staged (the image needs a cold power cycle)
        gpu['staged'] = gpu['staged_boot'] = None
    lab.state.write_text(json.dumps(state))
    lab.reboot()
    res = _run(run_module, lab.params())
    assert not res['changed'] and res['reboot_required'], res
    assert [g['action'] for g in res['gpus']] == ['pending-power-cycle'] * 2
    assert 'a reboot did not load it - power-cycle the node' in res['reboot_reason']
    assert len(lab.calls()) == 2


def test_scope_node_runs_once_per_model_and_activate_now(tmp_path, run_module):
    lab = Lab(tmp_path)
    lab.image('a5000.img', A5000_MODEL, NEW)
    flash_now = lab._wrapper(tmp_path / 'bin' / 'bmc-update', lab.common + ' --activate-now --no-pending-message flash')
    res = _run(run_module, lab.params(scope='node', command=[flash_now, '--pcis', '{pcis}', '--image', '{image}']))
    assert res['changed'] and not res['reboot_required'], res
    assert lab.calls() == ['flash --pcis 0000:81:00.0,0000:c1:00.0 --image %s/a5000.img' % lab.bundle]
    assert [g['after'] for g in res['gpus']] == [{'running': NEW, 'staged': None}] * 2
    assert not _run(run_module, lab.params(scope='node', command=[flash_now, '--pcis', '{pcis}', '--image', '{image}']))['changed']


@pytest.mark.parametrize('case, kw, needle', [
    ('no image for the model', dict(images={}), 'images has no image for the model NVIDIA RTX A5000'),
    ('image file missing', dict(images={A5000_MODEL: 'absent.img'}), 'absent.img is not a file on the node'),
    ('no command', dict(command=[]), 'command is empty, but 2 GPU(s) need the VBIOS 94.02.6D.00.1A'),
    ('model not in the lock', dict(vbios={'NVIDIA A10G': NEW}, images={}),
     'vbios has no version for the model(s) NVIDIA RTX A5000 of this node'),
])
def test_refused_before_anything_runs(tmp_path, run_module, case, kw, needle):
    lab = Lab(tmp_path)
    lab.image('a5000.img', A5000_MODEL, NEW)
    res = _run(run_module, lab.params(**kw))
    assert res.get('failed') and needle in res['msg'] and 'nothing was updated' in res['msg'], (case, res)
    assert lab.calls() == [] and not (tmp_path / 'var').exists()


def test_models_disagree_with_one_version(tmp_path, run_module):
    """One VBIOS for a node of two models (the recording of one A5000 node and a hand-made second model)."""
    xml = A5000.read_text()
    two = xml.replace('<product_name>NVIDIA RTX A5000</product_name>', '<product_name>NVIDIA RTX A6000</product_name>', 1)
    base = tmp_path / 'two-models-HANDMADE-EDIT.xml'
    base.write_text(two)
    lab = Lab(tmp_path, base=base)
    res = _run(run_module, lab.params(vbios=NEW, images={}))
    assert res.get('failed') and 'GPUs of 2 models (NVIDIA RTX A5000, NVIDIA RTX A6000)' in res['msg'], res
    assert lab.calls() == []


def test_planted_failure_names_the_gpu_and_the_command(tmp_path, run_module):
    lab = Lab(tmp_path)
    lab.image('a5000.img', A5000_MODEL, NEW, planted=True)
    res = _run(run_module, lab.params())
    assert res.get('failed'), res
    assert 'VBIOS update failed on GPU 0 0000:81:00.0 (NVIDIA RTX A5000, VBIOS 94.02.6D.00.0D -> 94.02.6D.00.1A)' in res['msg']
    assert 'PLANTED FAILURE' in res['msg'] and '--bus 0000:81:00.0' in res['msg']
    assert res['updated'] == [] and not res['changed'] and len(lab.calls()) == 1


def test_no_gpu_skipped(tmp_path, run_module):
    lab = Lab(tmp_path)
    res = _run(run_module, lab.params(nvidia_smi_path=str(tmp_path / 'bin' / 'absent')))
    assert not res['changed'] and res['skipped_reason'] == 'no GPU: %s not found' % (tmp_path / 'bin' / 'absent')
    nogpu = lab._wrapper(tmp_path / 'bin' / 'nvidia-smi-nogpu', lab.common + ' --no-gpu smi')
    res = _run(run_module, lab.params(nvidia_smi_path=nogpu))
    assert not res['changed'] and 'No devices were found' in res['skipped_reason'], res


def test_query_only_reads_and_never_refuses(tmp_path, run_module):
    lab = Lab(tmp_path)
    res = _run(run_module, lab.params(images={}, command=[], query_only=True))
    assert not res['changed'] and not res.get('failed'), res
    assert [g['running'] for g in res['gpus']] == [A5000_OLD, A5000_OLD]
    assert any('images has no image' in p for p in res['problems'])


def test_placeholders_checked():
    assert engine.placeholder_errors(['x', '{image}', '{pci}'], 'gpu') == []
    assert engine.placeholder_errors(['x', '{pcis}'], 'node') == []
    assert engine.placeholder_errors(['x', '{{literal}}'], 'gpu') == []
    for bad in (['x', '{pci}'], ['x', '{0}'], ['x', '{image.__class__}'], ['x', '{image!r}'], ['x', '{image'],
                ['x', '{image:>9}']):
        assert engine.placeholder_errors(bad, 'node'), bad


def test_version_lock_uses_the_engine_rule():
    from ansible_collections.gpufleet.cluster.plugins.plugin_utils import _version_lock
    assert _version_lock.LOCK_FORMATS['vbios'][0] == engine.VBIOS_RE
    assert _runner.cmdline(['a b']) == "'a b'"
