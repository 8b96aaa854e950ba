"""autograde: sanitise → run in the sandbox → judge outside → gradebook, for every collected submission.

A student is finished when their record (`autograded/<student>/<chapter>/.torchcourse-grade.json`)
is written, after the gradebook commit (an earlier record of theirs is removed before their autograded
notebooks and gradebook rows change); a rerun after the grader was killed skips finished
students whose submission has not changed, so nothing is lost or graded twice. A job that failed
for a grader-side reason is retried once; if it fails again the record says so (`grader_errors`,
a flag), the student counts as not recorded (`autograde` exits 1) and a plain rerun regrades them.
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from grader import gradebook
from grader.course import Course
from grader.due import due
from grader.executed import chapter_markdown, executed_notebook, write_executed
from grader.judge import Exercise, judge, reference_values
from grader.pools import DaskPool, Job, LocalPool
from grader.record import RECORD, GradeRecord
from grader.sandbox import Limits, RawResult, warn_missing
from grader.sanitise import Sanitised, SanitiseError, SourceBook, sanitise, solution_notebook
from grader.submission import (
    TIMESTAMP,
    chapter_files,
    copy_timestamp,
    extra_files,
    read_timestamp,
    submission_hash,
)

# Run statuses that are the grader's trouble (worker killed, full disk, sandbox error), never the learner's:
# the job is retried once, then recorded with the error, flagged, and regraded by a plain rerun.
GRADER_SIDE = frozenset({"worker_error", "worker_died"})


@dataclass
class Pending:
    sanitised: dict[str, Sanitised] = field(default_factory=dict)
    raw: dict[str, RawResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    grader_errors: dict[str, str] = field(default_factory=dict)
    sanitising_done: bool = False
    submission: str = ""  # submission_hash before its notebooks were read: what was graded, not what is there later


class Outcome(dict):
    """What `autograde` did: student -> record for every student graded now (a dict, as before), plus
    `not_recorded` (student -> why no record was written) and `warnings` (for the instructor: modules of
    the course library the sandbox could not import, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.not_recorded: dict[str, str] = {}
        self.warnings: list[str] = []
        # seconds: "start_up" (workers warm, gradebook ready) and "grading" (the solutions, run alongside the
        # first submissions, and the submissions); within grading, "cells" (the submissions' cells as the
        # sandboxed child timed each one), "solution_cells" (the same for the solutions' run), "jobs" (every
        # job as its worker timed it, from fork to reaped, a failed attempt before its retry too) and "cpu"
        # (this process's CPU: sanitise, judge, autograded notebooks, gradebook, the pool's threads). For
        # `autograde --timings` and benchmarks/grading_speed.py: a notebook's overhead beyond its own cells is
        # measured in the same run as the cells, whatever the host's speed at the time.
        self.timings: dict[str, float] = {}


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.start, self.enabled = total, 0, time.monotonic(), enabled and total > 0
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        pct = int(100 * self.done / self.total)
        if self.tty:
            bar = "#" * (pct // 4)
            print(f"\rautograde [{bar:<25}] {self.done}/{self.total} students, {time.monotonic() - self.start:.1f} s",
                  end="" if self.done < self.total else "\n", file=sys.stderr, flush=True)
        elif pct // 10 != self.shown or self.done == self.total:
            self.shown = pct // 10
            print(f"autograde: {self.done}/{self.total} students ({pct}%), {time.monotonic() - self.start:.1f} s",
                  file=sys.stderr, flush=True)


def autograde(course: Course, chapter: str, workers: int | None = None, scheduler: str | None = None,
              limits: Limits | None = None, force: bool = False, students: list[str] | None = None,
              progress: bool = True, seed: int | None = None) -> Outcome:
    """Grade every collected submission of `chapter`; returns the record of each student graded now (an
    `Outcome`, which also says who could not be recorded and why, and what the instructor must know)."""
    began = time.monotonic()
    warn_missing()
    limits = limits or Limits()
    notebooks = course.notebooks(chapter)
    todo = due(course, chapter, force, students)
    outcome = Outcome()
    outcome.not_recorded.update({s: why for s, why in course.unusable(chapter).items()
                                 if not students or s in students})
    if not todo:
        return outcome
    seed = secrets.randbelow(2**62) if seed is None else int(seed)
    n = workers or os.cpu_count() or 1
    # Workers spend seconds importing torch: they start now, while the gradebook is brought up to date.
    preload = course.library_modules(chapter)
    pool = (DaskPool(scheduler, limits, preload) if scheduler
            else LocalPool(min(n, max(1, len(todo) * len(notebooks))), limits, wait=False, preload=preload))
    records = outcome
    library: set[str] = set()
    frozen = False

    def report_library(raw: RawResult) -> None:
        for line in raw.preload_errors:  # the worker's own report, made before any learner code ran
            if line not in library:
                library.add(line)
                text = (f"the sandbox could not import the course library module {line}; grading goes on "
                        "without it (every check that needs it fails)")
                outcome.warnings.append(text)
                print(f"autograde: WARNING: {text}", file=sys.stderr, flush=True)

    try:
        gradebook.ensure_assignment(course, chapter)
        info = {nb: SourceBook(course.db_url, chapter, nb) for nb in notebooks}  # one read for the batch
        sols = {nb: solution_notebook(course.solutions / chapter / f"{nb}.ipynb", chapter, nb, course.db_url)
                for nb in notebooks}
        own_markdown = chapter_markdown(sols)
        pool.wait_ready()
        # Everything alive now (nbgrader, SQLAlchemy, nbformat, the pool) lives as long as the batch: out of the
        # collector's reach until the end, a full collection walks only what grading made (each one walked all
        # 125 000 objects, about 40 ms, and five of them took 8% of this process's CPU for 40 submissions).
        frozen = gc.get_freeze_count() == 0  # a caller's own frozen objects are left as they were
        if frozen:
            gc.freeze()
        outcome.timings["workers_ready"] = round(time.monotonic() - began, 3)  # part of start_up
        refs = {}
        files = chapter_files(course, chapter)
        # The solutions go first in the same stream as the submissions, not as a barrier before them: a worker
        # done with its solution starts on a submission. A student is judged once every solution is back.
        ref_jobs = [Job(("", nb), _cells(sol), seed, list(sol.grade_cells.values()), files)
                    for nb, sol in sols.items()]
        pending = {s: Pending() for s in todo}
        ready, cpu = time.monotonic(), time.process_time()
        outcome.timings["start_up"] = round(ready - began, 3)
        cell_time = {"cells": 0.0, "solution_cells": 0.0, "jobs": 0.0}
        solution_seconds: dict[str, float] = {}
        bar = Progress(len(todo), progress)

        def maybe_finish(s: str) -> None:
            p = pending.get(s)
            if p is None or len(refs) < len(sols) or not p.sanitising_done or len(p.raw) < len(p.sanitised):
                return
            del pending[s]
            try:
                records[s] = _finish(course, chapter, s, notebooks, p, refs, info, seed, own_markdown)
                if records[s].get("grader_errors"):
                    why = "; ".join(f"{nb}.ipynb: {e}" for nb, e in records[s]["grader_errors"].items())
                    outcome.not_recorded[s] = (f"graded only in part, after one retry, because of a grader-side "
                                               f"failure ({why}); the record is flagged and a plain rerun regrades it")
            except Exception as exc:  # one student's bad luck never stops the class; a rerun retries
                # one line: SQLAlchemy's messages go on with the SQL and a link
                why = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
                outcome.not_recorded[s] = why
                print(f"autograde: {s} not recorded ({why}); run autograde again", file=sys.stderr)
            bar.step()

        def jobs():
            for s in todo:
                folder = course.submitted / s / chapter
                # Hashed before a notebook is read: a submission changed while it is graded reads as changed to
                # a plain rerun, which regrades it (hashed when recorded, the change was taken as graded).
                try:
                    pending[s].submission = submission_hash(folder)
                except OSError:  # gone or unreadable meanwhile: sanitise says what; a rerun regrades it
                    pending[s].submission = ""
                # A student's longest notebooks first, by their solutions' times once known: the batch then
                # ends on short jobs, and one worker waits less while the other finishes the last one (the
                # order of jobs changes nothing else).
                for nb in sorted(notebooks, key=lambda nb: -solution_seconds.get(nb, math.inf)):
                    try:
                        sub = sanitise(folder / f"{nb}.ipynb", chapter, nb, course.db_url, info[nb])
                    except SanitiseError as exc:
                        pending[s].errors[nb] = str(exc)
                        continue
                    except Exception as exc:  # the grader's own trouble with one notebook: that notebook only
                        why = f"could not be prepared ({type(exc).__name__}: {str(exc)[:300]})"
                        pending[s].errors[nb] = why
                        pending[s].grader_errors[nb] = why  # not the learner's doing: a plain rerun regrades it
                        continue
                    pending[s].sanitised[nb] = sub
                    yield Job((s, nb), _cells(sub), seed, list(sub.grade_cells.values()), files)
                pending[s].sanitising_done = True
                maybe_finish(s)  # results may all be in already, or there was nothing to run

        def take(job: Job, raw: RawResult) -> None:
            solution = job.key[0] == ""
            cell_time["solution_cells" if solution else "cells"] += sum(c.seconds for c in raw.cells.values())
            cell_time["jobs"] += raw.seconds
            if solution:
                solution_seconds[job.key[1]] = raw.seconds
                refs[job.key[1]] = reference_values(sols[job.key[1]], raw)
                if len(refs) == len(sols):
                    for s in list(pending):
                        maybe_finish(s)
                return
            pending[job.key[0]].raw[job.key[1]] = raw
            maybe_finish(job.key[0])

        retry: list[Job] = []
        for job, raw in pool.run(itertools.chain(ref_jobs, jobs())):
            report_library(raw)
            if raw.status in GRADER_SIDE:  # the grader's trouble, not the learner's: once more, after the rest
                cell_time["jobs"] += raw.seconds  # the attempt's time is the grader's overhead, never cells
                retry.append(job)
                continue
            take(job, raw)
        for job, raw in pool.run(retry):
            report_library(raw)
            take(job, raw)
    finally:
        if frozen:
            gc.unfreeze()  # a caller that lives on (a notebook, a test run) gets its collector back as it was
        pool.close()
        gradebook.close()
    for s in todo:
        if s not in records and s not in outcome.not_recorded:  # cannot happen; say so if it does
            outcome.not_recorded[s] = "no result came back from the sandbox for it"
    if "start_up" in outcome.timings:
        outcome.timings["grading"] = round(time.monotonic() - began - outcome.timings["start_up"], 3)
        outcome.timings.update({k: round(v, 3) for k, v in cell_time.items()})
        outcome.timings["cpu"] = round(time.process_time() - cpu, 3)
    return outcome


def _cells(sub: Sanitised) -> list[str]:
    return [sub.nb.cells[i].source for i in sub.code_cells]


def _finish(course: Course, chapter: str, student: str, notebooks: list[str], p: Pending, refs: dict,
            info: dict, seed: int, own_markdown: frozenset[str] = frozenset()) -> dict:
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
                exercises.append(Exercise(gid, nb, pts, 0.0, "error", p.errors[nb], ["notebook not graded"]))
            flags.append(f"{nb}.ipynb: {p.errors[nb]}")
            continue
        sub, raw = p.sanitised[nb], p.raw[nb]
        exercises += judge(nb, sub, raw, refs[nb])
        unanswered |= {(nb, gid) for gid in sub.unanswered}
        flags += [f"{nb}.ipynb: {note}" for note in sub.notes]
        if len(raw.cells) < len(sub.code_cells) and raw.status == "exited" and not raw.signal and not raw.code:
            flags.append(f"{nb}.ipynb: the notebook stopped after {len(raw.cells)} of {len(sub.code_cells)} code cells")
        if raw.status in GRADER_SIDE:
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
    record = {
        "student": student, "chapter": chapter, "seed": seed, "submission": p.submission,
        "submitted_at": submitted_at.isoformat(sep=" ") if submitted_at else None,
        "score": sum(e.score for e in exercises), "max_score": sum(e.max_points for e in exercises),
        "exercises": [e.to_dict() for e in exercises], "flags": sorted(set(flags)),
        "runs": {nb: {"status": r.status, "seconds": r.seconds, "code": r.code, "signal": r.signal}
                 for nb, r in p.raw.items()},
        "graded_at": datetime.now().isoformat(timespec="seconds"),
        "grader_errors": grader_errors,
    }
    record = GradeRecord.from_dict(record).to_dict()  # the schema feedback and report read back
    _atomic_write(out / RECORD, json.dumps(record, indent=1))
    return record


