# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""acceptance role, entry point report (issue #18): the real report tasks in a local playbook over the fleet of
tests/unit/fleet_report_corpus.py (REAL recorded nccl-tests / gpu-burn / p2p / perftest outputs parsed by the
collection's parsers, spread over SYNTHETIC node names; one PLANTED slow node, one node slower than its history kept
in history/). Both are flagged warn in every form - JSON, Markdown, JUnit, the Prometheus outlier metrics and
report.html - and nothing else; a second run changes nothing; a bad percentage or rung is refused naming the
variable. (A profile that fails outliers: tests/unit/plugins/plugin_utils/test_outliers.py.)"""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

import fleet_report_corpus as F

pytestmark = pytest.mark.playbook  # runs ansible-playbook: compat's CI run leaves it to compat-full

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Report
      ansible.builtin.include_role:
        name: gpufleet.cluster.acceptance
        tasks_from: report
      vars:
        acceptance_report_hosts: "{{ groups['gpu_nodes'] }}"
"""


def _play(tmp, extra=None, check=False):
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.isfile(ansible_playbook):
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')
    argv = [ansible_playbook, '-i', str(tmp / 'hosts.json'), str(tmp / 'play.yml')]
    for k, v in (extra or {}).items():
        argv += ['-e', json.dumps({k: v})]
    if check:
        argv.append('--check')
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)


def _site_report_play(tmp):
    """PLAYBOOK plus verify.yml's own site report tasks after it (taken from playbooks/verify_report.yml, which
    verify.yml imports, not copied)."""
    plays = yaml.safe_load(open(os.path.join(REPO, 'playbooks', 'verify_report.yml')).read())
    (report_play,) = [p for p in plays if p.get('name') == 'Write the report']
    (unsliced,) = [t for t in report_play['tasks'] if t.get('name') == 'Write the reports']
    tasks = dict((t['name'], t) for t in unsliced['block'])
    site_json, site_md = tasks['Write the JSON report'], tasks['Write the Markdown report']
    site_md['ansible.builtin.template']['src'] = os.path.join(REPO, 'playbooks', 'templates', 'report.md.j2')
    play = yaml.safe_load(PLAYBOOK)[0]
    play['vars'] = {'__report_hosts': "{{ groups['gpu_nodes'] }}", '__report_dir': str(tmp / 'reports'),
                    '__outliers': report_play['vars']['__outliers'], '__outlier_of': report_play['vars']['__outlier_of']}
    play['tasks'] += [site_json, site_md]
    return yaml.safe_dump([play], sort_keys=False)


def _setup(tmp, fig):
    results = F.results(fig)
    hosts = dict((h, {'acceptance_result': r}) for h, r in results.items())
    (tmp / 'hosts.json').write_text(json.dumps({'all': {'children': {'gpu_nodes': {'hosts': hosts}}, 'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
        'acceptance_report_dir': str(tmp / 'reports'), 'acceptance_report_drift_file': str(tmp / 'none.json'),
        'acceptance_report_journal_dir': str(tmp / 'none')}}}))
    (tmp / 'play.yml').write_text(_site_report_play(tmp))
    # (a report directory without history/ is test_acceptance_container_gpus.py's case)
    (tmp / 'reports' / 'history').mkdir(parents=True)
    (tmp / 'reports' / 'history' / 'acceptance-report-20260801T000000Z.json').write_text(json.dumps(F.history(fig)))


@pytest.fixture(scope='module')
def fig():
    from conftest import CORPUS
    if CORPUS is None or not all((CORPUS / f).is_file() for f in F.FILES):
        pytest.skip('the recorded nccl/gpu-burn/p2p/perftest outputs are not all in the corpus (full corpus not found)')
    return F.parse_corpus(CORPUS)


@pytest.fixture(scope='module')
def run(tmp_path_factory, fig):
    tmp = tmp_path_factory.mktemp('acc-report')
    _setup(tmp, fig)
    first = _play(tmp)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    second = _play(tmp)
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-2000:]
    return tmp, first, second


def test_json_flags_the_two_planted_nodes_and_nothing_else(run):
    tmp, dummy, dummy2 = run
    rep = json.loads((tmp / 'reports' / 'acceptance-report.json').read_text())
    flagged = set((h, r['rung']) for h, n in rep['nodes'].items() for r in n['rungs'] if r.get('outlier'))
    assert flagged == F.EXPECTED
    assert rep['summary']['warned'] == 2 and rep['summary']['failed'] == 0
    assert rep['nodes']['gpu-a06']['outlier'] == 'warn' and rep['nodes']['gpu-a06']['status'] == 'passed'
    assert rep['outliers']['percent'] == 5.0
    # the rack and the plotted detail come through the report
    assert rep['nodes']['gpu-a05']['rack'] == 'r02'
    nccl = [r for r in rep['nodes']['gpu-a01']['rungs'] if r['rung'] == 'nccl_bench'][0]
    assert nccl['detail']['busbw_by_size'][-1] == [8589934592, 235.26]


