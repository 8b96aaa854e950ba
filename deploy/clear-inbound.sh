#!/usr/bin/env bash
# The instructor's second root command: `sudo PREFIX/bin/clear-inbound STUDENT [CHAPTER]` removes from nbgrader's
# inbound every entry named after STUDENT or made by them (of CHAPTER only, when named). A student's entry can be
# made so that its owner alone can delete it (a folder 0500 inside), or be a flood of files: the instructor, who
# owns inbound, could not remove it. Installed by setup-class.sh (sudoers: this command and autograde only).
set -euo pipefail
PREFIX=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
# shellcheck disable=SC1091
. "$PREFIX/etc/class.env"
[ "$(id -u)" -eq 0 ] || exec sudo -n "$PREFIX/bin/clear-inbound" "$@"
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: clear-inbound STUDENT [CHAPTER]" >&2; exit 2; }
student=$1 chapter=${2:-}
[[ $student =~ ^[a-z][a-z0-9_-]{0,31}$ ]] || { echo "clear-inbound: '$student' is not a student's user name" >&2; exit 2; }
[[ -z $chapter || $chapter =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]] || { echo "clear-inbound: '$chapter' is not a chapter" >&2; exit 2; }
uid=$(id -u "$student" 2>/dev/null) || { echo "clear-inbound: no user $student" >&2; exit 2; }
inbound=$EXCHANGE/torchcourse/inbound
[ -d "$inbound" ] && [ ! -L "$inbound" ] || { echo "clear-inbound: $inbound is not a folder" >&2; exit 2; }
removed=0
while IFS= read -r -d '' entry; do
  name=${entry##*/}
  owner=$(stat -c %u -- "$entry")
  [[ $name == "$student+"* || $owner == "$uid" ]] || continue
  if [ -n "$chapter" ]; then [[ $name == *"+$chapter+"* ]] || continue; fi
  # rm walks without recursion limits and never follows a link; only entries directly in inbound are named here.
  rm -rf --one-file-system -- "$entry"
  printf 'clear-inbound: removed %q\n' "$name"
  removed=$((removed + 1))
done < <(find "$inbound" -mindepth 1 -maxdepth 1 -print0)
echo "clear-inbound: $removed entries of $student removed${chapter:+ ($chapter)}"
