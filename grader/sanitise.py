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

A notebook that cannot be read raises `SanitiseError` with a one-line message for a person
(without the file name: the caller names the file); the caller records it and goes on.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import nbformat
from nbformat import NotebookNode

CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # nbformat 4.5's schema
MAX_BYTES = 256 * 2**20   # a notebook larger than this is refused (outputs are cleared anyway)
# A chapter's notebooks have at most 53 cells. Reading a cell costs nbformat and nbgrader's steps about 45 us, so
# 100 000 small cells (7 MiB) took 4.6 s and a notebook of MAX_BYTES of them would take minutes and gigabytes.
MAX_CELLS = 5_000
# nbformat makes an object of every JSON value: 26 MiB of notebook metadata as 1.1 million small objects took
# 22 s and 1.6 GB to read, so a notebook of MAX_BYTES of them would take minutes and more memory than the host
# has. Commas and opening brackets bound the values from above (more, when strings hold them); a chapter's
# notebook has a few thousand, with its outputs.
MAX_VALUES = 1_000_000
log = logging.getLogger("grader.sanitise")
# nbgrader's preprocessors log every restored cell, and jsonschema's whole report on invalid metadata: what
# matters reaches the notes in one line each, so their log goes nowhere (not to Python's last-resort stderr).
_QUIET = logging.getLogger("grader.sanitise.nbgrader")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class SanitiseError(ValueError):
    """A submitted notebook that cannot be graded, with the reason in plain words."""


@dataclass
class Sanitised:
    nb: NotebookNode
    code_cells: list[int]          # notebook cell index of each code cell, in order
    grade_cells: dict[str, int]    # test grade_id -> position in code_cells
    points: dict[str, float]       # test grade_id -> max points (from the gradebook, not the learner)
    notes: list[str]
    unanswered: frozenset[str] = frozenset()  # answer grade_ids left as released (see _unanswered)


def _repair_cells(d: object, notes: list[str]) -> object:
    """A notebook-4 dict with each damaged cell made readable, said in one line each, so that one damaged cell
    costs that cell and not the notebook (nbformat refuses the whole notebook for one of them): a cell that is not
    a code, markdown or raw cell becomes an empty raw cell (the cells keep their numbers); metadata or attachments
    that are not JSON objects of the kinds nbformat reads are dropped; a source that is not text is emptied.
    A code cell's outputs are dropped (they are cleared before grading anyway)."""
    if type(d) is not dict or type(d.get("cells")) is not list or d.get("nbformat") != 4:
        return d
    replaced = 0
    for i, cell in enumerate(d["cells"]):
        if type(cell) is not dict or cell.get("cell_type") not in ("code", "markdown", "raw"):
            kind = repr(cell.get("cell_type"))[:40] if type(cell) is dict else type(cell).__name__
            notes.append(f"cell {i + 1} is not a notebook cell (cell type {kind}); left empty")
            d["cells"][i] = {"cell_type": "raw", "metadata": {}, "source": ""}
            replaced += 1
            continue
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        if type(cell.get("metadata", {})) is not dict:
            notes.append(f"cell {i + 1}: its metadata is not a JSON object; dropped")
            cell["metadata"] = {}
        att = cell.get("attachments")
        if att is not None and not (type(att) is dict and all(
                type(a) is dict and all(type(v) is str or (type(v) is list and all(type(x) is str for x in v))
                                        for v in a.values()) for a in att.values())):
            notes.append(f"cell {i + 1}: its attachments are not ones nbformat reads; dropped")
            del cell["attachments"]
        src = cell.get("source", "")
        if not (type(src) is str or (type(src) is list and all(type(x) is str for x in src))):
            notes.append(f"cell {i + 1}: its source is not text; emptied")
            cell["source"] = ""
        if "id" in cell and not (type(cell["id"]) is str and CELL_ID.fullmatch(cell["id"])):
            del cell["id"]  # a new one is given; one nbformat's schema refuses cost the notebook's outputs
    if d["cells"] and replaced == len(d["cells"]):
        raise SanitiseError("not a readable notebook (none of its cells is a notebook cell)")
    return d


