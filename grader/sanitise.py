"""The trusted step before any learner code runs: nbgrader's own preprocessors on one notebook.

Test and locked cells are restored from the gradebook, missing test cells re-inserted,
retyped cells retyped back, the kernelspec reset and outputs cleared. Before that, a
small pre-pass makes a damaged notebook cost only what is damaged:

* cells that only *claim* to be graded (an unknown grade id, or a second copy of a known
  one) become ordinary learner cells; of several copies, the one nearest after its answer
  is graded, so a copy pasted above the answer costs an honest learner nothing;
* a cell nbformat cannot read (not a cell, metadata or source of the wrong type) is made readable
  before nbformat reads the notebook, one line each;
* a cell's nbgrader metadata is rebuilt from the gradebook, so an extra or invalid key is
  one line in the notes, not a notebook that nbgrader refuses;
* a test cell whose metadata was stripped is recognised by its visible source; a test cell
  that is gone is put back after the nearest cell of the source that is still there (or
  before the next one), so deleting one whole exercise costs that exercise only;
* a notebook with none of the chapter's cells is "not this chapter's notebook".

A notebook of a translated release (its ``metadata.torchcourse.language`` one of the course's languages, with
that language's release of the notebook in the course folder) is the same assignment: nbgrader restores its
locked cells from the gradebook's English source, and then they are put back from that release, so the
autograded notebook (and its feedback page) stays in the language submitted. The learner's metadata only
chooses which of the course's own releases is used: a locked cell's text never comes from the learner.

A notebook that cannot be read raises `SanitiseError` with a one-line message for a person
(without the file name: the caller names the file); the caller records it and goes on. Reading the file is
`grader.notebook_file`'s; what nbgrader's internals are relied on for is `grader.nbgrader_compat`'s.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import nbformat
from nbformat import NotebookNode

from grader.nbgrader_compat import (
    SourceBook,
    check_cell_metadata,
    metadata_schema,
    missing_cell,
    overwrite_cells,
    overwrite_kernelspec,
    source_cells,
)
from grader.notebook_file import SanitiseError, read_notebook
from torchcourse.contract import hidden_split
from torchcourse.i18n import TRANSLATIONS

# nbgrader's preprocessors log every restored cell, and jsonschema's whole report on invalid metadata: what
# matters reaches the notes in one line each, so their log goes nowhere (not to Python's last-resort stderr).
_QUIET = logging.getLogger("grader.sanitise.nbgrader")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


@dataclass
class Sanitised:
    nb: NotebookNode
    code_cells: list[int]          # notebook cell index of each code cell, in order
    grade_cells: dict[str, int]    # test grade_id -> position in code_cells
    points: dict[str, float]       # test grade_id -> max points (from the gradebook, not the learner)
    notes: list[str]
    unanswered: frozenset[str] = frozenset()  # answer grade_ids left as released (see _unanswered)
    # the markdown cells of the translated release submitted (the course's own text, like the solutions')
    course_markdown: frozenset[str] = frozenset()


def _claims(cell: NotebookNode) -> str | None:
    md = cell.get("metadata", {}).get("nbgrader")
    if not isinstance(md, dict):
        return None
    gid = md.get("grade_id")
    return gid if isinstance(gid, str) else None


def _metadata_problem(md: dict) -> str | None:
    """What is wrong with a learner's nbgrader metadata, in a few words (None: nothing). Most learners'
    metadata is the released notebook's, so the answer for short metadata is remembered."""
    text = json.dumps(md, sort_keys=True, default=repr)
    return _problem_of(text) if len(text) <= 4096 else _problem(md)


@lru_cache(maxsize=1024)
def _problem_of(text: str) -> str | None:
    return _problem(json.loads(text))


def _problem(md: dict) -> str | None:
    schema, validator = metadata_schema()
    extra = sorted(str(k) for k in md if k not in schema["properties"])
    if extra:
        return "unexpected key " + ", ".join(repr(k[:40]) for k in extra[:3])
    if md.get("schema_version") != schema["properties"]["schema_version"].get("enum", [3])[0]:
        return None  # an older nbgrader's metadata: nbgrader upgrades it; nothing to report
    for err in validator.iter_errors(md):
        where = "/".join(str(x) for x in err.absolute_path) or "metadata"
        return f"invalid {where!s:.40} ({err.message[:80]})"
    return None


