# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts' engine (module_utils/gpu_facts.py) alone: a stand-in module object and HANDMADE stand-in
nvidia-smi scripts (the recorded outputs are exercised through the module in tests/unit/plugins/modules)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import gpu_facts_engine as gpu_facts

from .stand_ins import Failed, StandInModule, script, unstartable

SMI_XML = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made' / 'nvidia-smi-q-x-h100-mig-HANDMADE.xml'


def smi(tmp_path, q_body, topo_body='exit 0'):
    """A HANDMADE nvidia-smi: ``q_body`` answers -q -x, ``topo_body`` answers topo -m (shell)."""
    return script(tmp_path, 'nvidia-smi', 'case "$1" in\n  -q) %s ;;\n  topo) %s ;;\nesac' % (q_body, topo_body))


def test_not_found_is_no_failure():
    result = gpu_facts.gather(StandInModule(), 'nvidia-smi')
    assert result == {'changed': False, 'msg': gpu_facts.NOT_FOUND_MSG,
                      'ansible_facts': {'nvidia_gpu': gpu_facts.empty_facts()}}


def test_bare_name_is_looked_up_and_topology_failure_warns(tmp_path):
    exe = smi(tmp_path, 'cat %s' % shlex.quote(str(SMI_XML)), 'echo "topo: not supported" >&2; exit 3')
    module = StandInModule(bin_paths={'nvidia-smi': exe})
    result = gpu_facts.gather(module, 'nvidia-smi')
    facts = result['ansible_facts']['nvidia_gpu']
    assert 'msg' not in result and facts['executable'] == exe and facts['count'] >= 1
    assert facts['topology'] == {} and all(g['topology'] is None for g in facts['gpus'])
    assert module.warnings == ['%s topo -m failed (rc=3): topo: not supported; topology left empty' % exe]


def test_topology_not_read_when_disabled(tmp_path):
    exe = smi(tmp_path, 'cat %s' % shlex.quote(str(SMI_XML)), 'echo called >> %s' % (tmp_path / 'topo'))
    result = gpu_facts.gather(StandInModule(), exe, with_topology=False)
    assert result['ansible_facts']['nvidia_gpu']['topology'] == {} and not (tmp_path / 'topo').exists()


def test_run_smi_reports_the_first_byte_that_is_not_utf8(tmp_path):
    exe = smi(tmp_path, r'printf "ok \303\251 \377 rest"; printf "bad \377" >&2; exit 4')
    rc, out, err, bad = gpu_facts.run_smi(StandInModule(), [exe, '-q', '-x'])
    assert (rc, out, bad) == (4, '', 6)  # 'ok ' + two bytes of 'é' + ' ' -> \377 at offset 6
    assert err == 'bad \ufffd'


def test_non_utf8_query_fails_with_offset(tmp_path):
    exe = smi(tmp_path, r'printf "<x>\377</x>"')
    with pytest.raises(Failed) as failed:
        gpu_facts.gather(StandInModule(), exe)
    assert failed.value.args[0]['msg'] == ('%s -q -x printed output that is not UTF-8 text (byte 3, rc=0); executable '
                                           'must be nvidia-smi, whose -q -x output is UTF-8 XML' % exe)


def test_program_the_os_cannot_start(tmp_path):
    exe = unstartable(tmp_path, 'nvidia-smi')
    with pytest.raises(Failed) as failed:
        gpu_facts.gather(StandInModule(), exe)
    kw = failed.value.args[0]
    assert kw['msg'].startswith('%s -q -x could not be started: ' % exe)
    assert kw['msg'].endswith('; executable must be nvidia-smi') and kw['cmd'] == '%s -q -x' % exe


@pytest.mark.parametrize('rc', [6, 0])
def test_no_devices(tmp_path, rc):
    exe = smi(tmp_path, 'echo "No devices were found"; exit %d' % rc)
    with pytest.raises(Failed) as failed:
        gpu_facts.gather(StandInModule(), exe)
    kw = failed.value.args[0]
    assert kw['reason'] == 'no_devices' and kw['rc'] == rc
    assert kw['msg'].startswith('%s -q -x: nvidia-smi found no GPU ("No devices were found", rc=%d)' % (exe, rc))


def test_failing_query_names_rc_and_text(tmp_path):
    exe = smi(tmp_path, 'echo "Failed to initialize NVML: Driver/library version mismatch"; exit 18')
    with pytest.raises(Failed) as failed:
        gpu_facts.gather(StandInModule(), exe)
    assert failed.value.args[0]['msg'] == ('%s -q -x failed (rc=18): Failed to initialize NVML: Driver/library '
                                           'version mismatch' % exe)