def test_markdown_junit_and_prometheus_say_warn(run):
    tmp, dummy, dummy2 = run
    md = (tmp / 'reports' / 'acceptance-report.md').read_text()
    assert '2 outlier(s) (2 warn)' in md
    assert re.search(r'^\| gpu-a06 \| profile_a100 \| passed, \*\*warn\*\*: outlier \|', md, re.M)
    assert '- **gpu-a03** (warn): gpu_burn: ' in md and "below this node's previous accepted" in md
    assert '- **gpu-a06** (warn): nccl_bench: ' in md and 'fewer than 4: not compared' in md
    assert md.count('**warn**: outlier') == 4  # two result cells, two rung cells
    root = ET.parse(str(tmp / 'reports' / 'acceptance-junit.xml')).getroot()
    outl = dict((s.get('name'), p.get('value')) for s in root.iter('testsuite') for p in s.find('properties')
                if p.get('name') == 'outlier')
    assert sorted(outl) == ['gpu-a03', 'gpu-a06'] and outl['gpu-a06'].startswith('warn: nccl_bench: ')
    prom = (tmp / 'reports' / 'acceptance-outliers.prom').read_text()
    lines = [ln for ln in prom.splitlines() if ln.startswith('gpufleet_acceptance_outlier{')]
    assert sorted(lines) == sorted([
        'gpufleet_acceptance_outlier{node="gpu-a03",profile="profile_a100",rung="gpu_burn",device="",basis="history",'
        'status="warn"} 1',
        'gpufleet_acceptance_outlier{node="gpu-a06",profile="profile_a100",rung="nccl_bench",device="",basis="fleet",'
        'status="warn"} 1',
        'gpufleet_acceptance_outlier{node="gpu-a06",profile="profile_a100",rung="nccl_bench",device="",basis="history",'
        'status="warn"} 1'])
    assert 'gpufleet_acceptance_outlier_nodes 2' in prom


def test_site_report_marks_the_two_planted_nodes_and_nothing_else(run):
    tmp, dummy, dummy2 = run
    site = json.loads((tmp / 'reports' / 'site-report.json').read_text())
    assert sorted(h for h, v in site.items() if 'outlier' in v) == ['gpu-a03', 'gpu-a06']
    assert site['gpu-a06']['outlier']['status'] == 'warn'
    assert site['gpu-a06']['outlier']['messages'][0].startswith('nccl_bench: ')
    assert site['gpu-a03']['outlier']['messages'][0].startswith('gpu_burn: ')
    md = (tmp / 'reports' / 'site-report.md').read_text()
    outliers = md.split('## Outliers', 1)[1].split('\n\n', 2)[2].split('\n\n')[0].splitlines()
    assert [line.split(' ')[1] for line in outliers] == ['**gpu-a03**', '**gpu-a06**'], outliers
    assert all(' (warn): ' in line for line in outliers)


def test_html_names_the_planted_nodes_and_needs_no_network(run):
    tmp, dummy, dummy2 = run
    page = (tmp / 'reports' / 'report.html').read_text()
    assert page.count('<svg') >= 6  # four rungs, the nccl curves, at least one heat map
    for name in ('gpu-a06', 'gpu-a03'):
        assert page.count(name) >= 3
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:|//)', page)
    assert "default-src &#x27;none&#x27;" in page


def test_history_kept_once_and_second_run_changes_nothing(run):
    tmp, dummy, second = run
    kept = sorted(os.listdir(str(tmp / 'reports' / 'history')))
    assert len(kept) == 2 and kept[0] == 'acceptance-report-20260801T000000Z.json'
    assert re.search(r'localhost\s*: ok=\d+\s+changed=0 ', second.stdout), second.stdout[-3000:]
    assert '[WARNING]' not in second.stdout + second.stderr, second.stdout[-3000:] + second.stderr


@pytest.mark.parametrize('extra, text', [
    ({'acceptance_outlier_percent': -5}, 'acceptance_outlier_percent: -5 is not allowed'),
    # the role's argument spec refuses it first, naming the variable and the allowed rungs
    ({'acceptance_outlier_rungs': ['nccl_bench', 'dcgm']}, 'value of acceptance_outlier_rungs must be one or more of: '
                                                           'gpu_burn, p2p_bandwidth, nccl_bench, rdma_bw. Got no match for: dcgm'),
])
def test_bad_input_refused_before_anything_is_written(tmp_path, fig, extra, text):
    _setup(tmp_path, fig)
    res = _play(tmp_path, extra)
    assert res.returncode != 0 and text in res.stdout, res.stdout[-3000:]
    assert not (tmp_path / 'reports' / 'acceptance-report.json').exists()
