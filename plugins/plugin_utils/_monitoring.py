# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

Logic of the monitoring roles (filters in plugins/filter/monitoring.py).

* ``exporter_args``: the ARGS= line of a Debian /etc/default/prometheus* file with the flags the role manages
  set, every other flag the user had kept (a repeated flag stops these exporters from starting).
* ``scrape_configs``: Prometheus scrape jobs from the inventory - one static target per host with the labels
  node, profile, rack and partition.
* ``prometheus_config``: the user's prometheus.yml with the role's scrape jobs, rule files and global settings
  merged in; every other job, rule file and top-level key kept.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import yaml


class MonitoringError(Exception):
    pass


_ARGS_RE = re.compile(r'^\s*ARGS=(.*)$')
_FLAG_RE = re.compile(r'^--[a-z0-9][a-z0-9._-]*$')


def _unquote(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in '"\'':
        return text[1:-1]
    return text


def exporter_args(defaults_text, managed, name='ARGS'):
    """Return the new value of ARGS: the current one (last ``ARGS=`` line of ``defaults_text``) without any
    occurrence of the flags in ``managed`` (``--flag=value`` or ``--flag value``), then ``--flag=value`` for
    each managed flag in order (a value of None only removes the flag)."""
    if not isinstance(managed, dict):
        raise MonitoringError('%s: the managed flags must be a dict of --flag -> value' % name)
    for flag in managed:
        if not _FLAG_RE.match(str(flag)):
            raise MonitoringError('%s: %r is not a long flag like --web.listen-address' % (name, flag))
    current = ''
    for line in (defaults_text or '').splitlines():
        m = _ARGS_RE.match(line)
        if m:
            current = _unquote(m.group(1))
    kept = []
    tokens = current.split()
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        flag = token.split('=', 1)[0]
        if flag in managed:
            # "--flag value" form: the value goes too (the next token, unless it is a flag itself)
            skip = '=' not in token and i + 1 < len(tokens) and not tokens[i + 1].startswith('-')
            continue
        kept.append(token)
    for flag, value in managed.items():
        if value is None:
            continue
        value = str(value)
        if any(c in value for c in ' \t"\'\\$`'):
            raise MonitoringError('%s: the value of %s must not hold spaces, quotes, backslashes or $ (got %r)'
                                  % (name, flag, value))
        kept.append('%s=%s' % (flag, value))
    return ' '.join(kept)


def _host_get(hostvars, host, key, default=None):
    try:
        value = hostvars[host].get(key, default)
    except (KeyError, AttributeError):
        return default
    return default if value is None else value


def scrape_configs(hosts, hostvars, node_port=9100, dcgm_port=9400, scrape_interval=None, labels=None):
    """Two jobs: gpufleet_node (every host of ``hosts``) and gpufleet_dcgm (hosts whose profile expects GPUs,
    gpufleet_expect_gpus > 0, and that do not turn monitoring_node_dcgm_exporter off). ``labels`` maps a
    label name to the host variable it comes from (default: profile <- gpufleet_profile, rack <- rack,
    partition <- slurm_partition); a label whose variable is unset is left out. ``node`` is the inventory name;
    the address is ansible_host (else the name). Hosts that set gpufleet_monitoring to false are left out."""
    if labels is None:
        labels = {'profile': 'gpufleet_profile', 'rack': 'rack', 'partition': 'slurm_partition'}
    for port, what in ((node_port, 'monitoring_server_node_port'), (dcgm_port, 'monitoring_server_dcgm_port')):
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise MonitoringError('%s must be a port number 1-65535, got %r' % (what, port))
    node, dcgm = [], []
    for host in hosts:
        if _host_get(hostvars, host, 'gpufleet_monitoring', True) in (False, 'false', 'False', 'no'):
            continue  # the inventory turned monitoring off there: no node_exporter to scrape
        address = str(_host_get(hostvars, host, 'ansible_host', host))
        if ':' in address and not address.startswith('['):
            address = '[%s]' % address  # IPv6
        target_labels = {'node': host}
        for label, var in sorted(labels.items()):
            value = _host_get(hostvars, host, var)
            if isinstance(value, (list, tuple)):
                value = ','.join(str(v) for v in value)
            if value not in (None, ''):
                target_labels[label] = str(value)
        node.append({'targets': ['%s:%d' % (address, node_port)], 'labels': dict(target_labels)})
        try:
            gpus = int(_host_get(hostvars, host, 'gpufleet_expect_gpus', 0) or 0)
        except (TypeError, ValueError):
            raise MonitoringError('%s: gpufleet_expect_gpus must be an integer' % host)
        if gpus > 0 and _host_get(hostvars, host, 'monitoring_node_dcgm_exporter', True) not in (False, 'false', 'no'):
            dcgm.append({'targets': ['%s:%d' % (address, dcgm_port)], 'labels': dict(target_labels)})
    jobs = [{'job_name': 'gpufleet_node', 'static_configs': node}]
    if dcgm:
        jobs.append({'job_name': 'gpufleet_dcgm', 'static_configs': dcgm})
    if scrape_interval:
        for job in jobs:
            job['scrape_interval'] = scrape_interval
    return jobs


def prometheus_config(current_text, jobs, rule_files=None, global_settings=None, alertmanagers=None,
                      source='prometheus.yml'):
    """The merged configuration as a dict: ``current_text`` (the file as it is; empty on a fresh host) with
    every scrape job of ``jobs`` replacing the job of the same name or appended, ``rule_files`` added (others
    kept), ``global_settings`` set key by key, and, when ``alertmanagers`` is a list of targets, the first
    alertmanagers entry's static targets set to it."""
    try:
        current = yaml.safe_load(current_text or '') or {}
    except yaml.YAMLError as exc:
        raise MonitoringError('%s is not YAML, fix or remove it first: %s' % (source, exc))
    if not isinstance(current, dict):
        raise MonitoringError('%s must hold a YAML mapping, it holds a %s' % (source, type(current).__name__))
    merged = dict(current)
    glob = dict(merged.get('global') or {})
    glob.update(global_settings or {})
    if glob:
        merged['global'] = glob
    names = [job['job_name'] for job in jobs]
    old_jobs = merged.get('scrape_configs') or []
    if not isinstance(old_jobs, list):
        raise MonitoringError('%s: scrape_configs must be a list' % source)
    out_jobs, placed = [], set()
    for job in old_jobs:
        name = job.get('job_name') if isinstance(job, dict) else None
        if name in names:
            if name not in placed:
                out_jobs.append(jobs[names.index(name)])
                placed.add(name)
            continue
        out_jobs.append(job)
    out_jobs.extend(job for job in jobs if job['job_name'] not in placed)
    merged['scrape_configs'] = out_jobs
    files = list(merged.get('rule_files') or [])
    for path in rule_files or []:
        if path not in files:
            files.append(path)
    if files:
        merged['rule_files'] = files
    if alertmanagers is not None:
        alerting = dict(merged.get('alerting') or {})
        ams = list(alerting.get('alertmanagers') or [{}])
        first = dict(ams[0])
        first['static_configs'] = [{'targets': list(alertmanagers)}]
        ams[0] = first
        alerting['alertmanagers'] = ams
        merged['alerting'] = alerting
    return merged
