# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs the gpufleet.cluster.slurm inventory plugin in one fresh Python for a list of jobs (test_slurm_inventory_plugin.py):
Ansible's own plugin loader over the linked collection, as ansible-inventory uses it, without one process per case.

    python slurm_inventory_driver.py COLLECTIONS_PATH < jobs.json > results.json

A job: {"config": path, "cache": bool (parse's cache argument), "unlink": path removed before the job}.
A result: {"ok": bool, "error_type", "error", "traceback": bool, "hosts": {host: vars}, "groups": {host: [groups]},
"children": {group: [child groups]}}.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def main():
    from ansible.errors import AnsibleParserError
    from ansible.inventory.data import InventoryData
    from ansible.parsing.dataloader import DataLoader
    from ansible.plugins.loader import init_plugin_loader, inventory_loader

    init_plugin_loader([sys.argv[1]])
    loader = DataLoader()
    results = []
    for job in json.load(sys.stdin):
        if job.get('unlink') and os.path.exists(job['unlink']):
            os.unlink(job['unlink'])
        result = {'ok': False, 'error_type': None, 'error': None, 'traceback': False}
        try:
            plugin = inventory_loader.get('gpufleet.cluster.slurm')
            if not plugin.verify_file(job['config']):
                raise ValueError('verify_file refused %s' % job['config'])
            inventory = InventoryData()
            plugin.parse(inventory, loader, job['config'], cache=job.get('cache', True))
            if plugin.get_option('cache'):
                plugin.update_cache_if_changed()
            result['ok'] = True
            result['hosts'] = dict((h, dict(inventory.get_host(h).vars)) for h in inventory.hosts)
            result['groups'] = dict((h, sorted(g.name for g in inventory.get_host(h).get_groups() if g.name != 'all'))
                                    for h in inventory.hosts)
            result['children'] = dict((g.name, sorted(c.name for c in g.child_groups))
                                      for g in inventory.groups.values() if g.child_groups and g.name != 'all')
        except AnsibleParserError as e:
            result['error_type'], result['error'] = 'AnsibleParserError', str(e)
        except Exception as e:  # pylint: disable=broad-except
            result['error_type'], result['error'] = type(e).__name__, str(e)
            result['traceback'] = traceback.format_exc()
        results.append(result)
    json.dump(results, sys.stdout, default=str)


if __name__ == '__main__':
    main()
