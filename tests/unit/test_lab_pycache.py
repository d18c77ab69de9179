# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/lab/gpufleet_lab_pycache.py, the lab hosts' zipimport compile cache: a module imported from a zip runs the
same with it, its code is compiled once per source, named after the zip it came from this time; scripts/lab puts it
into hosts unless GPUFLEET_LAB_PYCACHE=0. Each import runs in a Python of its own (the cache
patches zipimport of the process that installs it)."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import glob
import json
import os
import subprocess
import sys
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOOK_DIR = os.path.join(REPO, 'tests', 'lab')

PROBE = '''
import json, sys, traceback
sys.path.insert(0, %(hook)r)
import gpufleet_lab_pycache
gpufleet_lab_pycache.install(%(cache)r)
sys.path.insert(0, %(zip)r)
import pkg.mod
out = {"value": pkg.mod.value(), "file": pkg.mod.value.__code__.co_filename, "inner": pkg.mod.inner()}
try:
    pkg.mod.fail()
except ValueError:
    out["tb"] = traceback.format_exc()
print(json.dumps(out))
'''


def make_zip(path, source):
    with zipfile.ZipFile(str(path), 'w') as z:
        z.writestr('pkg/__init__.py', '')
        z.writestr('pkg/mod.py', source)
    return str(path)


