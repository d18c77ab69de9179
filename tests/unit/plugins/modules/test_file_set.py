# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""file_set end to end (module main() -> engine -> atomic_write) in a temp tree, and the engine's checks."""

from __future__ import annotations

import os
import resource
import signal
import stat

import pytest

from ansible.module_utils import basic
from ansible_collections.gpufleet.cluster.plugins.module_utils import file_set_engine as engine
from ansible_collections.gpufleet.cluster.plugins.modules import file_set

NETDEV = '[NetDev]\nName=bond0\nKind=bond\n'
NETWORK = '[Match]\nName=bond0\n\n[Network]\nAddress=10.0.0.1/24\n'


def snapshot(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            entry = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_mtime_ns)
            if stat.S_ISREG(st.st_mode):
                with open(path, 'rb') as handle:
                    entry += (handle.read(),)
            out[os.path.relpath(path, str(root))] = entry
    return out


@pytest.fixture
def net(tmp_path):
    d = tmp_path / 'network'
    d.mkdir()
    return d


def files(net, **extra):
    out = [dict(path=str(net / 'b.netdev'), content=NETDEV), dict(path=str(net / 'b.network'), content=NETWORK)]
    for item in out:
        item.update(extra)
    return out


def test_check_apply_again_check_again(net, run_module):
    args = dict(files=files(net), remove=[str(net / 'b.member.*.network')])
    res = run_module(file_set.main, dict(args, _ansible_check_mode=True, _ansible_diff=True))
    assert res['changed'] and not res.get('failed'), res
    assert res['written'] == [str(net / 'b.netdev'), str(net / 'b.network')] and res['unchanged'] == []
    assert list(net.iterdir()) == []
    assert res['diff'][0] == {'before_header': str(net / 'b.netdev'), 'after_header': str(net / 'b.netdev'),
                              'before': '', 'after': NETDEV}

    res = run_module(file_set.main, args)
    assert res['changed'] and res['written'] == [str(net / 'b.netdev'), str(net / 'b.network')], res
    assert (net / 'b.netdev').read_bytes() == NETDEV.encode()
    assert stat.S_IMODE((net / 'b.network').stat().st_mode) == 0o644
    assert sorted(p.name for p in net.iterdir()) == ['b.netdev', 'b.network']  # no temp file left

    before = snapshot(net)
    for check in (False, True):
        res = run_module(file_set.main, dict(args, _ansible_check_mode=check, _ansible_diff=True))
        assert not res['changed'] and res['written'] == res['fixed'] == res['removed'] == [], res
        assert res['unchanged'] == [str(net / 'b.netdev'), str(net / 'b.network')] and res['diff'] == []
    assert snapshot(net) == before


def test_content_change_written_with_diff(net, run_module):
    run_module(file_set.main, dict(files=files(net)))
    changed = files(net)
    changed[1]['content'] = NETWORK.replace('10.0.0.1', '10.0.0.2')
    res = run_module(file_set.main, dict(files=changed, _ansible_diff=True))
    assert res['changed'] and res['written'] == [str(net / 'b.network')] and res['unchanged'] == [str(net / 'b.netdev')]
    assert res['diff'] == [{'before_header': str(net / 'b.network'), 'after_header': str(net / 'b.network'),
                            'before': NETWORK, 'after': changed[1]['content']}]
    assert (net / 'b.network').read_text() == changed[1]['content']


def test_trailing_newline_is_content(net, run_module):
    run_module(file_set.main, dict(files=files(net)))
    changed = files(net)
    changed[0]['content'] = NETDEV.rstrip('\n')
    res = run_module(file_set.main, dict(files=changed))
    assert res['written'] == [str(net / 'b.netdev')]
    assert (net / 'b.netdev').read_bytes() == NETDEV.rstrip('\n').encode()


def test_mode_only_change_is_fixed_not_written(net, run_module):
    run_module(file_set.main, dict(files=files(net)))
    (net / 'b.netdev').chmod(0o600)
    inode = (net / 'b.netdev').stat().st_ino
    res = run_module(file_set.main, dict(files=files(net), _ansible_check_mode=True, _ansible_diff=True))
    assert res['changed'] and res['fixed'] == [str(net / 'b.netdev')] and res['written'] == []
    assert res['diff'] == [{'before_header': str(net / 'b.netdev') + ' (attributes)',
                            'after_header': str(net / 'b.netdev') + ' (attributes)',
                            'before': {'path': str(net / 'b.netdev'), 'mode': '0600'},
                            'after': {'path': str(net / 'b.netdev'), 'mode': '0644'}}]
    assert stat.S_IMODE((net / 'b.netdev').stat().st_mode) == 0o600
    res = run_module(file_set.main, dict(files=files(net)))
    assert res['fixed'] == [str(net / 'b.netdev')]
    assert stat.S_IMODE((net / 'b.netdev').stat().st_mode) == 0o644
    assert (net / 'b.netdev').stat().st_ino == inode  # not rewritten


