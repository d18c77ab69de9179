# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgmi diag parsers on every applicable recorded output and on hand-made DCGM 4 layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import dcgmi

HAND = Path(__file__).resolve().parents[2] / 'fixtures' / 'hand_made'
DEPLOYMENT_3X = ['Denylist', 'NVML Library', 'CUDA Main Library', 'Permissions and OS Blocks', 'Persistence Mode',
                 'Environment Variables', 'Page Retirement/Row Remap', 'Graphics Processes', 'Inforom']
DEPLOYMENT_1X = ['Blacklist', 'NVML Library', 'CUDA Main Library', 'Permissions and OS Blocks', 'Persistence Mode',
                 'Environment Variables', 'Page Retirement', 'Graphics Processes', 'Inforom']
# recorded diag outputs; discovery/health recordings are other dcgmi commands, not parsed here
NOT_DIAG = {'virtualclient-dcgmi-discovery-l-T4.txt', 'virtualclient-dcgmi-health-c-j.json'}


def statuses(parsed):
    return [(t['name'], t['status']) for t in parsed['tests']]


def test_every_recorded_diag_file_is_covered(corpus, corpus_full):
    files = sorted(p.name for p in (corpus / 'dcgmi_diag').glob('*')) if (corpus / 'dcgmi_diag').is_dir() else []
    covered = {'aws-p4de-8xA100-r2-dcgm333.txt', 'deepops-dcgm1x-deployment-fail-cascade.txt',
               'deepops-dcgm1x-r1-pass-blacklist-partial.txt', 'mleng-fragment-deployment-error-row-remap-pending.txt',
               'mleng-fragment-r2-gpu-memory-fail-thermal-warning.txt', 'virtualclient-diag-fail-malformed.json',
               'virtualclient-diag-r1.json', 'virtualclient-diag-r2.json'}
    if corpus_full:
        assert set(files) == covered | NOT_DIAG
    assert set(files) <= covered | NOT_DIAG


def test_dcgm333_text_r2(corpus_file):
    parsed = dcgmi.parse(corpus_file('dcgmi_diag/aws-p4de-8xA100-r2-dcgm333.txt').read_text())
    assert parsed['format'] == 'text' and parsed['preamble'] == ['Successfully ran diagnostic for group.']
    assert parsed['metadata'] == {'DCGM Version': '3.3.3', 'Driver Version Detected': '535.104.12',
                                  'GPU Device IDs Detected': '20b2,20b2,20b2,20b2,20b2,20b2,20b2,20b2'}
    assert statuses(parsed) == [(n, 'Pass') for n in DEPLOYMENT_3X] + [('PCIe', 'Pass'), ('GPU Memory', 'Pass')]
    assert parsed['tests'][9]['category'] == 'Integration' and parsed['tests'][9]['results'][0]['gpus'] == 'all'
    assert dcgmi.per_gpu(parsed)['all'] == {'PCIe': 'Pass', 'GPU Memory': 'Pass'}


def test_dcgm1x_pass_partial_table(corpus_file):
    parsed = dcgmi.parse(corpus_file('dcgmi_diag/deepops-dcgm1x-r1-pass-blacklist-partial.txt').read_text())
    assert statuses(parsed) == [(n, 'Pass') for n in DEPLOYMENT_1X]
    assert all(t['category'] == 'Deployment' for t in parsed['tests'])


def test_dcgm1x_fail_cascade(corpus_file):
    parsed = dcgmi.parse(corpus_file('dcgmi_diag/deepops-dcgm1x-deployment-fail-cascade.txt').read_text())
    assert statuses(parsed) == [(n, 'Pass') for n in DEPLOYMENT_1X[:4]] + [(n, 'Fail') for n in DEPLOYMENT_1X[4:]]


def test_wrapped_error_row_is_joined(corpus_file):
    parsed = dcgmi.parse(corpus_file('dcgmi_diag/mleng-fragment-deployment-error-row-remap-pending.txt').read_text())
    test = parsed['tests'][0]
    assert test['status'] == 'Fail' and test['category'] == 'Deployment'
    assert test['messages'] == [{'kind': 'Error', 'gpus': [3],
                                 'text': 'GPU 3 has uncorrectable memory errors and row remappings are pending'}]


