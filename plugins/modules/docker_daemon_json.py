#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: docker_daemon_json
short_description: Manage some keys of Docker's daemon.json and keep every other key
version_added: 0.1.0
description:
  - Merges the keys given in O(config) into Docker's C(daemon.json) (or removes them with
    O(state=absent)) and keeps every other key of the file as it was, so several roles and the
    operator can share the file. Nothing is added that was not asked for (no module-side defaults).
  - Dicts are merged recursively (adding C(runtimes.nvidia) keeps C(runtimes.runc-custom)). Lists
    and other values are replaced as a whole, because daemon.json lists are ordered, complete
    statements (C(dns), C(registry-mirrors), C(hosts), C(default-address-pools)); a merged list
    could never lose an entry.
  - With O(state=absent), a dict value that has keys descends and removes only the keys named
    inside it (the same O(config) used for O(state=present) undoes itself); any other value removes
    the key. Dicts emptied by the removal are removed.
  - The file and the result are compared as data, type-strictly, so formatting and key order never
    make a change; a changed file is written with 2-space indentation, keys in their existing order.
  - Computes first, then writes only when something changed and not in check mode, through a
    temporary file in the same directory that replaces the file atomically, keeping its mode and
    owner. A new file gets mode 0644 (under the usual umask) and a missing parent directory is created.
  - Before writing, runs C(dockerd --validate) on the result when a dockerd that supports it is found
    (Docker 23.0 and later); with an older dockerd or none it warns and skips the validation.
  - Fails, leaving the file untouched, when the file or O(config) is not valid JSON (naming the file
    and the line and column), or when the result has C(hosts) while C(docker.service) passes C(-H)
    to dockerd (dockerd refuses to start then); the message says how to fix it.
  - Refuses, before reading or writing anything, a NUL byte in any option or O(config) key or value, an
    O(path) that is empty or not a regular file (see O(path) for symlinks), a O(systemd_root) that is not a
    directory, a O(dockerd_path) that is a directory or not executable, and a drop-in (C(docker.service.d/*.conf))
    under O(systemd_root) that is not a regular file.
author:
  - gpufleet maintainers (@gpufleet)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  path:
    description:
      - The daemon configuration file.
      - When it is a symlink, the file the link points to is updated in place (written through a temporary file
        next to the target, where O(backup) also puts its copy) and the link stays as it is, so a layout such as
        C(/etc/docker/daemon.json -> /srv/config/daemon.json) is kept. A symlink loop or a link into a missing
        directory is refused.
      - An empty string, a directory, or anything but a regular file is refused before anything is read or written.
    type: path
    default: /etc/docker/daemon.json
  config:
    description:
      - The keys to manage, as a dict or as JSON text (for example from a file lookup). Only these
        keys are changed.
      - With O(state=absent), the keys to remove (their values only select nested keys, see above).
    type: raw
    required: true
  state:
    description:
      - V(present) merges O(config) into the file, V(absent) removes its keys.
    type: str
    choices: [present, absent]
    default: present
  validate:
    description:
      - Run C(dockerd --validate --config-file) on the result before it replaces the file (only when
        something changes). Skipped with a warning when no dockerd is found or it lacks C(--validate).
    type: bool
    default: true
  dockerd_path:
    description:
      - The dockerd to validate with. Default is C(dockerd) from C(PATH), C(/usr/sbin) and C(/usr/bin).
      - Its directory is put first on C(PATH) during validation so it finds its C(docker-proxy).
    type: path
  backup:
    description:
      - Keep a timestamped copy of the file before it is replaced.
    type: bool
    default: false
  systemd_root:
    description:
      - Root under which C(docker.service) and its drop-ins are read (C(etc/systemd/system),
        C(run/systemd/system), C(usr/lib/systemd/system), C(lib/systemd/system)) to detect a C(-H)
        flag that clashes with a C(hosts) key. Point it at a copied tree to test.
      - Must be an existing directory.
    type: path
    default: /
notes:
  - C(restart_required) is true whenever the file changed; the role C(gpufleet.cluster.docker_daemon)
    restarts Docker from a handler then.
seealso:
  - name: Docker daemon configuration file
    description: The keys daemon.json accepts.
    link: https://docs.docker.com/reference/cli/dockerd/#daemon-configuration-file
"""

EXAMPLES = r"""
- name: Add the NVIDIA runtime and make it the default, keeping everything else
  gpufleet.cluster.docker_daemon_json:
    config:
      default-runtime: nvidia
      runtimes:
        nvidia:
          path: /usr/bin/nvidia-container-runtime
          runtimeArgs: []
  register: __daemon_json

- name: Log rotation, with a backup of the old file
  gpufleet.cluster.docker_daemon_json:
    config:
      log-driver: json-file
      log-opts:
        max-size: 100m
        max-file: "3"
    backup: true

- name: Remove only runtimes.nvidia (runtimes.runc-custom stays)
  gpufleet.cluster.docker_daemon_json:
    config:
      runtimes:
        nvidia:
    state: absent

- name: Merge a JSON snippet shipped with the inventory
  gpufleet.cluster.docker_daemon_json:
    config: "{{ lookup('ansible.builtin.file', 'files/daemon-extra.json') }}"
"""

RETURN = r"""
config:
  description: The whole daemon configuration after the change (what the file holds or would hold).
  returned: always
  type: dict
  sample: {"default-runtime": "nvidia", "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}}
changed_keys:
  description: Dotted paths of the keys added, changed or removed.
  returned: always
  type: list
  elements: str
  sample: ["default-runtime", "runtimes.nvidia"]
backup_file:
  description: The backup made before the file was replaced.
  returned: when O(backup=true) and an existing file was replaced
  type: str
  sample: /etc/docker/daemon.json.12345.2026-11-22@03:10:00~
restart_required:
  description: Docker must be restarted for the change to take effect (true when the file changed).
  returned: always
  type: bool
validated:
  description: V(true) when C(dockerd --validate) accepted the result, V(false) when the validation was skipped or nothing changed.
  returned: always
  type: bool
diff:
  description: The file's text before and after.
  returned: when changed or in diff mode
  type: dict
  contains:
    before:
      description: Text before.
      type: str
    after:
      description: Text after.
      type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import docker_daemon_json as engine


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/docker/daemon.json"),
            config=dict(type="raw", required=True),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            validate=dict(type="bool", default=True),
            dockerd_path=dict(type="path"),
            backup=dict(type="bool", default=False),
            systemd_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    module.exit_json(**engine.run(module))


if __name__ == "__main__":
    main()
