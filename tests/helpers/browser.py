"""Debian's Chromium driven by Playwright (the session-wide `browser` fixture is in tests/conftest.py), fully
offline: every request not to loopback is aborted and counted, so a page that would reach a CDN is caught even on
a machine that has internet access."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
# /usr/bin/chromium is Debian's wrapper script; it fails to add --disable-dev-shm-usage itself.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def chromium_missing() -> str | None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return "Debian chromium is not installed (tests/setup-system.sh installs it as root: apt-get install chromium)"
    return None


@dataclass
class Traffic:
    """What one browser context did: blocked (non-loopback) requests, failures, console errors."""

    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in {"data", "blob", "about"} or parts.hostname in {"127.0.0.1", "localhost", "::1"}


def offline_context(browser, traffic: Traffic):
    """A fresh browser context that aborts and counts every request not to loopback."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            traffic.blocked.append(r.request.url)
            r.abort("blockedbyclient")

    ctx.route("**/*", route)

    def on_page(page):
        page.on("console", lambda m: m.type == "error" and traffic.console_errors.append(f"{page.url}: {m.text}"))
        page.on("pageerror", lambda e: traffic.page_errors.append(f"{page.url}: {e}"))
        page.on("requestfailed", lambda r: is_local(r.url) and traffic.failed.append(f"{r.url}: {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and traffic.failed.append(f"{r.url}: HTTP {r.status}"))

    ctx.on("page", on_page)
    return ctx
