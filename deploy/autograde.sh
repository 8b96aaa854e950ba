#!/usr/bin/env bash
# The instructor's grading command: `sudo PREFIX/bin/autograde [CHAPTER] [--force] [--student NAME] [--workers N]`.
# The course grader runs learner code in its sandbox, which needs root (bubblewrap, a uid of its own per job):
# learner code never runs as the instructor. Root grades a copy of the course folder in a private folder (links
# removed), then the results are copied back as the instructor: root never writes where the instructor can point
# it, and the instructor gets no other root power. Installed by setup-class.sh (sudoers: this command only).
set -euo pipefail
PREFIX=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
# shellcheck disable=SC1091
. "$PREFIX/etc/class.env"
[ "$(id -u)" -eq 0 ] || exec sudo -n "$PREFIX/bin/autograde" "$@"
chapter=""
skip=0
for a in "$@"; do
  [[ $a =~ ^(--force|--student|--workers|[A-Za-z0-9][A-Za-z0-9._-]{0,63})$ ]] || {
    echo "autograde: '$a' is not allowed here (CHAPTER, --force, --student NAME, --workers N)" >&2; exit 2; }
  if [ $skip = 1 ]; then skip=0
  elif [ "$a" = --student ] || [ "$a" = --workers ]; then skip=1
  elif [ "$a" != --force ] && [ -z "$chapter" ]; then chapter=$a
  fi
done
for p in "$COURSE" "$COURSE"/{solutions,chapters,submitted,autograded,gradebook.db,zh_CN,zh_CN/chapters}; do
  if [ -L "$p" ]; then echo "autograde: $p is a symbolic link; refused" >&2; exit 2; fi
done
# The stage stays root's alone (mktemp's 0700) from start to end: it holds every solution copied in and every
# student's graded work, and its name shows in the shared temp folder and in ps.
STAGE=$(mktemp -d /tmp/torchcourse-grade-XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
work=$STAGE/course
mkdir -m 0700 "$work"
# Only what grading this chapter reads (everything when no chapter is named): less to copy, less to expose. Read
# by the instructor and streamed in, so that root reads nothing the instructor could not (a link swapped in).
cd "$COURSE"
into=()
for p in gradebook.db solutions chapters submitted autograded; do
  if [ -n "$chapter" ] && [ "$p" != gradebook.db ]; then
    case $p in solutions|chapters) cand=("$p/$chapter") ;; *) cand=("$p"/*/"$chapter") ;; esac
  else cand=("$p")
  fi
  for c in "${cand[@]}"; do [ -e "$c" ] && into+=("$c"); done
done
# The chapter's translated release too: the grader keeps a Chinese submission's text Chinese (its locked cells as
# that release has them) in the graded notebook and its feedback page.
p=zh_CN/chapters${chapter:+/$chapter}
[ -e "$p" ] && into+=("$p")
cd /
if [ ${#into[@]} -gt 0 ]; then
  runuser -u "$INSTRUCTOR" -- tar -C "$COURSE" -cf - -- "${into[@]}" | tar -C "$work" --no-same-owner -xf -
fi
find "$work" -type l -delete
rc=0
(cd "$PREFIX/app" && env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 TORCHCOURSE_EXCHANGE="$EXCHANGE" \
  "$GRADER_PYTHON" -m grader --root "$work" autograde "$@") || rc=$?
# Back to the instructor's folder: root reads the stage and streams it, the instructor writes (root never writes
# where the instructor can point it). nbgrader leaves graded files read-only: tar replaces a file by unlinking it,
# and folders are made writable first, so a rerun never stops half-way with the gradebook not copied.
find "$work/autograded" -type l -delete 2>/dev/null || true
chmod -R u+w "$work/autograded" 2>/dev/null || true
runuser -u "$INSTRUCTOR" -- mkdir -p "$COURSE/autograded"
runuser -u "$INSTRUCTOR" -- find "$COURSE/autograded" -type d ! -perm -u+w -exec chmod u+w {} + 2>/dev/null || true
back=()
[ -f "$work/gradebook.db" ] && back+=(gradebook.db)
if [ -n "$chapter" ]; then
  for s in "$work/autograded"/*/"$chapter"; do [ -d "$s" ] && back+=("${s#"$work/"}"); done
elif [ -d "$work/autograded" ]; then back+=(autograded)
fi
if [ ${#back[@]} -gt 0 ]; then
  tar -C "$work" --numeric-owner -cf - -- "${back[@]}" \
    | runuser -u "$INSTRUCTOR" -- tar -C "$COURSE" --no-same-owner --no-overwrite-dir -xf - || {
    echo "autograde: copying the results back to $COURSE failed (see above); the gradebook may be older than the records" >&2
    [ $rc -ne 0 ] || rc=1; }
fi
exit $rc
