#!/usr/bin/env bash
# System packages the tests need, from Debian's archive (never a browser downloaded by a test tool):
#   chromium     the browser Playwright drives for the site and JupyterLab tests
#   bubblewrap   the grader's sandbox (namespaces, no network) where the OS allows it
#   npm          fetches the site's pinned JavaScript (package-lock.json) for `make book`, and the class hub's proxy
#   sudo         the class deployment's one root command for the instructor (tests/deploy)
#   fonts-wqy-microhei  a CJK font, so that Chromium draws the Chinese edition's text (tests/browser), not boxes, and
#                       matplotlib the Chinese figures' (installed by book/install-cjk-font.sh, which `make book` runs)
# Installed only when missing, so a second `make test` does nothing here.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v sudo >/dev/null 2>&1 || need+=(sudo)
bash "$(dirname "$0")/../book/install-cjk-font.sh"
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "tests/setup-system.sh: missing ${need[*]}; install them with: sudo apt-get install -y ${need[*]}" >&2
  echo "(the tests that need them are skipped with that reason)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