def _cell_count(d: object) -> int:
    """The cells of a notebook's JSON, as nbformat 4 (`cells`) or 3 (`worksheets`) holds them; 0 for others."""
    if type(d) is not dict:
        return 0
    if type(d.get("cells")) is list:
        return len(d["cells"])
    sheets = d.get("worksheets")
    return sum(len(w["cells"]) for w in sheets if type(w) is dict and type(w.get("cells")) is list) \
        if type(sheets) is list else 0


def read_notebook(path: Path, notes: list[str] | None = None) -> NotebookNode:
    """Read a submitted notebook: refuse links, special files, huge files and unreadable JSON. A damaged cell is
    made readable (`_repair_cells`), with a line in `notes`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise SanitiseError("the notebook was not submitted") from None
    if stat.S_ISLNK(st.st_mode):
        raise SanitiseError("a symbolic link, not a notebook; refused")
    if not stat.S_ISREG(st.st_mode):
        raise SanitiseError("not a regular file; refused")
    if st.st_size > MAX_BYTES:
        raise SanitiseError(f"{st.st_size / 2**20:.0f} MiB, over the {MAX_BYTES // 2**20} MiB limit")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if data.count(b",") + data.count(b"{") + data.count(b"[") > MAX_VALUES:
        raise SanitiseError(f"more than {MAX_VALUES:,} JSON values (a chapter's notebook has a few thousand, with "
                            "its outputs): not read; clear its outputs and submit it again")
    try:
        text = data.decode("utf-8")
        # nbformat.reads without its schema check, which only logs what it finds (and gives missing cell ids,
        # which the check of the autograded notebook gives as well): that notebook is checked once it is made
        # (autograde._valid_beside_outputs). The check here was 0.6 of the 2.1 ms a chapter-1 notebook took.
        d = nbformat.reader.parse_json(text)
        cells = _cell_count(d)
        if cells > MAX_CELLS:
            raise SanitiseError(f"{cells} cells, over the limit of {MAX_CELLS} (a chapter's notebook has about 50)")
        d = _repair_cells(d, [] if notes is None else notes)
        if type(d) is not dict:
            kind = {list: "a list", str: "a string", type(None): "null", bool: "true or false"}.get(type(d), "a number")
            raise SanitiseError(f"not a notebook (its JSON is {kind}, not an object)")
        major, minor = nbformat.reader.get_version(d)
        if major not in nbformat.versions:
            raise nbformat.NBFormatError(f"Unsupported nbformat version {major}")
        try:  # nbformat.reader.reads, from the repaired dict
            nb = nbformat.versions[major].to_notebook_json(d, minor=minor)
        except AttributeError as e:
            raise nbformat.ValidationError(f"The notebook is invalid and is missing an expected key: {e}") from None
        nb = nbformat.convert(nb, 4)
    except UnicodeDecodeError:
        raise SanitiseError("not UTF-8 text, so not a notebook") from None
    except SanitiseError:
        raise
    except Exception as exc:  # nbformat raises several types for bad JSON or an unknown version
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise SanitiseError(f"not a readable notebook ({why})") from None
    if not isinstance(nb.get("cells"), list):
        raise SanitiseError("not a readable notebook (it has no list of cells)")
    return nb


def _claims(cell: NotebookNode) -> str | None:
    md = cell.get("metadata", {}).get("nbgrader")
    if not isinstance(md, dict):
        return None
    gid = md.get("grade_id")
    return gid if isinstance(gid, str) else None


@lru_cache(maxsize=1)
def _schema_validator():
    """nbgrader's own schema of cell metadata, and a validator for it (read once)."""
    import jsonschema
    from nbgrader.nbgraderformat import MetadataValidator

    schema = MetadataValidator().schema
    return schema, jsonschema.Draft4Validator(schema)


