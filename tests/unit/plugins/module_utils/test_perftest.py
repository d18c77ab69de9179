# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest parser on every recorded output of the corpus."""

from __future__ import annotations


import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import perftest

# file -> (test, kind, unit, device, rows, last row subset)
RECORDED = {
    'cx7-ndr-ib_read_bw-client-report_gbits.txt': (
        'RDMA_Read', 'BW', 'Gb/sec', 'mlx5_0', 1,
        {'bytes': 65536, 'iterations': 1000, 'bw_peak': 328.64, 'bw_avg': 328.61, 'bw_avg_gbps': 328.61,
         'msg_rate_mpps': 0.626777}),
    'cx7-ndr-ib_send_bw-client-mib.txt': (
        'Send', 'BW', 'MiB/sec', 'mlx5_0', 1,
        {'bytes': 65536, 'bw_peak': 46567.34, 'bw_avg': 46557.03, 'bw_avg_gbps': 390.549, 'msg_rate_mpps': 0.744912}),
    'cx7-ndr-ib_send_lat-client.txt': (
        'Send', 'Latency', None, 'mlx5_0', 1,
        {'bytes': 2, 'iterations': 1000, 't_min_us': 1.24, 't_max_us': 5.19, 't_typical_us': 1.27, 't_avg_us': 1.27,
         't_stdev_us': 0.0, 'p99_us': 1.37, 'p999_us': 5.19}),
    'superbench-ib_write_bw-loopback-8M.txt': (
        'RDMA_Write', 'BW', 'MB/sec', 'ib0', 1,
        {'bytes': 8388608, 'iterations': 20000, 'bw_peak': 24056.74, 'bw_avg': 24056.72, 'bw_avg_gbps': 201.802,
         'msg_rate_mpps': 0.003007}),
    'superbench-ib_write_bw-loopback-all-sizes.txt': (
        'RDMA_Write', 'BW', 'MB/sec', 'ib0', 23,
        {'bytes': 8388608, 'iterations': 2000, 'bw_peak': 23240.68, 'bw_avg': 23240.68, 'msg_rate_mpps': 0.002905}),
}


def test_every_recorded_file_is_covered(corpus, corpus_full):
    files = sorted(p.name for p in (corpus / 'perftest').glob('*'))
    assert files == sorted(RECORDED) if corpus_full else set(files) <= set(RECORDED)


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_recorded(name, corpus_file):
    test, kind, unit, device, nrows, last = RECORDED[name]
    parsed = perftest.parse(corpus_file('perftest/' + name).read_text())
    assert (parsed['test'], parsed['kind'], parsed['unit']) == (test, kind, unit)
    assert parsed['settings']['device'] == device and parsed['settings']['link_type'] == 'IB'
    assert parsed['settings']['mtu'] == '4096[B]'
    assert len(parsed['rows']) == nrows and parsed['problems'] == []
    assert {k: parsed['rows'][-1][k] for k in last} == last


def test_summary_of_report_gbits(corpus_file):
    parsed = perftest.parse(corpus_file('perftest/cx7-ndr-ib_read_bw-client-report_gbits.txt').read_text())
    assert perftest.summarize(parsed) == {
        'bytes': 65536, 'peak_gbps': 328.64, 'avg_gbps': 328.61, 'msg_rate_mpps': 0.626777, 'max_peak_gbps': 328.64,
        'latency_us': None, 'latency_typical_us': None, 'latency_max_us': None, 'latency_p999_us': None}
    assert parsed['local']['LID'] == '0x01' and parsed['remote']['QPN'] == '0x0048' and parsed['local']['OUT'] == '0x10'
    assert parsed['settings']['outstand_reads'] == '16'
    assert len(parsed['warnings']) == 1 and parsed['warnings'][0].startswith('Conflicting CPU frequency')


def test_mib_converted_to_gbps(corpus_file):
    parsed = perftest.parse(corpus_file('perftest/cx7-ndr-ib_send_bw-client-mib.txt').read_text())
    summary = perftest.summarize(parsed)
    # 46557.03 MiB/s * 1048576 B * 8 bit = 390.549 Gb/s (NDR 400)
    assert summary['avg_gbps'] == 390.549 and summary['peak_gbps'] == 390.635


