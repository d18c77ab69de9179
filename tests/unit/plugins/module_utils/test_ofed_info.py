# -*- coding: utf-8 -*-
"""ofed_info -s parser. The corpus has no recorded ofed_info output: the inputs below are
hand-written in the documented ``ofed_info -s`` format (name-version followed by a colon)."""

from __future__ import annotations

import re

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


@pytest.mark.parametrize('text, expected', [
    # `ofed_info -s` on a DOCA/inbox-style install (the OFED-internal name shown in MrBr-github/lshca#102)
    ('OFED-internal-24.07-0.3.5.0.110:\n',
     {'raw': 'OFED-internal-24.07-0.3.5.0.110', 'distribution': 'OFED-internal',
      'version': '24.07-0.3.5.0.110', 'flavor': 'DOCA'}),
    # first line of a plain `ofed_info` (the "NAME-VERSION (OFED-BASE):" form quoted in
    # cisco-system-traffic-generator/trex-core#1046), followed by package lines
    ('MLNX_OFED_LINUX-23.04-1.1.3.0 (OFED-23.04-1.1.3):\n\nar_mgr:\nosm_plugins/ar_mgr/ar_mgr-1.0-0.3.MLNX20230402.g0f8cf4d.tar.gz\n',
     {'raw': 'MLNX_OFED_LINUX-23.04-1.1.3.0 (OFED-23.04-1.1.3)', 'distribution': 'MLNX_OFED_LINUX',
      'version': '23.04-1.1.3.0', 'flavor': 'MLNX_OFED', 'base': 'OFED-23.04-1.1.3'}),
    ('MLNX_OFED_LINUX-4.2-1.1.3.0 (OFED-4.2-1.1.3):\n',
     {'raw': 'MLNX_OFED_LINUX-4.2-1.1.3.0 (OFED-4.2-1.1.3)', 'distribution': 'MLNX_OFED_LINUX',
      'version': '4.2-1.1.3.0', 'flavor': 'MLNX_OFED', 'base': 'OFED-4.2-1.1.3'}),
    # HANDMADE: mlnx-en's name, and `ofed_info -n` (version only)
    ('MLNX_EN_LINUX-5.8-1.0.1.1:\n',
     {'raw': 'MLNX_EN_LINUX-5.8-1.0.1.1', 'distribution': 'MLNX_EN_LINUX', 'version': '5.8-1.0.1.1',
      'flavor': 'MLNX_EN'}),
    ('5.8-1.0.1.1\n', {'raw': '5.8-1.0.1.1', 'distribution': None, 'version': '5.8-1.0.1.1', 'flavor': None}),
])
def test_more_layouts(text, expected):
    assert parse_ofed_info_short(text) == expected


@pytest.mark.parametrize('text', [
    # package lines of a full ofed_info are no OFED version, even when they look like NAME-VERSION
    'mlnx-ofa_kernel:\nmlnx-ofa_kernel-5.8-OFED.5.8.1.0.1.1.src.rpm\n',
    'rdma-core-2307mlnx47-1.2307105.x86_64\n',
    'MLNX_OFED_LINUX-\n', 'MLNX_OFED_LINUX-5.8-1.0.1.1 (OFED-5.8', '-bash: ofed_info: command not found\n',
])
def test_not_a_version(text):
    assert parse_ofed_info_short(text) is None


def test_cut_and_garbled_never_crash():
    import random
    texts = ['MLNX_OFED_LINUX-5.8-1.0.1.1:\n', 'OFED-internal-24.10-1.1.4:\n',
             'MLNX_OFED_LINUX-23.04-1.1.3.0 (OFED-23.04-1.1.3):\n\nar_mgr:\n']
    rnd = random.Random(1)
    for text in texts:
        variants = [text[:i] for i in range(len(text) + 1)]
        variants += [''.join(rnd.choice([c, 'x', ':', ' ', '']) for c in text) for dummy in range(50)]
        for variant in variants + ['\x00\xff']:
            got = parse_ofed_info_short(variant)
            if got is not None:
                assert re.match(r'^\d+\.\d+', got['version']), got


def test_line_cut_inside_the_version_is_unknown():
    # every ofed_info name line ends with ':'; without it the line may be cut: no half version
    assert parse_ofed_info_short('MLNX_OFED_LINUX-5.8-1.0') is None
    assert parse_ofed_info_short('MLNX_OFED_LINUX-23.04-1.1.3.0 (OFED-23.04-1.1.3)') is None
