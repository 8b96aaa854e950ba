"""autograde: sanitise → run in the sandbox → judge outside → gradebook, for every collected submission.

A student is finished when their record (`autograded/<student>/<chapter>/.torchcourse-grade.json`)
is written, after the gradebook commit (an earlier record of theirs is removed before their autograded
notebooks and gradebook rows change); a rerun after the grader was killed skips finished
students whose submission has not changed, so nothing is lost or graded twice. A job that failed
for a grader-side reason is retried once; if it fails again the student is recorded with what could be graded,
and the record says why the rest could not (`grader_errors`, a flag). A submission that kills its worker every
time is then recorded, with its reason, instead of failing every run; a plain rerun still tries it again, in
case the failure was the machine's.
"""

from __future__ import annotations

import gc
import itertools
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator

from grader import gradebook
from grader.batch import Batch, Pending
from grader.course import Course
from grader.due import due
from grader.executed import chapter_markdown
from grader.finish import finish
from grader.job import TEMPLATE_FIGURES
from grader.pools import DaskPool, Job, LocalPool, with_one_retry
from grader.sandbox import Limits, RawResult, warn_missing
from grader.sanitise import Sanitised, SanitiseError, SourceBook, sanitise, solution_notebook, submitted_language
from grader.submission import chapter_files, submission_hash
from grader.wire import JobKey


class Outcome(dict):
    """What `autograde` did: student -> record (`GradeRecord.to_dict()`) for every student graded now, plus
    `not_recorded` (student -> why no record was written), `graded_in_part` (student -> why part of the
    submission could not be graded, after one retry: recorded, flagged) and `warnings` (for the instructor:
    modules of the course library the sandbox could not import, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.not_recorded: dict[str, str] = {}
        self.graded_in_part: dict[str, str] = {}
        self.warnings: list[str] = []
        # seconds: "start_up" (workers warm, gradebook ready) and "grading" (the solutions, run alongside the
        # first submissions, and the submissions); within grading, "cells" (the submissions' cells as the
        # sandboxed child timed each one), "solution_cells" (the same for the solutions' run), "jobs" (every
        # job as its worker timed it, from fork to reaped, a failed attempt before its retry too) and "cpu"
        # (this process's CPU: sanitise, judge, autograded notebooks, gradebook, the pool's threads). For
        # `autograde --timings` and benchmarks/grading_speed.py: a notebook's overhead beyond its own cells is
        # measured in the same run as the cells, whatever the host's speed at the time.
        self.timings: dict[str, float] = {}
        self._library: set[str] = set()
        # notebook -> how its submissions ran ("forked", or "full: why") -> how many; and the most each
        # notebook's template held and took (benchmarks/grading_speed.py reports them)
        self.openings: dict[str, dict[str, int]] = {}
        self.templates: dict[str, dict[str, float]] = {}
        # notebook -> why its template holds only the opening's first cells (forked from there all the same)
        self.shortened: dict[str, str] = {}

    def opening_run(self, notebook: str, raw: RawResult) -> None:
        """Count how a submission's notebook ran: forked from its template, or in full and why."""
        p = raw.prefix
        if not p:
            return
        how = "forked" if p.get("how") == "forked" else f"full: {p.get('why') or p.get('how')}"
        counts = self.openings.setdefault(notebook, {})
        counts[how] = counts.get(how, 0) + 1
        seen = self.templates.setdefault(notebook, {})
        for k in TEMPLATE_FIGURES:
            if k in p:
                seen[k] = max(seen.get(k, 0.0), float(p[k]))
        if p.get("how") == "forked" and p.get("shortened"):
            self.shortened[notebook] = p["shortened"]

    def add(self, student: str, make: Callable[[], dict]) -> None:
        """The record `make` writes for `student`, or why none was written: one student's bad luck never stops
        the class, and a rerun retries."""
        try:
            record = self[student] = make()
            if record.get("grader_errors"):
                why = "; ".join(f"{nb}.ipynb: {e}" for nb, e in record["grader_errors"].items())
                self.graded_in_part[student] = (f"graded only in part, after one retry, because of a grader-side "
                                                f"failure ({why}); the record is flagged and a plain rerun regrades it")
        except Exception as exc:
            # one line: SQLAlchemy's messages go on with the SQL and a link
            why = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
            self.not_recorded[student] = why
            print(f"autograde: {student} not recorded ({why}); run autograde again", file=sys.stderr)

    def library_errors(self, raw: RawResult) -> None:
        """Warn, once each, of the course library's modules the sandbox could not import."""
        for line in raw.preload_errors:  # the worker's own report, made before any learner code ran
            if line not in self._library:
                self._library.add(line)
                text = (f"the sandbox could not import the course library module {line}; grading goes on "
                        "without it (every check that needs it fails)")
                self.warnings.append(text)
                print(f"autograde: WARNING: {text}", file=sys.stderr, flush=True)


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
              progress: bool = True, seed: int | None = None, certs: str | None = None,
              prefix: bool = True) -> Outcome:
    """Grade every collected submission of `chapter`; returns the record of each student graded now (an
    `Outcome`, which also says who could not be recorded and why, and what the instructor must know).

    The steps: who is due → sanitise each notebook → run it in the sandbox (the solutions first, in the same
    stream) → per student, once all is back (`grader.batch`): judge → autograded notebooks → gradebook →
    record (`grader.finish`). With `prefix` (the default), each worker runs a notebook's release cells before its
    first answer cell once, and forks each submission that opens with exactly those cells from there
    (grader/inside/template.py); without it, every cell of every submission runs."""
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
    pool = (DaskPool(scheduler, limits, preload, certs) if scheduler
            else LocalPool(min(n, max(1, len(todo) * len(notebooks))), limits, wait=False, preload=preload))
    frozen = False
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
        files = chapter_files(course, chapter)
        openings = {nb: opening(sol) for nb, sol in sols.items()} if prefix else {}
        # The solutions too are forked from their openings' templates: the first job of each notebook makes its
        # template, and a solution's run in full would run its opening a second time.
        solution_jobs = [Job(JobKey(None, nb), _cells(sol), seed, list(sol.grade_cells.values()), files,
                             openings.get(nb) or None) for nb, sol in sols.items()]
        bar = Progress(len(todo), progress)

        def record(student: str, p: Pending) -> None:
            outcome.add(student, lambda: finish(course, chapter, student, notebooks, p, batch.refs, info, seed,
                                                own_markdown))
            bar.step()

        batch = Batch(todo, sols, record)
        ready, cpu = time.monotonic(), time.process_time()
        outcome.timings["start_up"] = round(ready - began, 3)
        student_jobs = _sanitised_jobs(course, chapter, notebooks, batch, info, seed, files, openings)
        # The solutions and every student's notebooks: how many jobs of each notebook are coming, at most.
        expect = {nb: len(todo) + 1 for nb in notebooks}
        for job, raw, final in with_one_retry(pool, itertools.chain(solution_jobs, student_jobs), expect):
            outcome.library_errors(raw)
            if job.key.student is not None:
                outcome.opening_run(job.key.notebook, raw)
            if final:
                batch.take(job, raw)
            else:
                batch.failed_attempt(raw)
    finally:
        if frozen:
            gc.unfreeze()  # a caller that lives on (a notebook, a test run) gets its collector back as it was
        pool.close()
        gradebook.close()
    for s in todo:
        if s not in outcome and s not in outcome.not_recorded:  # cannot happen; say so if it does
            outcome.not_recorded[s] = "no result came back from the sandbox for it"
    if "start_up" in outcome.timings:
        outcome.timings["grading"] = round(time.monotonic() - began - outcome.timings["start_up"], 3)
        outcome.timings.update({k: round(v, 3) for k, v in batch.cell_time.items()})
        outcome.timings["cpu"] = round(time.process_time() - cpu, 3)
    return outcome


