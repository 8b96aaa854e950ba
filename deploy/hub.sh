#!/usr/bin/env bash
# Start, stop or restart the class hub without systemd: hub.sh start|stop|restart|status [PREFIX]
# The hub runs in a session of its own, logs to PREFIX/state/hub.log and keeps its pid in PREFIX/state/jupyterhub.pid.
set -euo pipefail
what=${1:?usage: hub.sh start|stop|restart|status [PREFIX]}
PREFIX=${2:-/opt/torchcourse}
# shellcheck disable=SC1091
. "$PREFIX/etc/class.env"
PIDFILE=$PREFIX/state/jupyterhub.pid
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

stop() {
  if running; then
    local pid; pid=$(cat "$PIDFILE")
    kill -TERM "$pid"
    # A new hub started while the old one still stops would orphan a proxy: wait for the old one to exit.
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$PIDFILE"
  fi
  # Students' processes end with the class: one started in a session of its own (setsid, nohup) from a kernel or
  # a terminal outlives the server that started it. The instructor's are left alone.
  local u
  for u in $(getent group "$GROUP" | cut -d: -f4 | tr ',' ' '); do
    [ "$u" = "$INSTRUCTOR" ] || pkill -KILL -u "$u" 2>/dev/null || true
  done
}

start() {
  running && { echo "hub already running (pid $(cat "$PIDFILE"))"; return 0; }
  # the students' bounded homes (after a reboot they are not mounted yet)
  [ ! -x "$PREFIX/bin/class-homes" ] || "$PREFIX/bin/class-homes" mount
  cd "$PREFIX/state"
  # With job control on, the hub does not inherit SIGINT ignored (as a background command of a script does): the hub
  # stops each server and service with SIGINT first, and waits 10 s for each one that ignores it.
  set -m
  setsid "$PREFIX/venv/bin/python" -m jupyterhub -f "$PREFIX/etc/jupyterhub_config.py" >> "$PREFIX/state/hub.log" 2>&1 < /dev/null &
  set +m
  local scheme=http; [ -n "${SSL_CERT:-}" ] && scheme=https
  local host=$HUB_IP; [ "$host" = 0.0.0.0 ] && host=127.0.0.1
  for _ in $(seq 240); do
    if "$PREFIX/venv/bin/python" -c "import sys, urllib.request, ssl
ctx = ssl._create_unverified_context()
sys.exit(urllib.request.urlopen(sys.argv[1], timeout=2, context=ctx).status != 200)" \
        "$scheme://$host:$HUB_PORT/hub/api" 2>/dev/null; then
      echo "hub up at $scheme://${HUB_HOST:-$HUB_IP}:$HUB_PORT/ (pid $(cat "$PIDFILE"))"; return 0
    fi
    sleep 0.25
  done
  echo "hub did not answer within 60 s; see $PREFIX/state/hub.log" >&2
  return 1
}

case $what in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) if running; then echo "running (pid $(cat "$PIDFILE"))"; else echo "stopped"; exit 1; fi ;;
  *) echo "usage: hub.sh start|stop|restart|status [PREFIX]" >&2; exit 2 ;;
esac
