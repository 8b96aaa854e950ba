#!/usr/bin/env bash
# Hide each user's processes from every other user: `hidepid.sh [PROC] [--persist]`, as root.
# Without it, any student lists every process on the machine with its command line (another's server, kernels, the
# files they open) under /proc. It remounts the procfs at PROC (default /proc) with hidepid=invisible: users see only
# their own processes; root, and members of the group `proc` (created here), still see all. It changes the whole
# machine, so `make class` runs it only when asked (HIDEPID=1). --persist also writes the option into /etc/fstab
# for the next boot. On a systemd host, services that look at other users' processes (systemd-logind, polkit) may
# need SupplementaryGroups=proc in a drop-in. Undo: mount -o remount,hidepid=off /proc, and remove the fstab line.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "hidepid.sh: run as root" >&2; exit 1; }
proc=/proc persist=0
for a in "$@"; do
  case $a in --persist) persist=1 ;; -*) echo "usage: hidepid.sh [PROC] [--persist]" >&2; exit 2 ;; *) proc=$a ;; esac
done
[ "$(stat -f -c %T "$proc" 2>/dev/null)" = proc ] || { echo "hidepid.sh: $proc is not a procfs" >&2; exit 2; }
getent group proc >/dev/null || groupadd --system proc
mount -o "remount,hidepid=invisible,gid=$(getent group proc | cut -d: -f3)" "$proc"
echo "hidepid: $proc now shows each user only their own processes ($(findmnt -n -o OPTIONS --target "$proc"))"
if [ $persist = 1 ]; then
  [ "$proc" = /proc ] || { echo "hidepid.sh: --persist is for /proc only" >&2; exit 2; }
  if grep -qE '^[^#[:space:]]+[[:space:]]+/proc[[:space:]]' /etc/fstab; then
    grep -qE '^[^#[:space:]]+[[:space:]]+/proc[[:space:]].*hidepid=' /etc/fstab \
      || echo "hidepid: /etc/fstab mounts /proc already; add hidepid=invisible,gid=proc to its options yourself" >&2
  else
    echo "proc /proc proc defaults,hidepid=invisible,gid=proc 0 0" >> /etc/fstab
    echo "hidepid: /etc/fstab keeps it across reboots"
  fi
fi
