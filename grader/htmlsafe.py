"""No learner script runs in anyone's browser: what the grader shows (feedback pages, the autograded
notebooks formgrader renders) is sanitised with maintained libraries, never a hand-written filter.

* `safe_notebook(nb)`: nbconvert's own `SanitizeHTML` preprocessor (bleach) over every cell. HTML and
  Markdown outputs and markdown/raw cells are cleaned to inert tags; every output type that could run
  code when rendered (JavaScript, SVG, widget views, any MIME type not known to be inert) is dropped.
  Notebook-level widget state, which nbconvert would turn into script tags, is dropped too.
* `safe_html(html)`: bleach over a page body nbconvert rendered, with the same inert tags plus the
  ones nbconvert's own layout uses; images only as PNG/JPEG data.
* Markdown (markdown cells, text/markdown outputs): cleaning its source as HTML cannot see what Markdown
  makes of it: links (nbconvert's renderer, the one formgrader uses, lets `javascript:` URLs through) and
  HTML split at a blank line (a tag's attribute left open swallows the next tag's text as attributes, an
  `onfocus` among them). Markdown whose rendering bleach would change is stored as that rendering, cleaned
  by `safe_html`, in one HTML block that Markdown passes through unchanged (it shows the same). The chapter's
  own markdown cells (their text is one of its solutions') are not the learner's and are left as they are.
"""

from __future__ import annotations

import html as _html
import re
from functools import lru_cache

import bleach
from bleach.css_sanitizer import CSSSanitizer
from nbformat import NotebookNode

from grader.limits import HTML_BUDGET, HTML_CHARS
from torchcourse.contract import EMIT_MIME

# Inert tags: structure, text and tables (pandas, the course's own HTML tables). No script, style, iframe,
# object, embed, form, svg, math, link, meta or base.
TAGS = frozenset(bleach.ALLOWED_TAGS) | {
    "div", "span", "p", "br", "hr", "pre", "code", "kbd", "samp", "sub", "sup", "small", "del", "ins", "mark",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption",
    "colgroup", "col", "dl", "dt", "dd", "img", "details", "summary", "figure", "figcaption", "tt", "u", "s",
}
IMAGE_DATA = ("data:image/png;base64,", "data:image/jpeg;base64,")
# Output MIME types shown as they are: none can run code when rendered.
SAFE_OUTPUT_KEYS = {"metadata", "text/plain", "text/latex", "application/json", "image/png", "image/jpeg", EMIT_MIME}


def _attribute(tag: str, name: str, value: str) -> bool:
    """Attributes kept: layout and text ones; links by bleach's protocol list; images only as inline PNG/JPEG.
    Every event handler (on*) and every style, srcdoc, formaction ... is dropped."""
    if name in ("class", "title", "id", "lang", "dir"):
        return True
    if tag == "a":
        return name in ("href", "name")
    if tag == "img":
        return name in ("alt", "width", "height") or (name == "src" and value.startswith(IMAGE_DATA))
    if tag in ("td", "th"):
        return name in ("colspan", "rowspan", "align")
    return tag in ("ol", "li") and name in ("start", "value")


_CLEANER = bleach.Cleaner(tags=TAGS, attributes=_attribute, protocols={"http", "https", "mailto", "data"},
                          strip=True, strip_comments=True, css_sanitizer=CSSSanitizer(allowed_css_properties=()))


def safe_html(html: str) -> str:
    """`html` with only inert tags and attributes left (text of removed tags is kept, escaped)."""
    return _CLEANER.clean(html)


# What nbconvert's SanitizeHTML passes to `bleach.clean` on every call (which builds a new Cleaner each time),
# as one Cleaner: bleach's default protocols, comments stripped, no CSS property allowed.
_NOTEBOOK_CLEANER = bleach.Cleaner(tags=sorted(TAGS), attributes=_attribute, protocols=bleach.ALLOWED_PROTOCOLS,
                                   strip=True, strip_comments=True,
                                   css_sanitizer=CSSSanitizer(allowed_css_properties=[]))
CACHED_CHARS = 64 * 1024  # longer strings are cleaned each time (the cache holds at most 1024 entries)


@lru_cache(maxsize=1024)
def _clean_cached(text: str) -> str:
    return _NOTEBOOK_CLEANER.clean(text)


def _notebook_clean(text):
    """SanitizeHTML's cleaning, remembered: cleaning is a pure function of the text, and a chapter's markdown
    cells (the lesson's prose) and common HTML outputs are the same in every submission."""
    if type(text) is str and len(text) <= CACHED_CHARS:
        return _clean_cached(text)
    return _NOTEBOOK_CLEANER.clean(text)