def _metadata_problem(md: dict) -> str | None:
    """What is wrong with a learner's nbgrader metadata, in a few words (None: nothing). Most learners'
    metadata is the released notebook's, so the answer for short metadata is remembered."""
    text = json.dumps(md, sort_keys=True, default=repr)
    return _problem_of(text) if len(text) <= 4096 else _problem(md)


@lru_cache(maxsize=1024)
def _problem_of(text: str) -> str | None:
    return _problem(json.loads(text))


def _problem(md: dict) -> str | None:
    schema, validator = _schema_validator()
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


def _tampered(cell: NotebookNode, md: dict, want: dict, source: SimpleNamespace | None) -> list[str]:
    """What a learner changed in a graded cell that the source restores (nbgrader only logs a warning): its
    role, its points, its cell type, or the visible source of a locked cell (a test cell's hidden block is not
    in the release, so only the visible part is compared)."""
    changed = [f"{k} {md[k]!r:.20} (the source's: {want[k]!r})" for k in ROLE_KEYS
               if k in md and bool(md[k]) != want[k]]
    if "points" in want and "points" in md and float(md["points"]) != want["points"]:
        changed.append(f"points {md['points']!r:.20} (the source's: {want['points']:g})")
    if source is not None:
        if cell.get("cell_type") != source.cell_type:
            changed.append(f"a {str(cell.get('cell_type'))[:20]} cell (the source's: {source.cell_type})")
        elif source.locked and _lines(cell.get("source", "")) not in (_lines(_visible(source.source)),
                                                                      _lines(source.source)):
            changed.append("its locked source edited")
    return changed


def _prepass(nb: NotebookNode, known: dict[str, dict], notes: list[str],
             sources: dict[str, SimpleNamespace] | None = None) -> None:
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
        elif changed := _tampered(nb.cells[i], md, known[gid], (sources or {}).get(gid)):
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
    from torchcourse.contract import BEGIN_HIDDEN, END_HIDDEN

    out, hidden = [], False
    for line in source.splitlines():
        if line.strip().startswith(BEGIN_HIDDEN):
            hidden = True
        elif line.strip().startswith(END_HIDDEN):
            hidden = False
        elif not hidden:
            out.append(line)
    return "\n".join(out)


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
    from nbgrader.preprocessors import OverwriteCells

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
    adder = OverwriteCells()
    for gid in missing:
        if gid in recognised:
            continue
        have = claimed()
        k = order.index(gid)
        before = next((have[g] for g in reversed(order[:k]) if g in have), None)
        after = next((have[g] for g in order[k + 1:] if g in have), None)
        at = before + 1 if before is not None else after if after is not None else len(nb.cells)
        md = known[gid]
        cell = nbformat.from_dict(adder.missing_cell_transform(source[gid], md.get("points", 0),
                                                               is_solution=bool(md.get("solution"))))
        cell.metadata["nbgrader"] = nbformat.from_dict({**cell.metadata["nbgrader"], **md})
        nb.cells.insert(at, cell)
        where = (f"after {_claims(nb.cells[before])!r}" if before is not None
                 else f"before {_claims(nb.cells[at + 1])!r}" if after is not None else "at the end")
        notes.append(f"test cell {gid!r} was missing; put back from the source {where}")


