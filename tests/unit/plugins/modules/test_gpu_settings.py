# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_settings end to end (module main() -> engine -> the one runner -> a stateful nvidia-smi stand-in).

The stand-in (tests/fixtures/hand_made/gpu_settings/nvidia_smi_standin_HANDMADE.py, labelled HANDMADE) prints a
REAL recording - the MIT-licensed telegraf A10G ``-q -x`` (bundled corpus, source in SOURCES.tsv) - with the
managed fields changed by its state; the MIG cases use the HANDMADE H100 MIG XML (there is no recorded MIG XML)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_settings_engine as engine
from ansible_collections.gpufleet.cluster.plugins.modules import gpu_settings

UNIT = Path(__file__).resolve().parents[2]
REPO = UNIT.parents[1]
STANDIN = REPO / 'tests' / 'fixtures' / 'hand_made' / 'gpu_settings' / 'nvidia_smi_standin_HANDMADE.py'
A10G = UNIT / 'fixtures' / 'corpus' / 'nvidia_smi' / 'xml-telegraf-A10G-515.xml'
A5000 = UNIT / 'fixtures' / 'corpus' / 'nvidia_smi' / 'xml-telegraf-2xA5000-590-v13.xml'
H100_MIG = UNIT / 'fixtures' / 'hand_made' / 'nvidia-smi-q-x-h100-mig-HANDMADE.xml'

A10G_WANTED = {'model': 'NVIDIA A10G', 'persistence_mode': True, 'power_limit_w': 250,
               'application_clocks': {'memory_mhz': 6251, 'graphics_mhz': 1500}, 'ecc': 'disabled',
               'compute_mode': 'Exclusive_Process'}


class Smi(object):
    """A wrapper named nvidia-smi in front of the stand-in, its state directory and a few hooks."""

    def __init__(self, tmp_path, base):
        self.state = tmp_path / 'smi-state'
        self.path = tmp_path / 'bin' / 'nvidia-smi'
        self.path.parent.mkdir()
        self.path.write_text('#!/bin/sh\n# HANDMADE TEST STAND-IN, not the real nvidia-smi\nexec %s %s %s %s "$@"\n'
                             % (sys.executable, STANDIN, self.state, base))
        self.path.chmod(0o755)
        self.tmp = tmp_path

    def __call__(self, *args):
        return subprocess.run([str(self.path)] + list(args), capture_output=True, text=True, check=False)

    def calls(self):
        log = self.state / 'calls.log'
        return log.read_text().splitlines() if log.exists() else []

    def set_calls(self):
        return [c for c in self.calls() if c not in ('-q -x',) and '-lgi' not in c and not c.startswith('--standin')]

    def reboot(self, lock_record):
        self('--standin-reboot')
        Path(lock_record).unlink(missing_ok=True)  # /run is empty after a reboot


@pytest.fixture
def a10g(tmp_path):
    return Smi(tmp_path, A10G)


def args(smi, settings, **kw):
    out = dict(nvidia_smi_path=str(smi.path), settings=settings,
               persist_path=str(smi.tmp / 'etc' / 'gpu_settings.json'),
               lock_record_path=str(smi.tmp / 'run' / 'locks.json'))
    out.update(kw)
    return out


def test_converge_idempotent_and_reboot_required(a10g, run_module):
    # check mode with diff on a fresh host: changed, nothing run, nothing written
    res = run_module(gpu_settings.main, dict(args(a10g, [A10G_WANTED]), _ansible_check_mode=True, _ansible_diff=True))
    assert res['changed'] and not res.get('failed'), res
    assert a10g.set_calls() == []
    assert not (a10g.tmp / 'etc').exists()
    assert res['diff']['before']['gpu0'] == {'persistence_mode': False, 'power_limit_w': 300, 'ecc': 'enabled',
                                             'compute_mode': 'Default',
                                             'application_clocks': {'memory_mhz': 6251, 'graphics_mhz': 1710}}
    assert res['reboot_required'] and 'ECC disabled takes effect after a reboot' in res['reboot_reasons'][0]
    # apply
    res = run_module(gpu_settings.main, args(a10g, [A10G_WANTED]))
    assert res['changed'] and not res.get('failed'), res
    exe = str(a10g.path)
    assert res['commands'] == [[exe, '-i', '0', '-pm', '1'], [exe, '-i', '0', '-e', '0'], [exe, '-i', '0', '-c', '3'],
                               [exe, '-i', '0', '-pl', '250'], [exe, '-i', '0', '-ac', '6251,1500']]
    gpu = res['gpus'][0]
    assert gpu['persistence_mode'] is True and gpu['power_limit_w'] == 250 and gpu['compute_mode'] == 'Exclusive_Process'
    assert gpu['ecc'] == {'current': 'enabled', 'pending': 'disabled'}
    assert res['reboot_required'] is True
    assert res['reboot_reasons'] == ['GPU 0 (NVIDIA A10G): ECC disabled takes effect after a reboot (current: enabled)']
    doc = json.loads((a10g.tmp / 'etc' / 'gpu_settings.json').read_text())
    assert doc['format'] == 'gpufleet.gpu_settings/1'
    assert doc['gpus'][0]['uuid'] == 'GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94'
    assert doc['gpus'][0]['replay'] == [['-pm', '1'], ['-c', '3'], ['-pl', '250'], ['-ac', '6251,1500']]
    # second run: nothing to do, the reboot is still required
    before = len(a10g.set_calls())
    res = run_module(gpu_settings.main, args(a10g, [A10G_WANTED]))
    assert not res['changed'] and res['commands'] == [] and res['reboot_required'], res
    assert len(a10g.set_calls()) == before
    # reboot: the volatile settings are gone, ECC is now disabled; no reboot is required any more
    a10g.reboot(a10g.tmp / 'run' / 'locks.json')
    res = run_module(gpu_settings.main, dict(args(a10g, [A10G_WANTED]), _ansible_check_mode=True))
    assert res['changed'] and not res['reboot_required']
    assert [c[3] for c in res['commands']] == ['-pm', '-c', '-pl', '-ac']


