#!/usr/bin/env bash
# A class on one server: JupyterHub with the machine's own users, nbgrader's exchange, the course grader.
# Run as root on Debian 12 (its python3.11), from the repository: `sudo make class` (or this script). Idempotent.
#
# Settings (environment variables; `make class HUB_IP=0.0.0.0 INSTRUCTOR=ada` passes them on):
#   INSTRUCTOR    the instructor's user name (created when missing, without a password)   default instructor
#   PREFIX        where the environment, the proxy, the hub's state and its config live     default /opt/torchcourse
#   EXCHANGE      nbgrader's exchange                                                        default /srv/nbgrader/exchange
#   HUB_IP HUB_PORT        the address the hub answers on                                    default 127.0.0.1 8000
#   HUB_HOST      the hub's host name; each user's server is at USER.HUB_HOST, an origin of its own (needs a
#                 wildcard DNS record *.HUB_HOST, and with SSL_CERT a certificate for it too); none: one origin for
#                 all, where a page from one user's server can act as whoever opens it
#                 default hub.localhost with a loopback HUB_IP (browsers resolve *.localhost to loopback)
#   HUB_API_PORT PROXY_API_PORT  the hub's and the proxy's internal ports (loopback)          default 8081 8001
#   AUTH          pam (the machine's passwords), shared-password (SHARED_PASSWORD, one for the class), or
#                 dummy (any password; only to try the hub out)                              default pam
#   SSL_CERT SSL_KEY       serve https (recommended whenever HUB_IP is not loopback)
#   TORCH_INDEX   e.g. https://download.pytorch.org/whl/cpu for the CPU-only torch build
#   BASE_VENV     an environment with the course's stack already installed (the tests use the repository's
#                 .venv): layered under PREFIX/venv instead of installing the lock again
#   HOME_BASE     where new users' homes go (useradd -b)                                     default /home
#   KERNEL_DIR    a folder of root's holding each user's kernel sockets (short paths)        default /run/torchcourse
#   SUBMISSION_MAX_MB SUBMISSION_FILES  most MiB, files and folders one submission may hold   default 100 10000
#   INBOUND_QUOTA_MB   most MiB a student's entries in the exchange's inbound may hold together  default 500
#   INBOUND_CHECK_S    how often the hub's inbound guard looks (seconds)                         default 10
#   HOME_MB       most MiB each new student's home holds (deploy/class-homes.sh: a user quota where the home's file
#                 system keeps them, else an ext4 image of its own); 0: unbounded                 default 2048
#   TMP_MB SHM_MB most MiB of a student's own /tmp and /dev/shm (tmpfs in her server's namespaces, user-server.sh)
#                                                                                            default 1024 512
#   HIDEPID       1: the machine's /proc too shows each user only their own processes, now and after reboots
#                 (deploy/hidepid.sh), for students who also log in by ssh; a student's server has a /proc of its
#                 own anyway                                                                 default 0
#   START         1: start (or restart) the hub at the end; 0: only set up                   default 1
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "setup-class.sh: run as root (sudo make class)" >&2; exit 1; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
INSTRUCTOR=${INSTRUCTOR:-instructor}
PREFIX=${PREFIX:-/opt/torchcourse}
EXCHANGE=${EXCHANGE:-/srv/nbgrader/exchange}
HUB_IP=${HUB_IP:-127.0.0.1}
case $HUB_IP in 127.*|::1) HUB_HOST=${HUB_HOST:-hub.localhost} ;; esac
if [ -z "${HUB_HOST:-}" ] || { [[ $HUB_HOST =~ (^|\.)localhost$ ]] && [[ ! $HUB_IP =~ ^(127\.|::1$) ]]; }; then
  echo "setup-class.sh: HUB_IP=$HUB_IP: set HUB_HOST to the hub's host name (e.g. hub.example.org, with a DNS record" \
    "*.hub.example.org to this server and, with SSL_CERT, a certificate for both), or HUB_HOST=none" >&2; exit 2
