# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_toolkit role: the containerd drop-in it renders is TOML with the runtime where containerd
looks for it (config versions 2 and 3), and its input checks accept and refuse what they should."""

from __future__ import (absolute_import, division, print_function)

__metaclass__ = type

import os
import re

import pytest
import yaml

jinja2 = pytest.importorskip('jinja2')
tomllib = pytest.importorskip('tomllib')

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, 'roles', 'container_toolkit')


def _load(path):
    with open(os.path.join(ROLE, path)) as f:
        return yaml.safe_load(f)


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures', 'containerd')
CRI = 'io.containerd.grpc.v1.cri'


def _dump(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def _render(dump, default_runtime, version=2, name='nvidia', binary='/usr/bin/nvidia-container-runtime'):
    """Render the drop-in the way ansible.builtin.template does (trim_blocks on, lstrip_blocks off)."""
    with open(os.path.join(ROLE, 'templates', 'containerd-nvidia.toml.j2')) as f:
        tmpl = jinja2.Environment(keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=False).from_string(f.read())
    return tmpl.render(
        ansible_managed='Ansible managed',
        container_toolkit_containerd_config_path='/etc/containerd/config.toml',
        container_toolkit_default_runtime=default_runtime,
        container_toolkit_runtime_name=name,
        __container_toolkit_containerd_version=version,
        __container_toolkit_cri_plugin=_load('vars/main.yml')['__container_toolkit_cri_plugin'],
        __container_toolkit_runtime_binary=binary,
        __container_toolkit_containerd_dump=dump,
    )


@pytest.mark.parametrize('dump', ['dump-1.6.20-site.toml', 'dump-1.7.24-site.toml'])
@pytest.mark.parametrize('default_runtime', [False, True])
def test_dropin_keeps_the_sites_cri_table_and_adds_the_runtime(dump, default_runtime):
    """containerd replaces a plugin's whole table with an imported one: the drop-in must carry the site's."""
    doc = tomllib.loads(_render(_dump(dump), default_runtime))
    site = tomllib.loads(_dump(dump))['plugins'][CRI]
    assert doc['version'] == 2
    assert list(doc['plugins']) == [CRI]
    cri = doc['plugins'][CRI]
    assert cri['sandbox_image'] == 'registry.k8s.io/pause:3.9'
    assert cri['cni']['bin_dir'] == '/usr/lib/cni'
    assert cri['containerd']['runtimes']['runc']['options'] == {'SystemdCgroup': True}
    assert cri['containerd']['runtimes']['nvidia'] == {
        'privileged_without_host_devices': False,
        'runtime_type': 'io.containerd.runc.v2',
        'options': {'BinaryName': '/usr/bin/nvidia-container-runtime'},
    }
    assert cri['containerd']['default_runtime_name'] == ('nvidia' if default_runtime else 'runc')
    # everything else of the CRI table is the dump's, unchanged
    cri['containerd']['runtimes'].pop('nvidia')
    cri['containerd']['default_runtime_name'] = site['containerd']['default_runtime_name']
    assert cri == site


@pytest.mark.parametrize('default_runtime', [False, True])
def test_dropin_replaces_an_existing_runtime_of_that_name_once(default_runtime):
    doc = tomllib.loads(_render(_dump('dump-1.7.24-site-nvidia.toml'), default_runtime))
    containerd = doc['plugins'][CRI]['containerd']
    assert containerd['runtimes']['nvidia']['options'] == {'BinaryName': '/usr/bin/nvidia-container-runtime'}
    assert 'nvidia-legacy' in containerd['runtimes']  # a runtime whose name starts the same is kept
    # default false leaves the site's default alone (here: already nvidia)
    assert containerd['default_runtime_name'] == 'nvidia'


def test_dropin_without_a_cri_table_in_the_dump():
    doc = tomllib.loads(_render('version = 3\n', True, version=3, name='nvidia.cdi'))
    containerd = doc['plugins']['io.containerd.cri.v1.runtime']['containerd']
    assert list(containerd['runtimes']) == ['nvidia.cdi']
    assert containerd['default_runtime_name'] == 'nvidia.cdi'


def _vars():
    return _load('vars/main.yml')


@pytest.mark.parametrize('good', ['1.17.3', '1.17.3-1', '1.17.8-1gpufleet1', '1.18.0~rc.1-1', '1.13.5-1'])
def test_version_accepted(good):
    assert re.match(_vars()['__container_toolkit_version_re'], good)


@pytest.mark.parametrize('bad', ['', '1.17', 'v1.17.3', '1.17.3 && reboot', '1.17.*', 'latest', '1.17.3-', '=1.17.3'])
def test_version_rejected(bad):
    assert not re.match(_vars()['__container_toolkit_version_re'], bad)


@pytest.mark.parametrize('name, ok', [
    ('nvidia', True), ('nvidia-legacy', True), ('nvidia.cdi', True), ('nvidia_exp', True),
    ('runc', False), ('default', False), ('io.containerd.runc.v2', False), ('nvidia gpu', False),
    ('-nvidia', False), ('', False), ('nvidia"x', False),
])
def test_runtime_name(name, ok):
    v = _vars()
    assert bool(re.match(v['__container_toolkit_name_re'], name) and name not in v['__container_toolkit_reserved_names']) is ok


def test_defaults_pin_all_four_packages_from_the_lock():
    d = _load('defaults/main.yml')
    assert d['container_toolkit_packages'] == [
        'nvidia-container-toolkit', 'nvidia-container-toolkit-base', 'libnvidia-container-tools', 'libnvidia-container1']
    assert 'gpufleet_lock' in d['container_toolkit_version'] and 'container_toolkit' in d['container_toolkit_version']
