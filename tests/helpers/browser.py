"""Debian's Chromium driven by Playwright, fully offline: every request not to loopback is aborted and counted,
so a page that would reach a CDN is caught even on a machine that has internet access."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit


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
