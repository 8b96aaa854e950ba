"""Every submission gets a record, and a damaged notebook costs only what is damaged.

One class of the fixture course is graded once, by the real sandbox, then once more with a plain rerun:

* two honest students whose sandbox worker is killed from outside (a grader-side failure) while their
  first cell holds a marker file open: `killed-once` on the first try only (the retry gives full marks),
  `killed-always` on both tries (recorded with the error, flagged, counted as not recorded; the plain
  rerun regrades it);
* correct notebooks damaged as nbgrader's own tests damage them: one whole exercise deleted, every
  cell's nbgrader metadata stripped, a copy of a test cell pasted above its answer, an extra key in a
  test cell's metadata; and nbgrader's own test notebook submitted in place of the chapter's.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import nbformat
import nbgrader
import psutil
import pytest

from tests.helpers.course import CASES, CHAPTER, fixture_course, submit

pytestmark = pytest.mark.grading

HONEST = CASES / "honest-correct.ipynb"
B_OK = CASES / "correct-b-more.ipynb"
NBGRADER_TEST_NB = Path(nbgrader.__file__).parent / "tests" / "preprocessors" / "files" / "test.ipynb"


def _kill_cell(name: str) -> nbformat.NotebookNode:
    """A first cell that holds a file `name`.marker open for two seconds: the test kills its worker meanwhile."""
    return nbformat.v4.new_code_cell(
        "import time\n"
        f"with open({name + '.marker'!r}, 'w') as marker:  # seen from outside in /proc/<pid>/fd\n"
        "    time.sleep(2)\n")


def _cells(nb):
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}


def _damaged(kind: str) -> nbformat.NotebookNode:
    nb = nbformat.read(str(HONEST), as_version=4)
    by = _cells(nb)
    if kind in ("killed-once", "killed-always"):
        nb.cells.insert(1, _kill_cell("tc-" + kind.replace("killed", "kill")))
    elif kind == "deleted-exercise":
        nb.cells.remove(by["fx-double-answer"])
        nb.cells.remove(by["fx-double"])
    elif kind == "stripped-metadata":
        for c in nb.cells:
            c.metadata.pop("nbgrader", None)
    elif kind == "copy-above-answer":
        copy = nbformat.from_dict(json.loads(json.dumps(by["fx-strides"])))
        copy["id"] = "pasted-copy"
        nb.cells.insert(nb.cells.index(by["fx-strides-answer"]), copy)
    elif kind == "extra-key":
        by["fx-double"].metadata["nbgrader"]["colour"] = "green"
    return nb


# student: (fx-double, fx-strides, fx-means) after the first run, and a flag each must carry
FIRST = {
    "killed-once": ((2, 3, 1), None),
    "killed-always": ((0, 0, 1), "grader-side failure (worker_died"),
    "deleted-exercise": ((0, 3, 1), "test cell 'fx-double' was missing; put back from the source"),
    "stripped-metadata": ((2, 3, 1), "had lost its nbgrader metadata; recognised by its source as 'fx-strides'"),
    "copy-above-answer": ((2, 3, 1), "(a second copy) treated as an ordinary cell; cell 9 is the graded one"),
    "extra-key": ((2, 3, 1), "nbgrader metadata with unexpected key 'colour'; restored from the source"),
    "foreign": ((0, 0, 1), "a-basics.ipynb: not this chapter's notebook"),
}


class Killer:
    """Kills, from outside, the sandbox worker (a child of this process, or of one of `parents`: Dask workers)
    whose job holds tc-kill-*.marker open."""

    def __init__(self, parents: set[int] | None = None) -> None:
        self.parents = parents
        self.killed: list[str] = []
        self.done: set[int] = set()  # the job processes acted on: a killed one holds its files while it exits
        self.on = True
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        me = self.parents or {os.getpid()}
        while not self.stop.wait(0.05):
            if not self.on:
                continue
            for proc in psutil.process_iter(["uids"]):
                if not proc.info["uids"] or proc.info["uids"].real < 200_000 or proc.pid in self.done:
                    continue  # the sandbox's uids only, each job once
                try:
                    held = {os.readlink(fd).rsplit("/", 1)[-1] for fd in Path(f"/proc/{proc.pid}/fd").iterdir()}
                    name = next((n for n in ("tc-kill-once", "tc-kill-always") if f"{n}.marker" in held), None)
                    if name is None or (name == "tc-kill-once" and name in self.killed):
                        continue
                    worker = next(p for p in [proc, *proc.parents()] if p.ppid() in me)
                    worker.send_signal(signal.SIGKILL)
                    self.done.add(proc.pid)
                    self.killed.append(name)
                except (StopIteration, psutil.Error, OSError):
                    pass


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.sandbox import Limits

    root = fixture_course(tmp_path_factory.mktemp("records"))
    src = tmp_path_factory.mktemp("src")
    for kind in FIRST:
        if kind == "foreign":
            submit(root, kind, {"a-basics.ipynb": NBGRADER_TEST_NB, "b-more.ipynb": B_OK})
            continue
        nbformat.write(_damaged(kind), str(src / f"{kind}.ipynb"))
        submit(root, kind, {"a-basics.ipynb": src / f"{kind}.ipynb", "b-more.ipynb": B_OK})
    course = Course(root)
    limits = Limits(cell_timeout=20, budget=120)
    killer = Killer()
    try:
        first = autograde(course, CHAPTER, workers=2, progress=False, limits=limits)
        killer.on = False
        second = autograde(course, CHAPTER, workers=1, progress=False, limits=limits)
    finally:
        killer.stop.set()
        killer.thread.join()
    return first, second, killer.killed


def _scores(record):
    by = {e["grade_id"]: e["score"] for e in record["exercises"]}
    return by["fx-double"], by["fx-strides"], by["fx-means"]


@pytest.mark.parametrize("student", list(FIRST))
def test_first_run(runs, student):
    first, _, killed = runs
    want, flag = FIRST[student]
    record = first[student]
    assert _scores(record) == want, json.dumps(record, indent=1)
    flags = record["flags"]
    if flag:
        assert [f for f in flags if flag in f], flags
        assert all("\n" not in f and "Traceback" not in f for f in flags)
    if student == "foreign":
        assert [f.count("a-basics.ipynb") for f in flags if "not this chapter" in f] == [1], flags


def test_a_grader_side_failure_is_retried_recorded_flagged_and_regraded(runs):
    first, second, killed = runs
    assert killed.count("tc-kill-once") == 1 and killed.count("tc-kill-always") == 2, killed
    assert first["killed-once"]["flags"] == [] and first["killed-once"]["grader_errors"] == {}
    assert list(first["killed-always"]["grader_errors"]) == ["a-basics"]
    assert first.not_recorded == {} and list(first.graded_in_part) == ["killed-always"]  # recorded: exits 0
    assert "a plain rerun regrades it" in first.graded_in_part["killed-always"]
    # The plain rerun regrades only the student a grader-side failure spoilt: full marks, nothing left over.
    assert list(second) == ["killed-always"] and second.not_recorded == {}
    assert _scores(second["killed-always"]) == (2, 3, 1) and second["killed-always"]["flags"] == []