def test_mode_of_new_and_rewritten_file(net, run_module):
    res = run_module(file_set.main, dict(files=files(net, mode='0600')))
    assert res['changed']
    assert stat.S_IMODE((net / 'b.netdev').stat().st_mode) == 0o600
    (net / 'b.netdev').chmod(0o640)
    changed = files(net, mode='0755')
    changed[0]['content'] = 'x\n'
    res = run_module(file_set.main, dict(files=changed))
    assert res['written'] == [str(net / 'b.netdev')] and res['fixed'] == [str(net / 'b.network')]
    assert stat.S_IMODE((net / 'b.netdev').stat().st_mode) == 0o755


@pytest.mark.skipif(os.geteuid() != 0, reason='changing a file owner needs root')
def test_owner_and_group(net, run_module):
    run_module(file_set.main, dict(files=files(net, owner='root', group='0')))
    os.chown(str(net / 'b.netdev'), 4321, 4321)
    res = run_module(file_set.main, dict(files=files(net, owner='root', group='root'), _ansible_diff=True))
    assert res['fixed'] == [str(net / 'b.netdev')], res
    assert res['diff'][0]['before'] == {'path': str(net / 'b.netdev'), 'owner': 4321, 'group': 4321}
    st = (net / 'b.netdev').stat()
    assert (st.st_uid, st.st_gid) == (0, 0)
    # not given: an existing owner is kept, also when the content is rewritten
    os.chown(str(net / 'b.netdev'), 4321, 4321)
    changed = files(net)
    changed[0]['content'] = 'new\n'
    assert run_module(file_set.main, dict(files=changed))['written'] == [str(net / 'b.netdev')]
    st = (net / 'b.netdev').stat()
    assert (st.st_uid, st.st_gid) == (4321, 4321)


def test_stale_files_removed_and_what_is_written_kept(net, run_module):
    pattern = str(net / 'b.member.*.network')
    (net / 'b.member.eth3.network').write_text('[Match]\nName=eth3\n')
    (net / '.b.member.hidden.network').write_text('x')
    (net / 'b.member.dir.network').mkdir()
    os.symlink('/dev/null', str(net / 'b.member.link.network'))
    (net / 'other.network').write_text('x')
    wanted = files(net) + [dict(path=str(net / 'b.member.eth1.network'), content='[Match]\nName=eth1\n')]
    (net / 'b.member.eth1.network').write_text('old\n')
    res = run_module(file_set.main, dict(files=wanted, remove=[pattern], _ansible_check_mode=True, _ansible_diff=True))
    assert res['removed'] == [str(net / 'b.member.eth3.network')]
    assert (net / 'b.member.eth3.network').exists()
    assert res['diff'][-1] == {'before_header': str(net / 'b.member.eth3.network'),
                               'after_header': str(net / 'b.member.eth3.network') + ' (removed)',
                               'before': '[Match]\nName=eth3\n', 'after': ''}
    res = run_module(file_set.main, dict(files=wanted, remove=[pattern, str(net / 'b.*')]))
    assert res['changed'] and res['removed'] == [str(net / 'b.member.eth3.network')], res
    assert sorted(p.name for p in net.iterdir()) == ['.b.member.hidden.network', 'b.member.dir.network', 'b.member.eth1.network',
                                                     'b.member.link.network', 'b.netdev', 'b.network', 'other.network']
    res = run_module(file_set.main, dict(files=wanted, remove=[pattern]))
    assert not res['changed'] and res['removed'] == []


def test_remove_only_and_missing_directory(tmp_path, run_module):
    (tmp_path / 'a.conf').write_text('x')
    res = run_module(file_set.main, dict(files=[], remove=[str(tmp_path / '*.conf'), str(tmp_path / 'nowhere' / '*')]))
    assert res['changed'] and res['removed'] == [str(tmp_path / 'a.conf')]
    assert not (tmp_path / 'a.conf').exists()