class SourceBook:
    """What the gradebook holds for one notebook of a chapter, read in one query and kept for a whole batch:
    each cell's nbgrader metadata (`known`), each test cell's points, the source cells, the kernelspec.

    It also answers the few questions nbgrader's OverwriteCells asks of a `Gradebook` (find_notebook,
    find_source_cell, find_graded_cell) with the same answers, so that preprocessor runs unchanged without
    opening the database and querying every cell of every notebook again."""

    def __init__(self, db_url: str, chapter: str, notebook: str) -> None:
        from nbgrader.api import Gradebook

        def cell(c, **more) -> SimpleNamespace:  # detached from the database session
            return SimpleNamespace(name=c.name, **more)

        self.chapter, self.notebook = chapter, notebook
        with Gradebook(db_url) as gb:
            nb = gb.find_notebook(notebook, chapter)
            self.kernelspec = nb.kernelspec
            self.cells = {c.name: cell(c, cell_type=c.cell_type, locked=c.locked, checksum=c.checksum,
                                       source=c.source) for c in nb.source_cells}
            self.grade_cells = [cell(c, cell_type=c.cell_type, max_score=c.max_score) for c in nb.grade_cells]
            self.solution_cells = [cell(c) for c in nb.solution_cells]
            self.task_cells = [cell(c, max_score=c.max_score) for c in nb.task_cells]
        grades = {c.name: float(c.max_score) for c in self.grade_cells}
        solutions = {c.name for c in self.solution_cells}
        tasks = {c.name for c in self.task_cells}
        self.known: dict[str, dict] = {}
        for c in self.cells.values():
            md = {"grade_id": c.name, "grade": c.name in grades, "solution": c.name in solutions,
                  "task": c.name in tasks, "locked": bool(c.locked), "schema_version": 3}
            if c.name in grades:
                md["points"] = grades[c.name]
            self.known[c.name] = md
        self.points: dict[str, float] = {c.name: float(c.max_score) for c in self.grade_cells
                                         if c.cell_type == "code" and c.name not in solutions}

    # ---- the part of nbgrader.api.Gradebook that OverwriteCells reads
    def _check(self, notebook: str, assignment: str) -> None:
        from nbgrader.api import MissingEntry

        if (notebook, assignment) != (self.notebook, self.chapter):
            raise MissingEntry(f"No such notebook: {assignment}/{notebook}")

    def find_notebook(self, name: str, assignment: str) -> SimpleNamespace:
        self._check(name, assignment)
        return SimpleNamespace(name=name, kernelspec=self.kernelspec, source_cells=list(self.cells.values()),
                               grade_cells=self.grade_cells, solution_cells=self.solution_cells,
                               task_cells=self.task_cells)

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> SimpleNamespace:
        from nbgrader.api import MissingEntry

        self._check(notebook, assignment)
        if name not in self.cells:
            raise MissingEntry()
        return self.cells[name]

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> SimpleNamespace:
        from nbgrader.api import MissingEntry

        self._check(notebook, assignment)
        for c in self.grade_cells + self.task_cells:  # nbgrader looks for a grade cell first, then a task cell
            if c.name == name:
                return c
        raise MissingEntry()


def source_cells(db_url: str, chapter: str, notebook: str) -> tuple[dict[str, dict], dict[str, float]]:
    """The nbgrader metadata the gradebook holds for each cell of a notebook, and each test cell's points."""
    book = SourceBook(db_url, chapter, notebook)
    return book.known, book.points


@lru_cache(maxsize=1)
def _overwrite_class():
    """nbgrader's OverwriteCells, reading a SourceBook instead of opening the gradebook. Made once: a class
    statement and traitlets' set-up of a new class cost about 0.2 ms a notebook."""
    from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

    class Overwrite(OverwriteCells):
        def preprocess(self, nb, resources):  # OverwriteCells.preprocess, with `gradebook` set beforehand
            self.notebook_id = resources["nbgrader"]["notebook"]
            self.assignment_id = resources["nbgrader"]["assignment"]
            self.db_url = resources["nbgrader"]["db_url"]
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)
            nb, resources = self.add_missing_grade_cells(nb, resources)
            return self.add_missing_task_cells(nb, resources)

    return Overwrite


def _overwrite_cells(book: SourceBook):
    """nbgrader's OverwriteCells (add_missing_cells on), reading `book` instead of opening the gradebook."""
    step = _overwrite_class()(add_missing_cells=True)
    step.gradebook = book  # what OverwriteCells.preprocess would open as Gradebook(db_url)
    return step