def test_locked_clocks_are_recorded_and_forgotten_at_reboot(a10g, run_module):
    wanted = {'model': 'NVIDIA A10G', 'locked_clocks': {'min_mhz': 1200, 'max_mhz': 1500}}
    res = run_module(gpu_settings.main, args(a10g, [wanted]))
    assert res['changed'] and res['gpus'][0]['locked_clocks'] == {'min_mhz': 1200, 'max_mhz': 1500}, res
    assert json.loads((a10g.tmp / 'run' / 'locks.json').read_text())['gpus'] == {
        'GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94': {'min_mhz': 1200, 'max_mhz': 1500}}
    assert not run_module(gpu_settings.main, args(a10g, [wanted]))['changed']
    a10g.reboot(a10g.tmp / 'run' / 'locks.json')
    res = run_module(gpu_settings.main, args(a10g, [wanted]))
    assert res['changed'] and res['commands'][0][3:] == ['-lgc', '1200,1500']


@pytest.mark.parametrize('entry, words', [
    ({'power_limit_w': 700}, 'settings[0].power_limit_w: 700 W is outside what GPU 0 (NVIDIA A10G) allows: 100..300 W'),
    ({'application_clocks': {'memory_mhz': 6251, 'graphics_mhz': 1711}},
     'settings[0].application_clocks: memory 6251 MHz with graphics 1711 MHz is not a supported pair'),
    ({'locked_clocks': {'min_mhz': 100, 'max_mhz': 1500}}, 'settings[0].locked_clocks: 100..1500 MHz is outside'),
    ({'mig': {'enabled': True}}, 'settings[0].mig: GPU 0 (NVIDIA A10G) is not MIG-capable'),
])
def test_values_the_gpu_cannot_take_are_refused_before_any_change(a10g, run_module, entry, words):
    res = run_module(gpu_settings.main, args(a10g, [dict(entry, model='NVIDIA A10G', persistence_mode=True)]))
    assert res['failed'] and words in res['msg'] and res['changed'] is False, res
    assert a10g.set_calls() == []
    assert not (a10g.tmp / 'etc').exists()


def test_application_clocks_deprecated_on_new_driver(tmp_path, run_module):
    smi = Smi(tmp_path, A5000)
    res = run_module(gpu_settings.main, args(smi, [{'model': 'NVIDIA RTX A5000', 'power_limit_w': 200,
                                                    'application_clocks': {'memory_mhz': 8001, 'graphics_mhz': 2100}}]))
    assert res['failed'] and 'application clocks are not supported or deprecated' in res['msg']
    assert 'power_limit_w' not in res['msg']
    res = run_module(gpu_settings.main, args(smi, [{'model': 'NVIDIA RTX A5000', 'power_limit_w': 200}]))
    assert res['changed'] and [c[2] for c in res['commands']] == ['0', '1'], res  # both GPUs of the model
    assert [g['power_limit_w'] for g in res['gpus']] == [200, 200]


def test_other_models_are_left_alone(a10g, run_module):
    res = run_module(gpu_settings.main, args(a10g, [{'model': 'NVIDIA H100 80GB HBM3', 'power_limit_w': 600}],
                                             persist_path=None))
    assert not res['changed'] and res['commands'] == [] and res['unmatched_gpus'] == ['0: NVIDIA A10G'], res
    assert a10g.set_calls() == []