def test_split_pass_fail_and_wrapped_warning(corpus_file):
    parsed = dcgmi.parse(corpus_file('dcgmi_diag/mleng-fragment-r2-gpu-memory-fail-thermal-warning.txt').read_text())
    test = parsed['tests'][0]
    assert test['name'] == 'GPU Memory' and test['status'] == 'Fail'
    assert test['results'] == [{'status': 'Pass', 'gpus': [1, 2, 3, 4, 5, 6, 7], 'entity': None},
                               {'status': 'Fail', 'gpus': [0], 'entity': None}]
    assert test['messages'][0]['text'] == (
        'GPU 0 Thermal violations totaling 13.3 seconds started at 9.7 seconds into the test for GPU 0 Verify that '
        'the cooling on this machine is functional, including external, thermal material interface, fans, and any '
        'other components.')
    assert dcgmi.per_gpu(parsed)['0'] == {'GPU Memory': 'Fail'} and dcgmi.per_gpu(parsed)['7'] == {'GPU Memory': 'Pass'}


@pytest.mark.parametrize('name,ntests', [('virtualclient-diag-r1.json', 9), ('virtualclient-diag-r2.json', 11)])
def test_dcgm3_json(name, ntests, corpus_file):
    parsed = dcgmi.parse(corpus_file('dcgmi_diag/' + name).read_text())
    assert parsed['format'] == 'json' and len(parsed['tests']) == ntests
    assert all(t['status'] == 'Pass' for t in parsed['tests'])
    if ntests == 11:
        memory = parsed['tests'][10]
        assert (memory['category'], memory['name'], memory['results'][0]['gpus']) == ('Hardware', 'GPU Memory', [0])
        assert memory['messages'] == [{'kind': 'Info', 'gpus': [0], 'text': 'GPU 0 Allocated 15206918958 bytes (97.3%)',
                                       'error_id': None}]
        assert '13.15 GB/s' in parsed['tests'][9]['messages'][0]['text']


def test_malformed_json_fails_clearly(corpus_file):
    with pytest.raises(dcgmi.DcgmiParseError, match='has no "DCGM Diagnostic"/"DCGM GPU Diagnostic" object'):
        dcgmi.parse(corpus_file('dcgmi_diag/virtualclient-diag-fail-malformed.json').read_text())
    with pytest.raises(dcgmi.DcgmiParseError, match='not valid JSON'):
        dcgmi.parse('{"DCGM GPU Diagnostic": {"test_categories": [')
    with pytest.raises(dcgmi.DcgmiParseError, match='no "test_categories" list'):
        dcgmi.parse('{"DCGM GPU Diagnostic": {"version": "3.1.7"}}')


def test_dcgm4_json_hand_made():
    parsed = dcgmi.parse((HAND / 'dcgmi-diag-r2-dcgm4-json-memory-fail-HANDMADE.json').read_text())
    assert parsed['metadata'] == {'DCGM Version': '4.1.1', 'Driver Version Detected': '550.54.15'}
    assert statuses(parsed) == [('software', 'Pass'), ('pcie', 'Skip'), ('memory', 'Fail')]
    memory = parsed['tests'][2]
    assert memory['results'][1] == {'status': 'Fail', 'gpus': [1], 'entity': 'GPU1'}
    assert memory['messages'][0]['error_id'] == 26 and memory['messages'][0]['gpus'] == [1]
    assert dcgmi.per_gpu(parsed)['1'] == {'software': 'Pass', 'pcie': 'Skip', 'memory': 'Fail'}


def test_dcgm4_text_hand_made():
    parsed = dcgmi.parse((HAND / 'dcgmi-diag-r2-dcgm4-text-per-gpu-warn-HANDMADE.txt').read_text())
    assert statuses(parsed) == [('software', 'Pass'), ('pcie', 'Pass'), ('memory', 'Pass'), ('targeted_power', 'Warn')]
    power = parsed['tests'][3]
    assert power['results'][2] == {'status': 'Warn', 'gpus': [1], 'entity': 'GPU1'}
    assert power['messages'] == [{'kind': 'Warning', 'gpus': [1],
                                  'text': 'GPU 1 Thermal violations totaling 13.3 seconds started at 9.7 seconds into the test'}]


