# -*- coding: utf-8 -*-
"""Node-side programs are role files pinned to the module_utils they mirror (issue #14 item 1).

roles/irq_affinity installs files/gpufleet_irq.py next to its boot re-apply program; it must be the module's own
IRQ code, byte for byte, so that a boot finds and orders IRQs exactly as the module did. Regenerate with
``cp plugins/module_utils/irq.py roles/irq_affinity/files/gpufleet_irq.py``."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_irq_library_copy_is_the_module_utils():
    module_utils = (ROOT / 'plugins' / 'module_utils' / 'irq.py').read_bytes()
    role_file = (ROOT / 'roles' / 'irq_affinity' / 'files' / 'gpufleet_irq.py').read_bytes()
    assert role_file == module_utils, 'cp plugins/module_utils/irq.py roles/irq_affinity/files/gpufleet_irq.py'


def test_no_role_climbs_into_plugins():
    climbs = [str(p.relative_to(ROOT)) for base in ('roles', 'playbooks') for p in (ROOT / base).rglob('*.yml')
              if '/../../' in p.read_text() and 'role_path' in p.read_text()]
    assert climbs == []
