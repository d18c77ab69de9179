# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""p2p_bandwidth's engine (module_utils/p2p_bandwidth_engine.py) on its own: argv, judging a run, and run()
with a stand-in module and a small script standing in for nvbandwidth."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import p2p_bandwidth_engine as engine

from .stand_ins import Failed, StandInModule, run_result, script

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
NVB = HAND / 'nvbandwidth-4xH100-d2d-HANDMADE.txt'


DEFAULTS = dict(tool='nvbandwidth', executable=None, testcases=[], args=[], timeout=60, min_gbytes_per_s=None,
                min_bidir_gbytes_per_s=None, max_latency_us=None, require_p2p=True, expected_gpus=None, rung='p2p')
res = functools.partial(run_result, cmd='nvbandwidth')


def stand_in(check_mode=False, **params):
    module = StandInModule(params, DEFAULTS, check_mode=check_mode)
    module.aliases = {'min_gbps': 'min_gbytes_per_s', 'min_bidir_gbps': 'min_bidir_gbytes_per_s'}
    return module


def test_build_argv():
    params = stand_in(testcases=['a', 'b'], args=['-i', '3']).params
    assert engine.build_argv('/x/nvbandwidth', params) == ['/x/nvbandwidth', '-t', 'a', '-t', 'b', '-i', '3']
    params = stand_in(tool='p2pBandwidthLatencyTest', testcases=['a'], args=['--p2p_read']).params
    assert engine.build_argv('p2p', params) == ['p2p', '--p2p_read']  # test cases are nvbandwidth's


def test_judge_names_the_slow_pair():
    params = stand_in(testcases=['device_to_device_memcpy_write_ce'], min_gbytes_per_s=300.0).params
    out = engine.judge(res(NVB.read_text()), params)
    assert out['worst_pairs']['device_to_device_memcpy_write_ce'] == {'pair': 'GPU 2 <- GPU 3', 'value': 52.1}
    assert out['msg'] == '; '.join(out['failures'])
    assert 'GPU 2 <- GPU 3 = 52.10 GB/s < threshold 300.00 GB/s' in out['failures'][0]


def test_judge_pass_message():
    params = stand_in(testcases=['device_to_device_memcpy_write_ce']).params
    out = engine.judge(res(NVB.read_text()), params)
    assert out['failures'] == [], out['failures']
    assert out['msg'].startswith('p2p (nvbandwidth): device_to_device_bidirectional_memcpy_write_ce worst ')


def test_run_check_mode_and_not_found():
    assert engine.run(stand_in(check_mode=True, testcases=['x'])) == dict(
        changed=False, skipped=True, cmd='nvbandwidth -t x', tool='nvbandwidth', failures=[],
        msg='skipped: check mode, nvbandwidth not run')
    out = engine.run(stand_in())
    assert out['failures'] == ['executable not found'] and out['tool'] == 'nvbandwidth'


def test_run_refuse_names_the_alias_used():
    module = stand_in(min_gbps=-1, min_gbytes_per_s=-1)
    with pytest.raises(Failed) as exc:
        engine.run(module)
    assert 'min_gbps (alias of min_gbytes_per_s)' in exc.value.args[0]['msg']


def test_run_with_a_stand_in(tmp_path):
    exe = script(tmp_path, 'nvbandwidth', 'cat %s' % NVB)
    out = engine.run(stand_in(executable=exe, testcases=['device_to_device_memcpy_write_ce']))
    assert out['failures'] == [] and out['rc'] == 0 and out['cmd'] == '%s -t device_to_device_memcpy_write_ce' % exe
