"""autograde's handling of grader-side failures, with the sandbox replaced by a pool that
fails as a sandbox fails (a dead worker) or a grader that cannot prepare a notebook: retried once, then
recorded with the error and flagged, counted as not recorded, and regraded by a plain rerun. The real
sandbox, with workers killed from outside, is in tests/grading/test_records.py."""

from __future__ import annotations

import pytest

from grader import autograde as autograde_mod
from grader import gradebook
from grader.autograde import autograde
from grader.course import Course
from grader.sandbox import RawResult
from tests.helpers.tiny import CHAPTER, answered_nb, cell, solution_nb, tiny_gradebook, write


class DyingPool:
    """Each job of a student in `dies` gets a dead worker, `times` times; every other job runs."""

    dies: dict[str, int] = {}
    attempts: list[str] = []

    def __init__(self, n, limits, wait=True, preload=()):
        pass

    def wait_ready(self):
        pass

    def run(self, jobs, expect=None):
        for job in jobs:
            student = job.key[0]
            DyingPool.attempts.append(student)
            if DyingPool.dies.get(student, 0) > 0:
                DyingPool.dies[student] -= 1
                yield job, RawResult("worker_died", {}, 0.5, error="the sandbox worker stopped: Killed")
            else:
                yield job, RawResult("exited", {i: cell(i) for i in range(len(job.cells))}, 0.1, 0, None, "", [])

    def close(self):
        pass


@pytest.fixture
def course(tmp_path, gradebook_template, monkeypatch):
    root = tmp_path / "course"
    write(solution_nb(), root / "solutions" / CHAPTER / "nb.ipynb")
    tiny_gradebook(root / "gradebook.db", gradebook_template)
    for student in ("ann", "bob", "cat"):
        write(answered_nb(), root / "submitted" / student / CHAPTER / "nb.ipynb")
    monkeypatch.setattr(autograde_mod, "LocalPool", DyingPool)
    monkeypatch.setattr(autograde_mod, "warn_missing", lambda: [])
    monkeypatch.setattr(gradebook, "ensure_assignment", lambda course, chapter: None)
    monkeypatch.setattr(DyingPool, "attempts", [])
    return Course(root)


def test_a_dead_worker_is_retried_once_then_recorded_flagged_and_regraded(course, monkeypatch, cli, capsys):
    # A submission that kills its worker on every attempt (a subprocess holding gigabytes of socket buffers,
    # say) is recorded with its reason after one retry: the batch goes on and the command exits 0.
    monkeypatch.setattr(DyingPool, "dies", {"ann": 1, "bob": 2})
    first = autograde(course, CHAPTER, progress=False, seed=1)
    assert sorted(first) == ["ann", "bob", "cat"]
    assert DyingPool.attempts.count("ann") == 2 and DyingPool.attempts.count("bob") == 2
    assert first["ann"]["grader_errors"] == {} and not [f for f in first["ann"]["flags"] if "grader-side" in f]
    assert first["bob"]["grader_errors"] == {"nb": "worker_died: the sandbox worker stopped: Killed"}
    assert [f for f in first["bob"]["flags"] if "grader-side failure" in f and "retried once" in f]
    assert first.not_recorded == {} and list(first.graded_in_part) == ["bob"]
    # Every attempt's time is in the run's timings: the solution's, ann's and cat's jobs and three dead workers.
    assert first.timings["jobs"] == pytest.approx(3 * 0.1 + 3 * 0.5)
    # The command line warns, and exits 0: bob is recorded. A plain rerun regrades bob only (his submission is
    # unchanged), in case the failure was the machine's.
    monkeypatch.setattr(DyingPool, "dies", {"bob": 2})
    assert cli(["--root", str(course.root), "autograde"]) == 0
    assert "WARNING: bob: graded only in part" in capsys.readouterr().err
    monkeypatch.setattr(DyingPool, "attempts", [])
    second = autograde(course, CHAPTER, progress=False, seed=1)
    assert sorted(second) == ["bob"] and [a for a in DyingPool.attempts if a] == ["bob"] and not second.not_recorded
    assert second["bob"]["grader_errors"] == {} and autograde(course, CHAPTER, progress=False) == {}


def test_a_notebook_the_grader_could_not_prepare_is_its_fault_not_the_learners(course, monkeypatch):
    real = autograde_mod.sanitise

    def flaky(path, *args, **kwargs):
        if "cat" in path.parts:
            raise OSError(5, "Input/output error")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(autograde_mod, "sanitise", flaky)
    first = autograde(course, CHAPTER, progress=False, seed=1)
    assert first["cat"]["grader_errors"] == {"nb": "could not be prepared (OSError: [Errno 5] Input/output error)"}
    assert "nb.ipynb: could not be prepared (OSError: [Errno 5] Input/output error)" in first["cat"]["flags"]
    assert first.not_recorded == {} and list(first.graded_in_part) == ["cat"]
    monkeypatch.setattr(autograde_mod, "sanitise", real)
    assert sorted(autograde(course, CHAPTER, progress=False, seed=1)) == ["cat"]
