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
    axe: list[dict] = field(default_factory=list)  # axe-core's violations on the page: {id, impact, nodes}
    player_buttons: list[str] = field(default_factory=list)  # the players' own buttons' text (reset)


@dataclass
class Crawl:
    html: Path  # the folder served: the learner site's holds en/, zh/ and the language chooser
    base: str
    prefix: str  # where the English (or instructor) site is under html: "en/" or ""
    visits: list[PageVisit]
    traffic: Traffic
    search_hits: list[str]
    moves: list  # a PlayerExploration of every frame player, explored on its page during the crawl


def _saved_slider_values(page_html: str) -> list[int]:
    m = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', page_html, re.S)
    if not m:
        return []
    state = json.loads(m.group(1))["state"]
    return [int(s["state"]["value"]) for s in state.values()
            if s.get("model_name") == "IntSliderModel" and "value" in s.get("state", {})]


AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"  # pinned in package-lock.json
# The standards the site is held to: WCAG 2.1 A and AA.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def _axe_violations(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}})"
                          ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact,"
                          " nodes: v.nodes.map(n => n.target.join(' '))})))", AXE_TAGS)
    return found


def _site_pages(html: Path, prefix: str = "") -> list[str]:
    return sorted(prefix + p.relative_to(html).as_posix() for p in html.rglob("*.html") if "_static" not in p.parts)


@pytest.fixture(scope="module", params=["learner", "instructor"])
def crawl(request, browser) -> Crawl:
    if request.param == "learner":
        # Both languages, served together as they are published, so that the language switch is followed: the
        # Chinese pages are checked like the English ones (their players set up, links, axe-core), but their
        # players are not explored again (the same frames from the same executions).
        site, chinese = sitebuild.learner_site(), sitebuild.chinese_site()
        html, prefix = site.html.parent, f"{site.language}/"
        pages = ["index.html"] + _site_pages(site.html, prefix) + _site_pages(chinese.html, f"{chinese.language}/")
        redirects = {prefix + "index.html", f"{chinese.language}/index.html"}
    else:
        site = sitebuild.instructor_site()
        html, prefix = site.html, ""
        pages, redirects = _site_pages(html), {"index.html"}
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
            if path in redirects:  # a redirect to the landing page
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
            visit.player_buttons = [t.strip() for t in page.locator(".tc-player button").all_inner_texts()]
            visit.math_elements = page.locator(".math").count()
            visit.untypeset_math = page.evaluate(
                "() => [...document.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container')).length")
            visit.math_errors = page.locator("mjx-merror").count()
            visit.links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            visit.axe = _axe_violations(page)
            if visit.ready_players and path.startswith(prefix):  # last: the moves change what the page shows
                moves.extend(_explore_players(page, path.removeprefix(prefix)))
            visits.append(visit)
        page.goto(base + prefix + "search.html?q=broadcasting", wait_until="load")
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_selector("#search-results li", timeout=30_000)
        hits = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
        ctx.close()
    return Crawl(html, base, prefix, visits, traffic, hits, moves)


def test_every_page_was_visited(crawl):
    paths = {v.path for v in crawl.visits}
    assert {"index.html"} | {crawl.prefix + p for p in ("index.html", "search.html", "book/intro.html",
                                                         "book/glossary.html", "book/errata.html")} <= paths
    assert any(p.startswith((crawl.prefix + "chapters/", "solutions/")) for p in paths)
    if crawl.prefix:  # the learner site: its Chinese pages too
        assert {"zh/book/intro.html", "zh/search.html", f"zh/chapters/{sitebuild.ZH_TEST_CHAPTER}/"} <= {
            p if not p.startswith("zh/chapters/") else "/".join(p.split("/")[:3]) + "/" for p in paths}


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


def test_players_speak_the_pages_language(crawl):
    with_players = [v for v in crawl.visits if v.ready_players]
    for v in with_players:
        want = "重置" if v.path.startswith("zh/") else "reset"
        assert v.player_buttons and set(v.player_buttons) == {want}, f"{v.path}: player buttons {v.player_buttons}"
    if crawl.prefix:
        assert any(v.path.startswith("zh/") for v in with_players), "no Chinese page with a working player"


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


