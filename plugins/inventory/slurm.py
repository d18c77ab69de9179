# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: slurm
short_description: Compute nodes, their partitions, states, features, GPUs and hardware profile from Slurm
version_added: 0.1.0
description:
  - Builds the inventory from the scheduler, the cluster's source of truth for which nodes exist, with
    C(scontrol show nodes --json) where scontrol has C(--json) (recorded on Slurm 24.11); an older scontrol answers
    C(unrecognized option) (recorded on Slurm 22.05) and the plugin falls back to the text form
    C(scontrol show nodes -o), one line per node.
  - Every node becomes a host named after its Slurm C(NodeName); C(ansible_host) is its C(NodeAddr) when that differs.
  - "Groups: C(slurm_partition_<partition>), C(slurm_state_<base state>) (C(idle), C(mixed), C(allocated), C(down),
    ...), C(slurm_state_<flag>) for each state flag (C(drain), C(not_responding), C(reserved), ...),
    C(slurm_state_drained) (DRAIN on a node without jobs) and C(slurm_state_draining) (DRAIN while jobs still run),
    C(slurm_feature_<feature>) (available features), C(slurm_gpu_<model>) (GPU models of the node's GRES) and
    C(profile_<profile>) from O(profiles). A character that is not a letter, digit or C(_) becomes C(_)."
  - "Host variables: C(slurm_node_name), C(slurm_node_addr), C(slurm_node_hostname), C(slurm_state) (as Slurm prints
    it, e.g. C(IDLE+DRAIN)), C(slurm_state_base), C(slurm_state_flags), C(slurm_drain), C(slurm_drained),
    C(slurm_draining), C(slurm_down), C(slurm_not_responding), C(slurm_reason), C(slurm_reason_user),
    C(slurm_reason_time) (the controller's local time in the text form, UTC from JSON), C(slurm_partitions) (list; the
    rollout playbook's partition cap reads it), C(slurm_partition) (the first), C(slurm_features),
    C(slurm_active_features), C(slurm_gres) (as Slurm prints it, e.g. C(gpu:h100:8)), C(slurm_gres_list)
    (C(name), C(type), C(count), C(detail) per entry), C(slurm_gpus) (the sum of every C(gpu) GRES),
    C(slurm_gpu_models), C(slurm_cpus), C(slurm_cpus_alloc), C(slurm_real_memory_mb), C(slurm_alloc_memory_mb),
    C(slurm_free_memory_mb), C(slurm_version), C(slurm_arch), C(slurm_os); C(gpufleet_expect_gpus) (see
    O(expect_gpus_from_gres)) and C(gpufleet_profile) when a profile was chosen."
  - The node list can be cached with the inventory cache options (a fleet of thousands of nodes then costs one
    C(scontrol) call per cache timeout).
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: The name of this plugin; the inventory file's name must end in C(slurm.yml) or C(slurm.yaml).
    required: true
    type: str
    choices: [gpufleet.cluster.slurm]
  scontrol_path:
    description:
      - Slurm's C(scontrol) on the controller running Ansible (a login node or the Slurm controller), a name looked up
        on C(PATH) or a path.
      - With O(command_prefix) it is passed as is to the prefix (e.g. run on another host over ssh).
    type: str
    default: scontrol
  command_prefix:
    description:
      - Words put in front of the scontrol command, e.g. C([ssh, -o, BatchMode=yes, slurm-ctl01]) when Ansible runs
        on a host that is not a Slurm client. Empty runs scontrol here.
    type: list
    elements: str
    default: []
  source_file:
    description:
      - Read this recorded output of C(scontrol show nodes --json) or C(scontrol show nodes -o) instead of running
        scontrol (tests, air-gapped review of a cluster's list). Which form it is follows O(format), or its first
        character under C(auto).
    type: path
  format:
    description:
      - C(auto) asks for JSON and falls back to the text form when scontrol does not know C(--json) or its JSON cannot
        be read; C(json) and C(text) use only that form.
    type: str
    choices: [auto, json, text]
    default: auto
  timeout:
    description: Seconds each scontrol call may take before it is ended and the inventory fails.
    type: int
    default: 30
  partitions:
    description: Only nodes in at least one of these partitions (empty, the default, is every node).
    type: list
    elements: str
    default: []
  use_node_addr:
    description: Set C(ansible_host) to the node's C(NodeAddr) when it differs from its C(NodeName).
    type: bool
    default: true
  expect_gpus_from_gres:
    description:
      - Set C(gpufleet_expect_gpus) (the GPU count node_facts_check and acceptance expect) to the node's GPU count
        from its GRES. As a host variable it outranks the profile's group_vars; set false to keep the profile's count
        (then C(slurm_gpus) still says what Slurm has).
    type: bool
    default: true
  profiles:
    description:
      - Ordered rules choosing each node's hardware profile; the first rule whose every condition holds wins, the host
        joins group C(profile_<profile>) and gets C(gpufleet_profile). Nodes no rule matches get O(profile_default).
      - Each rule has C(profile) (letters, digits, C(_)) and at least one condition. C(partition), C(feature),
        C(gres_model) and C(state) take a name or a list (any of them matches) - the node is in that partition, has
        that available feature, has a GPU of that GRES model (C(h100) in C(gpu:h100:8)), has that base state or flag
        (C(idle), C(drain), C(drained), ...). C(when) is a Jinja2 condition without braces over the host variables
        above (e.g. C(slurm_gpus == 8 and 'ib_ndr' in slurm_features)).
    type: list
    elements: dict
    default: []
  profile_default:
    description: The profile of nodes no rule of O(profiles) matches; none (no profile) when unset.
    type: str
  profile_parent_group:
    description:
      - Group that every C(profile_<profile>) group becomes a child of, so playbooks that run on C(gpu_nodes) (site.yml,
        rollout.yml) find the nodes. Empty for none.
    type: str
    default: gpu_nodes
'''

EXAMPLES = r'''
# inventories/cluster/slurm.yml - the nodes from the Slurm controller; group_vars/profile_*.yml next to it hold each
# profile's expected hardware and version lock as in inventories/prod
plugin: gpufleet.cluster.slurm
profiles:
  - profile: h100_ib
    gres_model: h100
    feature: ib_ndr
  - profile: a100_roce
    gres_model: a100
  - profile: cpu_login
    when: slurm_gpus == 0
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/gpufleet-slurm-inventory
cache_timeout: 600

---
# Ansible runs on a workstation: scontrol on the login node over ssh; only the gpu partitions; rack groups from a
# feature such as rack_r01, and drained nodes left out of the play with --limit '!slurm_state_drain'
plugin: gpufleet.cluster.slurm
command_prefix: [ssh, -o, BatchMode=yes, login01]
partitions: [gpu, gpu-long]
keyed_groups:
  - key: slurm_features | select('match', 'rack_') | list
    prefix: ''
    separator: ''
compose:
  rack: (slurm_features | select('match', 'rack_') | first | default('rack_none'))[5:]

---
# A recorded output (a review, or tests)
plugin: gpufleet.cluster.slurm
source_file: recordings/scontrol_show_nodes.json
'''

import os
import shutil

from ansible.errors import AnsibleError, AnsibleParserError
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.gpufleet.cluster.plugins.module_utils import _runner as runner
from ansible_collections.gpufleet.cluster.plugins.module_utils.slurm import (
    SlurmParseError, detect_format, parse_nodes_json, parse_nodes_text,
)
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._slurm_inventory import build, option_errors

OPTIONS = ('scontrol_path', 'command_prefix', 'source_file', 'format', 'timeout', 'partitions', 'use_node_addr',
           'expect_gpus_from_gres', 'profiles', 'profile_default', 'profile_parent_group')
PARSERS = {'json': parse_nodes_json, 'text': parse_nodes_text}
ARGS = {'json': ['show', 'nodes', '--json'], 'text': ['show', 'nodes', '-o']}
# the text form's times as YYYY-MM-DDTHH:MM:SS whatever the site's default
ENV = {'SLURM_TIME_FORMAT': 'standard'}


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):

    NAME = 'gpufleet.cluster.slurm'

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(('slurm.yml', 'slurm.yaml'))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        try:
            self._read_config_data(path)
        except AnsibleParserError:
            raise
        except AnsibleError as e:  # an option of the wrong type or not among its choices
            raise AnsibleParserError('%s: %s' % (path, to_native(e)))
        opts = dict((k, self.get_option(k)) for k in OPTIONS)
        errors = option_errors(opts)
        if errors:
            raise AnsibleParserError('%s: %s' % (path, '; '.join(errors)))

        cache_key = self.get_cache_key(path)
        use_cache = self.get_option('cache')
        data = None
        if use_cache and cache:
            try:
                data = self._cache[cache_key]
            except KeyError:
                data = None
        if data is None:
            data = self._fetch(opts)
            if use_cache:
                self._cache[cache_key] = data
        self._populate(data, opts)

    # ---- reading the node list ----
    def _fetch(self, opts):
        """dict(source=what was read, format=json|text, nodes=[records]) - JSON-serialisable for the cache."""
        if opts['source_file']:
            return self._read_file(opts)
        fmts = ['json', 'text'] if opts['format'] == 'auto' else [opts['format']]
        argv0 = list(opts['command_prefix']) + [self._scontrol(opts)]
        tried = []
        for fmt in fmts:
            argv = argv0 + ARGS[fmt]
            res = runner.run(argv, timeout=opts['timeout'], env_update=ENV)
            why = runner.failure(res, opts['timeout'])
            if why and not (res['timed_out'] or res['start_error']):
                # scontrol's first lines say why ("unrecognized option '--json'"), the last only where to get help
                said = ' / '.join(x.strip() for x in (res['stderr'] or res['stdout']).splitlines() if x.strip())
                why = 'exited with rc=%s (%s)' % (res['rc'], said[:300] or 'no output')
            if res['timed_out'] or res['start_error']:
                raise AnsibleParserError('%s %s (option %s)' % (res['cmd'], why, 'timeout' if res['timed_out']
                                                                else 'command_prefix' if opts['command_prefix']
                                                                else 'scontrol_path'))
            if why is None:
                try:
                    nodes = PARSERS[fmt](res['stdout'])
                except SlurmParseError as e:
                    why = 'printed what is not %s: %s' % ('its JSON node list' if fmt == 'json' else 'node lines', e)
                else:
                    if fmt == 'text' and res['stdout'].strip() and not nodes:
                        why = 'printed no NodeName= line: %s' % runner.last_line(res)
                    else:
                        if tried:
                            self.display.vvv('slurm inventory: %s; used %s' % ('; '.join(tried), res['cmd']))
                        return {'source': res['cmd'], 'format': fmt, 'nodes': nodes}
            tried.append('%s %s' % (res['cmd'], why))
        raise AnsibleParserError('Slurm node list not read: %s (options scontrol_path, command_prefix, format)'
                                 % '; '.join(tried))

    def _scontrol(self, opts):
        name = opts['scontrol_path']
        if not name:
            raise AnsibleParserError('scontrol_path must name Slurm\'s scontrol (a name on PATH or a path)')
        if opts['command_prefix']:
            return name
        path = name if os.sep in name else shutil.which(name)
        if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise AnsibleParserError('scontrol_path %r is not an executable file%s; set scontrol_path to Slurm\'s '
                                     'scontrol, command_prefix to run it on another host, or source_file to read a '
                                     'recording' % (name, '' if os.sep in name else ' on PATH (%s)'
                                                    % os.environ.get('PATH', '')))
        return path

    def _read_file(self, opts):
        path = opts['source_file']
        try:
            with open(path, 'rb') as f:
                text = to_text(f.read(), errors='surrogate_or_replace')
        except (IOError, OSError) as e:
            raise AnsibleParserError('source_file %s cannot be read: %s' % (path, to_native(e)))
        fmt = opts['format'] if opts['format'] != 'auto' else detect_format(text)
        if fmt is None:
            raise AnsibleParserError('source_file %s is neither the JSON of scontrol show nodes --json nor the '
                                     'NodeName= lines of scontrol show nodes -o' % path)
        try:
            nodes = PARSERS[fmt](text)
        except SlurmParseError as e:
            raise AnsibleParserError('source_file %s (read as %s): %s' % (path, fmt, e))
        return {'source': path, 'format': fmt, 'nodes': nodes}

    # ---- hosts and groups ----
    def _evaluate(self, rule_index_by_expr):
        def evaluate(expr, hostvars):
            try:
                return bool(self._compose(expr, hostvars))
            except AnsibleError as e:
                raise AnsibleParserError('profiles[%s].when %r failed on node %s: %s'
                                         % (rule_index_by_expr.get(expr, '?'), expr, hostvars.get('slurm_node_name'),
                                            to_native(e)))
        return evaluate

    def _populate(self, data, opts):
        index = dict((r.get('when'), i) for i, r in enumerate(opts['profiles'] or []) if isinstance(r, dict))
        result = build(data['nodes'], opts, self._evaluate(index))
        for warning in result['warnings']:
            self.display.warning('slurm inventory (%s): %s' % (data['source'], warning))
        for parent, kids in result['children'].items():
            self.inventory.add_group(parent)
            for kid in kids:
                self.inventory.add_group(kid)
                self.inventory.add_child(parent, kid)
        member = {}
        for group, hosts in result['groups'].items():
            for host in hosts:
                member.setdefault(host, []).append(group)
        strict = self.get_option('strict')
        for name, hostvars in result['hosts'].items():
            self.inventory.add_host(name)
            for key, value in hostvars.items():
                self.inventory.set_variable(name, key, value)
            for group in member.get(name, []):
                self.inventory.add_group(group)
                self.inventory.add_child(group, name)
            self._set_composite_vars(self.get_option('compose'), hostvars, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option('groups'), hostvars, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option('keyed_groups'), hostvars, name, strict=strict)
