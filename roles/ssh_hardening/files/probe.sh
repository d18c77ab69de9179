# Read-only probe of gpufleet.cluster.ssh_hardening: prints "KEY VALUE..." lines, changes nothing.
# $1 login user (for sshd -T -C), $2 service unit, $3 socket unit, $4 smallest moduli size field to keep,
# $5 sshd's privilege separation dir (the one thing it may create: sshd -T cannot run without it).
user=$1 svc=$2 sock=$3 min_size=$4 privsep=$5
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
echo "uid $(id -u)"
sshd=$(command -v sshd)
[ -n "$sshd" ] && echo "sshd $sshd"
if command -v ssh >/dev/null 2>&1; then
  ssh -V 2>&1 | sed -n 's/^OpenSSH_\([0-9]*\.[0-9]*\).*/version \1/p'
  for q in kex cipher mac; do ssh -Q "$q" | sed "s/^/$q /"; done
  # Signature algorithms incl. certificates (HostKeyAlgorithms, PubkeyAcceptedAlgorithms).
  { ssh -Q key-sig 2>/dev/null || { ssh -Q key; ssh -Q sig 2>/dev/null; }; } | sed 's/^/sig /'
fi
for f in /etc/ssh/ssh_host_*_key; do
  [ -f "$f" ] || continue
  ssh-keygen -l -f "$f" 2>/dev/null | awk -v f="$f" '{t = $NF; gsub(/[()]/, "", t); print "hostkey", f, $1, t}'
done
[ -f /etc/ssh/moduli ] && awk -v m="$min_size" '$1 !~ /^#/ && NF >= 7 && $5 + 0 < m + 0 {n++}
  END {print "moduli_small", n + 0}' /etc/ssh/moduli
if [ -f /etc/ssh/sshd_config ]; then
  awk '!/^[[:space:]]*(#|$)/ {print "first_directive", $0; exit}' /etc/ssh/sshd_config
  awk '/^[[:space:]]*[Hh][Oo][Ss][Tt][Kk][Ee][Yy][[:space:]]/ {n++} END {print "main_hostkey_lines", n + 0}' /etc/ssh/sshd_config
  awk '/^[[:space:]]*[Ss]ubsystem[[:space:]]+sftp[[:space:]]/ {print "main_sftp", $0}' /etc/ssh/sshd_config
fi
[ -e /etc/ssh/gpufleet-banner ] && echo "banner_file present"
[ -d /etc/ssh/sshd_config.d ] && echo "dropin_dir present"
[ -e "/etc/systemd/system/$sock.d/gpufleet-listen.conf" ] && echo "socket_dropin present"
for u in "$svc" "$sock"; do
  e=$(systemctl is-enabled "$u" 2>/dev/null); a=$(systemctl is-active "$u" 2>/dev/null)
  echo "unit $u ${e:-absent} ${a:-unknown}"
done
client=${SSH_CLIENT%% *}
echo "client ${client:-127.0.0.1}"
if [ -n "$sshd" ]; then
  [ -d "$privsep" ] || mkdir -p -m 0755 "$privsep"
  out=$("$sshd" -T -C "user=$user,host=${client:-127.0.0.1},addr=${client:-127.0.0.1}" 2>&1) ||
    printf '%s\n' "$out" | sed 's/^/sshd_T_error /'
fi
exit 0
