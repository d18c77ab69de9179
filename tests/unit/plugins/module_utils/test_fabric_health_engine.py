# -*- coding: utf-8 -*-
"""fabric_health_engine: two reads of recorded sysfs trees (prometheus/procfs, node_exporter: no growth, so what
fails there is what is missing) and of the HAND-MADE pair of reads with climbing counters."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import fabric_health_engine as engine
from ansible_collections.gpufleet.cluster.plugins.module_utils import sysfs_ib

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made' / 'fabric' / 'ndr-3hca-climbing-HANDMADE'
PROCFS = 'sysfs_infiniband/procfs/fixtures'
NODE_EXPORTER = 'sysfs_infiniband/node_exporter'


def params(**kw):
    base = dict(sysfs_root='/', devices=[], interval=10, max_growth={}, default_counters=True, min_rate_gbps=None,
                min_width=None, require_active=True, check_sm=True, sminfo_path='sminfo', timeout=30,
                rung='fabric_health')
    base.update(kw)
    return base


@pytest.fixture(scope='module')
def reads():
    return sysfs_ib.collect(str(HAND / 'read1')), sysfs_ib.collect(str(HAND / 'read2'))


def by_port(result):
    out = {}
    for p in result['problems']:
        out.setdefault(p['port'], []).append(p)
    return out


# --- the hand-made pair of reads ------------------------------------------------------------------

def test_climbing_counters_named_with_port_counter_and_growth(reads):
    result = engine.evaluate(reads[0], reads[1], params(), 10)
    assert result['status'] == 'fail'
    probs = by_port(result)
    assert sorted(probs) == ['mlx5_0/1']  # mlx5_1: 4711 old symbol errors that do not grow; mlx5_2: 55 discards < 100
    growth = dict((p['counter'], (p['growth'], p['max'])) for p in probs['mlx5_0/1'])
    assert growth == {'symbol_error': (25, 10), 'link_downed': (2, 0)}
    msgs = result['failures']
    assert 'mlx5_0/1: symbol_error grew by 25 in 10 s (from 3 to 28; max 10)' in msgs
    assert 'mlx5_0/1: flapping: link_downed grew by 2 in 10 s (from 1 to 3; max 0)' in msgs
    assert result['msg'].startswith('fabric_health: 2 problem(s) on 3 port(s): ')
    ports = dict(('%s/%s' % (p['device'], p['port']), p) for p in result['ports'])
    assert ports['mlx5_1/1']['status'] == 'pass' and ports['mlx5_1/1']['growth']['symbol_error'] == 0
    assert ports['mlx5_2/1']['growth']['port_xmit_discards'] == 55
    assert ports['mlx5_0/1']['sm_lid'] == 1 and ports['mlx5_0/1']['rate_gbps'] == 400


def test_rate_and_width_below_the_profile(reads):
    result = engine.evaluate(reads[0], reads[1], params(min_rate_gbps=400, min_width='4x',
                                                        max_growth={'symbol_error': 100, 'link_downed': 5}), 10)
    assert result['failures'] == [
        "mlx5_2/1: rate 200 Gb/s (200 Gb/sec (2X NDR)) below the profile's 400 Gb/s",
        "mlx5_2/1: link width 2X below the profile's 4X (200 Gb/sec (2X NDR))"]


def test_threshold_per_counter_and_null_drops_a_default(reads):
    result = engine.evaluate(reads[0], reads[1], params(max_growth={'symbol_error': 25, 'link_downed': None,
                                                                    'port_xmit_discards': 54}), 10)
    assert [(p['port'], p['counter'], p['growth']) for p in result['problems']] == [('mlx5_2/1', 'port_xmit_discards', 55)]
    assert 'link_downed' not in result['checked_counters']


def test_healthy_when_the_reads_are_equal(reads):
    result = engine.evaluate(reads[1], reads[1], params(min_rate_gbps=200), 10)
    assert result['status'] == 'pass' and result['failures'] == []
    assert result['msg'] == 'fabric_health: 3 port(s) healthy over 10 s (mlx5_0/1, mlx5_1/1, mlx5_2/1)'


def test_selection_of_devices_and_ports(reads):
    result = engine.evaluate(reads[0], reads[1], params(devices=['mlx5_1', 'mlx5_2/1']), 10)
    assert [p['device'] for p in result['ports']] == ['mlx5_1', 'mlx5_2'] and result['status'] == 'pass'
    result = engine.evaluate(reads[0], reads[1], params(devices=['mlx5_9', 'mlx5_1/2']), 10)
    assert result['failures'] == ['mlx5_9: no such RDMA device (found: mlx5_0, mlx5_1, mlx5_2)',
                                  'mlx5_1/2: device mlx5_1 has no port 2 (ports: 1)']


def test_counter_went_down_is_not_a_pass(reads):
    result = engine.evaluate(reads[1], reads[0], params(devices=['mlx5_0']), 10)
    checks = sorted((p['counter'], p['check']) for p in result['problems'])
    assert ('symbol_error', 'counter_reset') in checks and ('link_downed', 'counter_reset') in checks
    assert 'mlx5_0/1: counter symbol_error went down from 28 to 3 between the reads (cleared?): its growth is unknown' \
        in result['failures']


def test_saturated_counter_cannot_show_growth(reads):
    first, second = copy.deepcopy(reads[0]), copy.deepcopy(reads[1])
    first['mlx5_1']['ports']['1']['counters']['symbol_error'] = 65535
    second['mlx5_1']['ports']['1']['counters']['symbol_error'] = 65535
    second['mlx5_1']['ports']['1']['counters']['link_error_recovery'] = 255  # 8-bit, hit during the interval
    result = engine.evaluate(first, second, params(devices=['mlx5_1']), 10)
    msgs = result['failures']
    assert msgs[1].startswith('mlx5_1/1: counter symbol_error is saturated at 65535 (16-bit)')
    assert 'mlx5_1/1: link_error_recovery grew by 255 (saturated: at least) in 10 s (from 0 to 255; max 0)' in msgs


def test_missing_counter_state_change_and_no_sm(reads):
    first, second = copy.deepcopy(reads[0]), copy.deepcopy(reads[1])
    del second['mlx5_1']['ports']['1']['counters']['port_rcv_errors']
    second['mlx5_2']['ports']['1'].update(state='DOWN', phys_state='Polling')
    second['mlx5_0']['ports']['1']['sm_lid'] = 0
    del second['mlx5_0']['ports']['1']['counters']
    result = engine.evaluate(first, second, params(max_growth={'symbol_error': 100, 'link_downed': 5}), 10)
    msgs = result['failures']
    assert 'mlx5_1/1: counter port_rcv_errors missing or unreadable in the second read (looked in counters, ' \
           'counters_ext, hw_counters); a missing counter is a failure' in msgs
    assert 'mlx5_2/1: state DOWN, physical state Polling in the second read (expected ACTIVE, LinkUp)' in msgs
    assert 'mlx5_2/1: state changed between the reads: ACTIVE -> DOWN' in msgs
    assert "mlx5_0/1: no subnet manager: sm_lid is 0 (start opensm or the fabric's SM)" in msgs
    assert sum(1 for m in msgs if m.startswith('mlx5_0/1: counter ')) == len(engine.DEFAULT_MAX_GROWTH)


def test_port_vanished_between_the_reads(reads):
    second = copy.deepcopy(reads[1])
    del second['mlx5_2']
    result = engine.evaluate(reads[0], second, params(devices=['mlx5_2']), 10)
    assert result['failures'] == ['mlx5_2/1: port disappeared between the reads']


def test_roce_port_needs_no_subnet_manager(reads):
    first, second = copy.deepcopy(reads[1]), copy.deepcopy(reads[1])
    for facts in (first, second):
        facts['mlx5_1']['ports']['1'].update(link_layer='Ethernet', sm_lid=0)
    assert engine.evaluate(first, second, params(devices=['mlx5_1']), 10)['status'] == 'pass'


# --- recorded trees (real files): nothing grows between two reads of a static tree --------------

def test_recorded_procfs_tree_fails_on_what_it_lacks(corpus):
    facts = sysfs_ib.collect(str(corpus / PROCFS))
    result = engine.evaluate(facts, facts, params(), 10)
    msgs = result['failures']
    # the recording has no lid/sm_lid files: the SM cannot be judged, which is a failure, never a pass
    assert 'mlx4_0/1: sm_lid unreadable: cannot tell whether a subnet manager serves this port' in msgs
    # the fixture's quirk: mlx5_0 phys_state '4: ACTIVE'
    assert 'mlx5_0/1: state ACTIVE, physical state ACTIVE in the first read (expected ACTIVE, LinkUp)' in msgs
    assert not [m for m in msgs if 'counter' in m]  # every default counter is there and did not grow
    relaxed = engine.evaluate(facts, facts, params(check_sm=False, devices=['mlx4_0', 'hfi1_0'], min_rate_gbps=40), 10)
    assert relaxed['status'] == 'pass'
    assert relaxed['ports'][0]['growth'] == dict((c, 0) for c in engine.DEFAULT_MAX_GROWTH)


def test_recorded_node_exporter_tree_missing_counters(corpus):
    facts = sysfs_ib.collect(str(corpus / NODE_EXPORTER))
    result = engine.evaluate(facts, facts, params(check_sm=False), 10)
    missing = sorted(set((p['port'], p['counter']) for p in result['problems'] if p['check'] == 'counter_missing'))
    # i40iw0 (iWARP) has no counters at all; mlx4_0 port 2 only data/packet counters
    assert ('i40iw0/1', 'symbol_error') in missing and ('mlx4_0/2', 'link_error_recovery') not in missing
    assert ('mlx4_0/2', 'symbol_error') in missing and ('mlx4_0/1', 'symbol_error') in missing
    assert ('mlx4_0/1', 'link_downed') not in missing


def test_recorded_saturated_xmit_wait(corpus):
    facts = sysfs_ib.collect(str(corpus / NODE_EXPORTER))
    result = engine.evaluate(facts, facts, params(check_sm=False, devices=['mlx4_0/1'], default_counters=False,
                                                  max_growth={'port_xmit_wait': 1000}), 10)
    assert result['failures'] == [
        'mlx4_0/1: counter port_xmit_wait is saturated at 4294967295 (32-bit): its growth cannot be seen; clear the '
        'port counters (perfquery -x -R) and check again']


# --- sminfo verdicts ---------------------------------------------------------------------------------

def _res(stdout='', rc=0, stderr=''):
    return dict(rc=rc, stdout=stdout, stderr=stderr, timed_out=False, start_error=None, cmd='sminfo -C mlx5_0 -P 1')


def test_sminfo_master_standby_and_failure(reads):
    from ansible_collections.gpufleet.cluster.plugins.module_utils import infiniband_diags as diags
    ok = 'sminfo: sm lid 1 sm guid 0x248a0703009c0196, activity count 38526 priority 15 state 3 SMINFO_MASTER\n'
    standby = ok.replace('state 3 SMINFO_MASTER', 'state 2 SMINFO_STANDBY')
    runs = {'mlx5_0/1': (_res(ok), diags.parse_sminfo(ok)), 'mlx5_1/1': (_res(standby), diags.parse_sminfo(standby)),
            'mlx5_2/1': (_res('', 255, 'ibwarn: [12] mad_rpc: _do_madrpc failed; dport (Lid 1)'), None)}
    result = engine.evaluate(reads[1], reads[1], params(), 10, runs)
    assert result['failures'] == [
        'mlx5_1/1: the subnet manager at LID 1 is STANDBY, not MASTER',
        'mlx5_2/1: sminfo exited with rc=255 (ibwarn: [12] mad_rpc: _do_madrpc failed; dport (Lid 1)); '
        'cmd: sminfo -C mlx5_0 -P 1']
    assert result['ports'][0]['sminfo']['priority'] == 15


# --- input -------------------------------------------------------------------------------------------

@pytest.mark.parametrize('override, option', [
    (dict(interval=-1), 'interval'), (dict(interval=3601), 'interval'), (dict(timeout=0), 'timeout'),
    (dict(min_rate_gbps=-5.0), 'min_rate_gbps'), (dict(min_width='3X'), 'min_width'),
    (dict(devices=['mlx5_0/x']), 'devices[0]'), (dict(devices=['-C']), 'devices[0]'),
    (dict(max_growth={'symbol_error': -1}), 'max_growth.symbol_error'),
    (dict(max_growth={'symbol_error': 'ten'}), 'max_growth.symbol_error'),
    (dict(max_growth={'../etc': 1}), 'max_growth'), (dict(rung='a b'), 'rung'),
])
def test_input_errors_name_the_option(tmp_path, override, option):
    errors = engine.input_errors(params(sysfs_root=str(tmp_path), **override))
    assert len(errors) == 1 and errors[0].startswith(option), errors


def test_thresholds_merge():
    assert engine.thresholds(params()) == engine.DEFAULT_MAX_GROWTH
    assert engine.thresholds(params(default_counters=False, max_growth={'send_err': 0})) == {'send_err': 0}
