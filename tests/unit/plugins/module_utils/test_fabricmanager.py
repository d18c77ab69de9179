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
    assert res == {'nothing_to_do': True, 'failed': True, 'pre_nvl5': True, 'driver_mismatch': None,
                   'configured': False}


def test_journal_localised_date(corpus):
    text = (corpus / 'fabricmanager/gpuoperator-issue610-journal-nothing-to-do-zh-date.txt').read_text(encoding='utf-8')
    res = fm.parse_journal(text)
    assert res['nothing_to_do'] is True and res['failed'] is True and res['pre_nvl5'] is False


def test_journal_driver_mismatch(corpus):
    res = fm.parse_journal((corpus / 'fabricmanager/gpuoperator-issue544-fm-530-mismatch-line.txt').read_text())
    assert res['driver_mismatch'] == {'fm_version': '530.30.02', 'driver_version': '530.41.03'}
    assert res['nothing_to_do'] is False


# HANDMADE journal of a good NVL5 start, modeled on public `journalctl -u nvidia-fabricmanager`
# excerpts seen through the search index (index file ids 63125688786, 61449772639): the
# "Successfully configured all the available GPUs and NVSwitches ..." notice after OpenSM/partition lines.
JOURNAL_OK_HANDMADE = """Aug 27 07:13:10 node1 systemd[1]: Starting nvidia-fabricmanager.service - NVIDIA fabric manager service...
Aug 27 07:13:21 node1 nv-fabricmanager[31082]: NodeId 0 partition id 1 is activated.
Aug 27 07:13:21 node1 nv-fabricmanager[31082]: Successfully configured all the available GPUs and NVSwitches to route NVLink traffic.
Aug 27 07:13:21 node1 systemd[1]: Started nvidia-fabricmanager.service - NVIDIA fabric manager service.
"""


def test_journal_configured_then_failed_restart():
    ok = fm.parse_journal(JOURNAL_OK_HANDMADE)
    assert ok == {'nothing_to_do': False, 'failed': False, 'pre_nvl5': False, 'driver_mismatch': None,
                  'configured': True}
    # HANDMADE: a later restart that fails (systemd's "Failed with result" line): not configured any more
    later = JOURNAL_OK_HANDMADE + (
        "Aug 27 09:00:00 node1 systemd[1]: Starting nvidia-fabricmanager.service - NVIDIA fabric manager service...\n"
        "Aug 27 09:00:02 node1 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.\n")
    res = fm.parse_journal(later)
    assert res['failed'] is True and res['configured'] is False


def test_log_configured_and_mismatch_handmade():
    # HANDMADE fabricmanager.log lines in the recorded "[date] [LEVEL] [tid N] msg" layout
    log = ("[Jan 10 2025 10:00:00] [INFO] [tid 100] Fabric Manager version 550.90.07 is running with the following "
           "configuration options\n"
           "[Jan 10 2025 10:00:30] [INFO] [tid 100] Successfully configured all the available GPUs and NVSwitches "
           "to route NVLink traffic.\n"
           "[Jan 11 2025 08:00:00] [INFO] [tid 200] Fabric Manager version 550.90.07 is running with the following "
           "configuration options\n"
           "[Jan 11 2025 08:00:01] [ERROR] [tid 200] fabric manager NVIDIA GPU driver interface version 550.90.07 "
           "don't match with driver version 550.127.05. Please update with matching NVIDIA driver package.\n")
    summary = fm.parse_log(log)
    assert (summary['version'], summary['starts'], summary['configured']) == ('550.90.07', 2, False)
    assert summary['driver_mismatch'] == {'fm_version': '550.90.07', 'driver_version': '550.127.05'}
    assert fm.parse_log(log.split('[Jan 11', 1)[0])['configured'] is True
    assert fm.parse_log('')['configured'] is None


def test_damaged_recordings_never_crash(corpus):
    import random
    for path in sorted((corpus / 'fabricmanager').glob('*')):
        text = path.read_text(encoding='utf-8', errors='replace')
        lines = text.splitlines(True)
        variants = [text[:i] for i in range(0, len(text), max(1, len(text) // 30))]
        rnd = random.Random(5)
        for dummy in range(30):
            ls = list(lines)
            if ls:
                i = rnd.randrange(len(ls))
                ls[i] = rnd.choice(['[', '[x] [y] z\n', ls[i].replace(']', '', 1), ls[i].replace(' ', '', 4)])
            variants.append(''.join(ls))
        for variant in variants + [None, '\x00\xff']:
            assert fm.parse_version(variant) is None or fm.parse_version(variant)[0].isdigit()
            summary = fm.parse_log(variant)
            assert isinstance(summary['starts'], int) and isinstance(summary['nvswitch_errors'], list)
            assert set(fm.parse_journal(variant)) == {'nothing_to_do', 'failed', 'pre_nvl5', 'driver_mismatch',
                                                      'configured'}
