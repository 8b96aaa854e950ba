#!/usr/bin/env bash
# A CJK font from Debian's archive (fonts-wqy-microhei), for the Chinese edition's text: Chromium draws the pages'
# Chinese with it (tests/browser), and matplotlib the figures' (torchcourse/figure_words.py, which finds it with
# fc-list). `make book` and tests/setup-system.sh run this; it installs only when no CJK font is there, and only
# as root (otherwise it says what to run: without the font the figures stay English, with one warning).
set -euo pipefail
fc-list :lang=zh 2>/dev/null | grep -q . && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "book/install-cjk-font.sh: no CJK font; install one with: sudo apt-get install -y fonts-wqy-microhei" >&2
  echo "(until then the figures of the Chinese site and of Chinese JupyterLab stay in English)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends fonts-wqy-microhei >/dev/null