fi
[[ $HUB_HOST =~ ^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]] \
  || { echo "setup-class.sh: HUB_HOST=$HUB_HOST is not a host name" >&2; exit 2; }
[ "$HUB_HOST" != none ] || echo "class: WARNING: HUB_HOST=none: every user's server shares one origin; a page served from one \
user's server can act as whoever opens it (do not open links to other users' servers)"
HUB_PORT=${HUB_PORT:-8000}
HUB_API_PORT=${HUB_API_PORT:-8081}
PROXY_API_PORT=${PROXY_API_PORT:-8001}
AUTH=${AUTH:-pam}
HOME_BASE=${HOME_BASE:-/home}
START=${START:-1}
GROUP=torchcourse
# nbgrader's course id: its one definition is grader/course.py's COURSE_ID
COURSE_ID=$(sed -n 's/^COURSE_ID = "\([a-z0-9_-]*\)"$/\1/p' "$REPO/grader/course.py")
[ -n "$COURSE_ID" ] || { echo "setup-class.sh: no COURSE_ID in $REPO/grader/course.py" >&2; exit 2; }
SUBMISSION_MAX_MB=${SUBMISSION_MAX_MB:-100}
SUBMISSION_FILES=${SUBMISSION_FILES:-10000}
INBOUND_QUOTA_MB=${INBOUND_QUOTA_MB:-500}
INBOUND_CHECK_S=${INBOUND_CHECK_S:-10}
HOME_MB=${HOME_MB:-2048}
TMP_MB=${TMP_MB:-1024}
SHM_MB=${SHM_MB:-512}
for v in SUBMISSION_MAX_MB SUBMISSION_FILES INBOUND_QUOTA_MB INBOUND_CHECK_S TMP_MB SHM_MB; do
  [[ ${!v} =~ ^[1-9][0-9]{0,6}$ ]] || { echo "setup-class.sh: $v=${!v}: a whole number from 1" >&2; exit 2; }