def test_dcgm4_runtime_error_json():
    parsed = dcgmi.parse('{"DCGM Diagnostic": {"runtime_error": "Unable to find any GPUs"}, "metadata": {"version": "4.2.3"}}')
    assert parsed['runtime_error'] == 'Unable to find any GPUs' and parsed['tests'] == []


def test_worst():
    assert dcgmi.worst(['Pass', 'Skip', 'Warn']) == 'Warn'
    assert dcgmi.worst(['Pass', 'Fail', 'Warn']) == 'Fail'
    assert dcgmi.worst([None, 'Pass']) == 'Pass' and dcgmi.worst([]) is None


# ---- DCGM 4 layouts and unreadable results (see tests/fixtures/hand_made/dcgmi_diag/README.md) ----

TOOLS_HAND = Path(__file__).resolve().parents[3] / 'fixtures' / 'hand_made' / 'dcgmi_diag'


def test_dcgm4_test_level_fail_with_passing_gpus_hand_made():
    """NVIDIA/DCGM issue #253 layout: '| pcie | Fail |', a wrapped Warning, then 'GPUn: Pass' rows."""
    parsed = dcgmi.parse((TOOLS_HAND / 'dcgmi-diag-r2-dcgm4-pcie-internal-error-HANDMADE.txt').read_text())
    assert parsed['metadata']['DCGM Version'] == '4.2.3' and parsed['complete'] is True
    assert statuses(parsed) == [('software', 'Pass'), ('memory', 'Pass'), ('pcie', 'Fail')]
    pcie = parsed['tests'][2]
    assert pcie['results'] == [{'status': 'Fail', 'gpus': None, 'entity': None},
                               {'status': 'Pass', 'gpus': [0], 'entity': 'GPU0'},
                               {'status': 'Pass', 'gpus': [1], 'entity': 'GPU1'}]
    assert pcie['messages'] == [{'kind': 'Warning', 'gpus': None, 'text': (
        "There was an internal error during the test: 'A child process (4242) exited with non-zero status 1' "
        'Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics.')}]
    assert dcgmi.per_gpu(parsed)['system']['pcie'] == 'Fail' and dcgmi.per_gpu(parsed)['1']['pcie'] == 'Pass'


def test_unreadable_result_is_a_failure_never_a_pass():
    """A cut-off status word gives Fail with an Error message."""
    cut = dcgmi.parse('| Diagnostic                | Result                                         |\n'
                      '|-----  Deployment  --------+------------------------------------------------|\n'
                      '| software                  | Pa')
    assert statuses(cut) == [('software', 'Fail')] and cut['complete'] is False
    assert cut['tests'][0]['messages'] == [{'kind': 'Error', 'gpus': None, 'text': "unrecognised result 'Pa'"}]


def test_output_of_another_dcgmi_command_is_not_a_pass(corpus_file):
    """'dcgmi discovery -l' parsed as a diag table: every 'test' fails, nothing reads as passed."""
    discovery = dcgmi.parse(corpus_file('dcgmi_diag/virtualclient-dcgmi-discovery-l-T4.txt').read_text())
    assert discovery['tests'] and all(t['status'] == 'Fail' for t in discovery['tests'])


def test_dcgm4_json_summary_messages_and_unknown_status():
    doc = {'DCGM Diagnostic': {'test_categories': [{'category': 'Deployment', 'tests': [
        {'name': 'software', 'results': [{'entity_group': 'GPU', 'entity_group_id': 1, 'entity_id': 0, 'status': 'Pass'}],
         'test_summary': {'status': 'Pass', 'info': ['SRAM Threshold checking was skipped.']}},
        {'name': 'memory', 'results': [{'entity_group': 'GPU', 'entity_id': 0, 'status': 'Bogus'}]},
        {'name': 'pcie', 'results': []}]}]}, 'metadata': {'version': '4.2.3'}}
    parsed = dcgmi.parse(json.dumps(doc))
    assert statuses(parsed) == [('software', 'Pass'), ('memory', 'Fail'), ('pcie', 'Fail')]
    assert parsed['tests'][0]['messages'] == [{'kind': 'Info', 'gpus': None, 'text': 'SRAM Threshold checking was skipped.',
                                               'error_id': None}]
    assert parsed['tests'][1]['messages'][0]['text'] == "unrecognised result status 'Bogus'"
    assert parsed['tests'][2]['messages'][0]['text'] == 'no result status in the dcgmi diag output for this test'


