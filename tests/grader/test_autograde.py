"""autograde's own logic, with the sandbox replaced by a pool that answers at once: who is recorded, who is
not and why, the submission time and its flag, the course library's warnings, the executed notebook."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from grader import autograde as autograde_mod
from grader import batch as batch_mod
from grader import finish as finish_mod
from grader import gradebook
from grader.autograde import Outcome, autograde
from grader.course import COURSE_ID, Course
from grader.record import load_record
from grader.sandbox import RawResult
from grader.submission import submission_hash
from tests.helpers.tiny import CHAPTER, answered_nb, cell, solution_nb, tiny_gradebook, write

real_ensure_assignment = gradebook.ensure_assignment  # the course fixture replaces it


def _emits(source: str) -> list[dict]:
    """What the tiny chapter's checks cells (tests/helpers/tiny.py) emit when they pass."""
    for slug, call in (("ex", "double(1)"), ("ey", "triple(1)")):
        if call in source:
            return [{"slug": slug, "name": "value", "value": 1}]
    return []


class FakePool:
    """Every cell runs "ok" and emits one value, the same for the solution and every student (a reference that
    emits nothing would leave an exercise unverified); `preload_errors` is what the workers report about the
    library."""

    preload_errors: list[str] = []

    def __init__(self, n, limits, wait=True, preload=()):
        self.jobs = []

    def wait_ready(self):
        pass

    def run(self, jobs, expect=None):
        for job in jobs:
            self.jobs.append(job)
            yield job, RawResult("exited", {i: cell(i, emits=_emits(src), seconds=0.25)
                                            for i, src in enumerate(job.cells)},
                                 0.1, 0, None, "",
                                 list(self.preload_errors))

    def close(self):
        pass


