#!/usr/bin/env bash
# Record `scontrol show nodes --json` and `-o` from Debian 13's Slurm (slurm-wlm 24.11) for the slurm inventory
# plugin's unit tests - the JSON form Debian 12's 22.05 scontrol does not have (record.sh there records its
# "unrecognized option" answer). The fleet lab is bookworm only (tests/lab/slurm.yml), so this is a one-host cluster
# in a throwaway overlay of the lab's trixie root (scripts/lab build --distro trixie):
#   1. systemd-nspawn (host network, only for apt): slurmctld, slurmd, slurm-client, munge from Debian's mirror
#   2. systemd-nspawn --private-network (loopback only): munged, slurmctld and one slurmd on 127.0.0.1, nodes
#        slurm2411   the nspawn host's own name: slurmd runs, IDLE, then MIXED with one job; gpu:h100:8
#                    (placeholder files for gres.conf File=), features h100,ib_ndr, partitions gpu,all
#        gpu-t2      NodeAddr 127.0.0.2, no slurmd: drained with a reason;   gpu:a100:4, feature a100
#        gpu-t3      NodeAddr 127.0.0.3, no slurmd: down with a reason;      no GRES, partition all
#
#   bash tests/fleet/record-slurm-inventory/record-trixie.sh OUTDIR     (root; a few minutes; all removed after)
# Not part of any test tier: run by hand when a recording is wanted.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=$(realpath -m "${1:?usage: record-trixie.sh OUTDIR}")
mkdir -p "$OUT"
LOWER=/var/lib/gpufleet-lab/roots/trixie
[ -d "$LOWER/etc" ] || scripts/lab build --distro trixie
TMP=$(mktemp -d /var/tmp/gpufleet-slurm2411.XXXXXX)
M=$TMP/slurm2411
mkdir -p "$TMP/upper" "$TMP/work" "$M"
mount -t overlay overlay -o "lowerdir=$LOWER,upperdir=$TMP/upper,workdir=$TMP/work" "$M"
trap 'umount "$M" 2>/dev/null; rm -rf "$TMP"' EXIT

echo 'deb http://deb.debian.org/debian trixie main' > "$M/etc/apt/sources.list"
rm -f "$M/etc/apt/sources.list.d/"*
systemd-nspawn -q --register=no --keep-unit -D "$M" --resolv-conf=copy-host --pipe /bin/sh -c \
  'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
     slurmctld slurmd slurm-client munge >/dev/null && dpkg-query -W slurmctld slurmd slurm-client munge'

mkdir -p "$M/etc/slurm" "$M/var/lib/gpufleet-lab-gres"
for i in 0 1 2 3 4 5 6 7; do echo 'TEST placeholder for a GPU device file (gres.conf File=); no GPU here' \
  > "$M/var/lib/gpufleet-lab-gres/gpu$i"; done
cat > "$M/etc/slurm/slurm.conf" <<'EOF'
# gpufleet tests/fleet/record-slurm-inventory/record-trixie.sh: a TEST cluster on loopback for a recording
ClusterName=slurm2411
SlurmctldHost=slurm2411(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=60
GresTypes=gpu
NodeName=slurm2411 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Feature=h100,ib_ndr Gres=gpu:h100:8 State=UNKNOWN
NodeName=gpu-t2 NodeAddr=127.0.0.2 CPUs=2 RealMemory=1000 Feature=a100 Gres=gpu:a100:4 State=UNKNOWN
NodeName=gpu-t3 NodeAddr=127.0.0.3 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=gpu Nodes=slurm2411,gpu-t2 Default=YES MaxTime=INFINITE State=UP
PartitionName=all Nodes=ALL Default=NO MaxTime=INFINITE State=UP
EOF
printf '127.0.0.1 localhost slurm2411\n127.0.0.2 gpu-t2\n127.0.0.3 gpu-t3\n' > "$M/etc/hosts"
echo 'CgroupPlugin=disabled' > "$M/etc/slurm/cgroup.conf"
echo 'NodeName=slurm2411 Name=gpu Type=h100 File=/var/lib/gpufleet-lab-gres/gpu[0-7]' > "$M/etc/slurm/gres.conf"

cat > "$M/root/record.sh" <<'EOF'
set -u
# Slurm 24.11 resolves with AI_ADDRCONFIG, which finds no IPv4 name while only loopback has an address: a veth pair
# inside this private network namespace gives it one (TEST-NET-1, reaches nothing)
ip link add gfv0 type veth peer name gfv1 && ip addr add 192.0.2.1/24 dev gfv0 && ip link set gfv0 up && ip link set gfv1 up
mkdir -p /run/munge /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm /out
chown munge: /run/munge; chown slurm: /var/lib/slurm/slurmctld /var/log/slurm
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile /etc/munge/munge.key
chown munge: /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key
runuser -u munge -- munged
slurmctld -i; sleep 2; slurmd; sleep 3
for i in $(seq 30); do sinfo -h -N -n slurm2411 -o %T | grep -qx idle && break; sleep 1; done
cd /tmp && sbatch -w slurm2411 -n 1 -J inventory-recording -o /dev/null --wrap 'sleep 600'
scontrol update nodename=gpu-t2 state=drain reason='gpufleet[q4-570] FAILED: step apply: HCA firmware burn failed on 0000:3b:00.0'
scontrol update nodename=gpu-t3 state=down reason='operator: PSU replaced, ticket 4711'
for i in $(seq 30); do squeue -h -o %T | grep -qx RUNNING && break; sleep 1; done
sleep 2
rec() { local name=$1; shift; sh -c "$*" > "/out/$name" 2> "/out/$name.err"; echo $? > "/out/$name.rc"; }
rec scontrol_version.txt "scontrol --version"
rec scontrol_show_nodes_json.txt "scontrol show nodes --json"
rec scontrol_show_nodes_o.txt "scontrol show nodes -o"
rec scontrol_show_nodes.txt "scontrol show nodes"
rec sinfo_N.txt "sinfo -N -o '%N %P %T %f %G'"
date -u +%Y-%m-%dT%H:%M:%SZ > /out/recorded_at.txt
scancel --name inventory-recording; sleep 1
scontrol shutdown >/dev/null 2>&1; sleep 2; kill "$(cat /run/munge/munged.pid)"; true
EOF
systemd-nspawn -q --register=no --keep-unit -D "$M" --private-network --bind="$OUT:/out" --pipe /bin/bash /root/record.sh
ls -l "$OUT"