@pytest.mark.parametrize('doc', [
    {'DCGM Diagnostic': {'test_categories': {'category': 'x'}}},
    {'DCGM Diagnostic': {'test_categories': [{'category': 'x', 'tests': ['software']}]}},
    {'DCGM Diagnostic': {'test_categories': [{'category': 'x', 'tests': [{'name': 'a', 'results': [7]}]}]}},
    {'DCGM Diagnostic': {'test_categories': [{'category': 'x', 'tests': [{'name': 'a', 'results': {'status': 'Pass'}}]}]}},
    {'DCGM Diagnostic': {'test_categories': [{'category': 'x', 'tests': [
        {'name': 'a', 'results': [{'entity_id': 'zero', 'status': 'Pass'}]}]}]}},
    {'DCGM Diagnostic': {'test_categories': [{'category': 'x', 'tests': [{'name': 'a', 'test_summary': 'Pass'}]}]}},
    {'DCGM Diagnostic': {'test_categories': [{'category': 'x', 'tests': [{'name': ['a'], 'results': []}]}]}},
])
def test_json_of_unexpected_shape_raises_the_documented_error(doc):
    with pytest.raises(dcgmi.DcgmiParseError):
        dcgmi.parse(json.dumps(doc))


# ---- robustness: every recorded output cut, shuffled and garbled ----


def overall(parsed):
    """Worst status of the run; a test without a status counts as Fail; no test at all is a Fail too."""
    return dcgmi.worst([t['status'] or 'Fail' for t in parsed['tests']] or ['Fail'])


DIAG_FILES = ['aws-p4de-8xA100-r2-dcgm333.txt', 'deepops-dcgm1x-deployment-fail-cascade.txt',
              'deepops-dcgm1x-r1-pass-blacklist-partial.txt', 'mleng-fragment-deployment-error-row-remap-pending.txt',
              'mleng-fragment-r2-gpu-memory-fail-thermal-warning.txt', 'virtualclient-diag-r1.json',
              'virtualclient-diag-r2.json', 'virtualclient-diag-fail-malformed.json']


@pytest.mark.parametrize('name', DIAG_FILES)
def test_cut_shuffled_garbled_never_pass_silently(name, corpus_file, damaged_tokens):
    text = corpus_file('dcgmi_diag/' + name).read_text()
    try:
        orig = overall(dcgmi.parse(text))
    except dcgmi.DcgmiParseError:
        orig = 'Fail'
    for kind, bad in damaged_tokens(text):
        try:
            parsed = dcgmi.parse(bad)
        except dcgmi.DcgmiParseError:  # the documented error (JSON): a clear failure
            continue
        dcgmi.per_gpu(parsed)
        if kind == 'cut' and not parsed.get('complete', True):
            continue  # cut short: said so (later tests may be missing)
        assert dcgmi.STATUS_ORDER[overall(parsed)] >= dcgmi.STATUS_ORDER[orig], (kind, bad)


def _paths(node, path=()):
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in children:
        yield from _paths(value, path + (key,))


@pytest.mark.parametrize('name', ['virtualclient-diag-r1.json', 'virtualclient-diag-r2.json'])
def test_json_with_any_value_of_another_type(name, corpus_file):
    """Every value of the recorded JSON replaced in turn by a value of another type: a result or the documented
    error, never another exception; a status that is no longer a status word never reads as a pass."""
    doc = json.loads(corpus_file('dcgmi_diag/' + name).read_text())
    for path in list(_paths(doc))[1:]:
        for odd in (None, 7, 'x', [], {}, [None]):
            bad = json.loads(json.dumps(doc))
            parent = bad
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = odd
            try:
                parsed = dcgmi.parse(json.dumps(bad))
            except dcgmi.DcgmiParseError:
                continue
            dcgmi.per_gpu(parsed)
            if path[-1] == 'status':
                assert overall(parsed) == 'Fail', (path, odd)
