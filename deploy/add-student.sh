#!/usr/bin/env bash
# Add students to the class (as root): add-student.sh [--language zh_CN|en] NAME[="First Last"] [...]
# Each gets a user with a 0700 home in the class group, which the hub lets log in; the password is asked for
# (or read from the environment variable PASSWORD, for scripts). Existing users are only added to the group.
# Each student goes into the instructor's gradebook with their name (formgrader shows it; without one, the user
# name), when the class is set up (PREFIX, default /opt/torchcourse); a new student's home then holds at most HOME_MB
# (class-homes.sh). --language: the language each of them takes the course in (English by default; run it again to
# change it, then restart the student's server): JupyterLab's menus, the course's messages and the chapters she
# fetches (deploy/torchcourse_language.py), which she submits under the same names, in one gradebook.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "add-student.sh: run as root" >&2; exit 1; }
language=""
if [ "${1:-}" = --language ]; then
  language=${2:-}
  case $language in zh_CN|en) ;; *) echo "add-student.sh: --language ${language}: zh_CN or en" >&2; exit 2 ;; esac
  shift 2
fi
[ $# -gt 0 ] || { echo "usage: add-student.sh [--language zh_CN|en] NAME[=\"First Last\"] [...]" >&2; exit 2; }
HOME_BASE=${HOME_BASE:-/home}
PREFIX=${PREFIX:-/opt/torchcourse}
if [ -n "$language" ] && [ ! -d "$PREFIX/etc/languages" ]; then
  echo "add-student.sh: --language needs the class set up in $PREFIX (make class)" >&2; exit 2
fi
rows=() new=()
for arg in "$@"; do
  name=${arg%%=*} full=""
  [ "$name" = "$arg" ] || full=${arg#*=}
  # The exchange and the gradebook compare ids ignoring case: only lower-case names, as Debian's useradd wants.
  [[ $name =~ ^[a-z][a-z0-9_-]{0,31}$ ]] || { echo "add-student.sh: $name: use lower-case letters, digits, - or _" >&2; exit 1; }
  [[ $full =~ ^[^,:\"[:cntrl:]]{0,100}$ ]] || { echo "add-student.sh: $name: a name without , : \" or control characters" >&2; exit 1; }
  if ! id "$name" >/dev/null 2>&1; then
    mkdir -p "$HOME_BASE"
    useradd -m -b "$HOME_BASE" -s /bin/bash -K HOME_MODE=0700 ${full:+-c "$full"} "$name"
    new+=("$name")
  elif [ -n "$full" ]; then
    usermod -c "$full" "$name"
  fi
  usermod -a -G torchcourse "$name"
  chmod 0700 "$(getent passwd "$name" | cut -d: -f6)"
  if [ -n "${PASSWORD:-}" ]; then
    echo "$name:$PASSWORD" | chpasswd
  elif [ -t 0 ]; then
    passwd "$name"
  fi
  first=${full% *} last=${full##* }
  [ "$first" != "$full" ] || first=""
  rows+=("$name,$first,${last:-$name}")
  # root's file, which the hub reads when it starts her server (jupyterhub_config.py)
  case $language in
    en) rm -f "$PREFIX/etc/languages/$name" ;;
    ?*) printf '%s\n' "$language" > "$PREFIX/etc/languages/$name.tmp" && chmod 0644 "$PREFIX/etc/languages/$name.tmp" &&
        mv -f "$PREFIX/etc/languages/$name.tmp" "$PREFIX/etc/languages/$name" ;;
  esac
  echo "student $name added${language:+ (language: $language)}"
done
if [ -f "$PREFIX/etc/class.env" ]; then
  # shellcheck disable=SC1091
  . "$PREFIX/etc/class.env"
  if [ -x "$PREFIX/bin/class-homes" ]; then  # (a class set up before homes were bounded has none)
    for name in "${new[@]}"; do "$PREFIX/bin/class-homes" bound "$name"; done
  fi
  list=$(mktemp /tmp/torchcourse-students-XXXXXX.csv)
  trap 'rm -f "$list"' EXIT
  { echo "id,first_name,last_name"; printf '%s\n' "${rows[@]}"; } > "$list"
  chown "$INSTRUCTOR" "$list"
  # A new gradebook runs alembic from PATH: the environment's, not root's.
  runuser -u "$INSTRUCTOR" -- env -i LANG=C.UTF-8 HOME="$(getent passwd "$INSTRUCTOR" | cut -d: -f6)" \
    PATH="$(dirname "$GRADER_PYTHON"):$PREFIX/bin:/usr/bin:/bin" \
    sh -c 'cd "$1" && "$2" db student import "$3"' sh "$COURSE" "$PREFIX/bin/nbgrader" "$list" \
    >/dev/null || echo "add-student.sh: the gradebook was not updated (run as $INSTRUCTOR: nbgrader db student import)" >&2
fi
