# Copy of the sshd files a run of gpufleet.cluster.ssh_hardening may change, taken before the change
# (tasks/configure.yml); restore.sh puts it back. $1 the copy's directory (replaced), then the files.
# Files that do not exist are listed in $1/.absent; $1/.complete marks a finished copy.
set -e; umask 077; d=$1; shift; rm -rf "$d"; mkdir -p "$d"; : > "$d/.absent"
for f in "$@"; do
  if [ -e "$f" ]; then mkdir -p "$d${f%/*}"; cp -a "$f" "$d$f"; else echo "$f" >> "$d/.absent"; fi
done
touch "$d/.complete"
