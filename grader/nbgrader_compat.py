"""Every place the grader relies on nbgrader's or nbformat's internals, rather than their documented use.

Each one saves time or opens no database where nbgrader would, and each breaks silently if the dependency
changes it. `FINGERPRINTS` holds a hash of the source of each upstream function or class relied on, as
checked against the versions in `CHECKED_AGAINST`; `tests/grader/test_nbgrader_compat.py` recomputes them,
so a pin bump that changes one fails that test, naming what to re-check here.

What is relied on, and where:

* `SourceBook` answers the `Gradebook` questions `OverwriteCells` asks (`find_notebook`, `find_source_cell`,
  `find_graded_cell`), and `overwrite_cells` copies `OverwriteCells.preprocess` with the gradebook set
  beforehand: one query a batch instead of the gradebook opened for every notebook.
* `missing_cell` calls `OverwriteCells.missing_cell_transform` to rebuild a deleted test cell.
* `check_cell_metadata` re-implements `MetadataValidatorV3.validate_nb` (each cell's check, then unique grade
  ids), checking each distinct cell once per process; `metadata_schema` reads the validator's `schema`.
* `nbformat_json` and `notebook_from_json` are `nbformat.reader.reads` in two halves (`parse_json`, then
  `get_version`, `versions[major].to_notebook_json`, `convert`), so that damaged cells are repaired between
  them and no schema check runs.
* `parse_utc` reads `timestamp.txt` as `nbgrader.utils.parse_utc` does, without importing nbgrader.utils
  (which imports much of nbgrader).
* `grader/__init__.py` tells jsonschema that `rfc3987_syntax` is absent (its import builds a parser at every
  command's start); no schema the grader checks uses the formats it serves.
* Not moved here (they live beside the code they serve, and are listed so that this is the whole list):
  `grader/gradebook.py`'s `_add_submission` writes nbgrader's tables with raw inserts, the rows its
  `add_student` and `add_submission` would make (held by `tests/grader/test_gradebook_rows.py`, rows compared
  with nbgrader's own; the tables' definitions are fingerprinted below).
"""

from __future__ import annotations

import json
from functools import lru_cache
from types import SimpleNamespace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

CHECKED_AGAINST = {"nbgrader": "0.9.6", "nbformat": "5.11.1", "jsonschema": "4.26.0", "python-dateutil": "4.0.0"}
# sha256 of `inspect.getsource` of each object relied on (the first 16 hex digits), at CHECKED_AGAINST.
FINGERPRINTS = {
    "nbgrader.preprocessors.overwritecells.OverwriteCells": "0b4a9da601914953",
    "nbgrader.preprocessors.base.NbGraderPreprocessor.preprocess": "7f001e554431a5fe",
    "nbgrader.api.Gradebook.find_notebook": "30dabad607684e86",
    "nbgrader.api.Gradebook.find_source_cell": "0d0ef04711fab86a",
    "nbgrader.api.Gradebook.find_graded_cell": "68291d97eb3cd85b",
    "nbgrader.nbgraderformat.v3.MetadataValidatorV3.validate_nb": "f66fa4aed3907e4e",
    "nbgrader.nbgraderformat.v3.MetadataValidatorV3.validate_cell": "53eb5b8ac9370fed",
    "nbgrader.utils.parse_utc": "9c552805ada65b87",
    "nbformat.reader.reads": "84282d7fa2e7a44e",
    "nbformat.reader.parse_json": "f9d93cf6774b2ee9",
    "nbformat.reader.get_version": "a8f11828d2f62b3c",
    # the tables grader/gradebook.py's _add_submission writes with raw inserts
    "nbgrader.api.Student": "9d2c571c1a8e22e9",
    "nbgrader.api.SubmittedAssignment": "636916693ec89915",
    "nbgrader.api.SubmittedNotebook": "1997589e2e939787",
    "nbgrader.api.Grade": "f85ab7c6de3833a5",
    "nbgrader.api.Comment": "6b2f5f0d1ffc2a2e",
    "nbgrader.api.new_uuid": "126bccddc7d5bf3c",
}