def _keeper(copies: list[int], after: int | None) -> int:
    """Of several cells claiming one grade id, the one graded: the first after its answer (the cell of
    the source before it), else the last (nbgrader's own choice)."""
    if after is not None:
        later = [i for i in copies if i > after]
        if later:
            return later[0]
    return copies[-1]


ROLE_KEYS = ("grade", "solution", "task", "locked")


def _tampered(cell: NotebookNode, md: dict, want: dict, source: SimpleNamespace | None,
              translated: str | None = None) -> list[str]:
    """What a learner changed in a graded cell that the source restores (nbgrader only logs a warning): its
    role, its points, its cell type, or the visible source of a locked cell (a test cell's hidden block is not
    in the release, so only the visible part is compared; `translated` is the cell as the submitted language's
    release has it, which is as good as the English)."""
    changed = [f"{k} {md[k]!r:.20} (the source's: {want[k]!r})" for k in ROLE_KEYS
               if k in md and bool(md[k]) != want[k]]
    if "points" in want and "points" in md and float(md["points"]) != want["points"]:
        changed.append(f"points {md['points']!r:.20} (the source's: {want['points']:g})")
    if source is not None:
        if cell.get("cell_type") != source.cell_type:
            changed.append(f"a {str(cell.get('cell_type'))[:20]} cell (the source's: {source.cell_type})")
        elif source.locked and _lines(cell.get("source", "")) not in (
                _lines(_visible(source.source)), _lines(source.source), _lines(translated or "")):
            changed.append("its locked source edited")
    return changed


def _prepass(nb: NotebookNode, known: dict[str, dict], notes: list[str],
             sources: dict[str, SimpleNamespace] | None = None, translated: dict[str, str] | None = None) -> None:
    for cell in nb.cells:
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = NotebookNode()
        if "nbgrader" in cell.metadata and not isinstance(cell.metadata["nbgrader"], dict):
            del cell.metadata["nbgrader"]
    claims: dict[str, list[int]] = {}
    for i, cell in enumerate(nb.cells):
        if "nbgrader" not in cell.metadata:
            continue
        gid = _claims(cell)
        if gid is None or gid not in known:
            notes.append(f"cell {i + 1} has nbgrader metadata without a grade id; treated as an ordinary cell"
                         if gid is None else
                         f"cell {i + 1} claiming {gid[:80]!r} (an unknown grade id) treated as an ordinary cell")
            del cell.metadata["nbgrader"]
            continue
        claims.setdefault(gid, []).append(i)
    kept: dict[str, int] = {}
    previous: str | None = None
    for gid in known:  # the source's order: an answer is decided before the test cell after it
        if gid in claims:
            copies = claims[gid]
            keep = _keeper(copies, kept.get(previous) if previous else None)
            kept[gid] = keep
            for i in copies:
                if i != keep:
                    notes.append(f"cell {i + 1} claiming {gid!r} (a second copy) treated as an ordinary cell; "
                                 f"cell {keep + 1} is the graded one")
                    del nb.cells[i].metadata["nbgrader"]
        previous = gid
    for gid, i in kept.items():
        md = nb.cells[i].metadata["nbgrader"]
        problem = _metadata_problem(md)
        if problem:
            notes.append(f"cell {i + 1} ({gid!r}): nbgrader metadata with {problem}; restored from the source")
        elif changed := _tampered(nb.cells[i], md, known[gid], (sources or {}).get(gid), (translated or {}).get(gid)):
            notes.append(f"cell {i + 1} ({gid!r}): {', '.join(changed)}; restored from the source")
        # How a cell is restored comes from the gradebook, never from the learner's copy.
        nb.cells[i].metadata["nbgrader"] = NotebookNode(dict(known[gid]))
    for cell in nb.cells:  # outputs are never trusted and may be huge
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        if not isinstance(cell.get("source"), str):
            src = cell.get("source", "")
            cell["source"] = "".join(src) if isinstance(src, list) else str(src)


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.rstrip() for line in text.splitlines() if line.strip())


def _visible(source: str) -> str:
    """A test cell's source as released: without its hidden block (markers included)."""
    return "\n".join(hidden_split(source)[0])


