# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest.evaluate (a parsed perftest output and the rdma_bw thresholds -> failures and figures) on the recorded
outputs the parser and module tests use, and on hand-made edge cases named as such."""

from __future__ import annotations


import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import perftest

LOOP8M = 'perftest/superbench-ib_write_bw-loopback-8M.txt'  # recorded, in the bundled corpus subset
ALL_SIZES = 'perftest/superbench-ib_write_bw-loopback-all-sizes.txt'  # recorded, in the bundled corpus subset
GBITS = 'perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt'  # recorded, full corpus only
LAT = 'perftest/cx7-ndr-ib_send_lat-client.txt'  # recorded, full corpus only
RUNG = 'rdma (ib_write_bw)'
LOOP_WHO = 'HCA ib0 port 1 (IB, server 127.0.0.1)'


def params(**kw):
    """The rdma_bw options evaluate reads, at the module's defaults (loopback)."""
    out = dict(executable='ib_write_bw', check_size=None, min_gbits_per_s=None, min_msg_rate_mpps=None,
               max_latency_us=None, device=None, ib_port=1, role='loopback', server=None)
    out.update(kw)
    return out


def evaluate(text, **kw):
    return perftest.evaluate(perftest.parse(text), params(**kw), RUNG, 'CMD')


def test_recorded_loopback_within_thresholds_passes(corpus_file):
    failures, summary = evaluate(corpus_file(LOOP8M).read_text(), min_gbits_per_s=200.0, min_msg_rate_mpps=0.003)
    assert failures == []
    assert (summary['bytes'], summary['avg_gbps'], summary['peak_gbps'], summary['msg_rate_mpps']) == \
        (8388608, 201.802, 201.803, 0.003007)


@pytest.mark.parametrize('name', [LOOP8M, ALL_SIZES, GBITS])
def test_recorded_runs_pass_without_thresholds(name, corpus_file):
    text = corpus_file(name).read_text()
    failures, summary = evaluate(text)
    assert failures == [] and summary == perftest.summarize(perftest.parse(text))


def test_thresholds_missed_name_rung_hca_figure_and_command(corpus_file):
    failures, dummy = evaluate(corpus_file(LOOP8M).read_text(), min_gbits_per_s=250.0, min_msg_rate_mpps=1.0)
    assert failures == [
        '%s: average bandwidth at 8388608 B on %s = 201.80 Gb/s < threshold 250.00 Gb/s; cmd: CMD' % (RUNG, LOOP_WHO),
        '%s: message rate at 8388608 B on %s = 0.00 Mpps < threshold 1.00 Mpps; cmd: CMD' % (RUNG, LOOP_WHO)]


def test_report_gbits_client(corpus_file):
    text = corpus_file(GBITS).read_text()
    who = 'HCA mlx5_0 port 1 (IB, server gpu002)'
    failures, summary = evaluate(text, role='client', server='gpu002', min_gbits_per_s=328.61)
    assert failures == [] and summary['avg_gbps'] == 328.61
    failures, dummy = evaluate(text, role='client', server='gpu002', min_gbits_per_s=330.0)
    assert failures == ['%s: average bandwidth at 65536 B on %s = 328.61 Gb/s < threshold 330.00 Gb/s; cmd: CMD'
                        % (RUNG, who)]


def test_latency_tool_checks_latency(corpus_file):
    text = corpus_file(LAT).read_text()
    failures, summary = evaluate(text, executable='/opt/perftest/ib_send_lat', role='client', server='h',
                                 max_latency_us=2.0)
    assert failures == [] and summary['latency_us'] == 1.27
    failures, dummy = evaluate(text, executable='ib_send_lat', role='client', server='h', max_latency_us=1.0)
    assert failures == ['%s: latency at 2 B on HCA mlx5_0 port 1 (IB, server h) = 1.27 us > threshold 1.00 us; '
                        'cmd: CMD' % RUNG]


def test_missing_figure_at_check_size_is_a_failure(corpus_file):
    """The recorded all-sizes table has no row of 100 bytes: the threshold's figure is missing, which fails."""
    failures, summary = evaluate(corpus_file(ALL_SIZES).read_text(), role='server', check_size=100,
                                 min_gbits_per_s=1.0)
    assert summary['bytes'] == 100 and summary['avg_gbps'] is None
    assert failures == ['%s: average bandwidth at 100 B on HCA ib0 port 1 (IB) is missing (threshold 1.00 Gb/s); '
                        'cmd: CMD' % RUNG]


def test_latency_threshold_on_a_bandwidth_table_is_a_missing_figure(corpus_file):
    """Hand-made edge case (of the parameters, not the output): a latency tool's threshold against the recorded
    bandwidth table finds no latency figure, which fails."""
    failures, dummy = evaluate(corpus_file(LOOP8M).read_text(), executable='ib_write_lat', max_latency_us=5.0)
    assert failures == ['%s: latency at 8388608 B on %s is missing (threshold 5.00 us); cmd: CMD' % (RUNG, LOOP_WHO)]


def test_no_result_rows_is_a_failure_whatever_the_thresholds():
    """Hand-made edge case: an empty output."""
    for kw in ({}, {'min_gbits_per_s': 1.0}):
        failures, summary = evaluate('', **kw)
        assert failures == ['%s: no result rows parsed on HCA default HCA port 1 (link ?, server 127.0.0.1) '
                            '(missing figures fail); cmd: CMD' % RUNG]
        assert summary['avg_gbps'] is None


def test_cut_output_is_a_failure_hand_made_edge(corpus_file):
    """Hand-made edge case: the recorded loopback output cut right after the client's result row."""
    text = corpus_file(LOOP8M).read_text()
    cut = text[:text.rindex('0.003007') + len('0.003007') + 1]
    failures, dummy = evaluate(cut, min_gbits_per_s=1.0)
    assert failures == ["%s: output on %s is incomplete: perftest's closing dashed line does not follow the result "
                        "rows (cut off or garbled output is not accepted); cmd: CMD" % (RUNG, LOOP_WHO)]


def test_nan_figure_is_malformed_and_fails_hand_made_edge(corpus_file):
    """Hand-made edge case: the recorded loopback output (server and client table) with its average bandwidth
    replaced by -nan in both rows."""
    text = corpus_file(LOOP8M).read_text().replace('24056.72', '-nan')
    failures, dummy = evaluate(text, min_gbits_per_s=1.0)
    assert len(failures) == 2
    assert failures[0] == '%s: no result rows parsed on %s (missing figures fail); cmd: CMD' % (RUNG, LOOP_WHO)
    assert failures[1].startswith('%s: 2 malformed row(s) on %s: ' % (RUNG, LOOP_WHO)) and '-nan' in failures[1]


@pytest.mark.parametrize('executable, latency', [('ib_send_lat', True), ('/opt/perftest/ib_read_lat', True),
                                                 ('ib_write_bw', False), ('/opt/lat/ib_write_bw', False)])
def test_is_latency_tool(executable, latency):
    assert perftest.is_latency_tool(executable) is latency