done
[[ $HOME_MB =~ ^(0|[1-9][0-9]{0,6})$ ]] || { echo "setup-class.sh: HOME_MB=$HOME_MB: a whole number (0: unbounded)" >&2; exit 2; }
[ "$HOME_MB" = 0 ] || [ "$HOME_MB" -ge 64 ] || { echo "setup-class.sh: HOME_MB=$HOME_MB: at least 64 (or 0)" >&2; exit 2; }
KERNEL_DIR=${KERNEL_DIR:-/run/torchcourse}
# A student's server gets a /tmp and /dev/shm of its own, which hide the machine's (deploy/user-server.sh): what the
# servers need from the machine's /tmp is bound back in (the tests keep the class there); /dev/shm is refused.
SERVER_PATHS="$PREFIX $EXCHANGE $HOME_BASE $KERNEL_DIR${BASE_VENV:+ $BASE_VENV $REPO}"
for path in $SERVER_PATHS; do
  [[ $path =~ ^/[A-Za-z0-9._/+-]+$ ]] || { echo "setup-class.sh: $path: a path of letters, digits and ._+-/ only" >&2; exit 2; }
  case $path/ in /dev/shm/*) echo "setup-class.sh: $path: not under /dev/shm (each student's server has its own)" >&2
    exit 2 ;; esac
done
PY=/usr/bin/python3.11
say() { printf '%s\n' "class: $*"; }

# 1. Debian packages, only those missing: Python 3.11 (its venv is readable by every user), Node for the proxy,
#    bubblewrap for the grader's sandbox, sudo for the instructor's root commands, MathJax for formgrader.
need=()
{ [ -x "$PY" ] && "$PY" -c 'import ensurepip' 2>/dev/null; } || need+=(python3.11 python3.11-venv)
command -v npm >/dev/null || need+=(npm)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v sudo >/dev/null || need+=(sudo)
# MathJax 2 for formgrader's pages, served by the instructor's own server (nbgrader loads it from a CDN otherwise).
[ -f /usr/share/javascript/mathjax/MathJax.js ] || need+=(libjs-mathjax)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# 2. The course's pinned stack in PREFIX/venv, readable by every user (students' servers and the sandbox run it).
umask 022
mkdir -p "$PREFIX"/{bin,etc,app}
chmod 0755 "$PREFIX"
VENV=$PREFIX/venv
if [ -n "${BASE_VENV:-}" ]; then
  BASE_VENV=$(cd "$BASE_VENV" && pwd)
  [ -x "$VENV/bin/python" ] || "$PY" -m venv --without-pip "$VENV"
  site=$("$BASE_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # An "import" line in a .pth file runs: addsitedir also reads the base's own .pth files (the editable course).
  echo "import site; site.addsitedir('$site')" > "$VENV/lib/python3.11/site-packages/torchcourse_base.pth"
  mkdir -p "$VENV/share" "$VENV/etc"
  ln -sfn "$BASE_VENV/share/jupyter" "$VENV/share/jupyter"
  rm -rf "$VENV/etc/jupyter" && cp -r "$BASE_VENV/etc/jupyter" "$VENV/etc/jupyter"
else
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  pip=("$VENV/bin/pip" --disable-pip-version-check -q)
  if [ -n "${TORCH_INDEX:-}" ]; then "${pip[@]}" install --index-url "$TORCH_INDEX" "$(grep -m1 '^torch==' "$REPO/requirements/lock.txt")"; fi
  if ! cmp -s "$REPO/requirements/lock.txt" "$VENV/.torchcourse-lock.txt"; then  # only when the lock changed
    say "installing requirements/lock.txt into $VENV (a few minutes the first time)"
    "${pip[@]}" install -r "$REPO/requirements/lock.txt"
    cp "$REPO/requirements/lock.txt" "$VENV/.torchcourse-lock.txt"
  fi
  "${pip[@]}" install --no-deps "$REPO"   # the course library, copied (not linked to this checkout)
fi
# The grader's code, root-owned: autograde runs it as root (section 6), so nobody else may change it.
rm -rf "$PREFIX/app/grader" && cp -r "$REPO/grader" "$PREFIX/app/grader"
# nbgrader's submit with the class's limits (the students' nbgrader configuration below names it).
cp "$REPO/deploy/torchcourse_submit.py" "$PREFIX/app/torchcourse_submit.py"
# nbgrader's release and fetch with each chapter's translated notebooks (the configurations below name them).
cp "$REPO/deploy/torchcourse_language.py" "$PREFIX/app/torchcourse_language.py"
find "$PREFIX/app" -name __pycache__ -prune -exec rm -rf {} +
# `python -m grader check NOTEBOOK` for every user, as in the repository (the instructor's own folder comes first).
echo "$PREFIX/app" > "$VENV/lib/python3.11/site-packages/torchcourse_grader.pth"
for tool in python jupyter nbgrader; do
  mod=$tool; [ "$tool" = python ] && mod=""
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$VENV/bin/python" "${mod:+-m $mod}" > "$PREFIX/bin/$tool"
  chmod 0755 "$PREFIX/bin/$tool"
done

# 3. configurable-http-proxy, pinned by deploy/package-lock.json, from the npm registry.
mkdir -p "$PREFIX/proxy"
if ! cmp -s "$REPO/deploy/package-lock.json" "$PREFIX/proxy/package-lock.json" \
    || [ ! -x "$PREFIX/proxy/node_modules/.bin/configurable-http-proxy" ]; then
  cp "$REPO/deploy/package.json" "$REPO/deploy/package-lock.json" "$PREFIX/proxy/"
  (cd "$PREFIX/proxy" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
# Readable by all: the environment, the proxy, the grader, the commands (never state/: the hub's secrets).
chmod -R a+rX "$VENV" "$PREFIX/proxy" "$PREFIX/app" "$PREFIX/bin"

# 4. Users: homes 0700 from now on (Debian's default lets every user read every home: the instructor's solutions
#    and gradebook), the class group, the instructor.
sed -i 's/^#\?\s*HOME_MODE\s.*/HOME_MODE\t0700/' /etc/login.defs
grep -q '^HOME_MODE' /etc/login.defs || printf 'HOME_MODE\t0700\n' >> /etc/login.defs
[ -f /etc/adduser.conf ] && sed -i 's/^#\?\s*DIR_MODE=.*/DIR_MODE=0700/' /etc/adduser.conf
getent group "$GROUP" >/dev/null || groupadd "$GROUP"
if ! id "$INSTRUCTOR" >/dev/null 2>&1; then
  mkdir -p "$HOME_BASE"
  useradd -m -b "$HOME_BASE" -s /bin/bash -G "$GROUP" "$INSTRUCTOR"
  say "created user $INSTRUCTOR (no password yet: passwd $INSTRUCTOR)"