def _restore_missing(nb: NotebookNode, book: SourceBook, notes: list[str]) -> None:
    """Put back every graded cell nbgrader would need: recognised by its source when its metadata was
    stripped, else inserted where the source has it. A notebook with none of the chapter's cells is refused."""
    known = book.known

    def claimed() -> dict[str, int]:
        return {gid: i for i, c in enumerate(nb.cells) if (gid := _claims(c)) in known}

    have = claimed()
    missing = [gid for gid, md in known.items() if md.get("grade") and gid not in have]
    if not missing:
        return
    source = book.cells
    recognised = []
    for gid in missing:
        want = _lines(_visible(source[gid].source))
        for i, cell in enumerate(nb.cells):
            if (want and "nbgrader" not in cell.metadata and cell.get("cell_type") == source[gid].cell_type
                    and _lines(cell.source) in (want, _lines(source[gid].source))):
                cell.metadata["nbgrader"] = NotebookNode(dict(known[gid]))
                recognised.append(gid)
                notes.append(f"cell {i + 1} had lost its nbgrader metadata; recognised by its source as {gid!r}")
                break
    if not have and not recognised:
        raise SanitiseError("not this chapter's notebook (none of its cells carries one of the grade ids "
                            "or the test source the chapter has)")
    order = list(known)
    for gid in missing:
        if gid in recognised:
            continue
        have = claimed()
        k = order.index(gid)
        before = next((have[g] for g in reversed(order[:k]) if g in have), None)
        after = next((have[g] for g in order[k + 1:] if g in have), None)
        at = before + 1 if before is not None else after if after is not None else len(nb.cells)
        md = known[gid]
        cell = nbformat.from_dict(missing_cell(source[gid], md))
        cell.metadata["nbgrader"] = nbformat.from_dict({**cell.metadata["nbgrader"], **md})
        nb.cells.insert(at, cell)
        where = (f"after {_claims(nb.cells[before])!r}" if before is not None
                 else f"before {_claims(nb.cells[at + 1])!r}" if after is not None else "at the end")
        notes.append(f"test cell {gid!r} was missing; put back from the source {where}")


def _course_root(db_url: str) -> Path | None:
    """The course folder of a gradebook (grader.course.Course keeps gradebook.db at its root)."""
    prefix = "sqlite:///"
    return Path(db_url[len(prefix):]).parent if db_url.startswith(prefix) else None


def submitted_language(nb: NotebookNode) -> str | None:
    """The translated release a notebook says it is (``metadata.torchcourse.language``) if the course has that
    language, else None (English: the source)."""
    metadata = nb.get("metadata")
    course = metadata.get("torchcourse") if isinstance(metadata, dict) else None
    language = course.get("language") if isinstance(course, dict) else None
    # exactly a release's name: "zh-Hant" or "zh" is no release of this course, so the notebook is English
    return language if language in TRANSLATIONS else None


@dataclass(frozen=True)
class Translated:
    """What sanitising takes from a translated release of a notebook."""

    locked: dict[str, str]       # grade id -> source of each locked markdown cell
    markdown: frozenset[str]     # the source of every markdown cell


NO_TRANSLATION = Translated({}, frozenset())


@lru_cache(maxsize=64)
def _translated_of(path: str, mtime_ns: int, size: int) -> Translated:
    nb = nbformat.read(path, as_version=4)
    locked = {}
    for cell in nb.cells:
        md = cell.get("metadata", {}).get("nbgrader")
        if cell.cell_type == "markdown" and isinstance(md, dict) and md.get("locked") and _claims(cell):
            locked[md["grade_id"]] = cell.source
    return Translated(locked, frozenset(c.source for c in nb.cells if c.cell_type == "markdown"))


def translated_release(root: Path | None, language: str | None, chapter: str, notebook: str) -> Translated:
    """`language`'s release of a notebook (`<root>/<language>/chapters/`), read once per version of the file;
    nothing for English, or where that release has no such notebook."""
    if root is None or language is None:
        return NO_TRANSLATION
    path = root / language / "chapters" / chapter / f"{notebook}.ipynb"
    try:
        st = path.stat()
    except OSError:
        return NO_TRANSLATION
    return _translated_of(str(path), st.st_mtime_ns, st.st_size)


def put_back_translation(nb: NotebookNode, translated: dict[str, str]) -> None:
    """Each locked markdown cell as the submitted language's release has it, once nbgrader has restored the
    English and each cell's nbgrader metadata from the gradebook (which alone says what is locked)."""
    for cell in nb.cells:
        gid = _claims(cell)
        if gid in translated and cell.cell_type == "markdown" and cell.metadata["nbgrader"].get("locked"):
            cell.source = translated[gid]