def test_removed_empty_file_shows_in_the_diff(tmp_path, run_module):
    (tmp_path / 'a.conf').write_text('')
    res = run_module(file_set.main, dict(files=[], remove=[str(tmp_path / '*.conf')], _ansible_check_mode=True,
                                         _ansible_diff=True))
    assert res['diff'] == [{'before_header': str(tmp_path / 'a.conf'), 'after_header': str(tmp_path / 'a.conf') + ' (removed)',
                            'before': {'path': str(tmp_path / 'a.conf'), 'state': 'file'},
                            'after': {'path': str(tmp_path / 'a.conf'), 'state': 'absent'}}]


def test_binary_and_large_files_are_not_shown_in_the_diff(net, run_module):
    (net / 'b.netdev').write_bytes(b'\x00\x01')
    (net / 'b.network').write_bytes(b'x' * (engine.MAX_DIFF_BYTES + 1))
    res = run_module(file_set.main, dict(files=files(net), _ansible_check_mode=True, _ansible_diff=True))
    assert res['diff'][0].get('dst_binary') and 'before' not in res['diff'][0]
    assert res['diff'][1].get('dst_larger') == engine.MAX_DIFF_BYTES


BAD = [
    ('files not a list of dicts', dict(files=['x']), 'files'),
    ('files a number', dict(files=5), 'files'),
    ('unknown key', dict(files=[dict(path='@/a', content='', owner_name='x')]), 'files[0] has unknown key(s) owner_name'),
    ('missing path', dict(files=[dict(content='x')]), 'files[0].path is required'),
    ('missing content', dict(files=[dict(path='@/a')]), 'files[0].content is required'),
    ('content a list', dict(files=[dict(path='@/a', content=['x'])]), 'files[0].content must be a string'),
    ('empty path', dict(files=[dict(path='', content='x')]), 'files[0].path must be an absolute path'),
    ('relative path', dict(files=[dict(path='etc/a', content='x')]), 'files[0].path must be an absolute path'),
    ('dot-dot path', dict(files=[dict(path='@/../a', content='x')]), 'files[0].path must not contain ".."'),
    ('NUL in path', dict(files=[dict(path='@/a\x00', content='x')]), 'files[0].path contains a NUL byte'),
    ('NUL in content', dict(files=[dict(path='@/a', content='a\x00')]), 'files[0].content contains a NUL byte'),
    ('trailing slash', dict(files=[dict(path='@/a/', content='x')]), 'files[0].path must name a file'),
    ('duplicate path', dict(files=[dict(path='@/a', content='x'), dict(path='@/./a', content='y')]),
     'files[1].path'),
    ('path is a directory', dict(files=[dict(path='@/dir', content='x')]), 'files[0].path'),
    ('path is a symlink', dict(files=[dict(path='@/link', content='x')]), 'is a symlink'),
    ('parent missing', dict(files=[dict(path='@/nowhere/a', content='x')]), 'files[0].path'),
    ('parent is a file', dict(files=[dict(path='@/file/a', content='x')]), 'is not a directory'),
    ('mode a number', dict(files=[dict(path='@/a', content='x', mode=420)]), 'files[0].mode must be an octal mode in quotes'),
    ('mode symbolic', dict(files=[dict(path='@/a', content='x', mode='u=rw')]), 'files[0].mode must be 3 or 4 octal'),
    ('mode with 8', dict(files=[dict(path='@/a', content='x', mode='0648')]), 'files[0].mode'),
    ('unknown owner', dict(files=[dict(path='@/a', content='x', owner='gf-no-such-user')]), 'files[0].owner'),
    ('unknown group', dict(files=[dict(path='@/a', content='x', group='gf-no-such-group')]), 'files[0].group'),
    ('owner a list', dict(files=[dict(path='@/a', content='x', owner=['root'])]), 'files[0].owner'),
    ('relative remove', dict(files=[], remove=['*.network']), 'remove[0] must be an absolute glob pattern'),
    ('NUL in remove', dict(files=[], remove=['@/a*\x00']), 'remove[0] contains a NUL byte'),
    ('glob in directory', dict(files=[], remove=['@/*/a.network']), 'remove[0]'),
    ('remove dot-dot', dict(files=[], remove=['@/../*.network']), 'remove[0] must not contain ".."'),
    ('remove under a file', dict(files=[], remove=['@/file/*']), 'remove[0]'),
]


