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
for a in "$@"; do
  [[ $a =~ ^(--force|--student|--workers|[A-Za-z0-9][A-Za-z0-9._-]{0,63})$ ]] || {
    echo "autograde: '$a' is not allowed here (CHAPTER, --force, --student NAME, --workers N)" >&2; exit 2; }
done
for p in "$COURSE" "$COURSE"/{solutions,chapters,submitted,autograded,gradebook.db}; do
  if [ -L "$p" ]; then echo "autograde: $p is a symbolic link; refused" >&2; exit 2; fi
done
STAGE=$(mktemp -d /tmp/torchcourse-grade-XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
work=$STAGE/course
mkdir -m 0755 "$work"
for d in solutions chapters submitted autograded; do
  if [ -d "$COURSE/$d" ]; then cp -a "$COURSE/$d" "$work/$d"; fi
done
if [ -f "$COURSE/gradebook.db" ]; then cp "$COURSE/gradebook.db" "$work/gradebook.db"; fi
find "$work" -type l -delete
rc=0
(cd "$PREFIX/app" && env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 TORCHCOURSE_EXCHANGE="$EXCHANGE" \
  "$GRADER_PYTHON" -m grader --root "$work" autograde "$@") || rc=$?
# Back to the instructor's folder, written by the instructor.
chown -R -h "$INSTRUCTOR:" "$work/autograded" "$work/gradebook.db" 2>/dev/null || true
chmod 0711 "$STAGE"
runuser -u "$INSTRUCTOR" -- mkdir -p "$COURSE/autograded"
if [ -d "$work/autograded" ]; then runuser -u "$INSTRUCTOR" -- cp -a "$work/autograded/." "$COURSE/autograded/"; fi
if [ -f "$work/gradebook.db" ]; then runuser -u "$INSTRUCTOR" -- cp "$work/gradebook.db" "$COURSE/gradebook.db"; fi
exit $rc
