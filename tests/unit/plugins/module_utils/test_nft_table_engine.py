# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nft_table engine (module_utils/nft_table_engine.py) against hand-made stand-ins of nft, systemd-run and
systemctl that keep the "kernel's" table and the rollback timer in files: idempotence, check mode, the
rollback armed before the load and stopped by the confirm, a rollback that fired, nft -c refusals, absent, and
the content scope check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ansible_collections.gpufleet.cluster.plugins.module_utils import nft_table_engine as engine
from ansible_collections.gpufleet.cluster.plugins.modules.nft_table import ARGUMENT_SPEC

from .stand_ins import StandInModule, script

TABLE = ('table inet gpufleet\ndelete table inet gpufleet\ntable inet gpufleet {\n\tchain input {\n'
         '\t\ttype filter hook input priority filter; policy drop;\n\t}\n}\n')
OTHER = TABLE.replace('policy drop', 'policy accept')

# nft stand-in: the live table is $K/live (what `list table` prints: the file's last table block); `-c -f` refuses
# a file containing BROKEN; `-f` loads it.
NFT = r'''
K=%(k)s
case "$*" in
  "-s list table inet gpufleet") [ -f $K/live ] && exec cat $K/live; echo "Error: No such file or directory" >&2; exit 1;;
  "-c -f "*) grep -q BROKEN "$3" && { echo "$3:3:1-6: Error: syntax error, unexpected BROKEN" >&2; exit 1; }; exit 0;;
  "-f "*) grep -q BROKEN "$2" && exit 1; sed -n '/{/,$p' "$2" > $K/live; exit 0;;
  "delete table inet gpufleet") rm -f $K/live; exit 0;;
esac
echo "unexpected nft $*" >&2; exit 2
'''
SYSTEMD_RUN = r'''echo "$@" > %(k)s/armed; : > %(k)s/timer'''
SYSTEMCTL = r'''
K=%(k)s
case "$1" in
  is-active) [ -f $K/timer ] && { echo active; exit 0; }; echo inactive; exit 3;;
  stop) rm -f $K/timer; exit 0;;
  reset-failed) exit 0;;
esac
exit 2
'''


@pytest.fixture
def host(tmp_path):
    k = tmp_path / 'kernel'
    k.mkdir()
    calls = str(tmp_path / 'calls')
    tools = {name: script(tmp_path / 'bin', name, body % {'k': k}, calls)
             for name, body in (('nft', NFT), ('systemd-run', SYSTEMD_RUN), ('systemctl', SYSTEMCTL))}
    return {'k': k, 'tools': tools, 'calls': Path(calls), 'tmp': tmp_path}


def params(host, **kw):
    p = {key: spec.get('default') for key, spec in ARGUMENT_SPEC.items()}
    p.update(name='gpufleet', content=TABLE, path=str(host['tmp'] / 'etc' / 'gpufleet.nft'),
             state_dir=str(host['tmp'] / 'state'), nft_path=host['tools']['nft'],
             systemd_run_path=host['tools']['systemd-run'], systemctl_path=host['tools']['systemctl'])
    p.update(kw)
    return p


def run(host, check=False, diff=True, **kw):
    return engine.run(params(host, **kw), check, diff, lambda name: name if '/' in name else None, StandInModule())


def calls(host):
    return host['calls'].read_text().splitlines() if host['calls'].exists() else []


def test_fresh_host_check_mode_reports_and_changes_nothing(host):
    result = run(host, check=True, rollback_seconds=30)
    assert result['changed'] and not result['pending']
    assert result['reasons'] == ['file missing', 'table not loaded']
    assert result['diff']['after'] == TABLE and result['diff']['before'] == ''
    assert not (host['tmp'] / 'state').exists() and not (host['tmp'] / 'etc').exists()
    assert not (host['k'] / 'live').exists()
    assert all(' -f ' not in c and 'systemd-run' not in c for c in calls(host))


def test_load_arms_the_rollback_first_then_confirm_persists(host):
    result = run(host, rollback_seconds=30)
    assert result['changed'] and result['pending'] and result['rollback_unit'] == 'gpufleet-nft-rollback-inet-gpufleet.timer'
    seq = calls(host)
    armed = next(i for i, c in enumerate(seq) if '--on-active 30s' in c)
    loaded = next(i for i, c in enumerate(seq) if c.startswith('-f '))
    checked = next(i for i, c in enumerate(seq) if c.startswith('-c -f '))
    assert checked < armed < loaded
    rollback = (host['tmp'] / 'state' / 'inet-gpufleet.rollback.nft').read_text()
    assert rollback == 'table inet gpufleet\ndelete table inet gpufleet\n'  # no table before: the rollback removes it
    assert not (host['tmp'] / 'etc' / 'gpufleet.nft').exists()  # persisted only on confirm
    with pytest.raises(engine.Failure, match='a rollback of table inet gpufleet is pending'):
        run(host, rollback_seconds=30)  # a second run while the first is not confirmed
    confirmed = run(host, state='confirmed', content=None)
    assert confirmed['changed'] and not confirmed['pending']
    assert not (host['k'] / 'timer').exists()
    assert (host['tmp'] / 'etc' / 'gpufleet.nft').read_text() == TABLE
    assert (host['tmp'] / 'state' / 'inet-gpufleet.listing').read_text() == (host['k'] / 'live').read_text()
    assert not (host['tmp'] / 'state' / 'inet-gpufleet.rollback.nft').exists()
    # converged: nothing to do, and a confirm with nothing pending changes nothing
    assert run(host, rollback_seconds=30)['changed'] is False
    assert run(host, state='confirmed', content=None)['changed'] is False