@pytest.fixture
def course(tmp_path, gradebook_template, monkeypatch):
    root = tmp_path / "course"
    write(solution_nb(), root / "solutions" / CHAPTER / "nb.ipynb")
    tiny_gradebook(root / "gradebook.db", gradebook_template)
    for student in ("ann", "bob"):
        folder = root / "submitted" / student / CHAPTER
        write(answered_nb(), folder / "nb.ipynb")
        (folder / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")
    monkeypatch.setattr(autograde_mod, "LocalPool", FakePool)
    monkeypatch.setattr(autograde_mod, "warn_missing", lambda: [])
    monkeypatch.setattr(gradebook, "ensure_assignment", lambda course, chapter: None)
    monkeypatch.setattr(FakePool, "preload_errors", [])
    return Course(root)


def _fail_for(student, exc):
    real = gradebook.write_grades

    def write_grades(course, chapter, who, *rest):
        if who == student:
            raise exc
        return real(course, chapter, who, *rest)

    return write_grades


def test_every_submission_is_recorded(course):
    out = autograde(course, CHAPTER, progress=False, seed=1)
    assert isinstance(out, Outcome) and sorted(out) == ["ann", "bob"]
    assert out.not_recorded == {} and out.warnings == []
    rec = json.loads((course.autograded / "ann" / CHAPTER / ".torchcourse-grade.json").read_text())
    assert rec["score"] == 5.0 and rec["submitted_at"] == "2026-11-30 12:00:00"
    assert autograde(course, CHAPTER, progress=False) == {}  # nothing changed: nothing graded again


def test_timings_hold_the_cells_apart_from_the_rest(course):
    """benchmarks/grading_speed.py measures a notebook's overhead beside its own cells in the same run: the
    submissions' cells (as the child timed each), the solutions' cells and the jobs are summed apart."""
    out = autograde(course, CHAPTER, progress=False, seed=1)
    t = out.timings
    code = sum(c.cell_type == "code" for c in solution_nb().cells)
    assert t["solution_cells"] == pytest.approx(0.25 * code)
    assert t["cells"] == pytest.approx(2 * 0.25 * code)  # ann's and bob's notebooks: the solution's code cells
    assert t["jobs"] == pytest.approx(3 * 0.1)  # the solution's job and one per student, 0.1 s each
    assert 0 <= t["cpu"] and {"start_up", "grading"} <= set(t)


def test_a_students_longest_notebooks_run_first(tmp_path, gradebook_template, monkeypatch):
    """Once the solutions' times are in, each student's notebooks go to the pool longest first (the batch then
    ends on short jobs); the record keeps the chapter's order."""
    from tests.helpers.tiny import record_in_gradebook

    root = tmp_path / "course"
    for nb in ("a", "b", "c"):
        write(solution_nb(), root / "solutions" / CHAPTER / f"{nb}.ipynb")
        write(answered_nb(), root / "submitted" / "ann" / CHAPTER / f"{nb}.ipynb")
    record_in_gradebook("sqlite:///" + str(root / "gradebook.db"), CHAPTER,
                        {nb: solution_nb() for nb in ("a", "b", "c")})
    seconds = {"a": 0.2, "b": 0.9, "c": 0.5}

    class TimedPool(FakePool):
        def run(self, jobs, expect=None):
            for job, raw in super().run(jobs):
                raw.seconds = seconds[job.key[1]]
                yield job, raw

    pools = []
    monkeypatch.setattr(autograde_mod, "LocalPool", lambda *a, **k: pools.append(TimedPool(*a, **k)) or pools[-1])
    monkeypatch.setattr(autograde_mod, "warn_missing", lambda: [])
    monkeypatch.setattr(gradebook, "ensure_assignment", lambda course, chapter: None)
    out = autograde(Course(root), CHAPTER, progress=False, seed=1)
    assert [job.key for job in pools[0].jobs] == [(None, "a"), (None, "b"), (None, "c"),
                                                  ("ann", "b"), ("ann", "c"), ("ann", "a")]
    assert out.not_recorded == {} and out["ann"]["score"] == 15.0
    rec = json.loads((root / "autograded" / "ann" / CHAPTER / ".torchcourse-grade.json").read_text())
    assert [e["notebook"] for e in rec["exercises"]] == ["a", "a", "b", "b", "c", "c"]


def test_the_collector_is_left_as_the_caller_had_it(course):
    """autograde freezes what lives through the batch (so a full collection walks only what grading made) and
    gives a caller that lives on, like this test run, its collector back; a caller's own freeze is kept."""
    import gc

    assert gc.get_freeze_count() == 0
    autograde(course, CHAPTER, progress=False, seed=1, force=True)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        autograde(course, CHAPTER, progress=False, seed=1, force=True)
        assert gc.get_freeze_count() > 0  # still frozen (objects freed meanwhile leave the count)
    finally:
        gc.unfreeze()


def test_a_submission_that_could_not_be_recorded_is_named_with_why(course, monkeypatch, capsys):
    monkeypatch.setattr(gradebook, "write_grades", _fail_for("bob", OSError(28, "No space left on device")))
    out = autograde(course, CHAPTER, progress=False)
    assert sorted(out) == ["ann"]
    assert out.not_recorded == {"bob": "OSError: [Errno 28] No space left on device"}
    assert not (course.autograded / "bob" / CHAPTER / ".torchcourse-grade.json").exists()
    assert "bob not recorded" in capsys.readouterr().err


def test_the_command_line_exits_non_zero_and_says_who_was_not_recorded(course, monkeypatch, capsys, cli):
    real = gradebook.write_grades
    monkeypatch.setattr(gradebook, "write_grades", _fail_for("bob", RuntimeError("database is locked")))
    assert cli(["--root", str(course.root), "autograde"]) == 1
    out, err = capsys.readouterr()
    assert f"{CHAPTER}: graded 1 submissions" in out
    assert "1 submission(s) NOT recorded" in err and "  bob: RuntimeError: database is locked" in err
    monkeypatch.setattr(gradebook, "write_grades", real)  # the trouble is gone: a rerun records bob, and only bob
    assert cli(["--root", str(course.root), "autograde"]) == 0
    assert f"{CHAPTER}: graded 1 submissions" in capsys.readouterr().out


def test_a_chapter_that_cannot_be_graded_is_an_error_exit(course, monkeypatch, capsys, cli):
    def broken(*args, **kwargs):
        raise RuntimeError("the solution fails its own test cell 'ex'")

    monkeypatch.setattr(batch_mod, "reference_values", broken)
    assert cli(["--root", str(course.root), "autograde"]) == 1
    assert f"autograde: {CHAPTER} not graded: the solution fails its own test cell 'ex'" in capsys.readouterr().err


def test_a_course_library_the_sandbox_cannot_import_is_reported_and_grading_goes_on(course, monkeypatch, capsys):
    monkeypatch.setattr(FakePool, "preload_errors", ["torchcourse.widgets: SyntaxError: invalid syntax (widgets.py, "
                                                     "line 3)"])
    out = autograde(course, CHAPTER, progress=False)
    assert sorted(out) == ["ann", "bob"]
    assert out.warnings == ["the sandbox could not import the course library module torchcourse.widgets: "
                            "SyntaxError: invalid syntax (widgets.py, line 3); grading goes on without it (every "
                            "check that needs it fails)"]
    err = capsys.readouterr().err
    assert err.count("autograde: WARNING: the sandbox could not import") == 1  # once, not once per job


def test_the_command_line_prints_the_library_warning(course, monkeypatch, capsys, cli):
    monkeypatch.setattr(FakePool, "preload_errors", ["torchcourse: ModuleNotFoundError: No module named 'torchcourse'"])
    assert cli(["--root", str(course.root), "autograde"]) == 0
    err = capsys.readouterr().err
    assert "WARNING: the sandbox could not import the course library module torchcourse: " \
           "ModuleNotFoundError: No module named 'torchcourse'" in err


@pytest.mark.parametrize("content, flag", [
    (b"garbage", "timestamp.txt holds 'garbage', not a time"),
    (b"", "timestamp.txt holds '', not a time"),
    (b"\xff\xfe\x00\x01", "timestamp.txt is not text"),
    (b"2026-11-30 12:00:00 UTC" + b" " * 300, "over 200 bytes"),
])
def test_a_garbled_timestamp_is_a_flag_on_the_record_and_the_report(course, content, flag):
    (course.submitted / "bob" / CHAPTER / "timestamp.txt").write_bytes(content)
    out = autograde(course, CHAPTER, progress=False)
    assert out["bob"]["submitted_at"] is None and any(flag in f for f in out["bob"]["flags"])
    assert not any("timestamp" in f for f in out["ann"]["flags"])
    assert not (course.autograded / "bob" / CHAPTER / "timestamp.txt").exists()
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        assert gb.find_submission(CHAPTER, "bob").timestamp is None
        assert str(gb.find_submission(CHAPTER, "ann").timestamp) == "2026-11-30 12:00:00"
    from grader.report import report

    csv_path, html_path = report(course, CHAPTER)
    assert flag.split("'")[0] in csv_path.read_text() and "timestamp.txt" in html_path.read_text()


def test_a_student_entry_that_is_not_a_real_folder_is_named_not_recorded(course, capsys, cli):
    """A file, a link (it would grade whatever it points at, another student's work too) or a name that is no
    student id in submitted/ was skipped in silence and autograde exited 0."""
    sub = course.submitted
    (sub / "carl").write_text("not a folder")
    (sub / "dan").mkdir()
    (sub / "dan" / CHAPTER).write_text("not a folder")
    os.symlink(sub / "ann", sub / "eve")
    (sub / "fay").mkdir()
    os.symlink(sub / "bob" / CHAPTER, sub / "fay" / CHAPTER)
    (sub / "bad\nname" / CHAPTER).mkdir(parents=True)
    (sub / ".DS_Store").write_text("")
    out = autograde(course, CHAPTER, progress=False, seed=1)
    assert sorted(out) == ["ann", "bob"]
    assert sorted(out.not_recorded) == ["bad\nname", "carl", "dan", "eve", "fay"]
    assert "is a symbolic link" in out.not_recorded["eve"] and "is not a folder" in out.not_recorded["carl"]
    assert f"submitted/fay/{CHAPTER} is a symbolic link" in out.not_recorded["fay"]
    assert not (course.autograded / "eve").exists() and not (course.autograded / "fay").exists()
    capsys.readouterr()
    assert cli(["--root", str(course.root), "autograde"]) == 1  # ann and bob are done; the rest still named
    err = capsys.readouterr().err
    assert "5 submission(s) NOT recorded" in err and "  bad\\nname: submitted/bad\\nname is not" in err
    for name in ("carl", "dan", "eve", "fay", "bad\nname"):
        (sub / name).unlink() if (sub / name).is_symlink() or (sub / name).is_file() else shutil.rmtree(sub / name)
    assert cli(["--root", str(course.root), "autograde"]) == 0


def test_a_locked_gradebook_is_one_line_that_names_each_student_waiting(course, monkeypatch, capsys, cli):
    """Another process holding the gradebook (sqlite busy) stopped autograde with SQLAlchemy's traceback, and
    nobody waiting for a record was named."""
    import sqlite3

    monkeypatch.setattr(gradebook, "ensure_assignment", real_ensure_assignment)
    other = sqlite3.connect(course.db_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        assert cli(["--root", str(course.root), "autograde"]) == 1
    finally:
        other.execute("ROLLBACK")
        other.close()
    err = capsys.readouterr().err
    assert f"autograde: {CHAPTER} not graded: OperationalError: (sqlite3.OperationalError) database is locked\n" in err
    assert "Traceback" not in err and "[SQL:" not in err
    assert "  ann: the chapter could not be graded (above)" in err and "  bob: the chapter" in err
    assert cli(["--root", str(course.root), "autograde"]) == 0
    assert f"{CHAPTER}: graded 2 submissions" in capsys.readouterr().out


def test_a_submission_changed_while_it_is_graded_is_regraded_by_a_plain_rerun(course, monkeypatch):
    """The record's submission hash was taken when the record was written: a notebook replaced after it was read
    (a late collect) was taken as graded, and a plain rerun never graded what the student finally submitted."""
    late = answered_nb(x="    return 0")

    class Resubmit(FakePool):
        def run(self, jobs, expect=None):
            for job, raw in super().run(jobs):
                if job.key == ("ann", "nb"):
                    write(late, course.submitted / "ann" / CHAPTER / "nb.ipynb")
                yield job, raw

    monkeypatch.setattr(autograde_mod, "LocalPool", Resubmit)
    first = autograde(course, CHAPTER, progress=False, seed=1)
    assert first["ann"]["score"] == 5.0  # what was read before the change
    monkeypatch.setattr(autograde_mod, "LocalPool", FakePool)
    again = autograde(course, CHAPTER, progress=False, seed=1)
    assert sorted(again) == ["ann"]
    assert again["ann"]["submission"] == submission_hash(course.submitted / "ann" / CHAPTER)
    assert autograde(course, CHAPTER, progress=False) == {}


def test_a_damaged_record_or_autograded_notebook_is_one_line_in_feedback_and_report(course, capsys, cli):
    """A truncated autograded notebook stopped `feedback` for the whole class with nbformat's traceback; a record
    truncated by hand, or whose score is NaN (json reads it), was skipped by `feedback` and `report` in silence or
    reported as a score."""
    autograde(course, CHAPTER, progress=False, seed=1)
    (course.root / "submitted" / "cy" / CHAPTER).mkdir(parents=True)
    write(answered_nb(), course.submitted / "cy" / CHAPTER / "nb.ipynb")
    autograde(course, CHAPTER, progress=False, seed=1)
    nb = course.autograded / "ann" / CHAPTER / "nb.ipynb"
    nb.write_bytes(nb.read_bytes()[:200])
    rec = course.autograded / "bob" / CHAPTER / ".torchcourse-grade.json"
    rec.write_bytes(rec.read_bytes()[:100])
    cy = course.autograded / "cy" / CHAPTER / ".torchcourse-grade.json"
    cy.write_text(cy.read_text().replace('"score": 5.0', '"score": NaN', 1))
    capsys.readouterr()
    assert cli(["--root", str(course.root), "feedback"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"feedback: not written for ann/nb: autograded/ann/{CHAPTER}/nb.ipynb cannot be read (NotJSONError)" in err
    for who in ("bob", "cy"):
        assert f"feedback: the grade record of {who} for {CHAPTER} (autograded/{who}/{CHAPTER}/" in err
    assert cli(["--root", str(course.root), "report"]) == 0
    err = capsys.readouterr().err
    assert [x[:31] for x in err.splitlines()] == ["report: the grade record of bob", "report: the grade record of cy "]
    rows = (course.reports / f"{CHAPTER}.csv").read_text().splitlines()
    assert [r.split(",")[:2] for r in rows[1:]] == [["ann", "5.0"]]
    assert sorted(autograde(course, CHAPTER, progress=False)) == ["bob", "cy"]  # a rerun regrades the two


def test_a_regrade_that_fails_leaves_no_record_of_the_old_submission(course, monkeypatch, capsys):
    """A changed submission whose regrade stopped after the gradebook took its new scores (killed, or the record
    could not be written) kept the old record: feedback and report showed the old score beside the new gradebook."""
    autograde(course, CHAPTER, progress=False, seed=1)
    write(answered_nb(x="    return 0"), course.submitted / "bob" / CHAPTER / "nb.ipynb")
    real = finish_mod._atomic_write

    def full_disk(path, text):
        if "/bob/" in str(path):
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(finish_mod, "_atomic_write", full_disk)
    out = autograde(course, CHAPTER, progress=False, seed=1)
    assert out.not_recorded == {"bob": "OSError: [Errno 28] No space left on device"}
    assert load_record(course, "bob", CHAPTER) is None
    assert load_record(course, "ann", CHAPTER).score == 5.0
    monkeypatch.setattr(finish_mod, "_atomic_write", real)
    assert sorted(autograde(course, CHAPTER, progress=False)) == ["bob"]


def test_a_record_the_gradebook_lost_is_regraded(course, gradebook_template):
    """A gradebook replaced (restored, recreated) or a submission removed from it left the records claiming grades
    `nbgrader export` no longer had: a plain rerun graded nobody and exited 0."""
    from nbgrader.api import Gradebook

    autograde(course, CHAPTER, progress=False, seed=1)
    with Gradebook(course.db_url, COURSE_ID) as gb:
        gb.remove_submission(CHAPTER, "bob")
    assert sorted(autograde(course, CHAPTER, progress=False)) == ["bob"]
    tiny_gradebook(course.db_path, gradebook_template)  # the chapter, and no submission
    assert sorted(autograde(course, CHAPTER, progress=False)) == ["ann", "bob"]
    with Gradebook(course.db_url, COURSE_ID) as gb:
        assert {s.student.id: s.score for s in gb.find_assignment(CHAPTER).submissions} == {"ann": 5.0, "bob": 5.0}
    assert autograde(course, CHAPTER, progress=False) == {}


def test_an_interrupted_batch_is_one_line_and_keeps_every_record_written(course, monkeypatch, capsys, cli):
    """Ctrl-C during a batch ended in a KeyboardInterrupt traceback that said nothing of what was kept."""

    class Interrupted(FakePool):
        def run(self, jobs, expect=None):
            for job, raw in super().run(jobs):
                if job.key[0] == "bob":
                    raise KeyboardInterrupt
                yield job, raw

    monkeypatch.setattr(autograde_mod, "LocalPool", Interrupted)
    assert cli(["--root", str(course.root), "autograde"]) == 130
    err = capsys.readouterr().err
    assert f"autograde: interrupted; {CHAPTER}: 1 submission(s) NOT recorded, every record written is kept" in err
    assert "Traceback" not in err
    monkeypatch.setattr(autograde_mod, "LocalPool", FakePool)
    assert sorted(autograde(course, CHAPTER, progress=False)) == ["bob"]


def test_the_same_notebooks_submitted_again_later_are_regraded_with_the_new_time(course):
    """Only the notebooks were compared: a second submission of the same notebooks after the deadline kept the first
    time in the gradebook, so nbgrader's late penalty was never applied."""
    from nbgrader.api import Gradebook

    autograde(course, CHAPTER, progress=False, seed=1)
    (course.submitted / "bob" / CHAPTER / "timestamp.txt").write_text("2026-12-24 08:00:00.000000 UTC")
    again = autograde(course, CHAPTER, progress=False)
    assert sorted(again) == ["bob"] and again["bob"]["submitted_at"] == "2026-12-24 08:00:00"
    with Gradebook(course.db_url, COURSE_ID) as gb:
        assert str(gb.find_submission(CHAPTER, "bob").timestamp) == "2026-12-24 08:00:00"
    assert autograde(course, CHAPTER, progress=False) == {}


@pytest.mark.parametrize("torn", ['{"ch": {"nb.ipy', "[]", "\0\0\0\0"])
def test_a_torn_gradebook_stamp_is_recorded_again_not_a_chapter_that_never_grades(course, monkeypatch, capsys, torn):
    """ensure_assignment wrote .gradebook-sources.json in place: torn by a kill or a full disk, every later
    autograde of the chapter stopped on a JSON error until someone deleted the file by hand."""
    monkeypatch.setattr(gradebook, "ensure_assignment", real_ensure_assignment)
    stamp = course.sources_stamp
    stamp.write_text(torn)
    out = autograde(course, CHAPTER, progress=False, seed=1)
    assert sorted(out) == ["ann", "bob"] and out.not_recorded == {}
    assert list(json.loads(stamp.read_text())) == [CHAPTER]


def test_a_record_copied_from_another_student_is_not_theirs(course, capsys, cli):
    """A record copied by hand into another student's folder was read as that student's: the report listed its
    student twice (the name comes from the record) and the other not at all."""
    autograde(course, CHAPTER, progress=False, seed=1)
    rec = course.autograded / "bob" / CHAPTER / ".torchcourse-grade.json"
    (course.autograded / "ann" / CHAPTER / ".torchcourse-grade.json").write_text(rec.read_text())
    capsys.readouterr()
    assert cli(["--root", str(course.root), "report"]) == 0
    assert "report: the grade record of ann for ch" in capsys.readouterr().err
    rows = (course.reports / f"{CHAPTER}.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["bob"]
    assert sorted(autograde(course, CHAPTER, progress=False)) == ["ann"]