def _say_language(nb: NotebookNode, language: str | None) -> None:
    """The notebook's language as restored: the feedback page and the checks' messages follow it, so a language
    the course has no release of this notebook in reads as English."""
    course = nb.metadata.get("torchcourse")
    if not isinstance(course, dict):
        course = nb.metadata["torchcourse"] = NotebookNode()
    if language:
        course["language"] = language
    else:
        course.pop("language", None)
        if not course:
            del nb.metadata["torchcourse"]


def sanitise(path: Path, chapter: str, notebook: str, db_url: str, book: SourceBook | None = None,
             root: Path | None = None) -> Sanitised:
    """Read and sanitise one submitted notebook with nbgrader's preprocessors. `book` (from the gradebook at
    `db_url`) is read once for a batch; without it, it is read now. `root` is the course folder whose translated
    releases a translated submission's locked cells come from (default: the gradebook's folder)."""
    from nbgrader.preprocessors import ClearOutput, DeduplicateIds

    if book is None:
        book = SourceBook(db_url, chapter, notebook)
    known, points = book.known, book.points
    notes: list[str] = []
    nb = read_notebook(path, notes)
    language = submitted_language(nb)
    release = translated_release(root or _course_root(db_url), language, chapter, notebook)
    translated = release.locked
    try:
        _prepass(nb, known, notes, book.cells, translated)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:  # e.g. a "cell" that is a number
        raise SanitiseError("not a readable notebook: it holds something that is not a notebook cell "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from None
    _restore_missing(nb, book, notes)
    resources = {"nbgrader": {"notebook": notebook, "assignment": chapter, "db_url": db_url, "student": "-"}}
    try:
        for step in (ClearOutput(), DeduplicateIds()):
            step.log = _QUIET
            nb, resources = step.preprocess(nb, resources)
        overwrite_kernelspec(nb, book)
        step = overwrite_cells(book)
        step.log = _QUIET
        nb, resources = step.preprocess(nb, resources)
        check_cell_metadata(nb)
        put_back_translation(nb, translated)
        _say_language(nb, language if translated else None)
    except Exception as exc:  # not expected after the pre-pass; one line, never nbgrader's traceback
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SanitiseError(f"nbgrader could not restore its cells ({type(exc).__name__}: {first})") from None
    code_cells, grade_cells = _locate_grade_cells(nb, points)
    for gid in points:
        if gid not in grade_cells:  # cannot happen after add_missing_cells; say so if it does
            notes.append(f"test cell {gid!r} could not be restored")
    return Sanitised(nb, code_cells, grade_cells, points, notes, _unanswered(nb, book), release.markdown)


def _unanswered(nb: NotebookNode, book: SourceBook) -> frozenset[str]:
    """The answer cells (nbgrader's solution cells, tasks aside) left as released, by nbgrader's own test:
    the cell's checksum is the release's. nbgrader's autograde records such an answer as "No response."
    and scores a manually graded one 0 (grader/gradebook.py does the same)."""
    from nbgrader.utils import compute_checksum

    out = set()
    for cell in nb.cells:
        gid = _claims(cell)
        md, src = book.known.get(gid), book.cells.get(gid)
        if md and md.get("solution") and not md.get("task") and src is not None and src.checksum \
                and compute_checksum(cell) == src.checksum:
            out.add(gid)
    return frozenset(out)


def solution_notebook(path: Path, chapter: str, notebook: str, db_url: str) -> Sanitised:
    """The instructor's notebook, read the same way (it is trusted, but must have the same cells)."""
    nb = nbformat.read(str(path), as_version=4)
    _, points = source_cells(db_url, chapter, notebook)
    code_cells, grade_cells = _locate_grade_cells(nb, points)
    return Sanitised(nb, code_cells, grade_cells, points, [])


def _locate_grade_cells(nb, points: dict) -> tuple[list[int], dict[str, int]]:
    """Indices of the code cells, and each known test cell's position among them."""
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    grade_cells = {}
    for pos, i in enumerate(code_cells):
        gid = _claims(nb.cells[i])
        if gid in points:
            grade_cells[gid] = pos
    return code_cells, grade_cells
