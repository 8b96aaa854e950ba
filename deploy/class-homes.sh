#!/usr/bin/env bash
# Students' homes of a bounded size, HOME_MB (class.env), as root: `class-homes bound USER` (add-student.sh calls it
# for each new student), `class-homes mount` (every bounded home; hub.sh start and the hub's service run it, so homes
# come back after a reboot) and `class-homes umount [USER]`.
# Where the home's file system keeps user quotas (quotaon says so, setquota is installed), the student gets a quota
# of HOME_MB there. Otherwise (a kernel without quota support, as many containers and small VMs) her home is an ext4
# file system of its own: an image file of HOME_MB in PREFIX/homes (sparse: it takes on disk only what she wrote),
# mounted on her home with nosuid,nodev. Either way a flood fills her own space, and she is told "Disk quota
# exceeded" or "No space left on device"; nobody else's space, the exchange or the machine's disk fills with it.
set -euo pipefail
PREFIX=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
# shellcheck disable=SC1091
. "$PREFIX/etc/class.env"
[ "$(id -u)" -eq 0 ] || { echo "class-homes: run as root" >&2; exit 1; }
IMAGES=$PREFIX/homes
home_of() { getent passwd "$1" | cut -d: -f6; }

bound() {
  local user=$1 home uid gid fs img
  [ "${HOME_MB:-0}" -gt 0 ] || return 0
  home=$(home_of "$user"); uid=$(id -u "$user"); gid=$(id -g "$user")
  [ -n "$home" ] && [ -d "$home" ] && [ ! -L "$home" ] || { echo "class-homes: $user has no home folder" >&2; exit 2; }
  mountpoint -q "$home" && { echo "class-homes: $home is bounded already"; return 0; }
  fs=$(findmnt -n -o TARGET --target "$home")
  if command -v setquota >/dev/null && quotaon -p -u "$fs" 2>/dev/null | grep -q ' is on'; then
    setquota -u "$user" $((HOME_MB * 1024)) $((HOME_MB * 1024)) 0 0 "$fs"
    echo "class-homes: $user has a quota of $HOME_MB MiB on $fs"
    return 0
  fi
  img=$IMAGES/$user.ext4
  install -d -m 0700 -o root -g root "$IMAGES"
  if [ ! -e "$img" ]; then
    # Only a home that holds nothing of the student's yet (a new user's skeleton files) moves into an image: what is
    # in it is copied in, with its owners, and then removed from beneath the mount.
    local entry
    for entry in "$home"/* "$home"/.[!.]*; do
      [ -e "$entry" ] || [ -L "$entry" ] || continue
      [ -e "/etc/skel/${entry##*/}" ] \
        || { echo "class-homes: $home holds ${entry##*/} already; bound it by hand or leave it unbounded" >&2; exit 2; }
    done
    truncate -s "${HOME_MB}M" "$img"
    mkfs.ext4 -q -F -m 0 -L "home-$user" -d "$home" -E "root_owner=$uid:$gid" "$img"
    find "$home" -mindepth 1 -delete
  fi
  mount -o loop,nosuid,nodev "$img" "$home"
  chown "$uid:$gid" "$home" && chmod 0700 "$home"
  rm -rf "${home:?}/lost+found"
  echo "class-homes: $user's home holds at most $HOME_MB MiB ($img)"
}

mount_all() {
  local img user home
  for img in "$IMAGES"/*.ext4; do
    [ -f "$img" ] || continue
    user=${img##*/}; user=${user%.ext4}
    home=$(home_of "$user")
    [ -n "$home" ] && [ -d "$home" ] || { echo "class-homes: $img: no user $user (left unmounted)" >&2; continue; }
    mountpoint -q "$home" || mount -o loop,nosuid,nodev "$img" "$home"
  done
}

umount_some() {
  local img user home
  for img in "$IMAGES"/*.ext4; do
    [ -f "$img" ] || continue
    user=${img##*/}; user=${user%.ext4}
    [ -z "${1:-}" ] || [ "$user" = "$1" ] || continue
    home=$(home_of "$user")
    # the loop device goes with the mount (mount -o loop sets it to clear itself)
    [ -z "$home" ] || ! mountpoint -q "$home" || umount "$home"
  done
}

case ${1:-} in
  bound) [ $# -eq 2 ] || { echo "usage: class-homes bound USER" >&2; exit 2; }; bound "$2" ;;
  mount) mount_all ;;
  umount) umount_some "${2:-}" ;;
  *) echo "usage: class-homes bound USER | mount | umount [USER]" >&2; exit 2 ;;
esac
