# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plant faults on COPIES of real recordings (molecule node_facts_check prepare; runs on the lab host).

    plant_faults.py DIR

DIR/ok holds the unmodified recordings: sys/class/infiniband (node_exporter tree), a5000.xml
(nvidia-smi -q -x of 2x RTX A5000) and a10g.xml (1x A10G). Writes, each with a stand-in nvidia-smi:
  DIR/ok        unmodified (2x A5000)
  DIR/fault     mlx4_0 port 1 DOWN/Polling, port 2 at 20 Gb/s, firmware 2.30.8000;
                GPU 0 at PCIe x8, GPU 1 with a row-remapping failure
  DIR/gone      GPU 1 removed from the XML
  DIR/ecc       A10G with 3 volatile uncorrectable DRAM ECC errors
  DIR/otherfw   mlx4_0 on firmware 2.42.5000 (for the fleet check)
  DIR/a10g      unmodified A10G
and, when prepare copied the ibv_devinfo recording (full corpus only), DIR/ok/ibv_devinfo printing it.
"""
from __future__ import absolute_import, division, print_function

import os
import shutil
import sys
import xml.etree.ElementTree as ET

IBV_STUB = """#!/bin/sh
# Stand-in ibv_devinfo: prints the recording next to it.
exec cat "%s"
"""

STUB = """#!/bin/sh
# Stand-in nvidia-smi: prints the recording next to it (-q -x only).
case "$1" in
  -q) cat "%s" ;;
  *) echo "stand-in nvidia-smi: unsupported arguments: $*" >&2; exit 2 ;;
esac
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def stub(dest, xml_name):
    path = os.path.join(dest, "nvidia-smi")
    write(path, STUB % os.path.join(dest, xml_name))
    os.chmod(path, 0o755)


def copy_sys(src, dest):
    if not os.path.isdir(os.path.join(dest, "sys")):
        shutil.copytree(os.path.join(src, "sys"), os.path.join(dest, "sys"), symlinks=True)


def edit_xml(src, dest, edits):
    tree = ET.parse(src)
    root = tree.getroot()
    gpus = root.findall("gpu")
    for index, path, value in edits:
        if path is None:
            root.remove(gpus[index])
            continue
        elem = gpus[index].find(path)
        if elem is None:
            raise SystemExit("%s: no %s in GPU %d" % (src, path, index))
        elem.text = value
    tree.write(dest, encoding="unicode")


def main(base):
    ok = os.path.join(base, "ok")
    ib = os.path.join("sys", "class", "infiniband", "mlx4_0")
    stub(ok, "a5000.xml")
    ibv = os.path.join(ok, "ibv_devinfo.txt")
    if os.path.isfile(ibv):
        write(os.path.join(ok, "ibv_devinfo"), IBV_STUB % ibv)
        os.chmod(os.path.join(ok, "ibv_devinfo"), 0o755)

    fault = os.path.join(base, "fault")
    os.makedirs(fault, exist_ok=True)
    copy_sys(ok, fault)
    write(os.path.join(fault, ib, "ports", "1", "state"), "1: DOWN\n")
    write(os.path.join(fault, ib, "ports", "1", "phys_state"), "2: Polling\n")
    write(os.path.join(fault, ib, "ports", "2", "rate"), "20 Gb/sec (4X DDR)\n")
    write(os.path.join(fault, ib, "fw_ver"), "2.30.8000\n")
    edit_xml(os.path.join(ok, "a5000.xml"), os.path.join(fault, "a5000.xml"), [
        (0, "pci/pci_gpu_link_info/link_widths/current_link_width", "8x"),
        (1, "remapped_rows/remapped_row_failure", "Yes"),
    ])
    stub(fault, "a5000.xml")

    gone = os.path.join(base, "gone")
    os.makedirs(gone, exist_ok=True)
    edit_xml(os.path.join(ok, "a5000.xml"), os.path.join(gone, "a5000.xml"), [(1, None, None)])
    stub(gone, "a5000.xml")

    ecc = os.path.join(base, "ecc")
    os.makedirs(ecc, exist_ok=True)
    edit_xml(os.path.join(ok, "a10g.xml"), os.path.join(ecc, "a10g.xml"), [
        (0, "ecc_errors/volatile/dram_uncorrectable", "3"),
    ])
    stub(ecc, "a10g.xml")

    a10g = os.path.join(base, "a10g")
    os.makedirs(a10g, exist_ok=True)
    shutil.copy(os.path.join(ok, "a10g.xml"), os.path.join(a10g, "a10g.xml"))
    stub(a10g, "a10g.xml")

    other = os.path.join(base, "otherfw")
    os.makedirs(other, exist_ok=True)
    copy_sys(ok, other)
    write(os.path.join(other, ib, "fw_ver"), "2.42.5000\n")


if __name__ == "__main__":
    main(sys.argv[1])