def probe(zip_path, cache, python=sys.executable):
    env = dict((k, v) for k, v in os.environ.items() if k != 'PYTHONPATH')  # this hook, not one from elsewhere
    res = subprocess.run([python, '-c', PROBE % {'hook': HOOK_DIR, 'cache': str(cache), 'zip': zip_path}],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                         env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


SOURCE = '''
def value():
    return %d


def inner():
    def nested():
        return nested.__code__.co_filename
    return nested()


def fail():
    raise ValueError("planted")
'''


def test_compiled_once_then_loaded_with_this_zips_name(tmp_path):
    cache = tmp_path / 'cache'
    first = probe(make_zip(tmp_path / 'a.zip', SOURCE % 1), cache)
    entries = sorted(os.listdir(str(cache)))
    assert len(entries) == 2  # pkg/__init__.py and pkg/mod.py
    assert first['value'] == 1
    assert first['file'] == str(tmp_path / 'a.zip' / 'pkg' / 'mod.py')

    second = probe(make_zip(tmp_path / 'b.zip', SOURCE % 1), cache)  # same source, another payload path
    assert sorted(os.listdir(str(cache))) == entries  # loaded, nothing compiled again
    assert second['value'] == 1
    # every code object, nested ones too, names the zip it was imported from this time
    assert second['file'] == second['inner'] == str(tmp_path / 'b.zip' / 'pkg' / 'mod.py')
    assert str(tmp_path / 'b.zip' / 'pkg' / 'mod.py') in second['tb'] and 'a.zip' not in second['tb']


def other_python():
    """An interpreter of another minor version than this one whose zipimport the hook patches (3.8+), or None."""
    probe_tag = 'import sys, zipimport; zipimport._compile_source; print(sys.implementation.cache_tag)'
    for p in sorted(glob.glob('/usr/bin/python3.[0-9]*') + glob.glob('/root/.pyenv/versions/3.*/bin/python3')):
        if '-' in os.path.basename(p) or not os.access(p, os.X_OK):
            continue
        res = subprocess.run([p, '-c', probe_tag], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, check=False)
        if res.returncode == 0 and res.stdout.strip() not in ('', sys.implementation.cache_tag):
            return p
    return None


def test_two_pythons_sharing_a_cache_keep_their_own_code(tmp_path):
    other = other_python()
    if other is None:
        pytest.skip('no Python of another minor version on this machine')
    cache = tmp_path / 'cache'
    assert probe(make_zip(tmp_path / 'a.zip', SOURCE % 1), cache)['value'] == 1
    # before the tag was in the key, the other version loaded this one's code: "SystemError: unknown opcode"
    assert probe(make_zip(tmp_path / 'b.zip', SOURCE % 1), cache, python=other)['value'] == 1
    assert len(os.listdir(str(cache))) == 4
    assert probe(make_zip(tmp_path / 'c.zip', SOURCE % 1), cache)['value'] == 1
    assert len(os.listdir(str(cache))) == 4


def test_changed_source_is_compiled_again(tmp_path):
    cache = tmp_path / 'cache'
    assert probe(make_zip(tmp_path / 'a.zip', SOURCE % 1), cache)['value'] == 1
    assert probe(make_zip(tmp_path / 'b.zip', SOURCE % 2), cache)['value'] == 2
    assert len(os.listdir(str(cache))) == 3


def test_a_damaged_entry_is_compiled_again(tmp_path):
    cache = tmp_path / 'cache'
    probe(make_zip(tmp_path / 'a.zip', SOURCE % 1), cache)
    for name in os.listdir(str(cache)):
        (cache / name).write_bytes(b'not marshal data')
    assert probe(make_zip(tmp_path / 'b.zip', SOURCE % 1), cache)['value'] == 1


def test_an_unwritable_cache_still_imports(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('')
    assert probe(make_zip(tmp_path / 'a.zip', SOURCE % 3), blocker / 'cache')['value'] == 3


def fake_root(root):
    for ver in ('3.11', '3.13'):
        os.makedirs(str(root / ('usr/lib/python' + ver)))
        (root / ('usr/lib/python' + ver) / 'os.py').write_text('')
    os.makedirs(str(root / 'usr/lib/python3'))  # dist-packages only: not an interpreter
    return str(root)


def test_lab_puts_it_in_each_python_of_a_root(monkeypatch, tmp_path, repo_script):
    monkeypatch.delenv('GPUFLEET_LAB_PYCACHE', raising=False)
    lab = repo_script('lab')
    root = tmp_path / 'root'
    lab.put_pycache(fake_root(root))
    for ver in ('3.11', '3.13'):
        site = root / ('usr/local/lib/python' + ver) / 'dist-packages'
        with open(os.path.join(HOOK_DIR, 'gpufleet_lab_pycache.py')) as f:
            assert (site / 'gpufleet_lab_pycache.py').read_text() == f.read()
        assert (site / 'gpufleet_lab_pycache.pth').read_text() == \
            'import gpufleet_lab_pycache; gpufleet_lab_pycache.install()\n'
    assert not (root / 'usr/local/lib/python3').exists()


def test_lab_leaves_it_out_when_turned_off(monkeypatch, tmp_path, repo_script):
    monkeypatch.setenv('GPUFLEET_LAB_PYCACHE', '0')
    lab = repo_script('lab')
    root = tmp_path / 'root'
    lab.put_pycache(fake_root(root))
    assert not (root / 'usr/local').exists()


CONTROLLER_DIR = os.path.join(HOOK_DIR, 'controller')

CONTROLLER_PROBE = '''
import json, sys, zipimport
sys.path.insert(0, %(zip)r)
import pkg.mod
print(json.dumps({"patched": getattr(zipimport._compile_source, "gpufleet_lab", False), "value": pkg.mod.value(),
                  "next": getattr(sys, "gpufleet_next_ran", False)}))
'''


def controller_probe(tmp_path, zip_path, extra_path=None):
    """A Python started as scripts/test starts the controller's: tests/lab/controller first on PYTHONPATH."""
    env = dict(os.environ, GPUFLEET_CONTROLLER_PYCACHE=str(tmp_path / 'ctl-cache'),
               PYTHONPATH=os.pathsep.join([CONTROLLER_DIR] + ([extra_path] if extra_path else [])))
    res = subprocess.run([sys.executable, '-c', CONTROLLER_PROBE % {'zip': zip_path}], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=False, env=env)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ''
    return json.loads(res.stdout)


def test_controller_sitecustomize_installs_the_cache_per_bytecode_tag(tmp_path):
    out = controller_probe(tmp_path, make_zip(tmp_path / 'a.zip', SOURCE % 5))
    assert out['patched'] is True and out['value'] == 5
    tag_dir = tmp_path / 'ctl-cache' / sys.implementation.cache_tag
    assert len(os.listdir(str(tag_dir))) == 2  # pkg/__init__.py and pkg/mod.py, compiled once
    assert controller_probe(tmp_path, make_zip(tmp_path / 'b.zip', SOURCE % 5))['value'] == 5
    assert len(os.listdir(str(tag_dir))) == 2


def test_controller_sitecustomize_runs_the_one_it_hides(tmp_path):
    other = tmp_path / 'other'
    other.mkdir()
    (other / 'sitecustomize.py').write_text('import sys\nsys.gpufleet_next_ran = True\n')
    out = controller_probe(tmp_path, make_zip(tmp_path / 'a.zip', SOURCE % 6), extra_path=str(other))
    assert out == {'patched': True, 'value': 6, 'next': True}


def test_controller_sitecustomize_with_an_unwritable_cache_still_imports(tmp_path):
    (tmp_path / 'ctl-cache').write_text('')  # a file where the cache directory would be
    assert controller_probe(tmp_path, make_zip(tmp_path / 'a.zip', SOURCE % 7))['value'] == 7
