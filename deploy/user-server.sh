#!/usr/bin/env bash
# A student's Jupyter server in namespaces of its own: the hub starts it as root, through
#   unshare --pid --fork --kill-child --mount --propagation slave -- PREFIX/bin/user-server USER CMD...
# (jupyterhub_config.py), and this script, the first process of the new PID namespace, mounts there:
# - a /proc of that namespace (hidepid=invisible): ps, /proc/PID/cmdline, environ and fd show her own processes only,
#   never another student's or the instructor's;
# - /tmp and /dev/shm, tmpfs of TMP_MB and SHM_MB (class.env) of her own: a flood fills hers, not the machine's
#   disk or memory for everyone, and what she leaves there goes with the server;
# then runs CMD as USER and waits for it. When the server ends (stopped from the hub, hub.sh stop), the kernel ends
# every process left in the namespace, started with setsid or not. Nothing changes for the rest of the machine: the
# mounts are the namespace's alone (host mounts still reach it, as slave propagation lets them).
set -euo pipefail
PREFIX=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
# shellcheck disable=SC1091
. "$PREFIX/etc/class.env"
[ $# -ge 2 ] || { echo "usage: user-server USER CMD..." >&2; exit 2; }
user=$1
shift
[ "$(id -u)" -eq 0 ] && [ $$ -eq 1 ] || { echo "user-server: run by the hub as root, as a new PID namespace's first process" >&2; exit 2; }
uid=$(id -u "$user") gid=$(id -g "$user")
[ "$uid" -ne 0 ] || { echo "user-server: not for root" >&2; exit 2; }
mount -t proc -o nosuid,nodev,noexec,hidepid=invisible proc /proc
# What the class keeps under the machine's /tmp (SERVER_PATHS: the environment, homes, exchange, when set up there,
# as the tests do) is bound back into hers, seen through the old /tmp, for a moment at /dev/shm.
mount --rbind /tmp /dev/shm
mount -t tmpfs -o "size=${TMP_MB:-1024}m,mode=1777,nosuid,nodev" tmpfs /tmp
for path in ${SERVER_PATHS:-}; do
  case $path in /tmp/?*) mkdir -p "$path" && mount --rbind "/dev/shm/${path#/tmp/}" "$path" ;; esac
done
umount -l /dev/shm
mount -t tmpfs -o "size=${SHM_MB:-512}m,mode=1777,nosuid,nodev" tmpfs /dev/shm
# The server is this process's child, not its replacement: the namespace's first process adopts whatever she leaves
# running, and bash reaps those as they end. The hub signals the whole process group: the server shuts down, and
# this process (whose end would kill the server at once) only waits for it.
trap : INT TERM
setpriv --reuid "$uid" --regid "$gid" --init-groups -- "$@" &
server=$!
while :; do
  status=0
  wait "$server" || status=$?
  kill -0 "$server" 2>/dev/null || exit "$status"
done
