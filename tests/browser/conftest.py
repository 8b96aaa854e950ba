"""Fixtures of the browser tests: a session-wide Debian Chromium (helpers: tests/helpers/browser.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
# /usr/bin/chromium is Debian's wrapper script; it fails to add --disable-dev-shm-usage itself.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def _chromium_missing() -> str | None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return "Debian chromium is not installed (tests/setup-system.sh installs it as root: apt-get install chromium)"
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