fi
usermod -a -G "$GROUP" "$INSTRUCTOR"
INST_HOME=$(getent passwd "$INSTRUCTOR" | cut -d: -f6)
for u in $(getent group "$GROUP" | cut -d: -f4 | tr ',' ' ') "$INSTRUCTOR"; do
  h=$(getent passwd "$u" | cut -d: -f6); [ -d "$h" ] && chmod 0700 "$h"
done

# 5. The instructor's course folder (solutions, gradebook): a copy of this repository, theirs alone.
COURSE=$INST_HOME/torchcourse
if [ ! -d "$COURSE" ]; then
  mkdir -p "$COURSE"
  if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$REPO" archive --format=tar HEAD | tar -x -C "$COURSE"
  else
    tar -C "$REPO" --exclude=.venv --exclude=node_modules --exclude=_build --exclude=.git -cf - . | tar -x -C "$COURSE"
  fi
  chown -R "$INSTRUCTOR:" "$COURSE"
  say "the course is in $COURSE"
fi
# This checkout holds solutions/ and hidden tests too: once copied, nobody else may read it. An environment layered
# from inside it (BASE_VENV, as the tests do) must stay readable, so then it is only said.
if [ "$(stat -c %a "$REPO")" != 700 ]; then
  if [ -z "${BASE_VENV:-}" ]; then
    chmod 0700 "$REPO" && say "$REPO is now readable by root only (it holds the solutions)"
  else
    say "WARNING: $REPO holds the solutions and is readable by other users: chmod 0700 $REPO once BASE_VENV is not in it"
  fi
fi
INST_GROUP=$(id -gn "$INSTRUCTOR")
# Jupyter's configuration folders, root's (the hub points each server at one, JUPYTER_CONFIG_DIR): a user's own
# ~/.jupyter could load a server extension that serves other users' browsers. The instructor's has formgrader
# and the course; a copy goes to ~/.jupyter for nbgrader's commands in a terminal.
IJ=$PREFIX/etc/jupyter-instructor
rm -rf "$IJ" "$PREFIX/etc/jupyter-users"
mkdir -p "$IJ/jupyter_server_config.d" "$IJ/labconfig" "$PREFIX/etc/jupyter-users"
cat > "$IJ/nbgrader_config.py" <<EOF
# Written by deploy/setup-class.sh: formgrader and nbgrader's commands use the course folder wherever they start.
c = get_config()  # noqa: F821
load_subconfig("$COURSE/nbgrader_config.py")  # noqa: F821
c.CourseDirectory.root = "$COURSE"
c.Exchange.root = "$EXCHANGE"

# formgrader's Autograde button (and nbgrader autograde) would run learner code as you, outside the sandbox, and
# its Collect button (and nbgrader collect) takes a folder one student named as another. This class grades and
# collects with the course grader: those two say which command to use instead.
from nbgrader.converters.base import NbGraderException as _Refused  # noqa: E402
from nbgrader.converters import Autograde as _Autograde  # noqa: E402
from nbgrader.exchange.default import ExchangeCollect as _ExchangeCollect  # noqa: E402


def _no_autograde(self):
    raise _Refused("autograde is off here: learner code would run as you. Grade with the course's sandbox: "
                   f"sudo $PREFIX/bin/autograde {self.coursedir.assignment_id or 'CHAPTER'}")