@pytest.mark.parametrize('case,args,needle', BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_naming_the_option(case, args, needle, tmp_path, run_module):
    (tmp_path / 'dir').mkdir()
    (tmp_path / 'file').write_text('keep')
    (tmp_path / 'old').write_text('old\n')
    os.symlink(str(tmp_path / 'file'), str(tmp_path / 'link'))

    def sub(value):
        if isinstance(value, str):
            return value.replace('@', str(tmp_path))
        if isinstance(value, list):
            return [sub(v) for v in value]
        if isinstance(value, dict):
            return dict((k, sub(v)) for k, v in value.items())
        return value

    args = sub(args)
    # a good file first: a refusal must not write it
    if isinstance(args.get('files'), list):
        args['files'] = [dict(path=str(tmp_path / 'old'), content='new\n')] + args['files']
        needle = needle.replace('files[1]', 'files[2]').replace('files[0]', 'files[1]')
    args['remove'] = args.get('remove', []) + [str(tmp_path / 'ol*')]
    before = snapshot(tmp_path)
    res = run_module(file_set.main, args)
    assert res.get('failed') and not res.get('changed'), res
    assert needle in res['msg'], res['msg']
    assert 'Traceback' not in res['msg'] and 'exception' not in res
    assert snapshot(tmp_path) == before


def test_failing_write_leaves_old_files_and_no_temp_file(net, run_module, monkeypatch):
    run_module(file_set.main, dict(files=files(net)))
    changed = files(net)
    changed[0]['content'] = 'new netdev\n'
    changed[1]['content'] = 'new network\n'
    changed.append(dict(path=str(net / 'c.network'), content='c\n'))
    (net / 'b.member.eth9.network').write_text('stale\n')
    real = basic.AnsibleModule.atomic_move

    def failing(self, src, dest, *a, **kw):
        if dest.endswith('b.network'):
            raise Exception('disk on fire')
        return real(self, src, dest, *a, **kw)

    monkeypatch.setattr(basic.AnsibleModule, 'atomic_move', failing)
    res = run_module(file_set.main, dict(files=changed, remove=[str(net / 'b.member.*.network')]))
    assert res['failed'] and res['changed'] and res['failed_path'] == str(net / 'b.network'), res
    assert res['written'] == [str(net / 'b.netdev')] and res['removed'] == []
    assert 'files[1].path %s: disk on fire' % (net / 'b.network') in res['msg']
    assert 'written [%r]' % str(net / 'b.netdev') in res['msg']
    assert (net / 'b.netdev').read_text() == 'new netdev\n'
    assert (net / 'b.network').read_text() == NETWORK
    assert not (net / 'c.network').exists() and (net / 'b.member.eth9.network').exists()
    assert sorted(p.name for p in net.iterdir()) == ['b.member.eth9.network', 'b.netdev', 'b.network']


def test_write_refused_by_the_kernel_fails_cleanly_and_keeps_the_old_files(net, run_module):
    """A real write failure, also as root (CI runs as root, where a read-only directory does not stop a write): the
    kernel's file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes the write of the second, 2 MiB file fail with
    EFBIG. The first file is written whole, the second keeps its old content, no temp file is left."""
    run_module(file_set.main, dict(files=files(net)))
    changed = files(net)
    changed[0]['content'] = 'new netdev\n'
    changed[1]['content'] = 'x' * (2 << 20)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, old_limit[1]))
    try:
        res = run_module(file_set.main, dict(files=changed))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert res['failed'] and res['changed'] and res['failed_path'] == str(net / 'b.network'), res
    assert 'files[1].path' in res['msg'] and 'Traceback' not in res['msg'], res
    assert (net / 'b.netdev').read_text() == 'new netdev\n'
    assert (net / 'b.network').read_text() == NETWORK
    assert sorted(p.name for p in net.iterdir()) == ['b.netdev', 'b.network']


def test_engine_check_files_keys_and_defaults(tmp_path):
    entries, errors = engine.check_files([dict(path=str(tmp_path / 'a'), content='x')])
    assert errors == []
    assert entries[0]['mode'] == 0o644 and entries[0]['uid'] is None and entries[0]['data'] == b'x'
    assert engine.check_files([dict(path=str(tmp_path / 'a'), content='x', mode='755')])[0][0]['mode'] == 0o755
    errors = engine.check_files([dict(path=str(tmp_path / 'a'), content='\ud800')])[1]
    assert errors and errors[0].startswith('files[0].content cannot be written as UTF-8')


def test_engine_remove_pattern_shapes():
    assert engine.check_remove(['/etc/systemd/network/10-x-*.network'])[1] == []
    assert engine.check_remove(['/etc/sys[a-z]/x'])[1][0].startswith('remove[0] ')
    assert engine.check_remove(['/etc/x/'])[1][0].startswith('remove[0] must name a file')
