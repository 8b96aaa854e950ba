"""Small in-memory notebooks for the grader's unit tests (tests/grader): cells with nbgrader's metadata,
emitted-value outputs, the sandbox's raw results, and a gradebook recorded in-process by nbgrader's own
`SaveCells` (no nbgrader subprocess, no sandbox).

The tiny chapter ``ch`` has one notebook ``nb``: a setup cell, the answer cell ``ex-answer`` and the
checks cell ``ex`` (2 points) with a hidden block, then the answer cell ``ey-answer`` and the checks cell
``ey`` (3 points).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat

from torchcourse.contract import EMIT_MIME

CHAPTER, NOTEBOOK = "ch", "nb"
SECRET_X = "expect_equal(double(21), 42, call='double(21)')"
SECRET_Y = "expect_equal(triple(7), 21, call='triple(7)')"


def meta(gid: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict:
    md = {"grade_id": gid, "grade": grade, "solution": solution, "locked": locked, "task": False,
          "schema_version": 3}
    if points is not None:
        md["points"] = points
    return {"nbgrader": md}


def answer_cell(gid: str, source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata=meta(gid, grade=False, solution=True, locked=False))


def checks_cell(gid: str, source: str, points: float) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata=meta(gid, grade=True, solution=False, locked=True,
                                                           points=points))


def hidden(visible: str, secret: str) -> str:
    return f"{visible}\n### BEGIN HIDDEN TESTS\n{secret}\n### END HIDDEN TESTS\n"


def solution_nb() -> nbformat.NotebookNode:
    """The tiny chapter's solution notebook."""
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A tiny chapter"),
        nbformat.v4.new_code_cell("from torchcourse.grading import expect_equal"),
        answer_cell("ex-answer", "def double(x):\n    ### BEGIN SOLUTION\n    return x * 2\n    ### END SOLUTION\n"),
        checks_cell("ex", hidden("expect_equal(double(1), 2)", SECRET_X), 2),
        answer_cell("ey-answer", "def triple(x):\n    ### BEGIN SOLUTION\n    return x * 3\n    ### END SOLUTION\n"),
        checks_cell("ey", hidden("expect_equal(triple(1), 3)", SECRET_Y), 3),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def released_nb() -> nbformat.NotebookNode:
    """What nbgrader releases: answers replaced, hidden blocks cut (what a learner starts from)."""
    nb = solution_nb()
    for cell in nb.cells:
        src = cell.source
        if "### BEGIN SOLUTION" in src:
            head, rest = src.split("### BEGIN SOLUTION", 1)
            cell.source = head + "# YOUR CODE HERE\nraise NotImplementedError()" + rest.split("### END SOLUTION", 1)[1]
        if "### BEGIN HIDDEN TESTS" in src:
            cell.source = src.split("### BEGIN HIDDEN TESTS")[0]
    return nb


def answered_nb(x: str = "    return x * 2", y: str = "    return x * 3") -> nbformat.NotebookNode:
    """A learner's submission: the released notebook with both answers written."""
    nb = released_nb()
    for cell in nb.cells:
        if "def double" in cell.source:
            cell.source = f"def double(x):\n{x}\n"
        elif "def triple" in cell.source:
            cell.source = f"def triple(x):\n{y}\n"
    return nb


def by_id(nb: nbformat.NotebookNode, gid: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == gid)


def write(nb: nbformat.NotebookNode, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def _alembic_head() -> str:
    """The gradebook schema's version, read in-process (nbgrader runs the `alembic` command for it: seconds)."""
    import nbgrader.api
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(nbgrader.api.__file__).with_name("alembic")))
    return ScriptDirectory.from_config(cfg).get_current_head()


def record_in_gradebook(db_url: str, chapter: str, notebooks: dict[str, nbformat.NotebookNode]) -> None:
    """The gradebook `nbgrader generate_assignment` writes, made in this process by the same preprocessors
    (answers cleared, then ComputeChecksums and SaveCells; hidden tests are recorded, as nbgrader does)."""
    import nbgrader.api
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import ClearSolutions, ComputeChecksums, SaveCells

    saved = nbgrader.api.get_alembic_version
    nbgrader.api.get_alembic_version = _alembic_head
    try:
        with Gradebook(db_url) as gb:
            gb.update_or_create_assignment(chapter)
    finally:
        nbgrader.api.get_alembic_version = saved
    for name, nb in notebooks.items():
        nb = nbformat.from_dict(nb)
        resources = {"nbgrader": {"db_url": db_url, "assignment": chapter, "notebook": name}, "language": "python"}
        for step in (ClearSolutions(), ComputeChecksums(), SaveCells()):
            nb, resources = step.preprocess(nb, resources)


def tiny_gradebook(path: Path, template: Path | None = None) -> str:
    """A gradebook holding the tiny chapter at `path` (copied from `template` when given); its URL."""
    if template is not None:
        shutil.copyfile(template, path)
    else:
        record_in_gradebook("sqlite:///" + str(path), CHAPTER, {NOTEBOOK: solution_nb()})
    return "sqlite:///" + str(path)


# --------------------------------------------------------------------------- what the sandbox returns


def emit_output(slug: str, name: str, value: Any, **extra: Any) -> dict:
    """A display output as `torchcourse.grading.emit` publishes it."""
    return {"output_type": "display_data", "data": {EMIT_MIME: {"slug": slug, "name": name, "value": value, **extra}},
            "metadata": {}}


def error_output(ename: str, evalue: str) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}"]}


def line(i: int, outputs: list | None = None, status: str = "ok", **extra: Any) -> dict:
    """One cell's line of results.jsonl; its emitted values (what the sandbox's audit hook took from
    ``emit``) are those its emit outputs show, unless given."""
    outputs = outputs or []
    extra.setdefault("emits", [o["data"][EMIT_MIME] for o in outputs if type(o) is dict
                               and o.get("output_type") == "display_data" and EMIT_MIME in o.get("data", {})])
    return {"i": i, "status": status, "outputs": outputs, "execution_count": i + 1, **extra}


def parsed(ln: dict):
    """One `line` as the grader reads it back (`CellResult.parse`)."""
    from grader.wire import CellResult

    result = CellResult.parse(ln)
    assert result is not None, f"not a cell result: {ln!r:.200}"
    return result


def cell(i: int, outputs: list | None = None, status: str = "ok", **extra: Any):
    """`line`'s cell as the grader reads it back."""
    return parsed(line(i, outputs, status, **extra))


def raw(lines: list[dict], status: str = "exited", code: int | None = 0, signal: int | None = None):
    """A job's result made of `line`s, each read back as the grader reads it."""
    from grader.sandbox import RawResult

    return RawResult(status, {ln["i"]: parsed(ln) for ln in lines}, 0.1, code, signal, "")
