# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_bw end to end with the replay program standing in for perftest (server and client)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.modules import rdma_bw

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
REPO = FIXTURES.parents[2]
sys.path.insert(0, str(FIXTURES / 'replay'))
from replay import calls, make_replay, run_playbook  # noqa: E402  pylint: disable=wrong-import-position

GBITS = 'perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt'
MIB = 'perftest/cx7-ndr-ib_send_bw-client-mib.txt'
LAT = 'perftest/cx7-ndr-ib_send_lat-client.txt'
LOOP8M = 'perftest/superbench-ib_write_bw-loopback-8M.txt'
WAITING = '************************************\n* Waiting for client to connect... *\n************************************\n'


@pytest.fixture
def own_deprecations(monkeypatch):
    """The deprecations of this test's module runs, returned in the result as on a target: ansible-core collects
    them in a process-wide list, and once controller code was imported in this worker they would go to its display."""
    from ansible.module_utils import _internal
    from ansible.module_utils.common import warnings
    monkeypatch.setattr(_internal, 'is_controller', False)
    monkeypatch.setattr(warnings, '_global_deprecations', type(warnings._global_deprecations)())


def test_client_report_gbits(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'ib_read_bw', {'stdout': str(corpus_file(GBITS))})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'gpu002', 'device': 'mlx5_0',
                                       'size': 65536, 'iterations': 1000, 'min_gbits_per_s': 300})
    assert 'failed' not in result, result['msg']
    assert (result['avg_gbps'], result['peak_gbps'], result['msg_rate_mpps']) == (328.61, 328.64, 0.626777)
    assert calls(log)[0]['argv'] == ['-d', 'mlx5_0', '-i', '1', '-s', '65536', '-n', '1000', '--report_gbits', 'gpu002']
    assert result['changed'] is False and result['role'] == 'client'


def test_below_min_gbps_names_rung_hca_and_figure(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'ib_send_bw', {'stdout': str(corpus_file(MIB))})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'gpu002', 'min_gbits_per_s': 395,
                                       'rung': 'rdma-pair'})
    assert result['failed'] is True
    assert result['msg'] == ('rdma-pair (ib_send_bw): average bandwidth at 65536 B on HCA mlx5_0 port 1 (IB, server '
                             'gpu002) = 390.55 Gb/s < threshold 395.00 Gb/s; cmd: %s -i 1 --report_gbits gpu002' % exe)
    assert result['avg_gbps'] == 390.549 and result['unit'] == 'MiB/sec'


def test_latency_tool(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'ib_send_lat', {'stdout': str(corpus_file(LAT))})
    ok = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'h', 'max_latency_us': 2.0})
    assert 'failed' not in ok and ok['latency_us'] == 1.27 and ok['kind'] == 'Latency'
    assert '--report_gbits' not in calls(log)[0]['argv']
    bad = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'h', 'max_latency_us': 1.0})
    assert bad['failed'] is True and 'latency at 2 B on HCA mlx5_0 port 1 (IB, server h) = 1.27 us > threshold 1.00 us' in bad['msg']


def test_loopback_runs_server_and_client(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'ib_write_bw', [
        {'if_arg': '127.0.0.1', 'stdout': str(corpus_file(LOOP8M)), 'sleep': 0.2},
        {'stdout_text': WAITING, 'sleep_after': 0.5}])
    result = run_module(rdma_bw.main, {'executable': exe, 'device': 'ib0', 'size': 8388608, 'duration': 5,
                                       'server_start_delay': 0.3, 'min_gbits_per_s': 200, 'gid_index': 3})
    assert 'failed' not in result, result['msg']
    assert result['avg_gbps'] == 201.802 and result['server']['rc'] == 0
    argvs = [c['argv'] for c in calls(log)]
    assert argvs[0] == ['-d', 'ib0', '-i', '1', '-x', '3', '-s', '8388608', '-D', '5', '--report_gbits']
    assert argvs[1] == argvs[0] + ['127.0.0.1']


def test_loopback_server_that_hangs_is_killed(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'ib_write_bw', [
        {'if_arg': '127.0.0.1', 'stdout': str(corpus_file(LOOP8M))},
        {'stdout_text': WAITING, 'sleep_after': 60}])
    result = run_module(rdma_bw.main, {'executable': exe, 'server_start_delay': 0.2, 'timeout': 2})
    assert result['failed'] is True and result['server']['timed_out'] is True
    assert 'server side on HCA ib0 port 1 (IB, server 127.0.0.1) did not finish (killed)' in result['msg']
    assert result['avg_gbps'] == 201.802  # client figures still returned


