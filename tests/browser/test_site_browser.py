"""The learner and instructor sites in headless Chromium, offline: every page, widgets, math, links, search."""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers import site as sitebuild
from tests.helpers.browser import Traffic, offline_context

pytestmark = pytest.mark.browser

# Console errors that are known and harmless. Keep this list short and say why for each.
ALLOWED_CONSOLE_ERRORS = [
    # pydata-sphinx-theme on the first page of a fresh profile (no stored theme choice yet): it uses "auto".
    re.compile(r"Got invalid theme mode"),
]


@dataclass
class PageVisit:
    path: str
    widget_views: int = 0  # widget views the saved state asks for
    rendered_widgets: int = 0
    saved_slider_values: list[int] = field(default_factory=list)
    readouts: list[str] = field(default_factory=list)
    math_elements: int = 0
    untypeset_math: int = 0
    math_errors: int = 0
    links: list[str] = field(default_factory=list)


@dataclass
class Crawl:
    html: Path
    base: str
    visits: list[PageVisit]
    traffic: Traffic
    search_hits: list[str]


def _saved_slider_values(page_html: str) -> list[int]:
    m = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', page_html, re.S)
    if not m:
        return []
    state = json.loads(m.group(1))["state"]
    return [int(s["state"]["value"]) for s in state.values()
            if s.get("model_name") == "IntSliderModel" and "value" in s.get("state", {})]


@pytest.fixture(scope="module", params=["learner", "instructor"])
def crawl(request, browser) -> Crawl:
    site = sitebuild.learner_site() if request.param == "learner" else sitebuild.instructor_site()
    html = site.html
    pages = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html") if "_static" not in p.parts)
    traffic = Traffic()
    visits = []
    with sitebuild.serve(html) as base:
        ctx = offline_context(browser, traffic)
        page = ctx.new_page()
        for path in pages:
            source = (html / path).read_text(encoding="utf-8")
            visit = PageVisit(path, widget_views=source.count('type="application/vnd.jupyter.widget-view+json"'),
                              saved_slider_values=_saved_slider_values(source))
            page.goto(base + path, wait_until="load")
            if path == "index.html":  # a redirect to the landing page
                page.wait_for_url("**/book/intro.html", timeout=15_000)
                page.wait_for_load_state("load")
            # A wait that times out is recorded by what it leaves unrendered, so that each test
            # below fails with its own message (and the request counts are still reported).
            with contextlib.suppress(PlaywrightTimeout):
                if visit.widget_views:
                    page.wait_for_selector(".jupyter-widgets", timeout=20_000)
                    page.wait_for_timeout(300)
                if page.evaluate("() => !!(window.MathJax && window.MathJax.startup)"):
                    page.evaluate("() => window.MathJax.startup.promise")
                page.wait_for_load_state("networkidle", timeout=20_000)
            visit.rendered_widgets = page.locator(".jupyter-widgets").count()
            visit.readouts = [t.strip() for t in page.locator(".widget-readout").all_inner_texts()]
            visit.math_elements = page.locator(".math").count()
            visit.untypeset_math = page.evaluate(
                "() => [...document.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container')).length")
            visit.math_errors = page.locator("mjx-merror").count()
            visit.links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            visits.append(visit)
        page.goto(base + "search.html?q=broadcasting", wait_until="load")
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_selector("#search-results li", timeout=30_000)
        hits = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
        ctx.close()
    return Crawl(html, base, visits, traffic, hits)


def test_every_page_was_visited(crawl):
    paths = {v.path for v in crawl.visits}
    assert {"index.html", "search.html", "book/intro.html", "book/glossary.html", "book/errata.html"} <= paths
    assert any(p.startswith(("chapters/", "solutions/")) for p in paths)


def test_zero_external_requests(crawl):
    assert crawl.traffic.blocked == [], f"{len(crawl.traffic.blocked)} external requests: {crawl.traffic.blocked[:10]}"


def test_no_failed_request(crawl):
    assert crawl.traffic.failed == []


def test_no_page_error_and_no_unexpected_console_error(crawl):
    assert crawl.traffic.page_errors == []
    unexpected = [e for e in crawl.traffic.console_errors if not any(a.search(e) for a in ALLOWED_CONSOLE_ERRORS)]
    assert unexpected == []


def test_widgets_render_from_saved_state(crawl):
    with_widgets = [v for v in crawl.visits if v.widget_views]
    assert with_widgets, "no page carries a widget"
    for v in with_widgets:
        assert v.rendered_widgets >= v.widget_views, f"{v.path}: {v.rendered_widgets} of {v.widget_views} rendered"
        for value in v.saved_slider_values:  # every saved slider shows its saved value
            assert str(value) in v.readouts, f"{v.path}: slider value {value} not shown ({v.readouts})"


def test_math_renders_offline(crawl):
    with_math = [v for v in crawl.visits if v.math_elements]
    assert with_math, "no page has math"
    for v in with_math:
        assert v.untypeset_math == 0, f"{v.path}: {v.untypeset_math} of {v.math_elements} math elements untypeset"
        assert v.math_errors == 0, f"{v.path}: MathJax reported {v.math_errors} errors"


def _ids(path: Path, cache: dict) -> set[str]:
    if path not in cache:
        cache[path] = set(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8", errors="replace")))
    return cache[path]


def test_every_internal_link_resolves(crawl):
    ids: dict = {}
    broken, checked = [], 0
    for v in crawl.visits:
        for href in v.links:
            if not href.startswith(crawl.base):
                continue
            parts = urlsplit(href)
            rel = unquote(parts.path).lstrip("/") or "index.html"
            target = crawl.html / rel
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file():
                broken.append(f"{v.path} -> {href}")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target, ids):
                broken.append(f"{v.path} -> {href} (no such anchor)")
    assert checked > 50
    assert broken == []


def test_search_finds_the_broadcasting_pages(crawl):
    assert crawl.search_hits, "search for 'broadcasting' found nothing"
    assert any("/chapters/" in h or "/solutions/" in h for h in crawl.search_hits)
