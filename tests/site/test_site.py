"""The learner and instructor sites, checked on the HTML a real build writes (`make book`'s English site here;
its Chinese site in test_site_languages.py).

The browser tests (tests/browser) load the same learner build in Chromium.
"""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path

import pytest
import yaml

from torchcourse.contract import BEGIN_HIDDEN, BEGIN_SOLUTION, is_checks_cell, region_lines, secret_lines, split_regions

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPO = CONFIG["repository"]["url"].removeprefix("https://github.com/").strip("/")
BRANCH = CONFIG["repository"].get("branch", "main")


def toc_files() -> list[str]:
    """Every `file:` of _toc.yml (docnames without suffix), in order."""
    found: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found.insert(0, toc["root"])
    walk(toc.get("parts", []) + toc.get("chapters", []))
    return found


NOTEBOOKS = [f for f in toc_files() if f.startswith("chapters/")]


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


@functools.cache
def _course_site():
    """The site's Sphinx extension (book/_ext is not a package), loaded once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_site", ROOT / "book" / "_ext" / "course_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def executed_cells(site, doc: str, instructor: bool = False) -> list[dict]:
    """The notebook's cells with the outputs the build used, from the build's execution cache.

    (myst-nb 1.4 writes _build/jupyter_execute/*.ipynb without the outputs when it takes them
    from the cache, so the cache itself is the record of what was executed.) The cache is keyed by the
    notebook the site executes, which the site's extension prepares from the source (book/_ext).
    """
    import nbformat
    from jupyter_cache import get_cache

    nb = _course_site().prepared(json.loads((ROOT / f"{doc}.ipynb").read_text(encoding="utf-8")), instructor)
    cache = get_cache(site.out / "_build" / ".jupyter_cache")
    _, merged = cache.merge_match_into_notebook(nbformat.from_dict(nb))
    return [dict(c) for c in merged.cells]


def tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def text_of(page: Path) -> str:
    """A page's visible text, roughly: tags dropped, entities decoded, whitespace collapsed."""
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page.read_text(encoding="utf-8"), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def squashed(page: Path) -> str:
    """A page's text with tags and all whitespace removed: highlighted code reads as its source."""
    body = re.sub(r"<script.*?</script>|<style.*?</style>", "", page.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", body)))


def pages(site_html: Path) -> list[Path]:
    return sorted(p for p in site_html.rglob("*.html") if "_static" not in p.parts)


def test_toc_lists_released_notebooks_that_exist():
    assert NOTEBOOKS, "_toc.yml lists no notebook of chapters/"
    for doc in toc_files():
        assert any((ROOT / f"{doc}{ext}").exists() for ext in (".ipynb", ".md")), f"_toc.yml lists missing {doc}"


def test_every_toc_page_is_built(learner_site):
    for doc in toc_files():
        assert (learner_site.html / f"{doc}.html").is_file(), f"{doc}.html missing from the site"
    for extra in ("index.html", "search.html", "searchindex.js"):
        assert (learner_site.html / extra).is_file()


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_notebook_page_carries_its_executed_outputs(learner_site, doc):
    executed = executed_cells(learner_site, doc)
    code = [c for c in executed if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), f"{doc}: not every code cell was executed"
    for c in code:
        errors = [o for o in c.get("outputs", []) if o["output_type"] == "error"]
        # Only exercise checks may fail (nothing is answered on the site), and quietly.
        if errors:
            assert is_checks_cell(c) and "raises-exception" in tags(c), \
                f"{doc}: a cell that is not an exercise check failed:\n{source(c)[:300]}"
            assert "remove-output" in tags(c), f"{doc}: a failing exercise check would show its traceback"
    shown = [c for c in code if c.get("outputs") and not {"remove-output", "remove-cell"} & set(tags(c))]
    page = (learner_site.html / f"{doc}.html").read_text(encoding="utf-8")
    assert shown, f"{doc}: no cell has a visible output"
    assert page.count('class="cell_output') == len(shown), f"{doc}: the page does not show every executed output"
    for c in shown:  # each printed line of text output is on the page
        for out in c["outputs"]:
            printed = "".join(out.get("text", "")) if out["output_type"] == "stream" else ""
            if printed.strip():
                first = html.escape(printed.strip().splitlines()[0].strip(), quote=False)
                assert first in page, f"{doc}: output {first!r} missing from the page"
    assert "Traceback" not in text_of(learner_site.html / f"{doc}.html")
    assert "highlight-ipythontb" not in page and "output traceback" not in page, f"{doc}: a traceback is shown"


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_widgets_have_frame_players_and_static_stand_ins(learner_site, doc):
    """Every widget is a frame player on the site, and has a picture beside it for print and no-JS readers."""
    page = (learner_site.html / f"{doc}.html").read_text(encoding="utf-8")
    views = page.count('type="application/vnd.jupyter.widget-view+json"')
    assert views == 0, f"{doc}: {views} live widget views on the site, which no kernel will ever answer"
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    outputs = [chunk.split('<div class="cell docutils', 1)[0] for chunk in body.split('<div class="cell_output')[1:]]
    players = sum('<div class="tc-player"' in out for out in outputs)
    stand_ins = sum("<img " in out for out in outputs if '<div class="tc-player"' not in out)
    assert stand_ins >= players, f"{doc}: {players} widgets but {stand_ins} static pictures"
    for out in outputs:  # without JavaScript a player still shows its starting frame and message
        if '<div class="tc-player"' in out:
            assert re.search(r'<img class="tc-player-frame" alt="[^"]+" src="data:image/png;base64,', out)


def _players(site_html: Path) -> list[tuple[str, str, dict]]:
    """Every frame player of the site: (page, widget class path, its data); data["bytes"]: its HTML's size."""
    found = []
    for page in pages(site_html):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r'<div class="tc-player" data-widget="([^"]+)">.*?'
                             r'<script type="application/json" class="tc-player-data">(.*?)</script>', text, re.S):
            data = json.loads(m.group(2))
            data["bytes"] = len(m.group(0).encode())
            found.append((page.relative_to(site_html).as_posix(), m.group(1), data))
    return found


def test_every_widget_of_every_chapter_has_a_player(learner_site):
    import importlib

    from torchcourse.budgets import package_for

    shown = {cls for _, cls, _ in _players(learner_site.html)}
    chapters = sorted({doc.split("/")[1] for doc in NOTEBOOKS})
    declared = {f"{w.module}.{w.cls}" for ch in chapters
                for w in importlib.import_module(package_for(ch)).BUDGETS.widgets}
    assert declared <= shown, f"widgets declared in BUDGETS without a player on the site: {declared - shown}"


def test_each_widgets_frames_stay_within_the_page_weight_budget(learner_site):
    for page, cls, data in _players(learner_site.html):
        assert data["bytes"] <= 2_000_000, f"{page}: {cls} adds {data['bytes'] / 1e6:.2f} MB (budget 2 MB)"


# A widget built with its defaults draws what the notebook's did only where nothing machine-specific goes in.
NOT_REPRODUCIBLE = {"torchcourse.hardware.roofline.RooflineExplorer": "its CPU roof is measured when the notebook runs"}


def test_frames_are_the_widgets_own_core_and_renderer(learner_site):
    """Recompute a few frames per widget with the widget's own frame() and compare them with the page's."""
    import base64
    import importlib

    from torchcourse.frames import png_small

    checked = 0
    for page, path, data in _players(learner_site.html):
        if path in NOT_REPRODUCIBLE:
            continue
        module, cls = path.rsplit(".", 1)
        widget = getattr(importlib.import_module(module), cls)()
        axes, _ = widget.frame_states()
        by_label = [dict(zip(a.labels, a.values)) for a in axes]
        n = len(data["axes"])
        frames = data["frames"]
        for frame in [frames[data["start"]], frames[-1]]:  # the starting state and one the reader moves to
            labels = [a["labels"][i] for a, i in zip(data["axes"], frame[:n])]
            if not all(label in known for label, known in zip(labels, by_label)):
                continue  # a value only this notebook's widget starts at
            png, message = widget.frame({a.name: known[label] for a, known, label in zip(axes, by_label, labels)})
            assert data["messages"][frame[n + 1]] == message, f"{page}: {cls} {labels}: message differs"
            assert data["images"][frame[n]] == base64.b64encode(png_small(png)).decode(), \
                f"{page}: {cls} {labels}: frame differs"
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_exercises_show_a_your_turn_note(learner_site, doc):
    released = cells(ROOT / f"{doc}.ipynb")
    tasks = [c for c in released if str(c["metadata"].get("nbgrader", {}).get("grade_id", "")).endswith("-task")]
    page = (learner_site.html / f"{doc}.html").read_text(encoding="utf-8")
    assert page.count("your-turn") == len(tasks)
    if tasks:
        assert "Your turn" in page


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_download_binder_and_colab_buttons(learner_site, doc):
    page = (learner_site.html / f"{doc}.html").read_text(encoding="utf-8")
    assert f'href="https://mybinder.org/v2/gh/{REPO}/{BRANCH}?urlpath=lab/tree/{doc}.ipynb"' in page
    assert f'href="https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/{doc}.ipynb"' in page
    depth = "../" * doc.count("/")
    assert f'href="{depth}_sources/{doc}.ipynb"' in page
    # The download is the released notebook itself: no solution, no hidden test.
    assert (learner_site.html / "_sources" / f"{doc}.ipynb").read_bytes() == (ROOT / f"{doc}.ipynb").read_bytes()


def test_nothing_from_solutions_reaches_the_learner_site(learner_site):
    assert not (learner_site.html / "solutions").exists()
    for f in learner_site.html.rglob("*"):
        if f.is_file() and f.suffix in {".html", ".ipynb", ".js", ".txt"} and "_static" not in f.parts:
            body = f.read_text(encoding="utf-8", errors="replace")
            assert BEGIN_SOLUTION not in body and BEGIN_HIDDEN not in body, f"{f} leaks solutions"


def test_no_page_refers_to_an_external_script_style_or_image(learner_site):
    tag = re.compile(r"<(?:script|link|img|iframe|source|video|audio)\b[^>]*>", re.S)
    for page in pages(learner_site.html):
        for t in tag.findall(page.read_text(encoding="utf-8")):
            if t.startswith("<link") and re.search(r'rel="(?:canonical|alternate)"', t):
                continue
            assert not re.search(r'(?:src|href)="(?:https?:)?//', t), f"{page.name}: {t}"


def test_glossary_lists_every_term_and_links_only_written_pages(learner_site):
    terms = yaml.safe_load((ROOT / "book" / "glossary.yml").read_text(encoding="utf-8"))["terms"]
    page = learner_site.html / "book" / "glossary.html"
    body = page.read_text(encoding="utf-8")
    rows = re.findall(r"<tr class=\"row-(?:odd|even)\">(.*?)</tr>", body, flags=re.S)
    assert len(rows) == len(terms) + 1  # + the header row
    written = {int(d.split("/")[1][:2]) for d in NOTEBOOKS}
    for term in terms:
        row = next(r for r in rows if f"<strong>{html.escape(term['en'], quote=False)}</strong>" in r)
        # Chinese runs are wrapped in their own <span lang="zh">, so the row is compared without tags or spaces.
        row_text = re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", row)))
        assert re.sub(r"\s+", "", term["zh"]) in row_text, (term["en"], row_text)
        if term["chapter"] not in written:
            assert f"taught in chapter {term['chapter']}" in row and "href" not in row
    assert len(re.findall(r'href="\.\./chapters/', "".join(rows))) >= 5  # chapter 1's terms link to its pages


def test_errata_page_has_every_row(learner_site):
    errata = yaml.safe_load((ROOT / "book" / "errata.yml").read_text(encoding="utf-8"))["errata"]
    # The syllabus's E1-E21, then rows the chapters added; none dropped, none skipped.
    assert len(errata) >= 21 and [e["id"] for e in errata] == [f"E{i}" for i in range(1, len(errata) + 1)]
    body = (learner_site.html / "book" / "errata.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr class=\"row-(?:odd|even)\">(.*?)</tr>", body, flags=re.S)[1:]
    assert [re.sub(r"<[^>]+>", "", r).split()[0] for r in rows] == [e["id"] for e in errata]
    written = {int(d.split("/")[1][:2]) for d in NOTEBOOKS}
    for e, row in zip(errata, rows):
        if e["chapter"] not in written:
            assert f"taught in chapter {e['chapter']}" in row and "href" not in row
        # the note's own words beside it: each fragment (its code spans shown as code)
        shown = html.unescape(re.sub(r"<[^>]+>", "", row))
        assert all(q.replace("`", "") in shown for q in e.get("quote", [])), (e["id"], shown)
        assert all("<code" in row for q in e.get("quote", []) if "`" in q or not re.search("[\u4e00-\u9fff]", q)), row
        assert ("Source text (" if e.get("quote") else "Not in the published source text.") in shown


def test_landing_page_maps_all_four_chapters(learner_site):
    text = text_of(learner_site.html / "book" / "intro.html")
    for chapter in ("Chapter 1: Tensors", "Chapter 2: Autograd", "Chapter 3: Parallel computing",
                    "Chapter 4: AI hardware", "How to start", "Who it is for", "Licence", "CC BY 4.0", "MIT"):
        assert chapter in text


def test_unchanged_rebuild_executes_nothing(learner_site):
    from tests.helpers import site as sitebuild

    if not learner_site.log:
        pytest.skip("TORCHCOURSE_PREBUILT_SITE: no build in this session")
    again = sitebuild.learner_build(learner_site.out, learner_site.language)
    assert "Executing notebook" not in again.log, "a rebuild with no change re-executed a notebook"
    log = re.sub(r"\x1b\[[0-9;]*m", "", again.log)
    assert not re.search(r"reading sources\.\.\. \[[ \d%]+\] chapters/", log), "an unchanged notebook was re-read"


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_every_solution_notebook_runs_without_error(instructor_site, doc):
    """The instructor build executes each solution notebook whole, hidden tests included: every code cell
    runs and nothing raises, so every check passes on the reference solution. (Each released notebook is
    executed live, widgets and all, by tests/notebooks/test_execute.py.)"""
    sdoc = "solutions/" + doc.removeprefix("chapters/")
    executed = executed_cells(instructor_site, sdoc, instructor=True)
    code = [c for c in executed if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), f"{sdoc}: not every code cell was executed"
    failed = [(i, o["ename"], o["evalue"]) for i, c in enumerate(executed) for o in c.get("outputs", [])
              if o["output_type"] == "error"]
    assert failed == [], f"{sdoc}: {failed}"
    assert any(is_checks_cell(c) for c in executed), f"{sdoc} has no autograded exercise"


def test_instructor_site_shows_solutions_and_hides_hidden_tests(instructor_site):
    assert not (instructor_site.html / "_sources").exists(), "notebook sources (with hidden tests) were copied"
    assert not (instructor_site.html / "chapters").exists()
    checked = 0
    for doc in NOTEBOOKS:
        sdoc = "solutions/" + doc.removeprefix("chapters/")
        text = squashed(instructor_site.html / f"{sdoc}.html")
        notebook = cells(ROOT / f"{sdoc}.ipynb")
        # The contract's rule over the whole notebook: a hidden line also shown elsewhere is no secret.
        sources = [source(c) for c in notebook]
        # (and a line that is also a line of a solution, which this site shows, is shown as that)
        hidden_lines = secret_lines(sources, kinds={"hidden"}) - region_lines(sources, {"solution"})[0]
        # (squashed, as the page is: a hidden line the visible checks hold across two lines is shown too)
        shown = re.sub(r"\s+", "", "".join(line for src in sources for kind, line in split_regions(src)
                                           if kind != "hidden"))
        for c in notebook:
            regions = split_regions(source(c))
            solution = [line.strip() for kind, line in regions if kind == "solution" and line.strip()]
            for line in solution:
                assert re.sub(r"\s+", "", line) in text, f"{sdoc}: solution line {line!r} not shown"
            # The page is searched as one squashed string, so only distinctive lines can be looked for:
            # long ones that are not part of a line the page shows anyway.
            for line in {ln for ln in hidden_lines if len(ln) > 25 and re.sub(r"\s+", "", ln) not in shown} & {
                    ln.strip() for kind, ln in regions if kind == "hidden"}:
                assert re.sub(r"\s+", "", line) not in text, f"{sdoc}: hidden test line {line!r} shown"
            checked += bool(solution) + any(kind == "hidden" for kind, _ in regions)
        assert "instructorview" in text
    assert checked, "no exercise found in solutions/"
    for f in instructor_site.html.rglob("*"):
        if f.is_file() and f.suffix in {".html", ".js", ".ipynb", ".txt"} and "_static" not in f.parts:
            assert BEGIN_HIDDEN not in f.read_text(encoding="utf-8", errors="replace"), f


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_a_page_reads_well_without_help(learner_site, doc):
    """What every notebook page gives a reader: players that say what they are; no ipywidgets manager where no
    live widget is; every picture described in words; Chinese marked as Chinese; guesses before answers."""
    page = (learner_site.html / f"{doc}.html").read_text(encoding="utf-8")
    from torchcourse.frames import PLAYER_ABOUT, PLAYER_NO_SCRIPT

    players = page.count('<div class="tc-player"')
    assert page.count(html.escape(PLAYER_ABOUT, quote=False)) == players, f"{doc}: a player does not say what it is"
    assert page.count(PLAYER_NO_SCRIPT) == players, f"{doc}: a player does not say its controls need JavaScript"
    for heavy in ("embed-amd.js", "require.js", "application/vnd.jupyter.widget-state+json"):
        assert heavy not in page, f"{doc}: loads {heavy}, which only a live widget view would use"
    for alt in re.findall(r'<img [^>]*?alt="([^"]*)"', page):
        assert alt and not alt.endswith(".png"), f"{doc}: a picture whose alt text is {alt!r}"
    # The article (the navigation's chapter captions are the theme's); a player's message is the widget's HTML.
    article = re.search(r"<article.*?</article>", page, re.S).group(0)
    article = re.sub(r"<(script|style|pre)\b.*?</\1>|<div class=\"tc-player-message\">.*?</div>", "", article,
                     flags=re.S)
    unmarked = [run for run in re.findall(r">([^<]*[\u4e00-\u9fff][^<]*)<", article)
                if not re.search(r'lang="zh"[^>]*>' + re.escape(run) + "<", article)]
    assert not unmarked, f"{doc}: Chinese text not marked lang=zh: {unmarked[:3]}"
    executed = executed_cells(learner_site, doc)
    prompts = [c for c in executed if c["cell_type"] == "markdown" and "Predict, then run" in source(c)]
    folded = [c for c in executed if c["cell_type"] == "code" and "hide-output" in tags(c)]
    assert len(folded) >= (1 if prompts else 0), f"{doc}: {len(prompts)} predictions, no output folded"
    assert page.count("tag_hide-output") == len(folded), f"{doc}: a folded output is not folded on the page"
