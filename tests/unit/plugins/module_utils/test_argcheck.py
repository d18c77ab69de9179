# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""argcheck: every message starts with the option's name and says what is allowed."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import argcheck as ac


def test_nul_errors_walk_lists_and_dicts_and_skip():
    params = {'a': 'x\x00', 'b': ['ok', 'n\x00'], 'c': {'k\x00': 'v', 'k': 'v\x00'}, 'env': {'X': '\x00'},
              '_ansible_check_mode': '\x00', 'd': 3}
    assert ac.nul_errors(params, skip=('env',)) == [
        "a contains a NUL byte ('x\\x00'); text options cannot hold NUL",
        "b[1] contains a NUL byte ('n\\x00'); text options cannot hold NUL",
        "c.k contains a NUL byte ('v\\x00'); text options cannot hold NUL",
        "c has a key with a NUL byte ('k\\x00'); keys cannot hold NUL"]


@pytest.mark.parametrize('value, ok', [(1, True), (2592000, True), (0, False), (-1, False), (2592001, False),
                                       (True, False), (None, True)])
def test_timeout_range(value, ok):
    errors = ac.timeout_range(value)
    assert (errors == []) is ok
    if not ok:
        assert errors[0].startswith('timeout must be an integer from 1 to 2592000 seconds, got ')


def test_env_errors():
    assert ac.env_errors({'NCCL_IB_HCA': '=mlx5_0', 'N': 3}) == []
    assert [e.split(':')[0].split(' ')[0] for e in ac.env_errors(
        {'A=B': 1, 'C\x00': 1, '': 1, 'D': None, 'E': [1], 'F': 'x\x00'})] == ['env', 'env', 'env', 'env.D', 'env.E', 'env.F']
    assert ac.env_errors('A=1') == ['env must be a dict of variable names to values, got str']


@pytest.mark.parametrize('value, ok', [('gpu01', True), ('', False), ('-h', False), ('a b', False), ('a\tb', False),
                                       (None, True)])
def test_word_errors(value, ok):
    assert (ac.word_errors('host', value) == []) is ok


def test_root_dir_and_executable(tmp_path):
    (tmp_path / 'f').write_text('x')
    (tmp_path / 'x').write_text('#!/bin/sh\n')
    (tmp_path / 'x').chmod(0o755)
    (tmp_path / 'n').write_text('#!/bin/sh\n')
    (tmp_path / 'n').chmod(0o644)
    assert ac.root_dir_errors('sysfs_root', str(tmp_path)) == []
    assert ac.root_dir_errors('sysfs_root', '')[0].startswith('sysfs_root must be a directory')
    assert 'is not a directory' in ac.root_dir_errors('sysfs_root', str(tmp_path / 'f'))[0]
    assert 'does not exist' in ac.root_dir_errors('sysfs_root', str(tmp_path / 'nope'))[0]
    assert ac.executable_errors('executable', str(tmp_path / 'x')) == []
    assert ac.executable_errors('executable', 'name-on-path') == []
    assert ac.executable_errors('executable', str(tmp_path / 'absent')) == []  # left to the module's lookup
    assert 'is a directory' in ac.executable_errors('executable', str(tmp_path))[0]
    assert 'exists but is not executable (mode 0644)' in ac.executable_errors('executable', str(tmp_path / 'n'))[0]
    os.mkfifo(str(tmp_path / 'p'))
    assert 'is not a regular file' in ac.executable_errors('executable', str(tmp_path / 'p'))[0]


@pytest.mark.parametrize('value, ok', [(0, True), (1.5, True), (-0.1, False), (float('nan'), False),
                                       (float('inf'), False), (True, False), (None, True)])
def test_min_number(value, ok):
    assert (ac.min_number('min_gbps', value) == []) is ok


def test_option_name_names_the_alias_the_caller_used():
    aliases = {'min_gbps': 'min_gbytes_per_s', 'min_bidir_gbps': 'min_bidir_gbytes_per_s'}
    assert ac.option_name({'min_gbytes_per_s': 1.0}, 'min_gbytes_per_s', aliases) == 'min_gbytes_per_s'
    given_old = {'min_gbytes_per_s': -1.0, 'min_gbps': -1, 'min_bidir_gbytes_per_s': 2.0}
    assert ac.option_name(given_old, 'min_gbytes_per_s', aliases) == 'min_gbps (alias of min_gbytes_per_s)'
    assert ac.option_name(given_old, 'min_bidir_gbytes_per_s', aliases) == 'min_bidir_gbytes_per_s'
    assert ac.option_name({'x': 1}, 'x') == 'x'