class CourseCollect(_ExchangeCollect):
    def start(self):
        raise _Refused("collect is off here: it would take a submission one student made as another. Collect "
                       f"with: cd $COURSE && python -m grader collect {self.coursedir.assignment_id or 'CHAPTER'}")


_Autograde.start = _no_autograde
c.ExchangeFactory.collect = CourseCollect
# The release carries each chapter's translated notebooks beside the English (outbound/CHAPTER/zh_CN/), checked to
# be the same assignment; a student who chose that language fetches them (torchcourse_language.py).
from torchcourse_language import CourseRelease  # noqa: E402
c.ExchangeFactory.release_assignment = CourseRelease
EOF
# Formgrader's submission page loads MathJax 2 from a CDN ("MathJax is not defined" offline, and a third party sees
# every page the instructor grades): Debian's copy instead, from the instructor's own server (/static/mathjax/), by a
# template that only formgrader's page uses (JUPYTER_PATH of the instructor's server, set by the hub).
echo '{"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": true,
  "nbgrader.server_extensions.course_list": true}}}' > "$IJ/jupyter_server_config.d/torchcourse-instructor.json"
# (jupyter_server reads only which extensions to load from config.d; other settings go in the main file)
echo '{"ServerApp": {"extra_static_paths": ["/usr/share/javascript"]}}' > "$IJ/jupyter_server_config.json"
IJD=$PREFIX/etc/jupyter-instructor-data
rm -rf "$IJD" && mkdir -p "$IJD/nbconvert/templates/formgrade"
cat > "$IJD/nbconvert/templates/formgrade/mathjax.html.j2" <<EOF
{#- Written by deploy/setup-class.sh: formgrader's page loads MathJax from the instructor's server, not a CDN. -#}
{%- from 'base/mathjax.html.j2' import mathjax as _mathjax -%}
{%- macro mathjax(url="/user/$INSTRUCTOR/static/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe") -%}
{{ _mathjax(url) }}
{%- endmacro -%}
EOF
chmod -R a+rX "$IJD"
# JupyterLab's interface language for a student who chose one (jupyterhub_config.py points her server at it): the
# course's defaults for JupyterLab's settings with the language set, as `make lab LANG=zh_CN` has them. A setting
# she makes herself wins. Each student's language, set by add-student.sh --language, is a file in languages/.
rm -rf "$PREFIX/etc/lab-settings" && cp -r "$REPO/lab-settings" "$PREFIX/etc/lab-settings"
mkdir -p "$PREFIX/etc/languages"
chmod -R a+rX "$PREFIX/etc/lab-settings" "$PREFIX/etc/languages"
echo '{"disabledExtensions": {"@jupyter/nbgrader:formgrader": false, "@jupyter/nbgrader:course-list": false,
  "@jupyter/nbgrader:create-assignment": false, "@jupyterlab/apputils-extension:announcements": true}}' \
  > "$IJ/labconfig/page_config.json"
# "migrated": jupyter's one-time migration of old IPython config is done; it would write here otherwise.
touch "$IJ/migrated" "$PREFIX/etc/jupyter-users/migrated"
chmod -R a+rX "$IJ" "$PREFIX/etc/jupyter-users"
# Written by the instructor: root never writes where the instructor could point it.
runuser -u "$INSTRUCTOR" -- sh -c 'umask 077 && mkdir -p "$2/jupyter_server_config.d" "$2/labconfig" &&
  for f in nbgrader_config.py jupyter_server_config.d/torchcourse-instructor.json labconfig/page_config.json; do
    cp "$1/$f" "$2/$f"; done' sh "$IJ" "$INST_HOME/.jupyter"

