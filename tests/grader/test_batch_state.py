"""The batch's state (grader/batch.py): a student is finished once, when every notebook of theirs is sanitised
and back and every solution's values are in, whatever order the results come in."""

from __future__ import annotations

from grader.batch import Batch
from grader.pools import Job
from grader.sanitise import Sanitised
from grader.wire import JobKey, RawResult
from tests.helpers.tiny import cell, emit_output, solution_nb


def _solution() -> Sanitised:
    nb = solution_nb()
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    return Sanitised(nb, code, {"ex": 2, "ey": 3}, {"ex": 2.0, "ey": 3.0}, [])


def _run(seconds: float = 0.1) -> RawResult:
    cells = {0: cell(0), 1: cell(1), 2: cell(2, [emit_output("ex", "a", 1)]), 3: cell(3, [emit_output("ey", "v", 2)])}
    return RawResult("exited", cells, seconds, 0)


def _job(student, nb) -> Job:
    return Job(JobKey(student, nb), [], 0, [])


def test_a_student_waits_for_every_solution_and_every_notebook_and_finishes_once():
    finished = []
    batch = Batch(["ann", "bob"], {"a": _solution(), "b": _solution()},
                  lambda s, p: finished.append((s, sorted(p.raw))))
    for s in ("ann", "bob"):
        batch.pending[s].sanitised.update({"a": None, "b": None})
    batch.take(_job("ann", "a"), _run())
    batch.take(_job("ann", "b"), _run())
    batch.sanitising_done("ann")
    assert finished == []  # the solutions' values are not in yet
    batch.take(_job(None, "a"), _run(2.0))
    batch.take(_job("bob", "a"), _run())
    assert finished == []
    batch.take(_job(None, "b"), _run(0.5))
    assert finished == [("ann", ["a", "b"])]  # bob's notebook b is not back, and his sanitising not done
    batch.sanitising_done("bob")
    batch.take(_job("bob", "b"), _run())
    assert finished == [("ann", ["a", "b"]), ("bob", ["a", "b"])] and batch.pending == {}
    assert set(batch.refs) == {"a", "b"} and batch.longest_first(["b", "c", "a"]) == ["c", "a", "b"]


def test_the_sandbox_time_is_kept_apart_for_solutions_submissions_and_failed_attempts():
    batch = Batch(["ann"], {"a": _solution()}, lambda s, p: None)
    batch.failed_attempt(RawResult("worker_died", {}, 0.5))
    batch.take(_job(None, "a"), _run(1.0))
    batch.take(_job("ann", "a"), _run(1.0))
    assert batch.cell_time == {"cells": 0.0, "solution_cells": 0.0, "jobs": 2.5}
