# Puts back the copy backup.sh took (tasks/restore.yml): $1 the copy's directory, then the files. Prints each
# file it put back or removed (one that did not exist before); refuses to run on an incomplete copy.
set -e; d=$1; shift; [ -f "$d/.complete" ] || { echo "no complete copy in $d" >&2; exit 1; }
for f in "$@"; do
  if [ -e "$d$f" ]; then cmp -s "$d$f" "$f" 2>/dev/null || { cp -a "$d$f" "$f"; echo "$f"; }
  elif grep -qxF "$f" "$d/.absent" && [ -e "$f" ]; then rm -f "$f"; echo "$f (removed)"; fi
done
