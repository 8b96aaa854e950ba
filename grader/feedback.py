"""feedback: per-student HTML from the autograded notebooks, with no hidden-test source in it.

A page shows the scores with the judge's learner-safe reasons, the learner's own code, and
the outputs of the cells that ran before the first checks cell: from there on learner code
could have printed what it saw of the hidden cases (the arguments it was called with), so
those outputs are not shown (grader/README.md, "Threat model"). Hidden blocks are cut from
test cells and emitted values are dropped. Hidden blocks run in the grader's checker, never in
the learner's process, so nothing the learner's run printed can carry their source or the seed:
every honest student gets every page.

A page is in the language of the notebook submitted: the autograded notebook of a translated release keeps
that release's text (grader/sanitise.py), and the page's `lang` says which (what a screen reader reads it in,
and what a browser picks fonts and line breaks by).
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

import nbformat

from grader.course import Course
from grader.htmlsafe import safe_html
from grader.limits import FEEDBACK_CELLS, FEEDBACK_CHARS
from grader.record import GradeRecord, load_record, unusable
from grader.sanitise import submitted_language
from torchcourse.contract import (
    BEGIN_HIDDEN,
    EMIT_MIME,
    END_HIDDEN,
    is_checks_cell,
    split_regions,
)
from torchcourse.i18n import N_, speaking
from torchcourse.i18n import gettext as _

STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto}.pass{color:#176f2c}.fail{color:#b3261e}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}"""


HIDDEN_NOTE = N_("(Outputs of the graded run are shown up to the first graded checks only: from there on, code "
                 "could have printed the hidden cases. Your scores and the checks' messages are above.)\n")


def _strip(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    hidden_ran = False
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if EMIT_MIME not in o.get("data", {})]
            if is_checks_cell(cell) and not hidden_ran:
                hidden_ran = True
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=_(HIDDEN_NOTE))]
            elif hidden_ran:  # whatever learner code printed once hidden code had been in its process
                cell.outputs = []
        if is_checks_cell(cell):
            cell.source = _without_hidden(cell.source)
            for o in cell.outputs:
                if o.get("output_type") == "error":
                    o["traceback"] = [f"{o.get('ename')}: {o.get('evalue')}"]
    return nb


def _text_size(cell) -> int:
    """Characters of a cell's source and its outputs' text (images aside: they cost their bytes, no more)."""
    size = len(cell.source)
    for o in cell.get("outputs", []):
        size += len(o.get("text", "")) + sum(len(t) for t in o.get("traceback", [])) + len(o.get("evalue", ""))
        size += sum(len(v) for k, v in o.get("data", {}).items() if type(v) is str and not k.startswith("image/"))
    return size


def _fit_page(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The cells a page shows: at most FEEDBACK_CELLS, with at most FEEDBACK_CHARS of text in all (a chapter's
    notebook has about 50 cells and 36 KB). nbconvert's rendering and bleach's cleaning of the page (quadratic in
    the siblings and nesting of what it parses) then take bounded time and memory, whatever a notebook holds."""
    left = FEEDBACK_CHARS
    for k, cell in enumerate(nb.cells):
        left -= _text_size(cell)
        if k >= FEEDBACK_CELLS or left < 0:
            note = _("(Cells {first} to {last} are not shown: a feedback page shows at most {cells} cells and "
                     "{kib} KiB of text.)").format(first=k + 1, last=len(nb.cells), cells=FEEDBACK_CELLS,
                                                   kib=FEEDBACK_CHARS // 1024)
            nb.cells = nb.cells[:k] + [nbformat.v4.new_markdown_cell(note)]
            break
    return nb


def _without_hidden(source: str) -> str:
    """A checks cell with each hidden block (markers included) replaced by one line saying so."""
    kept = []
    for kind, line in split_regions(source):
        text = line.strip()
        if kind == "hidden" or text.startswith(END_HIDDEN):
            continue
        kept.append(_("# (graded checks with more cases ran here; they are not shown)")
                    if text.startswith(BEGIN_HIDDEN) else line)
    return "\n".join(kept) + "\n"


def _summary(record: GradeRecord, notebook: str) -> str:
    rows = []
    for e in record.exercises:
        if e.notebook != notebook:
            continue
        cls = "pass" if e.score == e.max_points else "fail"
        note = e.reason if e.status != "passed" else _("passed")
        rows.append(f"<tr><td>{html.escape(e.grade_id)}</td><td class='{cls}'>{e.score:g} / {e.max_points:g}"
                    f"</td><td>{html.escape(note)}</td></tr>")
    # (gettext's extractor does not look inside f-strings: every message is a plain literal)
    title, more = _("Your scores"), _("Graded checks include more cases than the visible ones in your notebook.")
    head = "".join(f"<th>{html.escape(_(name))}</th>" for name in (N_("exercise"), N_("score"), N_("note")))
    return (f"<h2>{html.escape(title)}</h2><table><tr>{head}</tr>" + "".join(rows) + "</table>"
            f"<p>{html.escape(more)}</p>")


def page_language(nb: nbformat.NotebookNode) -> str:
    """The page's `lang` (a BCP 47 tag): the notebook's language where the course has it, else English."""
    language = submitted_language(nb)
    return language.replace("_", "-") if language else "en"


def feedback(course: Course, chapter: str, students: list[str] | None = None) -> list[Path]:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="basic")
    written = []
    for student in students or course.students(chapter):
        record = load_record(course, student, chapter)
        if record is None:
            if why := unusable(course, student, chapter):
                print(f"feedback: {why}", file=sys.stderr)
            continue
        for nb_path in sorted((course.autograded / student / chapter).glob("*.ipynb")):
            try:
                nb = nbformat.read(str(nb_path), as_version=4)
                lang = page_language(nb)
                with speaking(submitted_language(nb) or "en"):  # the page's own words in the language submitted
                    nb = _fit_page(_strip(nb))
            except Exception as exc:  # a truncated or hand-edited file: this page only, never the class's
                print(f"feedback: not written for {student}/{nb_path.stem}: autograded/{student}/{chapter}/"
                      f"{nb_path.name} cannot be read ({type(exc).__name__}); run `python -m grader autograde "
                      f"{chapter} --force --student {student}` to write it again", file=sys.stderr)
                continue
            body = safe_html(exporter.from_notebook_node(nb)[0])  # no learner script in the page (issue 17)
            with speaking(submitted_language(nb) or "en"):
                total = _("{student}: {score} / {max_score} for the chapter.").format(
                    student=student, score=f"{record.score:g}", max_score=f"{record.max_score:g}")
                page = (f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>"
                        f"{html.escape(chapter)} · {html.escape(nb_path.stem)}</title><style>{STYLE}</style></head>"
                        f"<body><h1>{html.escape(chapter)}: {html.escape(nb_path.stem)}</h1>"
                        f"<p>{html.escape(total)}</p>{_summary(record, nb_path.stem)}<hr>{body}</body></html>")
            out = course.feedback / student / chapter / f"{nb_path.stem}.html"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(page, encoding="utf-8")
            written.append(out)
    return written
