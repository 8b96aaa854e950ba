"""No learner script runs in anyone's browser: what the grader shows (feedback pages, the autograded
notebooks formgrader renders) is sanitised with maintained libraries, never a hand-written filter.

* `safe_notebook(nb)`: nbconvert's own `SanitizeHTML` preprocessor (bleach) over every cell. HTML and
  Markdown outputs and markdown/raw cells are cleaned to inert tags; every output type that could run
  code when rendered (JavaScript, SVG, widget views, any MIME type not known to be inert) is dropped.
  Notebook-level widget state, which nbconvert would turn into script tags, is dropped too.
* `safe_html(html)`: bleach over a page body nbconvert rendered, with the same inert tags plus the
  ones nbconvert's own layout uses; images only as PNG/JPEG data.
"""

from __future__ import annotations

import bleach
from bleach.css_sanitizer import CSSSanitizer
from nbformat import NotebookNode

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


def safe_notebook(nb: NotebookNode) -> NotebookNode:
    """`nb`, changed in place and returned, as nbconvert's SanitizeHTML leaves it with the allowlists above."""
    from nbconvert.preprocessors.sanitize import SanitizeHTML

    step = SanitizeHTML(tags=sorted(TAGS), attributes=_attribute, strip=True, styles=[],
                        safe_output_keys=SAFE_OUTPUT_KEYS, sanitized_output_types={"text/html", "text/markdown"})
    nb.get("metadata", {}).pop("widgets", None)  # nbconvert writes widget state into script tags
    for cell in nb.cells:
        for att in (cell.get("attachments") or {}).values():  # images in markdown: PNG/JPEG only, never SVG
            for key in [k for k in att if k not in ("image/png", "image/jpeg")]:
                del att[key]
    nb, _ = step.preprocess(nb, {})
    return nb
