"""Robustness of `python -m grader autograde`: one submission file per case, graded in one batch.

Every case is a student of a throw-away copy of the fixture course (notebook a-basics:
fx-double 2 points, fx-strides 3 points; notebook b-more: fx-means 1 point, always
answered correctly). The whole class is graded once, as an instructor would, so a case
that stopped the batch would fail every other case too.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading

import nbformat
import pytest

from tests.helpers.course import CASES, CHAPTER, fixture_course, submit, submit_case

pytestmark = pytest.mark.grading

WRONG = (0, 0, 1)
RIGHT = (2, 3, 1)
# case: (fx-double, fx-strides, fx-means) expected scores, and what the case is about
TABLE = {
    "honest-correct": (RIGHT, "the solution, written by a learner"),
    "untouched-release": (WRONG, "nothing answered"),
    "one-wrong": ((0, 3, 1), "exactly one exercise wrong"),
    "correct-warns": (RIGHT, "correct answers that warn and write to stderr get full marks"),
    "blank-transformer": (WRONG, "wrong + input transformer blanking later cells"),
    "ast-transformer": (WRONG, "wrong + AST transformer removing asserts"),
    "patch-allclose": (WRONG, "wrong + patched torch.allclose / torch.equal / Tensor.stride"),
    "patch-np-testing": (WRONG, "wrong + patched numpy.testing"),
    "patch-builtins": (WRONG, "wrong + patched builtins"),
    "patch-torchcourse": (WRONG, "wrong + patched torchcourse.grading"),
    "lying-eq": (WRONG, "wrong + objects whose __eq__/__bool__ lie"),
    "forged-emit": (WRONG, "wrong + forged emitted values"),
    "forged-results": (WRONG, "wrong + forged result lines written by learner code, then os._exit"),
    "hardcoded-visible": (WRONG, "visible answers hard-coded"),
    "infinite-loop": (RIGHT, "an infinite loop is interrupted; the rest of the notebook runs"),
    "loop-ignoring-sigint": ((2, 0, 1), "a loop ignoring SIGINT is killed; earlier exercises keep their scores"),
    "os-exit": ((2, 0, 1), "os._exit mid-notebook: earlier exercises keep their scores"),
    "segfault": ((2, 0, 1), "a segfault mid-notebook: earlier exercises keep their scores"),
    "memory-bomb": (RIGHT, "a memory bomb is refused by the memory limit"),
    "fork-storm": (RIGHT, "a fork storm is stopped by the process limit and cleaned up"),
    "gradebook-and-solutions": (WRONG, "reading and writing the gradebook, solutions/ and submissions"),
    "network": (RIGHT, "network access is blocked"),
    "edited-test-cells": (WRONG, "test cells' source edited"),
    "deleted-test-cells": (WRONG, "test cells deleted"),
    "deleted-test-cell-correct": (RIGHT, "a test cell deleted from a correct notebook is put back and passes"),
    "retyped-test-cells": (WRONG, "test cells retyped to markdown"),
    "unlocked-test-cells": (WRONG, "test cells unlocked and marked ungraded"),
    "duplicated-test-cell": (RIGHT, "a test cell duplicated in a correct notebook: batch goes on, full marks"),
    "duplicated-and-bogus-cells": (WRONG, "a copy of a test cell before it, plus a bogus 100-point cell"),
    "corrupt-json": (WRONG, "a notebook that is not JSON"),
    "old-nbformat": (RIGHT, "a correct notebook saved as nbformat 3"),
    "output-flood": (RIGHT, "endless output is capped"),
    "extra-files": (RIGHT, "torch.py, sitecustomize.py and a symlink beside the notebook"),
    "symlinked-notebook": (WRONG, "the notebook is a symlink (to the gradebook)"),
    "output-100mb": (RIGHT, "a correct notebook carrying 100 MB of saved output"),
    "renamed-notebook": (WRONG, "a-basics.ipynb submitted as a-basics-Copy1.ipynb"),
    "missing-notebook": (WRONG, "a-basics.ipynb not submitted"),
    "corrupt-second-notebook": ((2, 3, 0), "a-basics correct, b-more not JSON: only b-more's point is lost"),
}
NEEDS_BWRAP = {"gradebook-and-solutions": "reading the gradebook is only impossible inside bubblewrap"}
PORT = 47111


def _build(root):
    for case in TABLE:
        if (CASES / f"{case}.ipynb").exists():
            submit_case(root, case)
    honest = CASES / "honest-correct.ipynb"
    b_ok = CASES / "correct-b-more.ipynb"
    folder = submit(root, "extra-files", {"a-basics.ipynb": honest, "b-more.ipynb": b_ok})
    (folder / "torch.py").write_text("raise SystemExit('planted torch')\n")
    (folder / "sitecustomize.py").write_text("import os; os._exit(3)\n")
    os.symlink(root / "gradebook.db", folder / "gradebook-link.db")
    folder = submit(root, "symlinked-notebook", {"b-more.ipynb": b_ok})
    os.symlink(root / "gradebook.db", folder / "a-basics.ipynb")
    folder = submit(root, "output-100mb", {"b-more.ipynb": b_ok})
    nb = nbformat.read(str(honest), as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="y" * (100 * 2**20))]
    nbformat.write(nb, str(folder / "a-basics.ipynb"))
    submit(root, "renamed-notebook", {"a-basics-Copy1.ipynb": honest, "b-more.ipynb": b_ok})
    submit(root, "missing-notebook", {"b-more.ipynb": b_ok})
    submit(root, "corrupt-second-notebook", {"a-basics.ipynb": honest, "b-more.ipynb": CASES / "corrupt-json.ipynb"})


def _sandbox_pids() -> set[int]:
    """Processes running as one of the sandbox's uids (they are all >= 200000)."""
    out = subprocess.run(["ps", "-eo", "pid=,uid="], capture_output=True, text=True).stdout
    return {int(p) for p, u in (line.split() for line in out.splitlines()) if int(u) >= 200_000}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.sandbox import Limits

    root = fixture_course(tmp_path_factory.mktemp("robust"))
    (root / "gradebook.db").touch()
    _build(root)
    hits: list | None = []
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", PORT))
    except OSError:  # someone else holds the port: the sandbox's own report of the refusal still counts
        hits = None
    server.listen()
    server.settimeout(0.5)
    stop = threading.Event()

    def listen():
        while hits is not None and not stop.is_set():
            try:
                conn, _ = server.accept()
                hits.append(conn)
            except OSError:
                pass

    t = threading.Thread(target=listen, daemon=True)
    t.start()
    course = Course(root)
    try:
        # 8 s a cell: the memory bomb's cell takes 1.3-3.3 s alone, and at load 8 it met a 5 s limit first.
        records = autograde(course, CHAPTER, workers=2, limits=Limits(cell_timeout=8, budget=30, mem_mb=1024),
                            progress=False)
    finally:
        stop.set()
        t.join()
        server.close()
    return course, records, hits, _sandbox_pids()


