# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every community.general.json_query the roles and playbooks hold (docs/architecture.md, "Queries over nested
facts"): it compiles, it calls no JMESPath function (their exact-type checks refuse the tagged values ansible-core
2.19+ hands them), and it gives the wanted result on input whose leaves carry an inventory Origin tag, as values read
from an inventory do. A new query needs a case below: the test fails on a query it has no case for."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from pathlib import Path

import pytest

jmespath = pytest.importorskip('jmespath')
json_query = pytest.importorskip('ansible_collections.community.general.plugins.filter.json_query').json_query
tags = pytest.importorskip('ansible._internal._datatag._tags')

REPO = Path(__file__).resolve().parents[4]
CALL = re.compile(r'''community\.general\.json_query\(\s*(['"])(.*?)\1\s*\)''', re.S)

# The module result gpu_firmware's versions.yml reads (the keys of plugins/modules/gpu_firmware.py's RETURN gpus),
# HANDMADE: two GPUs, one with a VBIOS waiting for a reset.
_GPU_RESULT = {
    'changed': False,
    'gpus': [
        {'index': 0, 'pci': '0000:81:00.0', 'model': 'NVIDIA RTX A5000', 'uuid': 'GPU-a', 'serial': '1',
         'before': {'running': '94.02.6D.00.0D', 'staged': None}, 'wanted': '94.02.6D.00.1A', 'action': 'update'},
        {'index': 1, 'pci': '0000:c1:00.0', 'model': 'NVIDIA RTX A5000', 'uuid': 'GPU-b', 'serial': '2',
         'before': {'running': '94.02.6D.00.0D', 'staged': '94.02.6D.00.1A'}, 'wanted': '94.02.6D.00.1A',
         'action': 'pending-reset'},
    ],
}
CASES = {
    'roles/gpu_firmware/tasks/versions.yml': [(
        _GPU_RESULT,
        [{'index': 0, 'pci': '0000:81:00.0', 'model': 'NVIDIA RTX A5000', 'running': '94.02.6D.00.0D', 'staged': None,
          'wanted': '94.02.6D.00.1A', 'action': 'update'},
         {'index': 1, 'pci': '0000:c1:00.0', 'model': 'NVIDIA RTX A5000', 'running': '94.02.6D.00.0D',
          'staged': '94.02.6D.00.1A', 'wanted': '94.02.6D.00.1A', 'action': 'pending-reset'}],
    ), (
        {'changed': False, 'gpus': [], 'skipped_reason': 'no NVIDIA GPU: nvidia-smi not found'},
        [],
    )],
}


def _queries():
    found = []
    files = [REPO / 'site.yml'] + sorted((REPO / 'roles').rglob('*.yml')) + sorted((REPO / 'playbooks').rglob('*.yml'))
    for f in files:
        for m in CALL.finditer(f.read_text()):
            found.append((f.relative_to(REPO).as_posix(), m.group(2)))
    return found


def _tagged(value, origin):
    """The value with every leaf tagged as an inventory value is (Origin), containers rebuilt plain."""
    if isinstance(value, dict):
        return dict((k, _tagged(v, origin)) for k, v in value.items())
    if isinstance(value, list):
        return [_tagged(v, origin) for v in value]
    if value is None or isinstance(value, bool):
        return value
    return origin.tag(value)


def _functions(node):
    if not isinstance(node, dict):
        return []
    out = [node['value']] if node.get('type') == 'function_expression' else []
    for child in node.get('children', []):
        out += _functions(child)
    return out


def test_the_scan_finds_the_queries():
    assert [f for f, dummy in _queries()] == sorted(CASES), 'each json_query needs a case in CASES, each case a query'


@pytest.mark.parametrize('path,query', _queries())
def test_query_compiles_and_calls_no_function(path, query):
    parsed = jmespath.compile(query).parsed
    assert not _functions(parsed), '%s: JMESPath functions %s refuse ansible-core tagged values' % (
        path, _functions(parsed))


@pytest.mark.parametrize('path,query', _queries())
def test_query_gives_the_result_on_tagged_input(path, query):
    origin = tags.Origin(path='/inventories/lab/group_vars/all.yml', line_num=1)
    assert type(origin.tag(1)).__name__ != 'int'  # the input really is tagged
    for data, want in CASES[path]:
        assert json_query(_tagged(data, origin), query) == want
