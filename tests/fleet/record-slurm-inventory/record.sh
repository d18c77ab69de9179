#!/usr/bin/env bash
# Record what `scontrol show nodes --json` and `scontrol show nodes -o` print on a real Slurm (Debian 12's slurm-wlm
# 22.05) for the slurm inventory plugin's unit tests: five lab hosts (inventory.yml here; tests/lab/slurm.yml builds the
# cluster), then the node states the plugin must tell apart:
#   slurminv-n1  IDLE                  gpu:h100:8, features h100,ib_ndr, partitions gpu,all
#   slurminv-n2  MIXED (one job)       gpu:h100:8, features h100,ib_ndr
#   slurminv-n3  IDLE+DRAIN + reason   gpu:a100:4, feature a100
#   slurminv-n4  DOWN + reason         no GRES, no feature, partition all only (slurmd stopped, state=down)
#
#   bash tests/fleet/record-slurm-inventory/record.sh OUTDIR     (root; takes about a minute; hosts removed after)
# Not part of any test tier: run by hand when a recording is wanted, under no lock (own host names and addresses).
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: record.sh OUTDIR}
mkdir -p "$OUT"
INV=tests/fleet/record-slurm-inventory/inventory.yml
HOSTS=(slurminv-ctl slurminv-n1 slurminv-n2 slurminv-n3 slurminv-n4)
export PATH="$PWD/.venv/bin:$PATH" ANSIBLE_NOCOLOR=1
trap 'scripts/lab down "${HOSTS[@]}" >/dev/null 2>&1' EXIT
scripts/lab down "${HOSTS[@]}" >/dev/null 2>&1 || true
scripts/lab up -i "$INV"
scripts/localrepo build
scripts/localrepo start
ansible-playbook -i "$INV" tests/lab/slurm.yml
on() { scripts/lab ssh slurminv-ctl "$@"; }
on "cd /tmp && sbatch -w slurminv-n2 -n 1 -J inventory-recording -o /dev/null --wrap 'sleep 600'"
on "scontrol update nodename=slurminv-n3 state=drain reason='gpufleet[q4-570] FAILED: step apply: HCA firmware burn failed on 0000:3b:00.0'"
scripts/lab ssh slurminv-n4 systemctl stop slurmd
on "scontrol update nodename=slurminv-n4 state=down reason='operator: PSU replaced, ticket 4711'"
for i in $(seq 30); do
  on "squeue -h -o %T" | grep -qx RUNNING && break
  sleep 1
done
sleep 2
# each command's stdout as is, its stderr and exit status next to it (rec NAME CMD: NAME, NAME.err, NAME.rc)
rec() { local name=$1; shift; set +e; on "$*" > "$OUT/$name" 2> "$OUT/$name.err"; echo $? > "$OUT/$name.rc"; set -e; }
rec scontrol_version.txt "scontrol --version"
rec scontrol_show_nodes_json.txt "scontrol show nodes --json"
rec scontrol_json_show_nodes.txt "scontrol --json show nodes"
rec scontrol_show_nodes_o.txt "scontrol show nodes -o"
rec scontrol_show_nodes.txt "scontrol show nodes"
rec sinfo_N.txt "sinfo -N -o '%N %P %T %f %G'"
date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/recorded_at.txt"
ls -l "$OUT"