@lru_cache(maxsize=1)
def _sanitizer():
    """nbconvert's SanitizeHTML with the allowlists above, made once: its traits are only read by `preprocess`,
    and making one (traitlets validating each trait) is a measurable part of each notebook's cleaning."""
    from nbconvert.preprocessors.sanitize import SanitizeHTML

    class Sanitize(SanitizeHTML):
        def sanitize_html_tags(self, html_str):  # the same cleaning, one Cleaner, remembered
            return _notebook_clean(html_str)

    return Sanitize(tags=sorted(TAGS), attributes=_attribute, strip=True, styles=[],
                    safe_output_keys=SAFE_OUTPUT_KEYS, sanitized_output_types={"text/html", "text/markdown"})


_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _render_markdown(text: str, attachments: dict | None = None) -> str:
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    return MarkdownWithMath(renderer=IPythonRenderer(escape=False, attachments=attachments)).render(text)


def _inert_markdown(text: str, attachments: dict | None = None) -> str:
    """`text` (Markdown, its HTML already cleaned) as it is when its rendering is already as `safe_html` leaves it;
    else that rendering cleaned by `safe_html`, as one HTML block (no blank line in it: `&#10;` is the same
    newline), which Markdown renders as is. If it would not (checked), or cannot be rendered, the text escaped."""
    escaped = as_text(text, HTML_CHARS)
    try:
        rendered = _render_markdown(text, attachments)
    except Exception:  # e.g. a missing attachment: nbconvert could not render it in formgrader either
        return escaped
    cleaned = safe_html(rendered)
    if cleaned == rendered:  # already as bleach leaves it: formgrader renders the same clean HTML
        return text
    block = "<div>" + _BLANK_LINE.sub("\n&#10;", cleaned).strip() + "</div>"
    if _BLANK_LINE.search(block) or _render_markdown(block).strip() != block:
        return escaped
    return block


@lru_cache(maxsize=1024)
def _inert_markdown_cached(text: str) -> str:
    return _inert_markdown(text)


def _markdown(text, attachments: dict | None = None):
    if type(text) is not str:
        return text
    if attachments or len(text) > CACHED_CHARS:
        return _inert_markdown(text, attachments)
    return _inert_markdown_cached(text)


def as_text(text: str, shown: int = 2000) -> str:
    """The start of `text` as inert HTML: escaped, on one line (so Markdown passes it through as it is)."""
    cut = f"[{len(text) - shown} more characters not shown by the grader]" if len(text) > shown else ""
    body = _html.escape(text[:shown] + cut).replace("\r", "&#13;").replace("\n", "&#10;")
    return f"<pre>{body}</pre>"


def _bounded(nb: NotebookNode) -> None:
    """Every text SanitizeHTML cleans and Markdown renders, as it is while it fits `HTML_CHARS` and the notebook's
    `HTML_BUDGET`; else its start, as text: cleaning then takes bounded time (see grader/limits.py)."""
    left = HTML_BUDGET

    def fit(text):
        nonlocal left
        if type(text) is not str or (len(text) <= HTML_CHARS and len(text) <= left):
            left -= len(text) if type(text) is str else 0
            return text
        return as_text(text)

    for cell in nb.cells:
        if cell.get("cell_type") in ("markdown", "raw"):
            cell["source"] = fit(cell.get("source"))
        for out in cell.get("outputs") or []:
            data = out.get("data") if isinstance(out, dict) else None
            for key in ("text/html", "text/markdown"):
                if isinstance(data, dict) and key in data:
                    data[key] = fit(data[key])


def safe_notebook(nb: NotebookNode, course_markdown: frozenset[str] = frozenset()) -> NotebookNode:
    """`nb`, changed in place and returned, as nbconvert's SanitizeHTML leaves it with the allowlists above.
    A markdown cell whose text is one of `course_markdown` (the chapter's own, from its solution notebooks) holds
    no learner's Markdown: it is not rendered to be checked (that was a large part of a batch's first notebook)."""
    course_cells = {i for i, c in enumerate(nb.cells) if c.get("cell_type") == "markdown"
                    and type(c.get("source")) is str and c["source"] in course_markdown}
    step = _sanitizer()
    nb.get("metadata", {}).pop("widgets", None)  # nbconvert writes widget state into script tags
    for cell in nb.cells:
        for att in (cell.get("attachments") or {}).values():  # images in markdown: PNG/JPEG only, never SVG
            for key in [k for k in att if k not in ("image/png", "image/jpeg")]:
                del att[key]
    _bounded(nb)
    nb, _ = step.preprocess(nb, {})
    for i, cell in enumerate(nb.cells):  # what formgrader renders with Markdown: its links and images, checked
        if cell.get("cell_type") == "markdown" and i not in course_cells:
            cell["source"] = _markdown(cell.get("source"), cell.get("attachments") or None)
        for out in cell.get("outputs") or []:
            data = out.get("data") if isinstance(out, dict) else None
            if isinstance(data, dict) and "text/markdown" in data:
                data["text/markdown"] = _markdown(data["text/markdown"])
    return nb
