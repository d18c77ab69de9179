# Full-config check of gpufleet.cluster.ssh_hardening for every write (the `validate` of its sshd_config edits
# and of the drop-in): copy /etc/ssh to a temp dir, put the candidate at its relative path, point
# Include/HostKey/... paths at the copy and run `sshd -t` on it. Further arguments are lines `sshd -T` must
# then print for the login user (the effective values), checked the same way.
# $1 sshd's privilege separation dir (sshd -t/-T cannot run without it), $2 sshd, $3 the -C match spec,
# $4 the candidate file, $5 its path relative to /etc/ssh, $6... the wanted `sshd -T` lines.
[ -d "$1" ] || mkdir -p -m 0755 "$1"
sshd=$2 spec=$3; shift 3
d=$(mktemp -d) || exit 1; trap 'rm -rf "$d"' EXIT
cp -a /etc/ssh/. "$d"/ && mkdir -p "$d/sshd_config.d" && cp "$1" "$d/$2" || exit 1; shift 2
for f in "$d"/sshd_config "$d"/sshd_config.d/*.conf; do
  if [ -f "$f" ]; then sed -i "s#/etc/ssh/#$d/#g" "$f" || exit 1; fi
done
"$sshd" -t -f "$d/sshd_config" || exit 1; [ $# -eq 0 ] && exit 0
eff=$("$sshd" -T -f "$d/sshd_config" -C "$spec") || exit 1
for want in "$@"; do
  echo "$eff" | grep -qxF -- "$want" ||
    { echo "after this change sshd -T would not show: $want (another drop-in or a Match block wins)" >&2; bad=1; }
done
exit ${bad:-0}
