"""One autograde run's students on their way to a record: the state between the sandbox's results and a
student's finish.

The solutions run in the same stream of jobs as the submissions, first, not as a barrier before them: a
worker done with its solution starts on a submission. A student is finished once every notebook of theirs
has been sanitised (or refused) and is back from the sandbox, and every solution's values are in; `finish`
is then called for them, once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.judge import reference_values
from grader.pools import Job
from grader.sanitise import Sanitised
from grader.wire import RawResult


@dataclass
class Pending:
    """One student's notebooks on their way: sanitised, back from the sandbox, or not graded and why."""

    sanitised: dict[str, Sanitised] = field(default_factory=dict)
    raw: dict[str, RawResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    grader_errors: dict[str, str] = field(default_factory=dict)
    sanitising_done: bool = False
    submission: str = ""  # submission_hash before its notebooks were read: what was graded, not what is there later


class Batch:
    """The students not finished yet, the solutions' values they wait for, and the seconds the sandbox spent
    (`cell_time`: the submissions' cells, the solutions' cells, and every job, a failed attempt too)."""

    def __init__(self, students: list[str], solutions: dict[str, Sanitised],
                 finish: Callable[[str, Pending], None]) -> None:
        self.pending = {s: Pending() for s in students}
        self.solutions = solutions
        self.refs: dict[str, dict] = {}
        self.solution_seconds: dict[str, float] = {}
        self.cell_time = {"cells": 0.0, "solution_cells": 0.0, "jobs": 0.0}
        self._finish = finish

    def longest_first(self, notebooks: list[str]) -> list[str]:
        """A student's notebooks, longest first by their solutions' times once known: the batch then ends on
        short jobs, and one worker waits less while the other finishes the last one (the order of jobs
        changes nothing else)."""
        return sorted(notebooks, key=lambda nb: -self.solution_seconds.get(nb, math.inf))

    def sanitising_done(self, student: str) -> None:
        """Every notebook of `student` is sanitised or refused: results may all be in already, or there was
        nothing to run."""
        self.pending[student].sanitising_done = True
        self._maybe_finish(student)

    def failed_attempt(self, raw: RawResult) -> None:
        """A job that failed for a grader-side reason and runs once more: its time is the grader's overhead,
        never cells."""
        self.cell_time["jobs"] += raw.seconds

    def take(self, job: Job, raw: RawResult) -> None:
        """A job's result: a solution's values, or one of a student's notebooks."""
        student, nb = job.key
        solution = student is None
        # A child forked from a template ran only the cells after the template's: the others' records (and
        # their times) are the template's, run once for the whole batch.
        shared = int(raw.prefix.get("cells", 0)) if raw.prefix.get("how") == "forked" else 0
        self.cell_time["solution_cells" if solution else "cells"] += sum(
            c.seconds for i, c in raw.cells.items() if i >= shared)
        self.cell_time["jobs"] += raw.seconds
        if solution:
            self.solution_seconds[nb] = raw.seconds
            self.refs[nb] = reference_values(self.solutions[nb], raw)
            if len(self.refs) == len(self.solutions):
                for s in list(self.pending):
                    self._maybe_finish(s)
            return
        self.pending[student].raw[nb] = raw
        self._maybe_finish(student)

    def _maybe_finish(self, student: str) -> None:
        p = self.pending.get(student)
        if (p is None or len(self.refs) < len(self.solutions) or not p.sanitising_done
                or len(p.raw) < len(p.sanitised)):
            return
        del self.pending[student]
        self._finish(student, p)