def _overwrite_kernelspec(nb: NotebookNode, book: SourceBook) -> None:
    """nbgrader's OverwriteKernelspec, from `book`."""
    kernelspec = json.loads(book.kernelspec) if book.kernelspec is not None else None
    if kernelspec:
        nb.metadata["kernelspec"] = kernelspec


@lru_cache(maxsize=1)
def _metadata_validator():
    from nbgrader.nbgraderformat import MetadataValidator

    return MetadataValidator()


_VALID_METADATA: set[tuple[str, str]] = set()  # (cell type, metadata as JSON) that nbgrader's check passed


def _check_cell_metadata(nb: NotebookNode) -> None:
    """nbgrader's CheckCellMetadata (its MetadataValidator on every cell, then unique grade ids). A cell's
    check depends only on its type and metadata, which the pre-pass rebuilt from the gradebook, so each
    distinct pair is checked once per process (jsonschema re-checks the schema itself on every call)."""
    from nbgrader.nbgraderformat import ValidationError

    validator = _metadata_validator()
    try:
        for cell in nb.cells:
            if "nbgrader" not in cell.metadata:
                continue
            key = (cell.cell_type, json.dumps(cell.metadata["nbgrader"], sort_keys=True, default=repr))
            if key not in _VALID_METADATA:
                validator.validate_cell(cell)
                if len(_VALID_METADATA) > 10_000:
                    _VALID_METADATA.clear()
                _VALID_METADATA.add(key)
        ids = set()
        for cell in nb.cells:  # MetadataValidatorV3.validate_nb's own check after the cells
            if "nbgrader" not in cell.metadata:
                continue
            md = cell.metadata["nbgrader"]
            if md["grade"] or md["solution"] or md["locked"]:
                if md["grade_id"] in ids:
                    raise ValidationError(f"Duplicate grade id: {md['grade_id']}")
                ids.add(md["grade_id"])
    except ValidationError:
        raise ValidationError("Notebook failed to validate; the nbgrader metadata may be corrupted.") from None


def sanitise(path: Path, chapter: str, notebook: str, db_url: str, book: SourceBook | None = None) -> Sanitised:
    """Read and sanitise one submitted notebook with nbgrader's preprocessors. `book` (from the gradebook at
    `db_url`) is read once for a batch; without it, it is read now."""
    from nbgrader.preprocessors import ClearOutput, DeduplicateIds

    if book is None:
        book = SourceBook(db_url, chapter, notebook)
    known, points = book.known, book.points
    notes: list[str] = []
    nb = read_notebook(path, notes)
    try:
        _prepass(nb, known, notes, book.cells)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:  # e.g. a "cell" that is a number
        raise SanitiseError("not a readable notebook: it holds something that is not a notebook cell "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from None
    _restore_missing(nb, book, notes)
    resources = {"nbgrader": {"notebook": notebook, "assignment": chapter, "db_url": db_url, "student": "-"}}
    try:
        for step in (ClearOutput(), DeduplicateIds()):
            step.log = _QUIET
            nb, resources = step.preprocess(nb, resources)
        _overwrite_kernelspec(nb, book)
        step = _overwrite_cells(book)
        step.log = _QUIET
        nb, resources = step.preprocess(nb, resources)
        _check_cell_metadata(nb)
    except Exception as exc:  # not expected after the pre-pass; one line, never nbgrader's traceback
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SanitiseError(f"nbgrader could not restore its cells ({type(exc).__name__}: {first})") from None
    code_cells, grade_cells = _locate_grade_cells(nb, points)
    for gid in points:
        if gid not in grade_cells:  # cannot happen after add_missing_cells; say so if it does
            notes.append(f"test cell {gid!r} could not be restored")
    return Sanitised(nb, code_cells, grade_cells, points, notes, _unanswered(nb, book))


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
    known, points = source_cells(db_url, chapter, notebook)
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