def test_loopback_server_dies_at_start(tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'ib_write_bw', [
        {'if_arg': '127.0.0.1', 'stdout_text': 'should not run\n'},
        {'stderr_text': ' Couldn\'t get device list\n', 'rc': 1}])
    result = run_module(rdma_bw.main, {'executable': exe, 'device': 'mlx5_9', 'server_start_delay': 0.5})
    assert result['failed'] is True
    assert "server side on HCA mlx5_9 port 1 (link ?, server 127.0.0.1) exited before the client started " \
           "(rc=1: Couldn't get device list)" in result['msg']
    assert len(calls(log)) == 1


def test_client_connect_failure(tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'ib_write_bw', {'stderr_text': " Couldn't connect to gpu002:18515\n", 'rc': 1})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'gpu002', 'device': 'mlx5_0',
                                       'min_gbits_per_s': 1})
    assert result['failed'] is True
    assert result['failures'][0].startswith("rdma (ib_write_bw): HCA mlx5_0 port 1 (link ?, server gpu002) exited "
                                            "with rc=1 (Couldn't connect to gpu002:18515)")
    assert 'no result rows parsed' in result['failures'][1] and result['problems']


def test_server_role_and_check_size(corpus_file, tmp_path, run_module):
    exe, log = make_replay(tmp_path, 'ib_write_bw', {'stdout': str(corpus_file('perftest/superbench-ib_write_bw-loopback-all-sizes.txt'))})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'server', 'all_sizes': True, 'check_size': 65536,
                                       'min_gbits_per_s': 180, 'report_gbits': False})
    assert result['failed'] is True and 'average bandwidth at 65536 B on HCA ib0 port 1 (IB) = 177.57 Gb/s' in result['msg']
    assert calls(log)[0]['argv'] == ['-i', '1', '-a']
    missing = run_module(rdma_bw.main, {'executable': exe, 'role': 'server', 'check_size': 100, 'min_gbits_per_s': 1})
    assert missing['failed'] is True and 'average bandwidth at 100 B' in missing['msg'] and 'is missing' in missing['msg']


def test_client_needs_server(tmp_path, run_module):
    result = run_module(rdma_bw.main, {'executable': 'ib_write_bw', 'role': 'client'})
    assert result['failed'] is True and 'server' in result['msg']


def test_check_mode_and_playbook(corpus_file, tmp_path, run_module, run_adhoc):
    exe, log = make_replay(tmp_path, 'ib_write_bw', {'stdout': str(corpus_file(LOOP8M))})
    result = run_module(rdma_bw.main, {'executable': exe, '_ansible_check_mode': True})
    assert result['skipped'] is True and result['cmd'].endswith('--report_gbits 127.0.0.1') and calls(log) == []
    rc, res = run_playbook(REPO, 'rdma_bw', {'executable': exe}, check=True, tmpdir=tmp_path)
    assert rc == 0 and res['skipped'] is True and calls(log) == []
    rc, res = run_adhoc('rdma_bw', {'executable': exe, 'role': 'client', 'server': 'x', 'min_gbits_per_s': 250, 'rung': 'rdma-r'})
    assert rc == 2 and 'rdma-r (ib_write_bw): average bandwidth at 8388608 B on HCA ib0 port 1' in res['msg']


def _cut(text):
    """The recorded output without perftest's closing dashed line (the lines after the last result row)."""
    lines = text.rstrip('\n').splitlines()
    while lines and (not lines[-1].strip() or lines[-1].strip().startswith('---')):
        lines.pop()
    return '\n'.join(lines) + '\n'


def test_full_output_is_complete(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'ib_read_bw', {'stdout': str(corpus_file(GBITS))})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'gpu002'})
    assert 'failed' not in result, result['msg']
    assert result['complete'] is True and result['malformed'] == []


