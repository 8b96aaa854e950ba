"""What crosses from the sandbox to the judge, typed: a job's key, how its run ended, each cell's result.

The warm worker (`grader/inside/`, inside the sandbox) speaks JSON lines; `grader/job.py` and `grader/sandbox.py`
parse them into these types, and the pools, `autograde`, the judge and the autograded notebook read
only these, by attribute. A cell's
result is still a *claim* of code that ran beside learner code: the judge treats it as data. The
enums are `str` enums, so their JSON and their comparisons with plain strings stay what they were.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import NamedTuple


class RunStatus(StrEnum):
    """How one job's run ended, in the worker's account (`grader_side`: the grader's trouble, never the learner's)."""

    WORKER_ERROR = "worker_error"   # the grader could not run the job (full disk, a sandbox error, ...)
    WORKER_DIED = "worker_died"     # the warm worker itself stopped
    EXITED = "exited"               # the child exited (after the last cell, or earlier: see code and signal)
    TIMEOUT = "timeout"             # a cell ran past its wall limit and ignored the interrupt
    BUDGET = "budget"               # the notebook ran past its total wall budget
    OUTPUT_LIMIT = "output_limit"   # a cell wrote more than a cell may on the results channel

    @property
    def grader_side(self) -> bool:
        """The grader's trouble (worker killed, full disk, sandbox error), never the learner's: the job is retried
        once, then recorded with the error, flagged, and regraded by a plain rerun."""
        return self in (RunStatus.WORKER_ERROR, RunStatus.WORKER_DIED)

    @classmethod
    def parse(cls, value: object) -> RunStatus:
        """The status a reply names; a reply that names none the grader knows is the grader's trouble."""
        try:
            return cls(value)
        except ValueError:
            return cls.WORKER_ERROR


class CellStatus(StrEnum):
    """How one cell ended, as the child reported it."""

    OK = "ok"
    ERROR = "error"
    OUTPUT_LIMIT = "output_limit"
    UNFINISHED = "unfinished"       # no result came, but emitted values or tampering records did


class JobKey(NamedTuple):
    """Whose notebook a job runs: a student (None: the solution) and a notebook name."""

    student: str | None
    notebook: str


@dataclass
class CellResult:
    """One cell's result as the worker accepted it: the outputs and status the cell claimed, the values
    its hidden checks emitted (taken by the audit hook) and what tampering was recorded."""

    i: int
    status: CellStatus
    outputs: list[dict] = field(default_factory=list)
    emits: list | None = None       # None: the worker sent no emitted values at all (malformed)
    tampered: list[str] = field(default_factory=list)
    shown: int = 0                  # outputs made before any hidden code reached the child
    execution_count: int | None = None
    seconds: float = 0.0

    @classmethod
    def parse(cls, line: object, n_cells: int | None = None) -> CellResult | None:
        """A cell result from one parsed JSON line; None when it is not one (wrong types, unknown status,
        an index outside the notebook)."""
        if type(line) is not dict:
            return None
        i, status, outputs = line.get("i"), line.get("status"), line.get("outputs")
        if type(i) is not int or i < 0 or (n_cells is not None and i >= n_cells) or type(outputs) is not list:
            return None
        try:
            status = CellStatus(status)
        except ValueError:
            return None
        tampered = line.get("tampered")
        return cls(i, status, outputs,
                   emits=line["emits"] if type(line.get("emits")) is list else None,
                   tampered=[str(t) for t in tampered] if type(tampered) is list else [],
                   shown=line["shown"] if type(line.get("shown")) is int else 0,
                   execution_count=line["execution_count"] if type(line.get("execution_count")) is int else None,
                   seconds=float(line["seconds"]) if type(line.get("seconds")) in (int, float) else 0.0)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class RawResult:
    """What came back from one job: the worker's account and the cells' (untrusted) results."""

    status: RunStatus
    cells: dict[int, CellResult]    # cell index -> its result (the first valid line wins)
    seconds: float = 0.0
    code: int | None = None
    signal: int | None = None
    error: str = ""
    # "module: error" for each module the worker could not preload (the worker's own report, made before
    # any learner code ran); autograde shows them to the instructor.
    preload_errors: list[str] = field(default_factory=list)
    # What the worker saw of the job from outside, in words (its temp space was full, ...): for the record.
    notes: list[str] = field(default_factory=list)
    # Whether the job's child was forked from its notebook's template ("how": "forked"), or ran in full and why
    # ("how": "full", "why"), with the template's time and memory; empty when none was asked for.
    prefix: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = RunStatus.parse(self.status)
        for v in self.cells.values():
            if not isinstance(v, CellResult):
                raise TypeError(f"a job's cells are CellResults, not {type(v).__name__} (parse a JSON line with "
                                "CellResult.parse)")
        self.cells = {int(k): v for k, v in self.cells.items()}

    def to_dict(self) -> dict:
        return {"status": str(self.status), "cells": {str(k): v.to_dict() for k, v in self.cells.items()},
                "seconds": self.seconds, "code": self.code, "signal": self.signal, "error": self.error,
                "preload_errors": list(self.preload_errors), "notes": list(self.notes), "prefix": dict(self.prefix)}

    @classmethod
    def from_dict(cls, d: dict) -> RawResult:
        """`to_dict`'s JSON read back (a Dask worker's result); a cell that does not parse is kept as an error
        result of its index."""
        cells = {int(k): CellResult.parse(v) or CellResult(int(k), CellStatus.ERROR) for k, v in d["cells"].items()}
        return cls(d["status"], cells, d["seconds"], d["code"], d["signal"], d["error"],
                   list(d.get("preload_errors", [])), list(d.get("notes", [])), dict(d.get("prefix") or {}))
