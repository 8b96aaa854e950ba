"""The learner and instructor sites in headless Chromium, offline: every page, widgets, math, links, search;
and every control of every widget's frame player, moved like a reader moves it."""

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
    players: int = 0  # frame players (torchcourse widgets) in the page's HTML
    ready_players: int = 0  # ... that book/js/frame-player.js turned into working controls
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
    moves: list  # ControlMove of every control of every frame player, moved on its page during the crawl


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
    moves: list = []
    with sitebuild.serve(html) as base:
        ctx = offline_context(browser, traffic)
        page = ctx.new_page()
        for path in pages:
            source = (html / path).read_text(encoding="utf-8")
            visit = PageVisit(path, widget_views=source.count('type="application/vnd.jupyter.widget-view+json"'),
                              saved_slider_values=_saved_slider_values(source),
                              players=source.count('<div class="tc-player"'))
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
                if visit.players:
                    page.wait_for_selector(".tc-player-ready", timeout=20_000)
                if page.evaluate("() => !!(window.MathJax && window.MathJax.startup)"):
                    page.evaluate("() => window.MathJax.startup.promise")
                page.wait_for_load_state("networkidle", timeout=20_000)
            visit.rendered_widgets = page.locator(".jupyter-widgets").count()
            visit.ready_players = page.locator(".tc-player.tc-player-ready").count()
            visit.readouts = [t.strip() for t in page.locator(".widget-readout").all_inner_texts()]
            visit.math_elements = page.locator(".math").count()
            visit.untypeset_math = page.evaluate(
                "() => [...document.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container')).length")
            visit.math_errors = page.locator("mjx-merror").count()
            visit.links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            if visit.ready_players:  # last: the moves change what the page shows
                moves.extend(_control_moves(page, path))
            visits.append(visit)
        page.goto(base + "search.html?q=broadcasting", wait_until="load")
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_selector("#search-results li", timeout=30_000)
        hits = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
        ctx.close()
    return Crawl(html, base, visits, traffic, hits, moves)


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


def test_every_widget_shows_a_working_frame_player(crawl):
    with_players = [v for v in crawl.visits if v.players]
    assert with_players, "no page carries a widget's frame player"
    for v in with_players:
        assert v.ready_players == v.players, f"{v.path}: {v.ready_players} of {v.players} frame players set up"


def test_saved_ipywidgets_render_from_saved_state(crawl):
    # The course's own widgets are frame players on the site; any other ipywidget still renders
    # from the state saved when the notebook was executed.
    for v in [v for v in crawl.visits if v.widget_views]:
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


# ----------------------------------------------------------------- frame players, control by control

# In the page: the player's data, and whether what it shows is the frame its data holds for its state.
_PLAYER_STATE = """(p) => {
  const data = p.tcData || (p.tcData = JSON.parse(p.querySelector('script.tc-player-data').textContent));
  const n = data.axes.length;
  const frame = data.frames.find(f => f.slice(0, n).join(',') === p.dataset.state);
  const src = p.querySelector('img.tc-player-frame').src;
  const message = p.querySelector('.tc-player-message').innerHTML;
  const expected = document.createElement('div');
  if (frame) expected.innerHTML = data.messages[frame[n + 1]];
  const prefix = 'data:image/png;base64,';
  // Which of the widget's images is shown (-1: none of them), compared in the page: data URLs are long.
  const shown = src.startsWith(prefix) ? data.images.indexOf(src.slice(prefix.length)) : -1;
  return {state: p.dataset.state, src: shown, message: message, found: !!frame,
          src_ok: !!frame && shown === frame[n], message_ok: !!frame && message === expected.innerHTML,
          axes: data.axes.map(a => ({name: a.name, kind: a.kind, count: a.labels.length}))};
}"""


@dataclass
class ControlMove:
    page: str
    player: int
    control: str
    kind: str
    changed: bool = False  # the shown frame or message differs from before the move
    matches: bool = False  # ... and is the frame computed for the state the controls now show
    detail: str = ""


def _move(page, player, axis: dict) -> list:
    """From the widget's starting state, move one control as a reader does, one step at a time,
    until the frame or message changes."""
    player.locator("button.tc-player-reset").click()
    control = player.locator(f"[data-axis='{axis['name']}']")
    before = player.evaluate(_PLAYER_STATE)
    tries = []
    for step in range(2 * axis["count"]):
        if axis["kind"] == "checkbox":
            control.click()
        elif axis["kind"] == "slider":
            control.focus()
            last = int(control.input_value()) == axis["count"] - 1
            page.keyboard.press("ArrowLeft" if last or step >= axis["count"] else "ArrowRight")
        else:
            current = int(control.input_value())
            control.select_option(str((current + 1) % axis["count"]))
        after = player.evaluate(_PLAYER_STATE)
        tries.append(after)
        if (after["src"], after["message"]) != (before["src"], before["message"]):
            break
    return [before, *tries]


def _control_moves(page, path: str) -> list[ControlMove]:
    moves = []
    players = page.locator(".tc-player")
    for i in range(players.count()):
        player = players.nth(i)
        for axis in player.evaluate(_PLAYER_STATE)["axes"]:
            states = _move(page, player, axis)
            before, after = states[0], states[-1]
            moves.append(ControlMove(
                path, i, axis["name"], axis["kind"],
                changed=(after["src"], after["message"]) != (before["src"], before["message"]),
                matches=all(s["found"] and s["src_ok"] and s["message_ok"] for s in states),
                detail=f"states {[s['state'] for s in states]}"))
    return moves


# (Errors and requests while the controls move are the crawl's: the tests above check them.)
def test_every_control_of_every_widget_moves_its_frame(crawl):
    assert crawl.moves, "no frame player found on the site"
    pages = {m.page for m in crawl.moves}
    assert any(p.startswith(("chapters/01-tensors/", "solutions/01-tensors/")) for p in pages), \
        "chapter 1's widgets have no player"
    stuck = [f"{m.page} #{m.player} {m.control} ({m.kind}): {m.detail}" for m in crawl.moves if not m.changed]
    assert stuck == [], "controls whose moves never changed the frame or message:\n" + "\n".join(stuck)


def test_every_shown_frame_is_the_one_computed_for_its_state(crawl):
    wrong = [f"{m.page} #{m.player} {m.control}: {m.detail}" for m in crawl.moves if not m.matches]
    assert wrong == [], "frames or messages that do not match the controls' state:\n" + "\n".join(wrong)
