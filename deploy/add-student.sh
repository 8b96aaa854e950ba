#!/usr/bin/env bash
# Add students to the class (as root): add-student.sh NAME [NAME...]
# Each gets a user with a 0700 home in the class group, which the hub lets log in; the password is asked for
# (or read from the environment variable PASSWORD, for scripts). Existing users are only added to the group.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "add-student.sh: run as root" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: add-student.sh NAME [NAME...]" >&2; exit 2; }
HOME_BASE=${HOME_BASE:-/home}
for name in "$@"; do
  # The exchange and the gradebook compare ids ignoring case: only lower-case names, as Debian's useradd wants.
  [[ $name =~ ^[a-z][a-z0-9_-]{0,31}$ ]] || { echo "add-student.sh: $name: use lower-case letters, digits, - or _" >&2; exit 1; }
  if ! id "$name" >/dev/null 2>&1; then
    mkdir -p "$HOME_BASE"
    useradd -m -b "$HOME_BASE" -s /bin/bash -K HOME_MODE=0700 "$name"
  fi
  usermod -a -G torchcourse "$name"
  chmod 0700 "$(getent passwd "$name" | cut -d: -f6)"
  if [ -n "${PASSWORD:-}" ]; then
    echo "$name:$PASSWORD" | chpasswd
  elif [ -t 0 ]; then
    passwd "$name"
  fi
  echo "student $name added"
done
