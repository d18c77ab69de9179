# -*- coding: utf-8 -*-
"""Shared unit-test plumbing: make ``ansible_collections.gpufleet.cluster`` importable and locate
the recorded-output corpus (``GPUFLEET_CORPUS``, ``<repo>/../shared/corpus``, else the bundled subset
in ``tests/unit/fixtures/corpus``).

Tests that need a corpus file ask for ``corpus`` (a Path; skips when absent) or for one of the
parametrized fixtures in ``CORPUS_GLOBS`` (one test per matching file, skipped when absent).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _make_collection_importable():
    try:
        import ansible_collections.gpufleet.cluster.plugins.module_utils  # noqa: F401  pylint: disable=unused-import
        return
    except ImportError:
        pass
    linked = REPO_ROOT / '.ansible' / 'collections'
    if (linked / 'ansible_collections' / 'gpufleet' / 'cluster' / 'plugins').is_dir():
        sys.path.insert(0, str(linked))
        return
    # Fresh checkout without scripts/setup: a throw-away symlink tree.
    tmp = Path(tempfile.mkdtemp(prefix='gpufleet-coll-'))
    (tmp / 'ansible_collections' / 'gpufleet').mkdir(parents=True)
    (tmp / 'ansible_collections' / 'gpufleet' / 'cluster').symlink_to(REPO_ROOT)
    sys.path.insert(0, str(tmp))


_make_collection_importable()


@pytest.fixture
def repo_script(tmp_path, monkeypatch):
    """Load one of the repository's Python commands (``scripts/lab``, ``scripts/labvm``) as a module, its lab
    directory (GPUFLEET_LAB_DIR) in this test's tmp_path: ``repo_script('lab')``."""
    import importlib.machinery
    import importlib.util

    def _load(name):
        monkeypatch.setenv('GPUFLEET_LAB_DIR', str(tmp_path / 'lab'))
        loader = importlib.machinery.SourceFileLoader(name + '_under_test', str(REPO_ROOT / 'scripts' / name))
        spec = importlib.util.spec_from_loader(name + '_under_test', loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod

    return _load


BUNDLED_CORPUS = REPO_ROOT / 'tests' / 'unit' / 'fixtures' / 'corpus'


def _find_corpus():
    """The full corpus (``GPUFLEET_CORPUS`` or ``<repo>/../shared/corpus``) when present, else the bundled
    subset of permissively licensed files (``tests/unit/fixtures/corpus``, see its SOURCES.tsv)."""
    env = os.environ.get('GPUFLEET_CORPUS')
    # An explicit GPUFLEET_CORPUS that is not a corpus (e.g. "none") selects the bundled subset.
    candidates = [Path(env)] if env else [REPO_ROOT / '..' / 'shared' / 'corpus']
    for cand in candidates:
        if (cand / 'MANIFEST.tsv').is_file():
            return cand.resolve(), True
    if (BUNDLED_CORPUS / 'SOURCES.tsv').is_file():
        return BUNDLED_CORPUS, False
    return None, False


CORPUS, CORPUS_FULL = _find_corpus()

# fixture name -> glob under the corpus; every matching file becomes one test case.
CORPUS_GLOBS = {
    'nvsmi_xml_file': 'nvidia_smi/*.xml',
    'topo_m_file': 'nvidia_smi/topo-m-*.txt',
    'sysfs_ib_root': 'sysfs_infiniband/*/**/sys/class/infiniband',
    'mlx_query_file': 'mlx_fw/*flint*-q-*.txt',
}


def corpus_files(glob):
    if CORPUS is None:
        return []
    return sorted(CORPUS.glob(glob))


def pytest_generate_tests(metafunc):
    for name, glob in CORPUS_GLOBS.items():
        if name not in metafunc.fixturenames:
            continue
        files = corpus_files(glob)
        if files:
            metafunc.parametrize(name, files, ids=[str(f.relative_to(CORPUS)) for f in files])
        else:
            metafunc.parametrize(name, [pytest.param(None, marks=pytest.mark.skip(reason='corpus not found'))])


@pytest.fixture
def corpus():
    if CORPUS is None:
        pytest.skip('recorded-output corpus not found (set GPUFLEET_CORPUS)')
    return CORPUS


@pytest.fixture
def corpus_full(corpus):
    """True with the full corpus, False with the bundled subset."""
    return CORPUS_FULL


@pytest.fixture
def corpus_file(corpus):
    """``corpus_file('dir/name')`` -> Path; skips when only the bundled subset is there and lacks it."""
    def _get(rel):
        path = corpus / rel
        if not path.exists():
            pytest.skip('%s is not in the bundled corpus subset (full corpus not found)' % rel)
        return path
    return _get


@pytest.fixture
def run_module(capsys, monkeypatch):
    """Run a module's ``main()`` in-process with ``args``; return the parsed JSON result.

    ``failed`` is set in the result when the module called ``fail_json``. The module runs as on a target
    host whatever ran before it in this process: once a test has imported the controller's side of
    ansible-core (a filter plugin, the templar), ansible-core marks the process a controller and routes
    ``module.warn`` to the controller's display instead of the result's ``warnings``.
    """
    import json

    from ansible.module_utils import _internal as module_utils_internal
    from ansible.module_utils.testing import patch_module_args

    monkeypatch.setattr(module_utils_internal, 'is_controller', False, raising=False)

    def _run(main, args):
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                main()
        out = capsys.readouterr().out
        return json.loads(out)

    return _run


@pytest.fixture
def run_adhoc():
    """Run ``ansible localhost -m gpufleet.cluster.<module>`` from the repo (its ansible.cfg);
    return ``(rc, result_dict)``. Skips when the venv's ansible or the collection link is missing."""
    import json
    import subprocess

    ansible = Path(sys.executable).parent / 'ansible'
    link = REPO_ROOT / '.ansible' / 'collections' / 'ansible_collections' / 'gpufleet' / 'cluster'
    if not ansible.is_file() or not link.exists():
        pytest.skip('ansible or the collection link is missing (run scripts/setup)')

    def _run(module, args, check=False):
        cmd = [str(ansible), 'localhost', '-i', 'localhost,', '-c', 'local',
               '-e', 'ansible_python_interpreter=%s' % sys.executable,
               '-m', 'gpufleet.cluster.%s' % module, '-a', json.dumps(args)]
        if check:
            cmd.append('--check')
        env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK='ansible.builtin.minimal',
                   ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_NOCOLOR='1',
                   ANSIBLE_DEPRECATION_WARNINGS='0')
        proc = subprocess.run(cmd, cwd=str(REPO_ROOT), env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        dummy, sep, body = proc.stdout.partition('=> ')
        assert sep, 'unexpected ansible output: %s %s' % (proc.stdout, proc.stderr)
        return proc.returncode, json.loads(body)

    return _run


@pytest.fixture
def run_play(tmp_path):
    """Run a playbook text on localhost (connection local, the repo's ansible.cfg) with ``extra`` as extra
    vars; return ``(rc, output)``. Skips when the venv's ansible-playbook is missing."""
    import json
    import subprocess

    ansible_playbook = Path(sys.executable).parent / 'ansible-playbook'
    if not ansible_playbook.is_file():
        pytest.skip('ansible-playbook not in the venv (run scripts/setup)')

    def _run(playbook, extra):
        (tmp_path / 'play.yml').write_text(playbook)
        (tmp_path / 'vars.json').write_text(json.dumps(dict(extra, ansible_python_interpreter=sys.executable)))
        env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='0')
        proc = subprocess.run([str(ansible_playbook), '-i', 'localhost,', str(tmp_path / 'play.yml'),
                               '-e', '@%s' % (tmp_path / 'vars.json')], cwd=str(REPO_ROOT), env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        return proc.returncode, proc.stdout[-3000:] + proc.stderr[-2000:]

    return _run


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    """A test that runs a role or playbook through ``run_play`` is a ``playbook`` test (pytest.ini), as are the role
    and playbook test files that call ansible-playbook themselves (``pytestmark``): compat's CI run leaves them to
    compat-full. A module's own run (``run_adhoc``, ``replay.run_playbook``) is not one."""
    for item in items:
        if 'run_play' in getattr(item, 'fixturenames', ()):
            item.add_marker(pytest.mark.playbook)


def _damaged(text, seed=0, none=False):
    """Cut and garbled copies of ``text`` (deterministic): cut at fractions of its length and at line
    boundaries, 40 copies with three lines each truncated, replaced by noise, deleted or with digits
    turned into 'x'/'N/A', then empty, blank, garbage and binary inputs (and ``None`` with ``none``)."""
    import random
    lines = text.splitlines(True)
    out = [text[:int(len(text) * f)] for f in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99)]
    out += [''.join(lines[:i]) for i in range(0, len(lines), max(1, len(lines) // 20))]
    rnd = random.Random(seed)
    for dummy in range(40):
        ls = list(lines)
        for dummy2 in range(3):
            if not ls:
                break
            i = rnd.randrange(len(ls))
            op = rnd.randrange(4)
            if op == 0:
                ls[i] = ls[i][:rnd.randrange(len(ls[i]) + 1)] + '\n'
            elif op == 1:
                ls[i] = ''.join(rnd.choice('xz:09 \t()[],=N/A-') for dummy3 in ls[i]) + '\n'
            elif op == 2:
                del ls[i]
            else:
                ls[i] = ls[i].replace('0', 'x').replace('1', 'N/A')
        out.append(''.join(ls))
    return out + ['', '\n', 'garbage\n', '\x00\xff\n'] + ([None] if none else [])


@pytest.fixture
def damaged():
    """``damaged(text, seed=0, none=False)`` -> list of cut and garbled copies, for parser robustness tests."""
    return _damaged


GARBAGE_TOKENS = ('#', '|', '?', 'x', ':', '(', '\u00b2', '--')  # none of them is a number or a status word


def _damaged_tokens(text, seed=0):
    """(kind, text) variants: cut at 7 points inside the text, lines shuffled, one token in ~30% of the lines
    replaced by garbage (3 seeds each)."""
    import random
    rnd = random.Random(seed)
    out = [('cut', text[:len(text) * k // 8]) for k in range(1, 8)]
    lines = text.splitlines()
    for dummy in range(3):
        shuffled = list(lines)
        rnd.shuffle(shuffled)
        out.append(('shuffled', '\n'.join(shuffled)))
        garbled = []
        for line in lines:
            tokens = line.split(' ')
            if tokens and rnd.random() < 0.3:
                tokens[rnd.randrange(len(tokens))] = rnd.choice(GARBAGE_TOKENS)
            garbled.append(' '.join(tokens))
        out.append(('garbled', '\n'.join(garbled)))
    return out


@pytest.fixture
def damaged_tokens():
    """``damaged_tokens(text, seed=0)`` -> [(kind, text)] cut, shuffled and token-garbled copies, for the
    benchmark parsers' robustness tests."""
    return _damaged_tokens


TALLY = '_gpufleet_bad_input_tally'


def pytest_sessionfinish(session):
    """Under pytest-xdist a worker hands its bad-input counts to the controller (``workeroutput``)."""
    tally = getattr(session.config, TALLY, None)
    if tally and hasattr(session.config, 'workeroutput'):
        session.config.workeroutput[TALLY] = dict(tally)


def pytest_configure(config):
    if config.pluginmanager.hasplugin('xdist'):
        config.pluginmanager.register(_XdistTally(config), 'gpufleet-bad-input-tally')


class _XdistTally:
    """Adds the workers' counts up on the controller."""

    def __init__(self, config):
        self.config = config

    def pytest_testnodedown(self, node, error):  # pylint: disable=unused-argument
        got = getattr(node, 'workeroutput', {}).get(TALLY)
        if not got:
            return
        total = getattr(self.config, TALLY, None)
        if total is None:
            total = dict((k, 0) for k in got)
            setattr(self.config, TALLY, total)
        for k, v in got.items():
            total[k] = total.get(k, 0) + v


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # pylint: disable=unused-argument
    """Totals of the bad-input table (tests/unit/test_bad_inputs.py) when it ran."""
    tally = getattr(config, TALLY, None)
    if not tally:
        return
    terminalreporter.write_line(
        'bad-input table: tried %d, refused cleanly %d, clean failures %d, no-change %d, tracebacks %d, '
        'changed-something %d' % (tally['tried'], tally['refused'], tally['clean_failure'], tally['no_change'],
                                  tally['traceback'], tally['changed'])
        + (', other outcomes %d' % tally['other'] if tally['other'] else ''))
