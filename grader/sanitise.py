"""The trusted step before any learner code runs: nbgrader's own preprocessors on one notebook.

Test and locked cells are restored from the gradebook, missing test cells re-inserted,
retyped cells retyped back, the kernelspec reset and outputs cleared. Before that, a
small pre-pass turns cells that only *claim* to be graded (an unknown grade id, or a
second copy of a known one) into ordinary learner cells, so that one copy-pasted cell
costs nobody anything, where nbgrader 0.9 would abort the whole class's batch.

A notebook that cannot be read raises `SanitiseError` with a message for a person; the
caller records it and goes on with the next notebook.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

MAX_BYTES = 256 * 2**20   # a notebook larger than this is refused (outputs are cleared anyway)
log = logging.getLogger("grader.sanitise")


class SanitiseError(ValueError):
    """A submitted notebook that cannot be graded, with the reason in plain words."""


@dataclass
class Sanitised:
    nb: NotebookNode
    code_cells: list[int]          # notebook cell index of each code cell, in order
    grade_cells: dict[str, int]    # test grade_id -> position in code_cells
    points: dict[str, float]       # test grade_id -> max points (from the gradebook, not the learner)
    notes: list[str]


def read_notebook(path: Path) -> NotebookNode:
    """Read a submitted notebook: refuse links, special files, huge files and unreadable JSON."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise SanitiseError(f"{path.name} was not submitted") from None
    if stat.S_ISLNK(st.st_mode):
        raise SanitiseError(f"{path.name} is a symbolic link, not a notebook; refused")
    if not stat.S_ISREG(st.st_mode):
        raise SanitiseError(f"{path.name} is not a regular file; refused")
    if st.st_size > MAX_BYTES:
        raise SanitiseError(f"{path.name} is {st.st_size / 2**20:.0f} MiB, over the {MAX_BYTES // 2**20} MiB limit")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    try:
        text = data.decode("utf-8")
        nb = nbformat.reads(text, as_version=4)
    except UnicodeDecodeError:
        raise SanitiseError(f"{path.name} is not UTF-8 text, so not a notebook") from None
    except Exception as exc:  # nbformat raises several types for bad JSON or an unknown version
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise SanitiseError(f"{path.name} is not a readable notebook ({why})") from None
    if not isinstance(nb.get("cells"), list):
        raise SanitiseError(f"{path.name} has no list of cells")
    return nb


def _claims(cell: NotebookNode) -> str | None:
    md = cell.get("metadata", {}).get("nbgrader")
    if not isinstance(md, dict):
        return None
    gid = md.get("grade_id")
    return gid if isinstance(gid, str) else None


def _prepass(nb: NotebookNode, known: dict[str, dict], notes: list[str]) -> None:
    seen: set[str] = set()
    for cell in nb.cells:
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = NotebookNode()
        md = cell.metadata.get("nbgrader")
        if md is None:
            continue
        gid = _claims(cell)
        if gid is None or gid not in known or gid in seen:
            why = "an unknown grade id" if gid not in known else "a second copy"
            notes.append(f"cell claiming {gid!r} ({why}) treated as an ordinary cell")
            del cell.metadata["nbgrader"]
            continue
        seen.add(gid)
        # The flags that decide how a cell is restored come from the gradebook, not from the learner's copy.
        cell.metadata["nbgrader"] = NotebookNode({**md, **known[gid]})
    for cell in nb.cells:  # outputs are never trusted and may be huge
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        if not isinstance(cell.get("source"), str):
            src = cell.get("source", "")
            cell["source"] = "".join(src) if isinstance(src, list) else str(src)


def source_cells(db_url: str, chapter: str, notebook: str) -> tuple[dict[str, dict], dict[str, float]]:
    """The nbgrader metadata the gradebook holds for each cell of a notebook, and each test cell's points."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        nb = gb.find_notebook(notebook, chapter)
        grades = {c.name: float(c.max_score) for c in nb.grade_cells}
        solutions = {c.name for c in nb.solution_cells}
        tasks = {c.name for c in nb.task_cells}
        known = {}
        for c in nb.source_cells:
            md = {"grade_id": c.name, "grade": c.name in grades, "solution": c.name in solutions,
                  "task": c.name in tasks, "locked": bool(c.locked), "schema_version": 3}
            if c.name in grades:
                md["points"] = grades[c.name]
            known[c.name] = md
        points = {c.name: float(c.max_score) for c in nb.grade_cells
                  if c.cell_type == "code" and c.name not in solutions}
    return known, points


def sanitise(path: Path, chapter: str, notebook: str, db_url: str, known: dict[str, dict] | None = None,
             points: dict[str, float] | None = None) -> Sanitised:
    """Read and sanitise one submitted notebook with nbgrader's preprocessors."""
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearOutput,
        DeduplicateIds,
        OverwriteCells,
        OverwriteKernelspec,
    )

    if known is None or points is None:
        known, points = source_cells(db_url, chapter, notebook)
    nb = read_notebook(path)
    notes: list[str] = []
    try:
        _prepass(nb, known, notes)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:  # e.g. a "cell" that is a number
        raise SanitiseError(f"{path.name} holds something that is not a notebook cell "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from None
    resources = {"nbgrader": {"notebook": notebook, "assignment": chapter, "db_url": db_url, "student": "-"}}
    quiet = logging.getLogger("grader.sanitise.nbgrader")
    quiet.setLevel(logging.ERROR)
    steps = [ClearOutput(), DeduplicateIds(), OverwriteKernelspec(), OverwriteCells(add_missing_cells=True),
             CheckCellMetadata()]
    try:
        for step in steps:
            step.log = quiet
            nb, resources = step.preprocess(nb, resources)
    except KeyError as exc:  # nbgrader puts a missing test cell after the cell before it, which is missing too
        raise SanitiseError(f"{path.name}: nbgrader could not put missing test cells back: the cell "
                            f"{str(exc.args[0] if exc.args else '?')[:80]!r} is missing as well") from None
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise SanitiseError(f"{path.name}: nbgrader could not restore its cells ({why})") from None
    code_cells, grade_cells = _locate_grade_cells(nb, points)
    for gid in points:
        if gid not in grade_cells:  # cannot happen after add_missing_cells; say so if it does
            notes.append(f"test cell {gid!r} could not be restored")
    return Sanitised(nb, code_cells, grade_cells, points, notes)


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