# Every player explored from its starting state the way a reader can move it, in the page: a slider one step
# left or right (the arrow keys), each offered option of a list, a checkbox's click; then again from each state
# reached (reset, then the moves that led there). Each move's state, picture and message are recorded.
_EXPLORE = """(p) => {
  const data = JSON.parse(p.querySelector('script.tc-player-data').textContent);
  const n = data.axes.length;
  const byKey = {};
  data.frames.forEach(f => { byKey[f.slice(0, n).join(',')] = f; });
  const controls = data.axes.map(a => p.querySelector(`[data-axis='${a.name}']`));
  const reset = p.querySelector('button.tc-player-reset');
  const shown = () => {
    const prefix = 'data:image/png;base64,';
    const src = p.querySelector('img.tc-player-frame').src;
    return {state: p.dataset.state, image: src.startsWith(prefix) ? data.images.indexOf(src.slice(prefix.length)) : -1,
            message: p.querySelector('.tc-player-message').innerHTML};
  };
  const moves = (k) => {  // the moves control k offers now, as functions
    const c = controls[k], a = data.axes[k];
    if (c.disabled) return [];
    if (a.kind === 'checkbox') return [() => c.click()];
    if (a.kind === 'slider') {
      const v = Number(c.value), out = [];
      for (const to of [v - 1, v + 1]) {
        if (to < Number(c.min) || to > Number(c.max)) continue;
        out.push(() => { c.value = String(to); c.dispatchEvent(new Event('input', {bubbles: true})); });
      }
      return out;
    }
    return [...c.options].filter(o => !o.disabled && o.value !== c.value).map(o => () => {
      c.value = o.value; c.dispatchEvent(new Event('change', {bubbles: true}));
    });
  };
  // A path is replayed by the control and the value it chose (the list of offered moves depends on the state).
  const replay = (path) => { reset.click(); path.forEach(([k, v]) => set(k, v)); };
  const set = (k, v) => {
    const c = controls[k];
    if (data.axes[k].kind === 'checkbox') { if (String(c.checked) !== v) c.click(); return; }
    c.value = v;
    c.dispatchEvent(new Event(data.axes[k].kind === 'slider' ? 'input' : 'change', {bubbles: true}));
  };
  const start = shown().state, paths = {[start]: []}, todo = [start], log = [];
  while (todo.length) {
    const from = todo.shift();
    for (let k = 0; k < n; k++) {
      replay(paths[from]);  // the moves of control k are counted in the state they start from
      const count = moves(k).length;
      for (let i = 0; i < count; i++) {
        replay(paths[from]);
        const before = shown();
        const offered = moves(k);
        if (i >= offered.length) {  // replaying the path did not give back the state it once reached
          log.push({axis: data.axes[k].name, from: from, to: before.state, replay_failed: true, others_moved: false,
                    moved: true, changed: true, frame_ok: false, valuetext_ok: true});
          continue;
        }
        offered[i]();
        const after = shown();
        const frame = byKey[after.state];
        const expected = document.createElement('div');
        if (frame) expected.innerHTML = data.messages[frame[n + 1]];
        const a = before.state.split(','), b = after.state.split(',');
        const slider = data.axes[k].kind === 'slider' ? controls[k] : null;
        log.push({axis: data.axes[k].name, from: before.state, to: after.state,
                  others_moved: a.some((v, j) => j !== k && v !== b[j]), moved: a[k] !== b[k],
                  changed: before.image !== after.image || before.message !== after.message,
                  frame_ok: !!frame && after.image === frame[n] && after.message === expected.innerHTML,
                  valuetext_ok: !slider || slider.getAttribute('aria-valuetext') === data.axes[k].labels[+b[k]]});
        if (!(after.state in paths)) {
          const c = controls[k];
          paths[after.state] = [...paths[from], [k, data.axes[k].kind === 'checkbox' ? String(c.checked) : c.value]];
          todo.push(after.state);
        }
      }
    }
  }
  reset.click();
  return {frames: data.frames.map(f => f.slice(0, n).join(',')), reached: Object.keys(paths), log: log,
          axes: data.axes.map(a => a.name)};
}"""


@dataclass
class PlayerExploration:
    page: str
    player: int
    frames: list[str]
    reached: list[str]
    log: list[dict]
    axes: list[str]


def _explore_players(page, path: str) -> list[PlayerExploration]:
    players = page.locator(".tc-player")
    return [PlayerExploration(path, i, **players.nth(i).evaluate(_EXPLORE)) for i in range(players.count())]


# (Errors and requests while the controls move are the crawl's: the tests above check them.)
def test_every_frame_of_every_player_is_reached_one_control_per_move(crawl):
    assert crawl.moves, "no frame player found on the site"
    pages = {m.page for m in crawl.moves}
    assert any(p.startswith(("chapters/01-tensors/", "solutions/01-tensors/")) for p in pages), \
        "chapter 1's widgets have no player"
    for m in crawl.moves:
        unreached = sorted(set(m.frames) - set(m.reached))
        assert not unreached, f"{m.page} #{m.player}: {len(unreached)} of {len(m.frames)} frames unreachable"
        jumps = [f"{e['axis']}: {e['from']} -> {e['to']}" for e in m.log if e["others_moved"]]
        assert not jumps, f"{m.page} #{m.player}: moves that also moved another control: {jumps[:5]}"
        dead = [e for e in m.log if not e["moved"]]
        assert not dead, f"{m.page} #{m.player}: offered moves that changed nothing: {dead[:5]}"


def test_every_control_of_every_player_changes_what_it_shows(crawl):
    for m in crawl.moves:
        silent = [a for a in m.axes if not any(e["changed"] for e in m.log if e["axis"] == a)]
        assert not silent, f"{m.page} #{m.player}: controls that never change the picture or message: {silent}"


def test_every_shown_frame_is_the_one_computed_for_its_state(crawl):
    for m in crawl.moves:
        wrong = [f"{e['axis']}: {e['from']} -> {e['to']}" for e in m.log if not e["frame_ok"]]
        assert not wrong, f"{m.page} #{m.player}: frames or messages not the state's: {wrong[:5]}"