def test_cut_output_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """The real client run with the closing dashed line removed (a run cut short): no threshold set, still fails."""
    exe, dummy = make_replay(tmp_path, 'ib_read_bw', {'stdout_text': _cut(corpus_file(GBITS).read_text())})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'gpu002', 'rung': 'rdma-pair'})
    assert result['failed'] is True and result['complete'] is False and result['avg_gbps'] == 328.61
    assert result['failures'] == [
        "rdma-pair (ib_read_bw): output on HCA mlx5_0 port 1 (IB, server gpu002) is incomplete: perftest's closing "
        'dashed line does not follow the result rows (cut off or garbled output is not accepted); '
        'cmd: %s -i 1 --report_gbits gpu002' % exe]


def test_cut_loopback_output_fails(corpus_file, tmp_path, run_module):
    exe, dummy = make_replay(tmp_path, 'ib_write_bw', [
        {'if_arg': '127.0.0.1', 'stdout_text': _cut(corpus_file(LOOP8M).read_text())},
        {'stdout_text': WAITING, 'sleep_after': 0.3}])
    result = run_module(rdma_bw.main, {'executable': exe, 'server_start_delay': 0.2, 'min_gbits_per_s': 1})
    assert result['failed'] is True and result['complete'] is False and 'is incomplete' in result['msg']


def test_garbled_row_fails_without_thresholds(corpus_file, tmp_path, run_module):
    """The real row with its average bandwidth garbled: the figure is never half-read, the run fails."""
    text = corpus_file(GBITS).read_text().replace('328.61', '328.6l')
    exe, dummy = make_replay(tmp_path, 'ib_read_bw', {'stdout_text': text})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'client', 'server': 'gpu002'})
    assert result['failed'] is True and result['rows'] == [] and len(result['malformed']) == 1
    assert 'no result rows parsed' in result['failures'][0]
    assert "1 malformed row(s) on HCA mlx5_0 port 1 (IB, server gpu002): '65536" in result['failures'][1]


def test_garbled_row_next_to_good_rows_fails(corpus_file, tmp_path, run_module):
    """All-sizes loopback run with one row cut short in the middle of the table: the other rows read, the run fails."""
    text = corpus_file('perftest/superbench-ib_write_bw-loopback-all-sizes.txt').read_text()
    row = next(line for line in text.splitlines() if line.split()[:1] == ['65536'])
    text = text.replace(row, ' '.join(row.split()[:3]))
    exe, dummy = make_replay(tmp_path, 'ib_write_bw', {'stdout_text': text})
    result = run_module(rdma_bw.main, {'executable': exe, 'role': 'server', 'all_sizes': True})
    assert result['failed'] is True and len(result['rows']) == 22 and result['complete'] is True
    assert result['malformed'] == [' '.join(row.split()[:3])] and len(result['failures']) == 1


def test_threshold_option_carries_the_unit_old_name_is_a_deprecated_alias(corpus_file, tmp_path, run_module,
                                                                          own_deprecations):
    """min_gbits_per_s (Gb/s); the old min_gbps (Gb/s) checks the same, with a deprecation (removed in 2.0.0);
    a bad value or a latency test's warning given by the old name names it."""
    exe, dummy = make_replay(tmp_path, 'ib_send_bw', {'stdout': str(corpus_file(MIB))})
    args = {'executable': exe, 'role': 'client', 'server': 'gpu002'}
    new = run_module(rdma_bw.main, dict(args, min_gbits_per_s=395))
    assert new['failed'] is True and not new.get('deprecations')
    assert '= 390.55 Gb/s < threshold 395.00 Gb/s' in new['msg']
    old = run_module(rdma_bw.main, dict(args, min_gbps=395))
    assert old['failed'] is True and old['failures'] == new['failures']
    deprecations = json.dumps(old['deprecations'])
    assert "Alias 'min_gbps' is deprecated" in deprecations and '2.0.0' in deprecations
    assert 'gpufleet.cluster' in deprecations
    assert 'failed' not in run_module(rdma_bw.main, dict(args, min_gbps=390))
    bad = run_module(rdma_bw.main, dict(args, min_gbps=-1))
    assert bad['failed'] is True and bad['failures'] == [
        'min_gbps (alias of min_gbits_per_s) must be a finite number >= 0.0, got -1.0']
    lat, dummy = make_replay(tmp_path, 'ib_send_lat', {'stdout': str(corpus_file(LAT))})
    result = run_module(rdma_bw.main, {'executable': lat, 'role': 'client', 'server': 'h', 'min_gbps': 1})
    assert 'failed' not in result
    assert 'min_gbps (alias of min_gbits_per_s) is ignored by the latency test ib_send_lat' in json.dumps(result['warnings'])