# Everyone else: the course and the exchange by default; no formgrader (it is the instructor's alone).
mkdir -p "$VENV/etc/jupyter/jupyter_server_config.d" "$VENV/etc/jupyter/labconfig"
cat > "$VENV/etc/jupyter/nbgrader_config.py" <<EOF
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "$COURSE_ID"
c.Exchange.root = "$EXCHANGE"
# A chapter folder over the class's limits is refused with a message, before anything is copied (the hub's inbound
# guard removes what is put into inbound over them another way).
from torchcourse_submit import CourseSubmit  # noqa: E402
c.ExchangeFactory.submit = CourseSubmit
c.CourseSubmit.max_submission_mb = $SUBMISSION_MAX_MB
c.CourseSubmit.max_submission_files = $SUBMISSION_FILES
# A student whose language (LANGUAGE, which the hub sets from add-student.sh --language) has a translation of the
# chapter fetches its notebooks in it, under the same names: the same assignment, graded by the same checks.
from torchcourse_language import CourseFetch  # noqa: E402
c.ExchangeFactory.fetch_assignment = CourseFetch
EOF
echo '{"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": false,
  "nbgrader.server_extensions.course_list": false}}}' > "$VENV/etc/jupyter/jupyter_server_config.d/zz-torchcourse.json"
# No JupyterLab news prompt: it asks every user, on a server with no use for it.
echo '{"disabledExtensions": {"@jupyter/nbgrader:formgrader": true, "@jupyter/nbgrader:course-list": true,
  "@jupyter/nbgrader:create-assignment": true, "@jupyterlab/apputils-extension:announcements": true}}' \
  > "$VENV/etc/jupyter/labconfig/page_config.json"
chmod -R a+rX "$VENV/etc"

# 6. The exchange. Its root is sticky (1777): nobody renames or deletes another's folder in it (nbgrader's
#    documented 0777 lets a student rename the course). The course's folders are the instructor's before any
#    student can squat them; inbound is write-only for students, sticky too.
mkdir -p "$EXCHANGE"
chown root:root "$EXCHANGE" && chmod 1777 "$EXCHANGE"
install -d -o "$INSTRUCTOR" -g "$INST_GROUP" -m 0755 "$EXCHANGE/$COURSE_ID" "$EXCHANGE/$COURSE_ID/outbound"
install -d -o "$INSTRUCTOR" -g "$INST_GROUP" -m 3733 "$EXCHANGE/$COURSE_ID/inbound"
install -d -o "$INSTRUCTOR" -g "$INST_GROUP" -m 0711 "$EXCHANGE/$COURSE_ID/feedback"
for d in "$EXCHANGE/$COURSE_ID" "$EXCHANGE/$COURSE_ID"/{outbound,inbound,feedback}; do
  [ "$(stat -c %U "$d")" = "$INSTRUCTOR" ] || { echo "setup-class.sh: $d belongs to $(stat -c %U "$d"), not $INSTRUCTOR: \
someone made it first; check its contents, remove it, and run again" >&2; exit 1; }
done

# 7. Settings for the hub, the grading command and login shells.
cat > "$PREFIX/etc/class.env" <<EOF
INSTRUCTOR=$INSTRUCTOR
PREFIX=$PREFIX
COURSE=$COURSE
EXCHANGE=$EXCHANGE
HUB_IP=$HUB_IP
HUB_HOST=$([ "$HUB_HOST" = none ] || echo "$HUB_HOST")
HUB_PORT=$HUB_PORT
HUB_API_PORT=$HUB_API_PORT
PROXY_API_PORT=$PROXY_API_PORT
AUTH=$AUTH
GROUP=$GROUP
SSL_CERT=${SSL_CERT:-}
SSL_KEY=${SSL_KEY:-}
GRADER_PYTHON=${BASE_VENV:-$VENV}/bin/python
KERNEL_DIR=$KERNEL_DIR
SERVER_PATHS="$SERVER_PATHS"
SUBMISSION_MAX_MB=$SUBMISSION_MAX_MB
SUBMISSION_FILES=$SUBMISSION_FILES
INBOUND_QUOTA_MB=$INBOUND_QUOTA_MB
INBOUND_CHECK_S=$INBOUND_CHECK_S
HOME_MB=$HOME_MB
TMP_MB=$TMP_MB
SHM_MB=$SHM_MB
EOF
chmod 0644 "$PREFIX/etc/class.env"
if [ -n "${SHARED_PASSWORD:-}" ]; then
  (umask 077; printf '%s' "$SHARED_PASSWORD" > "$PREFIX/etc/shared-password")