def test_every_slider_announces_its_value(crawl):
    for m in crawl.moves:
        mute = [f"{e['axis']} at {e['to']}" for e in m.log if not e["valuetext_ok"]]
        assert not mute, f"{m.page} #{m.player}: aria-valuetext is not the value's label: {mute[:5]}"


# ----------------------------------------------------------------- accessibility: axe-core on every page

def test_axe_finds_no_wcag_aa_violation_on_any_page(crawl):
    found = [f"{v.path}: {x['id']} ({x['impact']}) at {x['nodes'][:3]}" for v in crawl.visits for x in v.axe]
    assert not found, "axe-core (WCAG 2.1 AA) violations:\n" + "\n".join(found)


# ----------------------------------------------------------------- search: every glossary term, both languages

GLOSSARY = Path(__file__).resolve().parents[2] / "book" / "glossary.yml"
_CJK_WORDS = re.compile(r"[\u3400-\u9fff]+")


def _page_text(page: Path) -> str:
    """A page's article as a reader reads it (what the search index holds): no scripts, styles or tags."""
    html = page.read_text(encoding="utf-8")
    m = re.search(r"<article.*?</article>", html, re.S)
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", m.group(0) if m else html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def _glossary_queries() -> list[tuple[str, re.Pattern]]:
    """Each glossary term as a reader would search it: the English term (its words, as they occur on a page)
    and each Chinese word of the term."""
    import yaml

    queries = []
    for term in yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))["terms"]:
        english = re.sub(r"\s*\(.*?\)", "", term["en"]).strip()
        queries.append((english, re.compile(r"\b" + r"\s+".join(map(re.escape, english.split())) + r"\b", re.I)))
        queries += [(w, re.compile(re.escape(w))) for w in _CJK_WORDS.findall(term["zh"])]
    return queries


@pytest.fixture
def learner_site() -> sitebuild.Site:
    """The session's learner site. By this name, tests/conftest.py keeps a test that uses it on the test worker
    that builds the site (the crawl's learner tests are there too), instead of building it again on another."""
    return sitebuild.learner_site()


def test_search_finds_every_page_that_uses_each_glossary_term(browser, learner_site):
    html = learner_site.html
    pages = {p.relative_to(html).with_suffix("").as_posix(): _page_text(p) for p in html.rglob("*.html")
             if p.relative_to(html).parts[0] in {"book", "chapters"}}
    queries = _glossary_queries()
    with sitebuild.serve(html) as base:
        ctx = offline_context(browser, Traffic())
        page = ctx.new_page()
        page.goto(base + "search.html", wait_until="load")
        # searchtools.js declares `const Search`: a global binding, not a property of window.
        page.wait_for_function("() => typeof Search !== 'undefined' && Search.hasIndex()", timeout=30_000)
        found = page.evaluate("""(queries) => Object.fromEntries(queries.map(q => {
          const parsed = Search._parseQuery(q);
          return [q, Search._performSearch(...parsed).map(r => r[0])];
        }))""", [q for q, _ in queries])
        ctx.close()
    missed = []
    for query, pattern in queries:
        uses = {doc for doc, text in pages.items() if pattern.search(text)}
        if uses - set(found[query]):
            missed.append(f"{query!r}: {sorted(uses - set(found[query]))[:4]} ({len(uses - set(found[query]))} "
                          f"of {len(uses)} pages)")
    assert len(queries) > 100
    assert not missed, "search misses pages that use a glossary term:\n" + "\n".join(missed)


# ----------------------------------------------------------------- search on the Chinese site

#: Words that stand inside Chinese sentences of the Chinese site's own pages (no space around them, not a
#: glossary term), and the pages that hold them: found only if the index cut the sentences into words.
CHINESE_QUERIES = {"令牌": {"book/run-it-yourself"}, "火箭": {"book/intro", "book/run-it-yourself"}}


def test_chinese_search_finds_a_word_inside_a_sentence(browser, learner_site):
    html = sitebuild.chinese_site().html
    for word, docs in CHINESE_QUERIES.items():
        assert all(word in _page_text(html / f"{doc}.html") for doc in docs), f"{word!r} is no longer on {docs}"
    with sitebuild.serve(html) as base:
        ctx = offline_context(browser, Traffic())
        page = ctx.new_page()
        page.goto(base + "search.html?q=" + "令牌", wait_until="load")
        page.wait_for_selector("#search-results li", timeout=30_000)
        shown = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
        page.wait_for_function("() => typeof Search !== 'undefined' && Search.hasIndex()", timeout=30_000)
        found = page.evaluate("""(queries) => Object.fromEntries(queries.map(q => {
          const parsed = Search._parseQuery(q);
          return [q, Search._performSearch(...parsed).map(r => r[0])];
        }))""", list(CHINESE_QUERIES))
        ctx.close()
    assert any("book/run-it-yourself.html" in h for h in shown), f"the search page for 令牌 shows {shown}"
    for word, docs in CHINESE_QUERIES.items():
        assert docs <= set(found[word]), f"search for {word!r} found {found[word]}, not {sorted(docs)}"