def test_change_keeps_the_live_table_for_the_rollback(host):
    run(host, rollback_seconds=0)
    live = (host['k'] / 'live').read_text()
    result = run(host, content=OTHER, rollback_seconds=10)
    assert result['reasons'] == ['file differs'] and result['pending']
    assert result['diff']['before'] == TABLE and result['diff']['after'] == OTHER
    assert (host['tmp'] / 'state' / 'inet-gpufleet.rollback.nft').read_text() == (
        'table inet gpufleet\ndelete table inet gpufleet\n' + live)


def test_rollback_fired_before_the_confirm(host):
    run(host, rollback_seconds=0)
    run(host, content=OTHER, rollback_seconds=10)
    (host['k'] / 'timer').unlink()  # the timer fired: the rollback unit wrote its marker
    (host['tmp'] / 'state' / 'inet-gpufleet.rolled-back').write_text('1764144000.25\n')
    with pytest.raises(engine.Failure, match='it fired at 1764144000.25') as exc:
        run(host, state='confirmed', content=None)
    assert exc.value.result['rolled_back_at'] == 1764144000.25
    assert (host['tmp'] / 'etc' / 'gpufleet.nft').read_text() == TABLE  # the file was never changed


def test_table_changed_by_hand_is_loaded_again(host):
    run(host, rollback_seconds=0)
    (host['k'] / 'live').write_text('table inet gpufleet {\n}\n')
    result = run(host, rollback_seconds=0)
    assert result['changed'] and result['reasons'] == ['live table differs from the last load']
    (host['k'] / 'live').unlink()
    assert run(host, rollback_seconds=0)['reasons'] == ['table not loaded']
    assert run(host, rollback_seconds=0)['changed'] is False


def test_nft_check_refusal_loads_nothing(host):
    with pytest.raises(engine.Failure, match=r'nft -c refused the new ruleset, nothing was loaded: .*syntax error'):
        run(host, content=TABLE.replace('policy drop;', 'policy drop; BROKEN'), rollback_seconds=30)
    assert not (host['k'] / 'live').exists() and not (host['k'] / 'armed').exists()


def test_absent_deletes_only_the_table_and_its_files(host):
    run(host, rollback_seconds=0)
    assert run(host, state='absent', content=None, check=True)['changed'] is True
    assert (host['k'] / 'live').exists()
    result = run(host, state='absent', content=None)
    assert result['changed'] and not (host['k'] / 'live').exists()
    assert not (host['tmp'] / 'etc' / 'gpufleet.nft').exists()
    assert run(host, state='absent', content=None)['changed'] is False


@pytest.mark.parametrize('content, message', [
    ('flush ruleset\n' + TABLE, "'flush ruleset' is not about table inet gpufleet"),
    (TABLE + 'table ip nat {\n}\n', 'names table ip nat; only inet gpufleet is managed here'),
    ('include "/etc/x.nft"\n' + TABLE, 'is not about table inet gpufleet'),
    (TABLE + '}\n', 'a "}" closes nothing'),
    ('table inet gpufleet {\n', 'unbalanced braces'),
])
def test_content_may_only_touch_its_own_table(host, content, message):
    with pytest.raises(engine.Failure, match=message.replace('(', r'\(')):
        run(host, content=content)
    assert calls(host) == []


def test_comments_and_quoted_braces_are_not_statements():
    text = '# flush ruleset\n' + TABLE.replace('policy drop;', 'policy drop; # a } in a comment\n\t\tcomment "{ x"')
    assert engine.scope_errors(text, 'inet', 'gpufleet') == []


@pytest.mark.parametrize('kw, message', [
    (dict(name='1bad'), 'name must be 1..32 characters'),
    (dict(rollback_seconds=5), 'rollback_seconds must be an integer from 10 to 3600'),
    (dict(path='relative.nft'), 'path must be an absolute path'),
    (dict(content=''), 'content is required with state=present'),
    (dict(state='absent'), 'content is only for state=present'),
])
def test_bad_params_are_refused_before_any_command(host, kw, message):
    with pytest.raises(engine.Failure, match=message):
        run(host, **kw)
    assert calls(host) == []


def test_the_rollback_script_really_restores(host, tmp_path):
    """The command the timer runs, run here: it loads the rollback file and writes the marker."""
    run(host, rollback_seconds=0)
    run(host, content=OTHER, rollback_seconds=10)
    argv = (host['k'] / 'armed').read_text().split()
    sh = argv.index('/bin/sh')
    rollback, marker = argv[-2], argv[-1]
    subprocess.run(['/bin/sh', '-c', (host['k'] / 'armed').read_text().split(" -c ", 1)[1].rsplit(' rollback ', 1)[0],
                    'rollback', rollback, marker], check=True)
    assert sh > 0 and Path(marker).read_text().strip()
    assert 'policy drop' in (host['k'] / 'live').read_text()