def nbformat_json(text: str) -> object:
    """The JSON of a notebook, as `nbformat.reader.reads` parses it (its errors included)."""
    from nbformat.reader import parse_json

    return parse_json(text)


def notebook_from_json(d: dict) -> NotebookNode:
    """The rest of `nbformat.reader.reads` on a dict already parsed (and repaired), as nbformat 4, without the
    schema check (which only logs)."""
    import nbformat

    major, minor = nbformat.reader.get_version(d)
    if major not in nbformat.versions:
        raise nbformat.NBFormatError(f"Unsupported nbformat version {major}")
    try:
        nb = nbformat.versions[major].to_notebook_json(d, minor=minor)
    except AttributeError as e:
        raise nbformat.ValidationError(f"The notebook is invalid and is missing an expected key: {e}") from None
    return nbformat.convert(nb, 4)


def parse_utc(text: str):
    """A time as nbgrader writes it ("2026-12-01 03:04:05.123456 UTC"), read as nbgrader's parse_utc reads it,
    as an aware UTC datetime."""
    from datetime import UTC

    import dateutil.parser
    import dateutil.tz

    parts = text.split(" ")
    if len(parts) == 3:
        zone = parts[2]
        tz = int(zone) if zone.lstrip("+-").isdigit() else dateutil.tz.gettz(zone)
        when = dateutil.parser.parse(" ".join([*parts[:2], "TZ"]), tzinfos={"TZ": tz})
    else:
        when = dateutil.parser.parse(text)
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


@lru_cache(maxsize=1)
def metadata_validator():
    """nbgrader's validator of cell metadata (made once: it reads its schema from a file)."""
    from nbgrader.nbgraderformat import MetadataValidator

    return MetadataValidator()


@lru_cache(maxsize=1)
def metadata_schema():
    """The schema of nbgrader's cell metadata, and a jsonschema validator of it that reports every error."""
    import jsonschema

    schema = metadata_validator().schema
    return schema, jsonschema.Draft4Validator(schema)


def missing_cell(source_cell: SimpleNamespace, md: dict) -> dict:
    """A deleted graded cell rebuilt from the source, as nbgrader's OverwriteCells rebuilds one."""
    from nbgrader.preprocessors import OverwriteCells

    return OverwriteCells().missing_cell_transform(source_cell, md.get("points", 0),
                                                  is_solution=bool(md.get("solution")))


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
    statement and traitlets' set-up of a new class are a measurable part of each notebook's sanitising."""
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


def overwrite_cells(book: SourceBook):
    """nbgrader's OverwriteCells (add_missing_cells on), reading `book` instead of opening the gradebook."""
    step = _overwrite_class()(add_missing_cells=True)
    step.gradebook = book  # what OverwriteCells.preprocess would open as Gradebook(db_url)
    return step


def overwrite_kernelspec(nb: NotebookNode, book: SourceBook) -> None:
    """nbgrader's OverwriteKernelspec, from `book`."""
    kernelspec = json.loads(book.kernelspec) if book.kernelspec is not None else None
    if kernelspec:
        nb.metadata["kernelspec"] = kernelspec


_VALID_METADATA: set[tuple[str, str]] = set()  # (cell type, metadata as JSON) that nbgrader's check passed


def check_cell_metadata(nb: NotebookNode) -> None:
    """nbgrader's CheckCellMetadata (its MetadataValidator on every cell, then unique grade ids). A cell's
    check depends only on its type and metadata, which the pre-pass rebuilt from the gradebook, so each
    distinct pair is checked once per process (jsonschema re-checks the schema itself on every call)."""
    from nbgrader.nbgraderformat import ValidationError

    validator = metadata_validator()
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
