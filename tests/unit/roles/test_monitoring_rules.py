# -*- coding: utf-8 -*-
"""The shipped alert rules (roles/monitoring_server/templates/gpufleet-alerts.rules.yml.j2) under promtool.

The template is rendered the way the role renders it ([[ ]] variables, [% %] blocks, the role's default thresholds
and `for:` durations), then:
  * ``promtool check rules`` on the full file (PromQL and annotation templates parse);
  * ``promtool test rules`` on fixtures/monitoring/gpufleet-alerts.test.yml against a copy without annotations
    (exp_alerts then list labels only), and one annotation test on the full file;
  * every alert has a firing test and a non-firing test, and a severity of page or ticket.
promtool is Debian's (package prometheus); scripts/setup extracts it to /var/cache/gpufleet/promtool. The promtool
tests skip when it is absent; the structural checks always run."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
ROLE = ROOT / 'roles' / 'monitoring_server'
FIXTURES = Path(__file__).resolve().parent / 'fixtures' / 'monitoring'
TESTS = FIXTURES / 'gpufleet-alerts.test.yml'
TEST_FILES = sorted(FIXTURES.glob('*.test.yml'))


def promtool():
    found = os.environ.get('GPUFLEET_PROMTOOL') or shutil.which('promtool')
    if not found:
        cached = sorted(glob.glob('/var/cache/gpufleet/promtool/*/usr/bin/promtool'))
        found = cached[-1] if cached else None
    return found


def render(thresholds=None, durations=None):
    internal = yaml.safe_load((ROLE / 'vars' / 'main.yml').read_text())
    t = dict(internal['__monitoring_server_threshold_defaults'], **(thresholds or {}))
    f = dict(internal['__monitoring_server_for_defaults'], **(durations or {}))
    env = jinja2.Environment(variable_start_string='[[', variable_end_string=']]', block_start_string='[%',
                             block_end_string='%]', undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = env.from_string((ROLE / 'templates' / 'gpufleet-alerts.rules.yml.j2').read_text())
    return template.render(__t=t, __for=f, ansible_managed='test render')


def alerts(text):
    return [r for g in yaml.safe_load(text)['groups'] for r in g['rules'] if 'alert' in r]


def run(tool, *args, cwd):
    res = subprocess.run([tool] + list(args), cwd=str(cwd), capture_output=True, text=True, timeout=120, check=False)
    return res.returncode, res.stdout + res.stderr


def test_every_alert_is_graded_and_tested_both_ways():
    rules = alerts(render())
    names = [r['alert'] for r in rules]
    assert len(names) == len(set(names)), 'alert names must be unique'
    assert {r['labels']['severity'] for r in rules} <= {'page', 'ticket'}
    assert all(r['labels'].get('severity') for r in rules)
    issue = {'GpuTemperatureHigh', 'GpuXidError', 'GpuEccUncorrectable', 'GpuRowRemapFailure', 'GpuFellOffTheBus',
             'IbPortDown', 'IbPortFlapping', 'IbSymbolErrorsRising', 'IbPortRateBelowProfile', 'NodeExporterDown',
             'AcceptanceFailed', 'AcceptanceStale', 'DriftDetected', 'FilesystemAboveThreshold'}
    assert issue <= set(names)
    internal = yaml.safe_load((ROLE / 'vars' / 'main.yml').read_text())
    assert set(internal['__monitoring_server_for_defaults']) == set(names), 'one for: default per alert'
    firing, quiet = set(), set()
    for path in TEST_FILES:
        for group in yaml.safe_load(path.read_text())['tests']:
            for case in group['alert_rule_test']:
                (firing if case.get('exp_alerts') else quiet).add(case['alertname'])
    assert set(names) - firing == set(), 'alerts without a firing test'
    assert set(names) - quiet == set(), 'alerts without a non-firing test'


def test_for_and_thresholds_are_rendered():
    text = render(thresholds={'gpu_temp_ticket_c': 77, 'ib_error_window': '2m'}, durations={'IbPortDown': '7s'})
    by_name = {r['alert']: r for r in alerts(text)}
    assert by_name['GpuTemperatureHigh']['expr'] == 'DCGM_FI_DEV_GPU_TEMP >= 77'
    assert by_name['IbPortDown']['for'] == '7s'
    assert '[2m]' in by_name['IbSymbolErrorsRising']['expr']
    assert '{{ $labels.node }}' in by_name['IbPortDown']['annotations']['summary']


@pytest.fixture
def tool():
    found = promtool()
    if not found:
        pytest.skip('promtool not found (Debian package prometheus; scripts/setup extracts it)')
    return found


def test_promtool_check_rules(tool, tmp_path):
    (tmp_path / 'r.yml').write_text(render())
    rc, out = run(tool, 'check', 'rules', 'r.yml', cwd=tmp_path)
    assert rc == 0, out
    assert 'SUCCESS: %d rules found' % len(alerts(render())) in out


def test_promtool_rule_tests(tool, tmp_path):
    doc = yaml.safe_load(render())
    for group in doc['groups']:
        for rule in group['rules']:
            rule.pop('annotations', None)
    (tmp_path / 'gpufleet-alerts.rules.yml').write_text(yaml.safe_dump(doc, sort_keys=False))
    for path in TEST_FILES:
        shutil.copy(str(path), str(tmp_path / path.name))
    rc, out = run(tool, 'test', 'rules', *[p.name for p in TEST_FILES], cwd=tmp_path)
    assert rc == 0, out
    assert out.count('SUCCESS') == len(TEST_FILES), out


def test_promtool_annotations(tool, tmp_path):
    (tmp_path / 'gpufleet-alerts.rules.yml').write_text(render())
    case = {'rule_files': ['gpufleet-alerts.rules.yml'], 'evaluation_interval': '1m', 'tests': [{
        'interval': '1m',
        'input_series': [{'series': 'DCGM_FI_DEV_GPU_TEMP{node="n2",gpu="3"}', 'values': '95x10'},
                         {'series': 'gpufleet_filesystem_used_ratio{node="n1",mountpoint="/data"}', 'values': '0.985x10'}],
        'alert_rule_test': [
            {'eval_time': '5m', 'alertname': 'GpuTemperatureCritical', 'exp_alerts': [{
                'exp_labels': {'severity': 'page', 'node': 'n2', 'gpu': '3'},
                'exp_annotations': {'summary': 'GPU 3 on n2 at 95 C (page at 90 C)'}}]},
            {'eval_time': '5m', 'alertname': 'FilesystemFull', 'exp_alerts': [{
                'exp_labels': {'severity': 'page', 'node': 'n1', 'mountpoint': '/data'},
                'exp_annotations': {'summary': '/data on n1 is 98.5% full (page at 0.97)'}}]}]}]}
    (tmp_path / 'ann.yml').write_text(yaml.safe_dump(case))
    rc, out = run(tool, 'test', 'rules', 'ann.yml', cwd=tmp_path)
    assert rc == 0, out


def test_a_wrong_expectation_fails(tool, tmp_path):
    """The harness can fail: the healthy group expecting an alert must make promtool exit non-zero."""
    doc = yaml.safe_load(render())
    for group in doc['groups']:
        for rule in group['rules']:
            rule.pop('annotations', None)
    (tmp_path / 'gpufleet-alerts.rules.yml').write_text(yaml.safe_dump(doc, sort_keys=False))
    tests = yaml.safe_load(TESTS.read_text())
    healthy = tests['tests'][0]
    healthy['alert_rule_test'][0]['exp_alerts'] = [{'exp_labels': {'severity': 'ticket', 'node': 'n1', 'gpu': '0'}}]
    tests['tests'] = [healthy]
    (tmp_path / 'tests.yml').write_text(yaml.safe_dump(tests))
    rc, out = run(tool, 'test', 'rules', 'tests.yml', cwd=tmp_path)
    assert rc != 0 and 'FAILED' in out
