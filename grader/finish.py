"""A student's finish, once every notebook of theirs is back from the sandbox: judge → autograded notebooks →
gradebook → record.

The record is written last, after the gradebook commit, and the one of an earlier submission is removed
first: a student with a record is graded for good, and one without is regraded by a rerun.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from grader import gradebook
from grader.batch import Pending
from grader.course import Course
from grader.executed import executed_notebook, write_executed
from grader.judge import judge
from grader.record import RECORD, Exercise, ExerciseStatus, GradeRecord, RunInfo
from grader.submission import TIMESTAMP, copy_timestamp, extra_files, read_timestamp


def finish(course: Course, chapter: str, student: str, notebooks: list[str], p: Pending, refs: dict,
           info: dict, seed: int, own_markdown: frozenset[str] = frozenset()) -> dict:
    """Judge every notebook of `student`, write their autograded notebooks, their gradebook rows and then their
    record; returns the record as written."""
    folder = course.submitted / student / chapter
    out = course.autograded / student / chapter
    out.mkdir(parents=True, exist_ok=True)
    # The record of an earlier submission goes first: from here until the new one is written, the autograded
    # notebooks and the gradebook are changing, and a stale record (killed, a locked gradebook) would show
    # feedback and report the old score beside the new gradebook's. No record: the student is regraded.
    (out / RECORD).unlink(missing_ok=True)
    exercises: list[Exercise] = []
    unanswered: set[tuple[str, str]] = set()
    flags: list[str] = []
    grader_errors: dict[str, str] = {}
    for nb in notebooks:  # the chapter's order, whatever order the jobs ran in
        if nb in p.grader_errors:
            grader_errors[nb] = p.grader_errors[nb]
        if nb in p.errors:
            for gid, pts in info[nb].points.items():
                exercises.append(Exercise(gid, nb, pts, 0.0, ExerciseStatus.ERROR, p.errors[nb],
                                          ["notebook not graded"]))
            flags.append(f"{nb}.ipynb: {p.errors[nb]}")
            continue
        sub, raw = p.sanitised[nb], p.raw[nb]
        exercises += judge(nb, sub, raw, refs[nb])
        unanswered |= {(nb, gid) for gid in sub.unanswered}
        flags += [f"{nb}.ipynb: {note}" for note in sub.notes]
        if len(raw.cells) < len(sub.code_cells) and raw.status == "exited" and not raw.signal and not raw.code:
            flags.append(f"{nb}.ipynb: the notebook stopped after {len(raw.cells)} of {len(sub.code_cells)} code cells")
        if raw.status.grader_side:
            last = (raw.error.strip().splitlines() or ["no detail"])[-1][:300]
            grader_errors[nb] = f"{raw.status}: {last}"
            flags.append(f"{nb}.ipynb: not fully graded because of a grader-side failure ({grader_errors[nb]}), "
                         "retried once; a plain rerun of autograde regrades it")
        elif raw.status not in ("exited",) or raw.signal is not None or raw.code not in (0, None):
            flags.append(f"{nb}.ipynb: the run ended with {raw.status}"
                         + (f", signal {raw.signal}" if raw.signal else "")
                         + (f", exit code {raw.code}" if raw.code else ""))
        write_executed(out / f"{nb}.ipynb", executed_notebook(sub, raw, own_markdown))
    extras = extra_files(folder, notebooks)
    if extras:
        flags.append("extra files in the submission (never run): " + ", ".join(extras[:10]))
    for e in exercises:
        flags += [f"{e.notebook}/{e.grade_id}: {f}" for f in e.flags]
    submitted_at, bad_time = read_timestamp(folder)
    if bad_time:
        flags.append(bad_time)
    gradebook.write_grades(course, chapter, student, submitted_at, exercises, unanswered)
    if submitted_at is not None:  # a garbled file is not passed on to nbgrader's own commands
        copy_timestamp(folder, out)
    else:
        (out / TIMESTAMP).unlink(missing_ok=True)
    record = GradeRecord(
        student=student, chapter=chapter, seed=seed, submission=p.submission,
        submitted_at=submitted_at.isoformat(sep=" ") if submitted_at else None,
        score=sum(e.score for e in exercises), max_score=sum(e.max_points for e in exercises),
        exercises=exercises, flags=sorted(set(flags)),
        runs={nb: RunInfo(r.status, r.seconds, r.code, r.signal) for nb, r in p.raw.items()},
        graded_at=datetime.now().isoformat(timespec="seconds"),
        grader_errors=grader_errors,
    ).bounded().to_dict()  # as feedback and report will read it back
    _atomic_write(out / RECORD, json.dumps(record, indent=1))
    return record


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
