# -*- coding: utf-8 -*-
"""ofed_info -s parser. The corpus has no recorded ofed_info output: the inputs below are
hand-written in the documented ``ofed_info -s`` format (name-version followed by a colon)."""

from __future__ import annotations

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils.ofed_info import parse_ofed_info_short


@pytest.mark.parametrize('text, expected', [
    ('MLNX_OFED_LINUX-5.8-1.0.1.1:\n',
     {'raw': 'MLNX_OFED_LINUX-5.8-1.0.1.1', 'distribution': 'MLNX_OFED_LINUX',
      'version': '5.8-1.0.1.1', 'flavor': 'MLNX_OFED'}),
    ('OFED-internal-24.10-1.1.4:\n',
     {'raw': 'OFED-internal-24.10-1.1.4', 'distribution': 'OFED-internal',
      'version': '24.10-1.1.4', 'flavor': 'DOCA'}),
    ('\nMLNX_OFED_LINUX-23.10-0.5.5.0:',
     {'raw': 'MLNX_OFED_LINUX-23.10-0.5.5.0', 'distribution': 'MLNX_OFED_LINUX',
      'version': '23.10-0.5.5.0', 'flavor': 'MLNX_OFED'}),
])
def test_parse(text, expected):
    assert parse_ofed_info_short(text) == expected


@pytest.mark.parametrize('text', ['', 'ofed_info: command not found', None])
def test_no_version(text):
    assert parse_ofed_info_short(text) is None