fi
cp "$REPO/deploy/jupyterhub_config.py" "$PREFIX/etc/jupyterhub_config.py"
cp "$REPO/deploy/autograde.sh" "$PREFIX/bin/autograde" && chmod 0755 "$PREFIX/bin/autograde"
cp "$REPO/deploy/clear-inbound.sh" "$PREFIX/bin/clear-inbound" && chmod 0755 "$PREFIX/bin/clear-inbound"
cp "$REPO/deploy/inbound_guard.py" "$PREFIX/bin/inbound-guard" && chmod 0755 "$PREFIX/bin/inbound-guard"
cp "$REPO/deploy/user-server.sh" "$PREFIX/bin/user-server" && chmod 0755 "$PREFIX/bin/user-server"
cp "$REPO/deploy/class-homes.sh" "$PREFIX/bin/class-homes" && chmod 0755 "$PREFIX/bin/class-homes"
cp "$REPO/deploy/release_feedback.py" "$PREFIX/bin/release-feedback" && chmod 0755 "$PREFIX/bin/release-feedback"
sed -i "1s|.*|#!$VENV/bin/python|" "$PREFIX/bin/release-feedback"
printf 'export TORCHCOURSE_EXCHANGE=%s\ncase ":$PATH:" in *":%s/bin:"*) ;; *) PATH="%s/bin:$PATH" ;; esac\n' \
  "$EXCHANGE" "$PREFIX" "$PREFIX" > /etc/profile.d/torchcourse.sh
if [ -d /etc/sudoers.d ]; then
  # The instructor's root commands: the grader's sandbox needs root to drop learner code to a uid of its own, and
  # a student's inbound entry can be made so that only root can remove it.
  echo "$INSTRUCTOR ALL=(root) NOPASSWD: $PREFIX/bin/autograde, $PREFIX/bin/clear-inbound" > /etc/sudoers.d/torchcourse
  chmod 0440 /etc/sudoers.d/torchcourse
fi
mkdir -p "$PREFIX/state" && chmod 0700 "$PREFIX/state"
if [ "${HIDEPID:-0}" = 1 ]; then
  bash "$REPO/deploy/hidepid.sh" /proc --persist
else
  say "a student's server shows her only her own processes; an ssh login of hers sees all in /proc (HIDEPID=1 hides them)"
fi

# 8. Start the hub (a systemd service where systemd runs; otherwise a background process with a pid file).
[ "$START" = 1 ] || { say "set up; start the hub with: $PREFIX/bin/python -m jupyterhub -f $PREFIX/etc/jupyterhub_config.py"; exit 0; }
if [ -d /run/systemd/system ]; then
  cat > /etc/systemd/system/torchcourse-hub.service <<EOF
[Unit]
Description=JupyterHub for torchcourse
After=network.target
[Service]
WorkingDirectory=$PREFIX/state
ExecStartPre=$PREFIX/bin/class-homes mount
ExecStart=$VENV/bin/python -m jupyterhub -f $PREFIX/etc/jupyterhub_config.py
Restart=on-failure
[Install]
WantedBy=multi-user.target
EOF
  systemctl daemon-reload
  systemctl enable torchcourse-hub >/dev/null 2>&1
  systemctl restart torchcourse-hub
else
  "$REPO/deploy/hub.sh" restart "$PREFIX"
fi
scheme=http; [ -n "${SSL_CERT:-}" ] && scheme=https
host=$HUB_HOST; [ "$host" = none ] && host=$HUB_IP
say "hub starting at $scheme://$host:$HUB_PORT/ (log in as $INSTRUCTOR; students: deploy/add-student.sh NAME)"