def test_latency_summary(corpus_file):
    parsed = perftest.parse(corpus_file('perftest/cx7-ndr-ib_send_lat-client.txt').read_text())
    summary = perftest.summarize(parsed)
    assert (summary['latency_us'], summary['latency_typical_us'], summary['latency_max_us'],
            summary['latency_p999_us']) == (1.27, 1.27, 5.19, 5.19)
    assert len(parsed['warnings']) == 2


def test_interleaved_loopback_all_sizes(corpus_file):
    parsed = perftest.parse(corpus_file('perftest/superbench-ib_write_bw-loopback-all-sizes.txt').read_text())
    assert [r['bytes'] for r in parsed['rows']] == [2 ** i for i in range(1, 24)]
    assert parsed['rows'][0]['bw_avg'] == 5.30 and parsed['rows'][12]['bw_peak'] == 18620.51
    summary = perftest.summarize(parsed)
    assert summary['bytes'] == 8388608 and summary['avg_gbps'] == 194.957
    assert summary['max_peak_gbps'] == perftest.to_gbps(23330.56, 'MB/sec')
    at64k = perftest.summarize(parsed, 65536)
    assert at64k['avg_gbps'] == perftest.to_gbps(21167.79, 'MB/sec') and at64k['msg_rate_mpps'] == 0.338685
    assert perftest.summarize(parsed, 3)['avg_gbps'] is None  # no such row: missing


def test_older_latency_layout_and_roce_gid():
    """Hand-made (typed here): older perftest latency header without t_avg, RoCE GID line."""
    text = ('                    RDMA_Write Latency Test\n'
            ' Device         : mlx5_2\n Link type       : Ethernet\n GID index       : 3\n'
            ' local address: LID 0000 QPN 0x0a4e PSN 0x6a8f0e RKey 0x1fffbd VAddr 0x007f0000\n'
            ' GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:0:0:1\n'
            ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n'
            ' 2       1000          1.73           4.12         1.77\n')
    parsed = perftest.parse(text)
    assert parsed['kind'] == 'Latency' and parsed['settings']['gid_index'] == '3'
    assert parsed['local']['GID'] == '00:00:00:00:00:00:00:00:00:00:255:255:10:0:0:1'
    assert parsed['rows'] == [{'bytes': 2, 'iterations': 1000, 't_min_us': 1.73, 't_max_us': 4.12, 't_typical_us': 1.77}]
    assert perftest.summarize(parsed)['latency_us'] == 1.77


def test_connection_failure_lines():
    parsed = perftest.parse(" Couldn't connect to 10.0.0.2:18515\nUnable to open file descriptor for socket connection\n")
    assert parsed['rows'] == [] and len(parsed['problems']) == 2


# ---- header layouts of linux-rdma/perftest src/perftest_parameters.h (hand-made rows, numbers typed here) ----

BANNER = ('                    RDMA_Write BW Test\n Device         : mlx5_0\n Link type       : IB\n'
          '---------------------------------------------------------------------------------------\n')
CLOSE = '---------------------------------------------------------------------------------------\n'


def test_old_perftest_without_msgrate_hand_made():
    """Old perftest RESULT_FMT: '#bytes #iterations BW peak[MB/sec] BW average[MB/sec]' (no MsgRate column)."""
    parsed = perftest.parse(BANNER + ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]\n'
                            ' 65536      5000           4554.51            4554.47\n' + CLOSE)
    assert parsed['rows'] == [{'bytes': 65536, 'iterations': 5000, 'bw_peak': 4554.51, 'bw_avg': 4554.47,
                               'bw_peak_gbps': 38.206, 'bw_avg_gbps': 38.206, 'msg_rate_mpps': None}]
    assert parsed['complete'] is True and parsed['malformed'] == []
    assert perftest.summarize(parsed)['msg_rate_mpps'] is None  # missing, so a threshold on it fails


