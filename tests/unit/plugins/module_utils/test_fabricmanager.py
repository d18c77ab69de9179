# -*- coding: utf-8 -*-
"""fabricmanager parsers against recorded --version outputs, logs and journal lines."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import fabricmanager as fm


@pytest.mark.parametrize('name, version', [
    ('nv-fabricmanager-version-450.txt', '450.102.04'),
    ('nv-fabricmanager-version-580.txt', '580.159.03'),
])
def test_version(corpus_file, name, version):
    assert fm.parse_version(corpus_file('fabricmanager/' + name).read_text()) == version


def test_version_absent():
    assert fm.parse_version('nv-fabricmanager: command not found') is None
    assert fm.parse_version('') is None


def test_log_with_nvswitch_errors(corpus):
    summary = fm.parse_log((corpus / 'fabricmanager/gpud-fabricmanager-535.161.08-nvswitch-errors.log').read_text())
    assert summary['version'] == '535.161.08'
    assert summary['starts'] == 2
    assert summary['levels']['ERROR'] == 18
    errors = summary['nvswitch_errors']
    assert len(errors) == 9  # each error line is logged twice
    assert errors[0] == {'time': 'Dec 19 2024 19:17:49', 'kind': 'non-fatal', 'code': 12028,
                         'pci_bus_id': '00000000:83:00.0', 'physical_id': 0, 'port': 34}
    assert {e['pci_bus_id'] for e in errors} == {'00000000:83:00.0', '00000000:84:00.0', '00000000:85:00.0',
                                                 '00000000:86:00.0'}


def test_runtime_log_without_start(corpus):
    summary = fm.parse_log((corpus / 'fabricmanager/gpud-fabricmanager-multicast-runtime.log').read_text())
    assert summary['version'] is None and summary['starts'] == 0
    assert summary['levels'] == {'INFO': 53, 'ERROR': 1}
    assert summary['last_error'].startswith('[Feb 27 2025 15:10:02] detected NVSwitch non-fatal error 12028')


def test_log_line():
    line = '[Dec 19 2024 19:17:49] [ERROR] [tid 1374] detected NVSwitch non-fatal error 12028 on fid 0'
    assert fm.parse_log_line(line) == {'time': 'Dec 19 2024 19:17:49', 'level': 'ERROR', 'tid': 1374,
                                       'message': 'detected NVSwitch non-fatal error 12028 on fid 0'}
    assert fm.parse_log_line('Message payload details:Team release request') is None


def test_journal_nothing_to_do_pre_nvl5(corpus):
    res = fm.parse_journal((corpus / 'fabricmanager/cubestudio-issue29-journal-nothing-to-do-pre-nvl5.txt').read_text())
    assert res == {'nothing_to_do': True, 'failed': True, 'pre_nvl5': True, 'driver_mismatch': None}


def test_journal_localised_date(corpus):
    text = (corpus / 'fabricmanager/gpuoperator-issue610-journal-nothing-to-do-zh-date.txt').read_text(encoding='utf-8')
    res = fm.parse_journal(text)
    assert res['nothing_to_do'] is True and res['failed'] is True and res['pre_nvl5'] is False


def test_journal_driver_mismatch(corpus):
    res = fm.parse_journal((corpus / 'fabricmanager/gpuoperator-issue544-fm-530-mismatch-line.txt').read_text())
    assert res['driver_mismatch'] == {'fm_version': '530.30.02', 'driver_version': '530.41.03'}
    assert res['nothing_to_do'] is False