def _scores(record):
    by = {e["grade_id"]: e["score"] for e in record["exercises"]}
    return by["fx-double"], by["fx-strides"], by["fx-means"]


def _outputs(course, case, notebook="a-basics"):
    nb = nbformat.read(str(course.autograded / case / CHAPTER / f"{notebook}.ipynb"), as_version=4)
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize("case", list(TABLE))
def test_case(case, graded, sandbox_facilities):
    if case in NEEDS_BWRAP and not sandbox_facilities.bwrap:
        pytest.skip(NEEDS_BWRAP[case] + "; missing here: " + "; ".join(sandbox_facilities.missing))
    course, records, hits, leftover = graded
    want, why = TABLE[case]
    record = records[case]
    assert _scores(record) == want, f"{case} ({why}): {json.dumps(record['exercises'], indent=1)}"
    assert 0 <= record["score"] <= record["max_score"] == 6
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:  # the gradebook holds what the judge decided, nothing else
        sub = gb.find_submission(CHAPTER, case)
        assert sub.score == record["score"]
        assert all(g.manual_score is None and not g.extra_credit for nb in sub.notebooks for g in nb.grades)


def test_flags_and_side_effects(graded, sandbox_facilities):
    course, records, hits, leftover = graded
    flags = {s: " ".join(r["flags"]) for s, r in records.items()}
    assert "tampered" in flags["patch-torchcourse"]
    # an input transformer is itself tampering now (grader/README.md, "Threat model"), found before any check
    assert "tampered" in flags["blank-transformer"] and "transformers registered" in flags["blank-transformer"]
    assert "symbolic link" in flags["symlinked-notebook"]
    assert "not a readable notebook" in flags["corrupt-json"]
    assert "was not submitted" in flags["renamed-notebook"]
    assert "torch.py" in flags["extra-files"] and "sitecustomize.py" in flags["extra-files"]
    assert "timeout" in flags["loop-ignoring-sigint"]
    assert "signal 11" in flags["segfault"]
    assert "second copy" in flags["duplicated-and-bogus-cells"] and "unknown grade id" in flags[
        "duplicated-and-bogus-cells"]
    assert flags["honest-correct"] == "" and flags["correct-warns"] == ""
    assert "MemoryError after" in _outputs(course, "memory-bomb")
    assert "fork refused after" in _outputs(course, "fork-storm")
    assert not leftover, f"sandbox processes left running: {leftover}"
    out = _outputs(course, "network")
    assert not hits, "a sandboxed cell reached a server on the grader's loopback"  # None: port was busy
    if sandbox_facilities.netns:
        assert "NET-BLOCKED ('127.0.0.1', 47111)" in out and "DNS-BLOCKED" in out
    if sandbox_facilities.bwrap:
        assert "FOUND 0 []" in _outputs(course, "gradebook-and-solutions")
    flood = (course.autograded / "output-flood" / CHAPTER / "a-basics.ipynb").stat().st_size
    assert flood < 2 * 2**20, f"output was not capped: {flood} bytes"
