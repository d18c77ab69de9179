#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: file_set
short_description: A set of whole files, and the stale files of earlier runs, in one module call
version_added: 0.5.0
description:
  - Makes each file of O(files) hold exactly the given content, with the given mode (and owner and group when
    given), and removes the regular files that match O(remove) and are not in O(files) - in one call, so a role
    that renders several files (for example rendered on the controller with the C(ansible.builtin.template) lookup) pays
    one round trip instead of a looped C(ansible.builtin.template), C(find) and C(file).
  - Computes first, acts second. Every option and every path is checked on the host before anything is changed;
    a refusal names the option and what is allowed, and changes nothing.
  - Each file's current bytes, mode, owner and group are compared with the wanted ones. Only a file whose bytes
    differ is written, through a temporary file in the same directory that replaces it atomically (as
    C(ansible.builtin.copy) does, its mode and owner are set right after the replacement); a file whose bytes
    are the same but whose mode, owner or group differ gets only those fixed.
  - Order - the files in the order of O(files), then the removals. When a step fails after an earlier one was
    done, the module fails naming the file, with C(changed=true) and the lists of what was done. Every file is
    whole either way - the old one or the new one, never a part - and the files after the failing one are
    untouched.
  - Files are written as the user the module runs as (root with C(become)); a new file belongs to that user and
    its group unless C(owner) and C(group) are given.
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
  files:
    description:
      - The files, each a dict with the keys C(path), C(content), C(mode), C(owner) and C(group) (no other).
      - C(path) (required) - the absolute path of the file, without C(..) components. It must be a regular file
        or not exist; a symlink is refused (writing through it would change another file, replacing it would
        drop the link), and so is a directory, a FIFO or a device. Its directory must exist (no directory is
        created). A file may be listed once.
      - C(content) (required) - the whole text of the file, written as UTF-8 exactly as given (no newline is
        added or removed).
      - C(mode) - the file's permissions as a quoted octal string of 3 or 4 digits, default C("0644"). A number
        is refused, because YAML reads an unquoted C(0644) as the number 420.
      - C(owner), C(group) - a user and group name (or numeric id) the file must belong to; not managed when left
        out (an existing file keeps its owner, a new one belongs to the module's user).
      - No NUL byte anywhere.
    type: list
    elements: dict
    required: true
  remove:
    description:
      - Glob patterns (absolute paths, C(*), C(?) and C([...]) in the last component only) of files to remove,
        typically the files an earlier run wrote for things that are gone. Existing regular files that match and
        are not in O(files) are removed; a file in O(files) is never removed. Symlinks, directories and names
        starting with C(.) (unless the pattern's last component does) are left alone; a directory that does not
        exist matches nothing.
      - Patterns are not expanded (no C(~), no C($VAR)). A relative pattern, one with C(..) components or a NUL
        byte, a glob in the directory part, or a directory part that is not a directory is refused.
    type: list
    elements: str
    default: []
notes:
  - The diff (C(--diff)) has one entry per file written (its text before and after), per file whose attributes
    were fixed (mode, owner, group before and after) and per file removed (its text before). Binary files and
    files larger than 104448 bytes are not shown.
seealso:
  - module: ansible.builtin.template
  - module: ansible.builtin.copy
"""

EXAMPLES = r"""
- name: Write the networkd files of bond0 and remove the member files of interfaces that left it
  gpufleet.cluster.file_set:
    files:
      - path: /etc/systemd/network/10-gpufleet-bond0.netdev
        content: "{{ lookup('ansible.builtin.template', 'bond.netdev.j2') }}"
      - path: /etc/systemd/network/10-gpufleet-bond0.member.eth1.network
        content: "[Match]\nName=eth1\n\n[Network]\nBond=bond0\n"
        mode: "0644"
        owner: root
        group: root
    remove:
      - /etc/systemd/network/10-gpufleet-bond0.member.*.network
  register: written

- name: Reload networkd when a file changed
  ansible.builtin.command:
    argv: [networkctl, reload]
  when: written.changed
  changed_when: true
"""

RETURN = r"""
changed:
  description: Whether a file was (in check mode would be) written, fixed or removed.
  returned: always
  type: bool
written:
  description: Paths of O(files) whose content was (in check mode would be) written - new files and files whose bytes differed.
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/network/10-gpufleet-bond0.netdev"]
fixed:
  description: Paths of O(files) with the wanted content whose mode, owner or group was (would be) fixed.
  returned: always
  type: list
  elements: str
  sample: []
removed:
  description: Files matching O(remove) that were (would be) removed.
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/network/10-gpufleet-bond0.member.eth3.network"]
unchanged:
  description: Paths of O(files) that already were as wanted.
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/network/10-gpufleet-bond0.network"]
failed_path:
  description: The file whose write, attribute change or removal failed after earlier changes were made.
  returned: when a step failed
  type: str
diff:
  description:
    - Per file written or removed C(before_header), C(after_header), C(before) and C(after) (text; instead
      C(dst_binary), C(dst_larger) or C(src_larger) when the text is not shown); per file whose attributes changed,
      C(before) and C(after) dicts with C(path) and the differing C(mode), C(owner), C(group).
  returned: in diff mode
  type: list
  elements: dict
  sample: [{"before_header": "/etc/x.conf", "after_header": "/etc/x.conf", "before": "a=1\n", "after": "a=2\n"}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufleet.cluster.plugins.module_utils import atomic_write
from ansible_collections.gpufleet.cluster.plugins.module_utils import file_set_engine as engine


ARGUMENT_SPEC = dict(
    files=dict(type="list", elements="dict", required=True),
    remove=dict(type="list", elements="str", default=[]),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)

    def write(path, text):
        return atomic_write.write_text(module, path, text, prefix=".file_set.")

    try:
        result = engine.run(module.params, module.check_mode, module._diff, write)
    except engine.Failure as exc:
        module.fail_json(msg=exc.msg, **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