def test_mig_layout_difference_and_refusal_with_processes(tmp_path, run_module):
    smi = Smi(tmp_path, H100_MIG)
    wanted = {'model': 'NVIDIA H100 80GB HBM3', 'mig': {'enabled': True, 'instances': ['3g.40gb', '3g.40gb']}}
    res = run_module(gpu_settings.main, args(smi, [wanted]))
    exe = str(smi.path)
    assert res['changed'] and res['commands'] == [[exe, 'mig', '-i', '0', '-cgi', '3g.40gb,3g.40gb', '-C']], res
    assert res['gpus'][0]['mig']['instances'] == ['3g.40gb', '3g.40gb']
    # one 3g.40gb less, one 1g.10gb more: only the difference is destroyed / created
    wanted['mig']['instances'] = ['3g.40gb', '1g.10gb']
    res = run_module(gpu_settings.main, args(smi, [wanted]))
    assert res['commands'] == [[exe, 'mig', '-i', '0', '-dci', '-gi', '2'], [exe, 'mig', '-i', '0', '-dgi', '-gi', '2'],
                               [exe, 'mig', '-i', '0', '-cgi', '1g.10gb', '-C']], res
    assert not run_module(gpu_settings.main, args(smi, [wanted]))['changed']
    # MIG enabled without instances: the layout is not managed, nothing is destroyed
    res = run_module(gpu_settings.main, args(smi, [{'model': 'NVIDIA H100 80GB HBM3', 'mig': {'enabled': True}}]))
    assert not res['changed'] and res['gpus'][0]['mig']['instances'] == ['1g.10gb', '3g.40gb'], res
    # processes on the GPU: a MIG change is refused naming the PIDs, nothing runs
    smi('--standin-processes', '0', '4242,4343')
    wanted['mig']['instances'] = ['7g.80gb']
    calls = len(smi.set_calls())
    res = run_module(gpu_settings.main, args(smi, [wanted]))
    assert res['failed'] and 'PID 4242, 4343' in res['msg'] and 'settings[0].mig' in res['msg'], res
    assert len(smi.set_calls()) == calls
    # MIG mode off is pending until a reboot
    smi('--standin-processes', '0', 'none')
    res = run_module(gpu_settings.main, args(smi, [{'model': 'NVIDIA H100 80GB HBM3', 'mig': {'enabled': False}}]))
    assert res['changed'] and res['reboot_required'] and 'MIG mode disabled takes effect' in res['reboot_reasons'][0]


def test_no_gpu_skips(tmp_path, run_module):
    res = run_module(gpu_settings.main, dict(nvidia_smi_path=str(tmp_path / 'none' / 'nvidia-smi'),
                                             settings=[A10G_WANTED], persist_path=str(tmp_path / 'p.json')))
    assert res['changed'] is False and res['skipped_reason'].startswith('no GPU'), res
    assert not (tmp_path / 'p.json').exists()


def test_no_devices_skips(tmp_path, run_module):
    exe = tmp_path / 'nvidia-smi'
    exe.write_text('#!/bin/sh\necho "No devices were found"\nexit 6\n')
    exe.chmod(0o755)
    res = run_module(gpu_settings.main, dict(nvidia_smi_path=str(exe), settings=[A10G_WANTED]))
    assert res['changed'] is False and 'No devices were found' in res['skipped_reason'], res


def test_failure_midway_reports_applied(a10g, run_module, tmp_path):
    # the stand-in refuses -pl after -pm was applied: a driver that changed its range under us
    state = a10g('--standin-state')
    doc = json.loads(state.stdout)
    doc['gpus'][0]['power_max'] = 200.0  # the driver refuses 250 W although -q -x says 100..300
    (a10g.state / 'state.json').write_text(json.dumps(doc))
    res = run_module(gpu_settings.main, args(a10g, [{'model': 'NVIDIA A10G', 'persistence_mode': True, 'power_limit_w': 250}]))
    assert res['failed'] and res['changed'] is True, res
    assert res['applied']['commands'] == [[str(a10g.path), '-i', '0', '-pm', '1']]
    assert res['applied']['persist_path'].endswith('gpu_settings.json')
    assert 'applied before this failure' in res['msg'] and '-pl 250' in res['msg']


