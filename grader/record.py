"""The grade record: what `autograde` decided for one student and one chapter, as a typed schema.

`autograde` writes it (`autograded/<student>/<chapter>/.torchcourse-grade.json`, after the gradebook
commit); `feedback` and `report` read it with `load`, which refuses links and special files and reads
at most `limits.RECORD_BYTES`, then keeps at most `limits.RECORD_ITEMS` exercises, flags and runs and
`limits.TEXT_CHARS` characters of each text, so neither command can be made slow or large by a record.
Keys a newer grader adds are ignored; a record that does not fit the schema (an exercise status that is
not an `ExerciseStatus`, a score that is not a finite number, ...) reads as None (no record),
which `feedback` and `report` say in one line (`unusable`).
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from grader.limits import RECORD_BYTES, RECORD_ITEMS, cap_text

RECORD = ".torchcourse-grade.json"


def _num(x: object) -> float:
    if type(x) not in (int, float) or not math.isfinite(x):  # json reads NaN and Infinity: no score is either
        raise TypeError(f"a finite number was expected, not {x!r:.40}")
    return float(x)


def _opt_int(x: object) -> int | None:
    return x if type(x) is int else None


class ExerciseStatus(StrEnum):
    """How the judge decided one exercise; only PASSED scores. A str enum: the record's JSON is the word."""

    PASSED = "passed"
    FAILED = "failed"               # a check failed, or a value differs from the solution's
    UNVERIFIED = "unverified"       # the solution emits nothing to compare: 0 until a person reviews it
    NOT_RUN = "not_run"             # an earlier cell stopped the notebook
    TIMEOUT = "timeout"             # a cell ran past its time limit before this check
    BUDGET = "budget"               # the notebook ran past its total time budget before this check
    CRASHED = "crashed"             # the process died before this check finished
    MISSING = "missing"             # no result was reported for this check
    OUTPUT_LIMIT = "output_limit"   # the check's output was over the size limit
    TAMPERED = "tampered"           # the notebook interfered with the grader's checks
    ERROR = "error"                 # the notebook could not be graded, or its test cell is gone


@dataclass
class Exercise:
    """One checks cell's result: what the judge decides and the record stores."""

    grade_id: str
    notebook: str
    max_points: float
    score: float = 0.0
    status: ExerciseStatus = ExerciseStatus.NOT_RUN
    reason: str = ""               # for the learner and the report: the first failing check or what went wrong
    detail: str = ""               # for the instructor only: the full difference or error (may quote hidden data)
    flags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Exercise:
        return cls(cap_text(d["grade_id"], 200), cap_text(d["notebook"], 200), _num(d["max_points"]),
                   _num(d.get("score", 0.0)), ExerciseStatus(cap_text(d.get("status", "not_run"), 40)),
                   cap_text(d.get("reason")), cap_text(d.get("detail")),
                   [cap_text(f) for f in list(d.get("flags") or [])[:RECORD_ITEMS]])


@dataclass
class RunInfo:
    """How one notebook's sandbox run ended."""

    status: str
    seconds: float = 0.0
    code: int | None = None
    signal: int | None = None

    @classmethod
    def from_dict(cls, d: dict) -> RunInfo:
        return cls(cap_text(d.get("status"), 40), _num(d.get("seconds") or 0.0), _opt_int(d.get("code")),
                   _opt_int(d.get("signal")))


@dataclass
class GradeRecord:
    student: str
    chapter: str
    seed: int
    submission: str                      # sha256 of the submitted notebooks: a rerun skips unchanged ones
    submitted_at: str | None
    score: float
    max_score: float
    exercises: list[Exercise]
    flags: list[str]
    runs: dict[str, RunInfo]
    graded_at: str
    # notebook -> the grader-side failure (worker killed, sandbox error) that spoilt its run after one retry;
    # a plain rerun regrades a record that has any
    grader_errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def bounded(self) -> GradeRecord:
        """This record as `load` reads it back: every text, list and number within the schema's bounds."""
        return GradeRecord.from_dict(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> GradeRecord:
        if type(d) is not dict:
            raise TypeError("a grade record is a JSON object")
        exercises = d.get("exercises") or []
        runs = d.get("runs") or {}
        errors = d.get("grader_errors") or {}
        return cls(
            student=cap_text(d["student"], 200), chapter=cap_text(d["chapter"], 200),
            seed=d["seed"] if type(d.get("seed")) is int else 0, submission=cap_text(d.get("submission"), 200),
            submitted_at=cap_text(d["submitted_at"], 60) if d.get("submitted_at") else None,
            score=_num(d["score"]), max_score=_num(d["max_score"]),
            exercises=[Exercise.from_dict(e) for e in list(exercises)[:RECORD_ITEMS]],
            flags=[cap_text(f) for f in list(d.get("flags") or [])[:RECORD_ITEMS]],
            runs={cap_text(k, 200): RunInfo.from_dict(v) for k, v in list(dict(runs).items())[:RECORD_ITEMS]},
            graded_at=cap_text(d.get("graded_at"), 60),
            grader_errors={cap_text(k, 200): cap_text(v) for k, v in list(dict(errors).items())[:RECORD_ITEMS]},
        )



def record_path(root: Path, student: str, chapter: str) -> Path:
    """Where the record of `student` for `chapter` lives under a course's autograded/ folder."""
    return root / student / chapter / RECORD


def load(path: Path) -> GradeRecord | None:
    """The record at `path`, bounded in bytes and items; None when there is none or it cannot be used."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > RECORD_BYTES:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            data = f.read(RECORD_BYTES + 1)
        if len(data) > RECORD_BYTES:
            return None
        return GradeRecord.from_dict(json.loads(data))
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def load_record(course, student: str, chapter: str) -> GradeRecord | None:
    """The record of `student` for `chapter` in `course` (a grader.course.Course), or None. One that names another
    student or chapter (copied by hand) is none: the report would list that student twice, this one never."""
    rec = load(record_path(course.autograded, student, chapter))
    return rec if rec is not None and (rec.student, rec.chapter) == (student, chapter) else None


def unusable(course, student: str, chapter: str) -> str | None:
    """One line for `feedback` and `report` when `student` has a record file for `chapter` that cannot be used
    (truncated, edited by hand, a link): it counts as no record, and is said, never skipped in silence."""
    path = record_path(course.autograded, student, chapter)
    if not os.path.lexists(path) or load_record(course, student, chapter) is not None:
        return None
    return (f"the grade record of {student} for {chapter} ({path.relative_to(course.root)}) cannot be read "
            f"(truncated, edited, another's or not a plain file); run `python -m grader autograde {chapter}` to "
            "regrade it")
