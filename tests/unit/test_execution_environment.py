# -*- coding: utf-8 -*-
"""The execution environment definition (meta/execution-environment.yml, issue #17 part 3).

- ``ansible-builder create`` writes the build context from it with no error, and the context carries exactly the
  collection's Python requirements, its bindep file and the Galaxy requirements (no image build: no container engine);
- ``ansible-builder introspect`` finds the same Python and system requirements when the collection is one of another
  execution environment's collections (its paths resolve from the collection root too);
- the Galaxy requirements name every collection the roles, playbooks and plugins call by FQCN;
- every third-party package the controller-side plugins import is in the Python requirements;
- the ansible-core / ansible-runner pins are the ones CI tests (requirements.txt).
Installing the context's requirements into a fresh venv and running the sanity import test there is the ``ee`` job
of ``scripts/test full`` (scripts/ee-test).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EE_FILE = REPO / 'meta' / 'execution-environment.yml'
BUILDER = Path(sys.executable).parent / 'ansible-builder'

needs_builder = pytest.mark.skipif(not BUILDER.exists(), reason='ansible-builder is not in this venv (requirements.txt '
                                   'has it; the compat venv does not)')


def _ee():
    return yaml.safe_load(EE_FILE.read_text())


def _req_lines(path):
    return [ln.strip() for ln in Path(path).read_text().splitlines() if ln.strip() and not ln.strip().startswith('#')]


def _pins():
    pins = {}
    for ln in _req_lines(REPO / 'requirements.txt'):
        name, _sep, ver = ln.partition('==')
        pins[name.lower()] = ver
    return pins


def test_schema_3_and_files_exist():
    ee = _ee()
    assert ee['version'] == 3
    assert ee['images']['base_image']['name']
    deps = ee['dependencies']
    for key in ('python', 'system', 'galaxy'):
        # relative to the definition (ansible-builder create) ...
        assert (EE_FILE.parent / deps[key]).is_file(), f'{key}: {deps[key]} missing next to {EE_FILE}'
    for key in ('python', 'system'):
        # ... and to the collection root (ansible-builder introspect of an installed collection)
        assert (REPO / deps[key]).is_file(), f'{key}: {deps[key]} missing at the collection root'
        assert (REPO / deps[key]).resolve() == (EE_FILE.parent / deps[key]).resolve()


def test_core_and_runner_pins_are_the_tested_ones():
    deps, pins = _ee()['dependencies'], _pins()
    assert deps['ansible_core']['package_pip'] == f"ansible-core=={pins['ansible-core']}"
    assert deps['ansible_runner']['package_pip'] == f"ansible-runner=={pins['ansible-runner']}"


def _fqcn_collections():
    """Collections named by FQCN (task actions, filters, lookups) in the roles, playbooks and plugin docs."""
    pat = re.compile(r'(?<![\w.])(ansible\.(?:posix|utils|netcommon)|community\.[a-z_]+)\.[a-z_0-9]+')
    found = set()
    for top in ('roles', 'playbooks', 'plugins'):
        for f in (REPO / top).rglob('*'):
            if f.suffix not in ('.yml', '.yaml', '.j2') or not f.is_file():
                continue
            for line in f.read_text(errors='replace').splitlines():
                if not line.strip().startswith('#'):
                    found.update(m.group(1) for m in pat.finditer(line))
    found |= {m.group(1) for m in pat.finditer((REPO / 'site.yml').read_text())}
    return found


def test_galaxy_requirements_cover_every_collection_used():
    reqs = yaml.safe_load((EE_FILE.parent / _ee()['dependencies']['galaxy']).read_text())
    names = {c['name'] for c in reqs['collections']}
    used = _fqcn_collections()
    assert {'ansible.posix', 'community.general', 'ansible.utils'} <= used, used  # the grep finds what is there
    assert used <= names, f'collections used but not in the execution environment: {sorted(used - names)}'


def _third_party_imports():
    """Top-level imports of the controller-side plugin code that are neither stdlib, ansible nor the collection."""
    out = {}
    for top in ('filter', 'plugin_utils', 'action', 'lookup', 'inventory', 'callback', 'test'):
        for f in (REPO / 'plugins' / top).glob('*.py'):
            for node in ast.walk(ast.parse(f.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for n in names:
                    root = n.split('.')[0]
                    if root in sys.stdlib_module_names or root in ('ansible', 'ansible_collections', '__future__'):
                        continue
                    out.setdefault(root, set()).add(f.relative_to(REPO).as_posix())
    return out


def test_every_plugin_import_is_a_python_requirement():
    reqs = {re.split(r'[<>=!~ \[;]', ln, 1)[0].lower() for ln in _req_lines(EE_FILE.parent / _ee()['dependencies']['python'])}
    # import name -> distribution name where they differ; None: ansible-core requires it (2.19 and 2.21 alike: jinja2,
    # PyYAML, cryptography, packaging, resolvelib), so every execution environment has it
    dist = {'yaml': None, 'jinja2': None, 'markupsafe': None, 'packaging': None}
    imports = _third_party_imports()
    assert 'netaddr' in imports  # the scan sees the import it must see
    missing = {mod: sorted(files) for mod, files in imports.items() if dist.get(mod, mod) and dist.get(mod, mod) not in reqs}
    assert not missing, f'plugins import packages the execution environment does not install: {missing}'


def test_filters_of_other_collections_have_their_python_library():
    """A filter of another collection whose Python library ansible-core does not bring: the roles call
    community.general.json_query (jmespath), so the execution environment installs jmespath."""
    reqs = {re.split(r'[<>=!~ \[;]', ln, 1)[0].lower() for ln in _req_lines(EE_FILE.parent / _ee()['dependencies']['python'])}
    needs = {'community.general.json_query': 'jmespath'}
    used = set()
    for f in [REPO / 'site.yml'] + sorted((REPO / 'roles').rglob('*.yml')) + sorted((REPO / 'playbooks').rglob('*.yml')):
        text = f.read_text(errors='replace')
        used.update(name for name in needs if name in text)
    assert 'community.general.json_query' in used  # the scan sees the use it must see
    missing = sorted(needs[name] for name in used if needs[name] not in reqs)
    assert not missing, f'filters used whose library the execution environment does not install: {missing}'


@needs_builder
def test_ansible_builder_create_writes_the_context(tmp_path):
    ctx = tmp_path / 'context'
    r = subprocess.run([str(BUILDER), 'create', '-f', str(EE_FILE), '--context', str(ctx), '--output-filename',
                        'Containerfile'], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'Complete!' in r.stdout
    build = ctx / '_build'
    # real files, not links that point outside the context
    for name in ('requirements.txt', 'bindep.txt', 'requirements.yml'):
        assert (build / name).is_file() and not (build / name).is_symlink(), name
    assert _req_lines(build / 'requirements.txt') == _req_lines(EE_FILE.parent / 'requirements-ee.txt')
    assert _req_lines(build / 'bindep.txt') == _req_lines(EE_FILE.parent / 'bindep.txt')
    assert yaml.safe_load((build / 'requirements.yml').read_text()) == yaml.safe_load(
        (EE_FILE.parent / 'ee-requirements.yml').read_text())
    containerfile = (ctx / 'Containerfile').read_text()
    ee = _ee()
    assert f"ARG EE_BASE_IMAGE=\"{ee['images']['base_image']['name']}\"" in containerfile
    assert ee['dependencies']['ansible_core']['package_pip'] in containerfile
    assert ee['dependencies']['ansible_runner']['package_pip'] in containerfile
    assert 'ansible-galaxy collection install' in containerfile


@needs_builder
def test_introspect_finds_the_requirements_from_the_collection_root(tmp_path):
    coll = tmp_path / 'ansible_collections' / 'gpufleet'
    coll.mkdir(parents=True)
    # the files ansible-galaxy puts in the artifact (no build: a copy of what introspect reads)
    root = coll / 'cluster'
    (root / 'meta').mkdir(parents=True)
    shutil.copy(REPO / 'galaxy.yml', root / 'galaxy.yml')
    for f in ('execution-environment.yml', 'requirements-ee.txt', 'bindep.txt'):
        shutil.copy(EE_FILE.parent / f, root / 'meta' / f)
    for f in ('requirements-ee.txt', 'bindep.txt'):
        assert (REPO / f).is_symlink() and (REPO / f).readlink() == Path('meta') / f
        (root / f).symlink_to(Path('meta') / f)
    r = subprocess.run([str(BUILDER), 'introspect', '--sanitize', str(tmp_path)], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    data = yaml.safe_load(r.stdout)
    want_py = _req_lines(EE_FILE.parent / 'requirements-ee.txt')
    want_sys = _req_lines(EE_FILE.parent / 'bindep.txt')
    assert [x.split('  #')[0] for x in data['python']] == want_py
    assert [x.split('  #')[0] for x in data['system']] == want_sys
    assert all('from collection gpufleet.cluster' in x for x in data['python'] + data['system'])