def test_per_port_qos_and_cpu_util_columns_hand_made():
    """RESULT_FMT_G_PER_PORT (--report-per-port), RESULT_FMT_QOS (#sl) and RESULT_EXT_CPU_UTIL (--cpu_util)."""
    per_port = perftest.parse(
        BANNER + ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW Port1[Gb/sec]'
        '   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]\n'
        ' 65536      5000             390.12             389.95\t\t   0.743780\t194.98\t0.371890\t194.97\t0.371890\n' + CLOSE)
    row = per_port['rows'][0]
    assert (row['bw_avg_gbps'], row['msg_rate_mpps'], row['bw_port2'], row['msg_rate_port1_mpps']) == (
        389.95, 0.74378, 194.97, 0.37189)
    qos = perftest.parse(BANNER + ' #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n'
                         ' 65536      3        5000           11723.40           11720.18\t\t   0.187523\n' + CLOSE)
    assert qos['rows'][0]['sl'] == 3 and qos['rows'][0]['iterations'] == 5000 and qos['rows'][0]['bw_avg'] == 11720.18
    util = perftest.parse(BANNER + ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
                          '    CPU_Util[%]\n 65536      5000             97.52              97.48\t\t   0.185928\t    12.40\n' + CLOSE)
    assert util['rows'][0]['cpu_util_pct'] == 12.4 and perftest.summarize(util)['avg_gbps'] == 97.48


def test_duration_latency_and_cycles_hand_made():
    """RESULT_FMT_LAT_DUR (-D): t_avg only; a latency header in [cycles] gives no microsecond figure."""
    dur = perftest.parse('                    Send Latency Test\n'
                         ' #bytes        #iterations       t_avg[usec]  \t\n 2             1823456           1.09   \n' + CLOSE)
    assert dur['rows'] == [{'bytes': 2, 'iterations': 1823456, 't_avg_us': 1.09}]
    assert perftest.summarize(dur)['latency_us'] == 1.09
    cycles = perftest.parse(' #bytes #iterations    t_min[cycles]    t_max[cycles]  t_typical[cycles]\n'
                            ' 2       1000          2981           9125         3050\n' + CLOSE)
    assert cycles['rows'] == [{'bytes': 2, 'iterations': 1000, 't_min_cycles': 2981.0, 't_max_cycles': 9125.0,
                               't_typical_cycles': 3050.0}]
    assert perftest.summarize(cycles)['latency_us'] is None


def test_garbled_cut_row_and_completion_errors():
    text = (BANNER + ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n'
            ' 65536      1000             -nan               0.00\t\t   0.000000\n'
            ' Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\n')
    parsed = perftest.parse(text)
    assert parsed['rows'] == [] and parsed['malformed'] == ['65536      1000             -nan               0.00\t\t   0.000000']
    assert parsed['problems'] == ['Completion with error at client', 'Failed status 12: wr_id 0 syndrom 0x81']
    cut = perftest.parse(BANNER + ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n'
                         ' 65536      1000             328.64             328.61\t\t   0.62')
    assert cut['complete'] is False  # the cell may be cut short: the closing line never came


# ---- robustness: every recorded output cut, shuffled and garbled ----


def figures(parsed):
    out = {}
    for row in parsed['rows']:
        for key, value in row.items():
            if key != 'bytes' and value is not None:
                out.setdefault((row['bytes'], key), set()).add(value)
    return out


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_cut_shuffled_garbled_never_invent_or_pass_silently(name, corpus_file, damaged_tokens):
    text = corpus_file('perftest/' + name).read_text()
    orig = perftest.parse(text)
    known = figures(orig)
    for kind, bad in damaged_tokens(text):
        parsed = perftest.parse(bad)  # never raises
        perftest.summarize(parsed)
        perftest.summarize(parsed, 8)
        if kind == 'garbled':  # (shuffled lines may put a row under another header: no claim about its columns)
            for key, values in figures(parsed).items():
                assert values <= known.get(key, set()), (kind, key, values)
        if kind == 'cut' and parsed['rows'] != orig['rows']:
            # a cut may fall inside the last figure ('0.003007' -> '0.0'): only the missing closing line tells
            assert not parsed['complete'], bad
        if kind == 'garbled' and len(parsed['rows']) < len(orig['rows']):
            assert parsed['malformed'] or not parsed['complete'] or not parsed['rows'], bad
