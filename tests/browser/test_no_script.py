"""No learner script runs in anyone's browser.

One real autograde run of a correct submission whose notebook also shows, from the sandbox, a <script>,
an <img onerror=...>, a JavaScript output, an SVG with onload and <script>, Markdown output with an
onerror image, and a markdown cell with a script, an onerror image and a javascript: link. Chromium then
loads the feedback page and the autograded notebook rendered with formgrader's own nbconvert template,
and every payload, had it run, would have left its name in `window.__pwned`. A control page (the same
outputs, not sanitised, rendered the same way) shows that the payloads do run when nothing stops them.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from tests.helpers.browser import Traffic, offline_context
from tests.helpers.course import CASES, CHAPTER, fixture_course, submit

# It runs the sandbox, so it goes with the grader's tests (tests/conftest.py): they check that no sandbox
# process is left running, which another test's sandbox on a parallel xdist worker would break.
pytestmark = [pytest.mark.browser, pytest.mark.grading, pytest.mark.xdist_group("grader")]

PWN = "window.__pwned = (window.__pwned || []).concat"
# A Markdown link is made by Markdown, after the source was cleaned as HTML; nbconvert's renderer (formgrader's)
# keeps javascript: URLs, also behind an entity or in a reference definition.
JS_LINK = "javascript:window.__pwned=(window.__pwned||[]).concat"
CODE = f'''from IPython.display import display, HTML, Javascript, SVG, Markdown
display(HTML("<b>bold</b><script>{PWN}(['html-script'])</script><img src=x onerror=\\"{PWN}(['onerror'])\\">"))
display(Javascript("{PWN}(['javascript-mime'])"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="{PWN}([\\'svg-onload\\'])">'
            '<script>{PWN}([\\'svg-script\\'])</script><circle r="5"/></svg>'))
display(Markdown("<img src=y onerror=\\"{PWN}(['markdown-output'])\\">"))
display(Markdown("[a markdown link]({JS_LINK}(['markdown-output-link']))"))
print("payloads shown")
'''
MARKDOWN = (f"[a javascript link]({JS_LINK}(['md-link'])) "
            f"[an entity link](javascript&#58;{JS_LINK[11:]}(['md-entity'])) "
            f"[a reference link][r]\n\n[r]: {JS_LINK}(['md-ref'])\n\n"
            f"A note <script>{PWN}(['markdown-cell'])</script> <img src=z onerror=\"{PWN}(['markdown-img'])\"> "
            f"[a link](javascript:{PWN}(['js-link']))")
# Clean as HTML, but Markdown ends the <p> block at the blank line inside its title: the attribute left open takes
# the <i>'s title text as the <p>'s attributes, focused at once.
SPLIT = f'<p title="\n\n"></p>\n\n<i title=" autofocus tabindex=1 onfocus={JS_LINK[11:]}([\'md-split\'])// ">i</i>'


def _formgrader_html(nb) -> str:
    """The notebook as formgrader renders it: nbconvert's HTMLExporter with nbgrader's 'formgrade' template."""
    from pathlib import Path

    import nbgrader.server_extensions.formgrader as fg
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    cfg = Config()
    cfg.HTMLExporter.template_name = "formgrade"
    cfg.HTMLExporter.extra_template_basedirs = [str(Path(fg.__file__).parent / "templates")]
    resources = {"base_url": "", "index": 0, "total": 1, "notebook_id": "a-basics", "assignment_id": CHAPTER,
                 "submission_id": "x", "student": "s", "mathjax_url": "", "last_name": "", "first_name": ""}
    body, _ = HTMLExporter(config=cfg).from_notebook_node(nb, resources=resources)
    return body


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.feedback import feedback
    from grader.sandbox import Limits

    root = fixture_course(tmp_path_factory.mktemp("noscript"))
    nb = nbformat.read(str(CASES / "honest-correct.ipynb"), as_version=4)
    nb.cells += [nbformat.v4.new_code_cell(CODE), nbformat.v4.new_markdown_cell(MARKDOWN),
                 nbformat.v4.new_markdown_cell(SPLIT)]
    src = tmp_path_factory.mktemp("src") / "a-basics.ipynb"
    nbformat.write(nb, str(src))
    submit(root, "alice", {"a-basics.ipynb": src, "b-more.ipynb": CASES / "correct-b-more.ipynb"})
    course = Course(root)
    out = autograde(course, CHAPTER, workers=1, progress=False, limits=Limits(cell_timeout=20, budget=120))
    assert out["alice"]["score"] == 6.0, out["alice"]
    graded = nbformat.read(str(course.autograded / "alice" / CHAPTER / "a-basics.ipynb"), as_version=4)
    shown = [c for c in graded.cells if c.cell_type == "code" and "payloads shown" in json.dumps(c.outputs)]
    assert shown, "the payload cell did not run in the sandbox"
    [page] = [p for p in feedback(course, CHAPTER) if p.stem == "a-basics"]
    formgrader = root / "formgrader-a-basics.html"
    formgrader.write_text(_formgrader_html(graded), encoding="utf-8")
    # The control: the same outputs as the sandbox returned them, rendered the same way, not sanitised.
    control = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(MARKDOWN), nbformat.v4.new_markdown_cell(
        SPLIT), nbformat.v4.new_code_cell(
        CODE, outputs=[nbformat.v4.new_output("display_data", data=d) for d in (
            {"text/html": f"<script>{PWN}(['html-script'])</script><img src=x onerror=\"{PWN}(['onerror'])\">"},
            {"application/javascript": f"{PWN}(['javascript-mime'])"},
            {"image/svg+xml": f"<svg xmlns='http://www.w3.org/2000/svg'><script>{PWN}(['svg-script'])</script></svg>"},
            {"text/markdown": f"[a markdown link]({JS_LINK}(['markdown-output-link']))"},
        )])])
    unsafe = root / "control.html"
    unsafe.write_text(_formgrader_html(control), encoding="utf-8")
    return {"feedback": page, "formgrader": formgrader, "control": unsafe, "shown": shown[0]}


def _ran(browser, path) -> list[str]:
    traffic = Traffic()
    ctx = offline_context(browser, traffic)
    try:
        page = ctx.new_page()
        page.set_content(path.read_text(encoding="utf-8"))  # about:blank: the offline context refuses file://
        page.wait_for_timeout(300)  # onerror/onload handlers fire after load
        for link in page.locator("a").all():  # a javascript: link runs only when clicked
            href = link.get_attribute("href") or ""
            if href.lower().startswith("javascript:"):
                link.click()
        page.wait_for_timeout(200)  # a javascript: URL runs a moment after its click
        return page.evaluate("window.__pwned || []")
    finally:
        ctx.close()


def test_no_learner_script_runs_on_the_feedback_page_or_in_formgraders_view(pages, browser):
    # (The JavaScript output needs formgrader's jQuery, absent offline, and nbconvert already cleans inline SVG;
    # both are checked below as dropped from the outputs.)
    ran = set(_ran(browser, pages["control"]))
    assert ran >= {"html-script", "onerror", "markdown-cell", "markdown-img", "md-link", "md-entity", "md-ref",
                   "markdown-output-link", "md-split"}, ran
    assert _ran(browser, pages["feedback"]) == []
    assert _ran(browser, pages["formgrader"]) == []
    # What is left of the outputs is inert: HTML text kept, script MIME types and SVG dropped.
    kinds = {k for o in pages["shown"].outputs for k in o.get("data", {})}
    assert "text/html" in kinds and not kinds & {"application/javascript", "image/svg+xml"}
    text = pages["feedback"].read_text() + pages["formgrader"].read_text()
    assert "<b>bold</b>" in text and "<script>window.__pwned" not in text and "<img src=x onerror" not in text