@pytest.mark.parametrize('settings, words', [
    ([{'model': 'NVIDIA A10G', 'power_limit_w': 0}], 'settings[0].power_limit_w must be an integer from 1'),
    ([{'model': 'NVIDIA A10G', 'locked_clocks': {'min_mhz': 1500, 'max_mhz': 1200}}], 'min_mhz 1500 is above max_mhz 1200'),
    ([{'model': 'NVIDIA A10G', 'locked_clocks': {'min_mhz': 1200, 'max_mhz': 1500},
       'application_clocks': {'memory_mhz': 6251, 'graphics_mhz': 1500}}], 'mutually exclusive'),
    ([{'model': 'X', 'mig': {'enabled': False, 'instances': ['1g.10gb']}}], 'mig.instances needs mig.enabled: true'),
    ([{'model': 'X', 'mig': {'enabled': True, 'instances': ['big']}}], "settings[0].mig.instances[0]: 'big' is not a MIG profile"),
    ([{'model': 'X'}, {'model': 'X'}], "settings[1].model 'X' is also settings[0].model"),
    ([{'model': ''}], 'settings[0].model must be the GPU product name'),
])
def test_input_refusals(a10g, settings, words, run_module):
    res = run_module(gpu_settings.main, args(a10g, settings))
    assert res['failed'] and words in res['msg'], res
    assert a10g.calls() == []


def test_mig_instance_commands_only_the_difference():
    rows = [{'profile_name': '3g.40gb', 'instance_id': 1}, {'profile_name': '3g.40gb', 'instance_id': 2},
            {'profile_name': '1g.10gb', 'instance_id': 7}]
    assert engine.mig_instance_commands('smi', 0, rows, ['3g.40gb', '1g.10gb']) == [
        ['smi', 'mig', '-i', '0', '-dci', '-gi', '2'], ['smi', 'mig', '-i', '0', '-dgi', '-gi', '2']]
    assert engine.mig_instance_commands('smi', 0, rows, ['MIG 3g.40gb', '3g.40gb', '1g.10gb']) == []
    assert engine.mig_instance_commands('smi', 1, [], ['2g.20gb', '1g.10gb']) == [
        ['smi', 'mig', '-i', '1', '-cgi', '1g.10gb,2g.20gb', '-C']]


# ---------------------------------------------------------------- the role's boot replay (roles/gpu_settings/files)
# After the module converged and the stand-in "rebooted" (the driver forgot the volatile settings, /run is empty),
# the replay alone brings them back and the module finds nothing to change.
REPLAY = REPO / 'roles' / 'gpu_settings' / 'files' / 'gpufleet_gpu_settings_replay.py'
WANTED = [{'model': 'NVIDIA A10G', 'persistence_mode': True, 'power_limit_w': 250, 'compute_mode': 'Prohibited',
           'locked_clocks': {'min_mhz': 1200, 'max_mhz': 1500}, 'ecc': 'disabled'}]


def replay(*args):
    return subprocess.run([sys.executable, str(REPLAY)] + [str(a) for a in args], capture_output=True, text=True,
                          check=False, timeout=120)


def test_replay_restores_what_the_driver_forgot(tmp_path, run_module):
    smi = Smi(tmp_path, A10G)
    persist, locks = tmp_path / 'etc' / 'gpu_settings.json', tmp_path / 'run' / 'locks.json'
    params = dict(nvidia_smi_path=str(smi.path), settings=WANTED, persist_path=str(persist), lock_record_path=str(locks))
    assert run_module(gpu_settings.main, params)['changed']
    smi.reboot(locks)
    res = run_module(gpu_settings.main, dict(params, _ansible_check_mode=True))
    assert sorted(c[3] for c in res['commands']) == ['-c', '-lgc', '-pl', '-pm'] and not res['reboot_required'], res
    out = replay(persist)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'gpufleet-gpu-settings-replay: 1 GPU(s), 4 command(s) run, 0 error(s)'
    uuid = 'GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94'
    assert [c for c in smi.calls() if c.startswith('-i GPU-')] == [
        '-i %s -pm 1' % uuid, '-i %s -c 2' % uuid, '-i %s -pl 250' % uuid, '-i %s -lgc 1200,1500' % uuid]
    assert json.loads(locks.read_text())['gpus'] == {uuid: {'min_mhz': 1200, 'max_mhz': 1500}}
    res = run_module(gpu_settings.main, params)
    assert not res['changed'] and res['commands'] == [], res
    # again: harmless
    assert replay(persist).returncode == 0
    assert not run_module(gpu_settings.main, params)['changed']


def test_replay_refuses_a_bad_file_and_reports_failed_commands(tmp_path):
    bad = tmp_path / 'bad.json'
    bad.write_text('{"format": "gpufleet.roce_qos/2"}')
    out = replay(bad)
    assert out.returncode == 2 and 'has format' in out.stderr
    doc = {'format': 'gpufleet.gpu_settings/1', 'nvidia_smi': str(tmp_path / 'missing-nvidia-smi'), 'lock_record_path': None,
           'gpus': [{'uuid': 'GPU-x', 'index': 0, 'replay': [['-pm', '1']]}]}
    good = tmp_path / 'p.json'
    good.write_text(json.dumps(doc))
    out = replay(good)
    assert out.returncode == 1 and 'GPU 0 (GPU-x)' in out.stderr and '1 error(s)' in out.stdout
