# -*- coding: utf-8 -*-
"""plugins/plugin_utils/_monitoring.py: exporter ARGS, scrape jobs from the inventory, prometheus.yml merge."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._monitoring import (
    MonitoringError, exporter_args, prometheus_config, scrape_configs)

DEBIAN_DEFAULT = '# Set the command-line arguments to pass to the server.\nARGS=""\n'


def test_exporter_args_on_debian_default_and_missing_file():
    managed = {'--collector.textfile.directory': '/var/lib/x', '--web.listen-address': ':9100'}
    assert exporter_args(DEBIAN_DEFAULT, managed) == '--collector.textfile.directory=/var/lib/x --web.listen-address=:9100'
    assert exporter_args('', managed) == exporter_args(DEBIAN_DEFAULT, managed)


def test_exporter_args_keeps_user_flags_and_replaces_both_forms():
    text = 'ARGS="--collector.systemd --web.listen-address :9200 --collector.textfile.directory=/old --no-collector.wifi"\n'
    got = exporter_args(text, {'--collector.textfile.directory': '/new', '--web.listen-address': ':9100'})
    assert got == '--collector.systemd --no-collector.wifi --collector.textfile.directory=/new --web.listen-address=:9100'
    # idempotent: the result read back gives itself
    assert exporter_args('ARGS="%s"' % got, {'--collector.textfile.directory': '/new', '--web.listen-address': ':9100'}) == got


def test_exporter_args_none_removes():
    assert exporter_args("ARGS='--a=1 --b=2'", {'--a': None}) == '--b=2'


@pytest.mark.parametrize('managed, word', [({'-x': '1'}, 'long flag'), ({'--a': 'x y'}, 'spaces'), ([], 'dict')])
def test_exporter_args_bad_input(managed, word):
    with pytest.raises(MonitoringError, match=word):
        exporter_args('', managed)


HOSTVARS = {
    'gpu-r01-n01': {'ansible_host': '10.0.1.1', 'gpufleet_profile': 'h100_ib', 'rack': 'r01',
                    'slurm_partition': 'gpu-r01', 'gpufleet_expect_gpus': 8},
    'gpu-r01-n02': {'ansible_host': '10.0.1.2', 'gpufleet_profile': 'h100_ib', 'rack': 'r01',
                    'slurm_partition': ['gpu-r01', 'all'], 'gpufleet_expect_gpus': 8,
                    'monitoring_node_dcgm_exporter': False},
    'login01': {},
    'v6': {'ansible_host': 'fd00::5', 'gpufleet_expect_gpus': 0},
    'off': {'gpufleet_monitoring': False, 'gpufleet_expect_gpus': 8},
}


def test_scrape_configs_labels_from_inventory():
    jobs = scrape_configs(sorted(HOSTVARS), HOSTVARS, scrape_interval='5s')
    node, dcgm = jobs
    assert node['job_name'] == 'gpufleet_node' and node['scrape_interval'] == '5s'
    assert node['static_configs'][0] == {'targets': ['10.0.1.1:9100'], 'labels': {
        'node': 'gpu-r01-n01', 'profile': 'h100_ib', 'rack': 'r01', 'partition': 'gpu-r01'}}
    assert node['static_configs'][1]['labels']['partition'] == 'gpu-r01,all'
    assert node['static_configs'][2] == {'targets': ['login01:9100'], 'labels': {'node': 'login01'}}
    assert node['static_configs'][3]['targets'] == ['[fd00::5]:9100']
    assert len(node['static_configs']) == 4  # 'off' turned monitoring off
    assert dcgm == {'job_name': 'gpufleet_dcgm', 'scrape_interval': '5s', 'static_configs': [
        {'targets': ['10.0.1.1:9400'], 'labels': node['static_configs'][0]['labels']}]}


def test_scrape_configs_without_gpus_has_no_dcgm_job_and_bad_port():
    assert [j['job_name'] for j in scrape_configs(['login01'], HOSTVARS)] == ['gpufleet_node']
    with pytest.raises(MonitoringError, match='monitoring_server_node_port'):
        scrape_configs(['login01'], HOSTVARS, node_port=0)


DEBIAN_PROMETHEUS_YML = """
global:
  scrape_interval:     15s
  evaluation_interval: 15s
  external_labels:
      monitor: 'example'
alerting:
  alertmanagers:
  - static_configs:
    - targets: ['localhost:9093']
rule_files:
  - /etc/prometheus/site-rules.yml
scrape_configs:
  - job_name: 'prometheus'
    static_configs:
      - targets: ['localhost:9090']
  - job_name: gpufleet_node
    static_configs:
      - targets: ['old:9100']
remote_write:
  - url: http://lts.example/api/v1/write
"""


def test_prometheus_config_merges_and_keeps_the_rest():
    jobs = scrape_configs(['login01'], HOSTVARS)
    got = prometheus_config(DEBIAN_PROMETHEUS_YML, jobs, ['/etc/prometheus/rules/*.yml'],
                            {'scrape_interval': '5s', 'evaluation_interval': '5s'}, ['localhost:9093'])
    assert got['global'] == {'scrape_interval': '5s', 'evaluation_interval': '5s', 'external_labels': {'monitor': 'example'}}
    assert [j['job_name'] for j in got['scrape_configs']] == ['prometheus', 'gpufleet_node']
    assert got['scrape_configs'][1] == jobs[0]
    assert got['rule_files'] == ['/etc/prometheus/site-rules.yml', '/etc/prometheus/rules/*.yml']
    assert got['remote_write'] == [{'url': 'http://lts.example/api/v1/write'}]
    # the merge of its own output is itself: a second run changes nothing
    again = prometheus_config(yaml.safe_dump(got), jobs, ['/etc/prometheus/rules/*.yml'],
                              {'scrape_interval': '5s', 'evaluation_interval': '5s'}, ['localhost:9093'])
    assert again == got


def test_prometheus_config_fresh_host_and_bad_file():
    got = prometheus_config('', [{'job_name': 'gpufleet_node', 'static_configs': []}])
    assert got == {'scrape_configs': [{'job_name': 'gpufleet_node', 'static_configs': []}]}
    with pytest.raises(MonitoringError, match='prometheus.yml is not YAML'):
        prometheus_config('a: [', [])
    with pytest.raises(MonitoringError, match='must hold a YAML mapping'):
        prometheus_config('- 1', [])