def opening(sol: Sanitised) -> list[str]:
    """The solution's code cells before its first answer cell (an nbgrader solution cell) or checks cell: the
    release's cells no learner changes, run once a batch in a template. Empty when the notebook opens with one."""
    cells = _cells(sol)
    for pos, i in enumerate(sol.code_cells):
        md = sol.nb.cells[i].get("metadata", {}).get("nbgrader", {})
        if (isinstance(md, dict) and md.get("solution")) or pos in sol.grade_cells.values():
            return cells[:pos]
    return cells


def _sanitised_jobs(course: Course, chapter: str, notebooks: list[str], batch: Batch, info: dict, seed: int,
                    files: dict[str, bytes], openings: dict[str, list[str]]) -> Iterator[Job]:
    """Each student's notebooks, sanitised, as jobs for the sandbox; a notebook that cannot be is recorded in
    the batch with why."""
    for s in list(batch.pending):
        p = batch.pending[s]
        folder = course.submitted / s / chapter
        # Hashed before a notebook is read: a submission changed while it is graded reads as changed to
        # a plain rerun, which regrades it (hashed when recorded, the change was taken as graded).
        try:
            p.submission = submission_hash(folder)
        except OSError:  # gone or unreadable meanwhile: sanitise says what; a rerun regrades it
            p.submission = ""
        for nb in batch.longest_first(notebooks):
            try:
                sub = sanitise(folder / f"{nb}.ipynb", chapter, nb, course.db_url, info[nb])
            except SanitiseError as exc:
                p.errors[nb] = str(exc)
                continue
            except Exception as exc:  # the grader's own trouble with one notebook: that notebook only
                why = f"could not be prepared ({type(exc).__name__}: {str(exc)[:300]})"
                p.errors[nb] = why
                p.grader_errors[nb] = why  # not the learner's doing: a plain rerun regrades it
                continue
            p.sanitised[nb] = sub
            cells, head = _cells(sub), openings.get(nb)
            # Forked from the template only when every cell up to the first answer is the release's, byte for byte.
            same = bool(head) and cells[:len(head)] == head
            yield Job(JobKey(s, nb), cells, seed, list(sub.grade_cells.values()), files, head if same else None,
                      submitted_language(sub.nb))
        batch.sanitising_done(s)


def _cells(sub: Sanitised) -> list[str]:
    return [sub.nb.cells[i].source for i in sub.code_cells]
