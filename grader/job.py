"""One job's files and replies: its folder as the worker reads it (`write_job`, the cells split by
`split_cells`), the results file read back bounded (`parse_results`), and `Answered`, a job the worker has
answered for, whose `result()` is what the job reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader import limits
from grader.inside.policy import JOB_FILES
from grader.limits import cap_outputs, parse_bounded, result_lines
from grader.wire import CellResult, CellStatus, RawResult, RunStatus
from torchcourse.contract import split_regions


def _notes(notes) -> list[str]:
    """The worker's notes on a job, bounded (the worker is trusted, but its reply is read like any line)."""
    return [str(n)[:300] for n in notes[:10]] if type(notes) is list else []


# What the worker measures of a template (a job's `RawResult.prefix`): its wall and CPU seconds, the opening cells
# it holds, its memory.
TEMPLATE_FIGURES = ("template_seconds", "template_cpu_seconds", "cells", "private_kb", "pss_kb", "rss_kb")


@dataclass(frozen=True)
class Cut:
    """Where a notebook's template stops short of its opening: the cells before `cells`, because running cell
    `cells` there left a thread (`why`, as the worker that found it said). Learnt from one worker's job, it
    spares the others the finding: a full opening run and a second's wait for the thread to end."""
    cells: int
    why: str


def _prefix(prefix) -> dict:
    """What the worker said of the job's template (grader/inside/templates.py), bounded."""
    if type(prefix) is not dict:
        return {}
    out = {k: str(prefix[k])[:300] for k in ("how", "why", "key", "shortened") if k in prefix}
    out.update({k: float(prefix[k]) for k in TEMPLATE_FIGURES if type(prefix.get(k)) in (int, float)})
    return out


RECORD_OPENING = re.compile(rb'\{"w": (\d{1,9}), ')  # the worker's own opening of a cell's line (channel._record)


def _unreadable_record(raw: bytes, n_cells: int) -> CellResult | None:
    """A line of the worker's (it opens as `_record` writes one), within the bounds, that does not read as a
    cell's result: not JSON, or a status or outputs no cell has. The worker passes a cell's result and emitted
    values on as the child wrote them, and the child's own code writes only valid ones, so the bytes came from
    a forged line with the cell's nonce. The cell is flagged (which also zeroes the checks after it), not
    dropped with the flags its line held."""
    opening = RECORD_OPENING.match(raw)
    i = int(opening.group(1)) if opening else -1
    if not 0 <= i < n_cells:
        return None
    return CellResult(i, CellStatus.UNFINISHED, [], emits=None,
                      tampered=["the cell's results could not be read: a line with its nonce, not written by the "
                                "grader, on the results channel"])


def parse_results(path: Path, n_cells: int) -> dict[int, CellResult]:
    """Per-cell lines the worker wrote (status ok, error, output_limit, or unfinished: a cell that did not
    report but whose emitted values or tampering records arrived): size-capped, first line per cell kept; a
    line of the worker's within the bounds that is not a cell's result becomes a flagged cell
    (`_unreadable_record`); other lines that are not are dropped."""
    cells: dict[int, CellResult] = {}
    try:
        with open(path, "rb") as f:
            data = f.read(limits.RESULTS_BYTES)
    except OSError:
        return cells
    for raw in result_lines(data):  # grader.limits: bounded in count and bytes before parsing
        line, bounded = parse_bounded(raw)
        cell = CellResult.parse(line, n_cells)
        if cell is None and bounded:  # over a bound: dropped, as any such line
            cell = _unreadable_record(raw, n_cells)
        if cell is not None and cell.i not in cells:
            cell.outputs = cap_outputs(cell.outputs)
            cells[cell.i] = cell
    return cells


def split_cells(cells: list[str], watch) -> list[dict]:
    """Each cell as the worker runs it: a checks cell (an index in `watch`) in two parts, its visible lines,
    then its hidden block, which the worker runs apart, in a namespace of its own (and sends to the child
    only once the visible part has run)."""
    watched = set(watch)
    out = []
    for i, source in enumerate(cells):
        if i not in watched:
            out.append({"source": source, "hidden": None})
            continue
        regions = split_regions(source)
        visible = "\n".join(line for kind, line in regions if kind in ("outside", "solution"))
        hidden = "\n".join(line for kind, line in regions if kind == "hidden")
        out.append({"source": visible, "hidden": hidden})
    return out


def prefix_file(prefix: list[str], seed: int, files: dict[str, bytes] | None, cut: Cut | None = None) -> dict:
    """prefix.json: the release's cells before the notebook's first answer cell, which the worker runs once in a
    template and forks this job's child from (grader/inside/template.py). Its key names what the template's
    state depends on (the cells and the chapter's data files); its batch, a hash of the grading seed (never the
    seed: the worker's memory is every child's), ends a warm worker's templates of an earlier batch. `cut`: what
    another worker found making this template, that its cells from `cut.cells` on leave a thread running."""
    h = hashlib.sha256(json.dumps(prefix).encode())
    for name, data in sorted((files or {}).items()):
        h.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(data).digest())
    batch = hashlib.sha256(f"torchcourse-batch:{seed}".encode()).hexdigest()
    out = {"key": h.hexdigest(), "cells": list(prefix), "batch": batch}
    if cut is not None:
        out["cut"] = {"cells": cut.cells, "why": cut.why}
    return out


def write_job(outside: Path, cells: list[str], seed: int, watch, files: dict[str, bytes] | None,
              uid: int | None, prefix: list[str] | None = None, language: str | None = None,
              cut: Cut | None = None) -> None:
    """The job's folder as the worker reads it: job.json (root's only), prefix.json when the job may be forked
    from a template (root's only), the chapter's data files beside them (a name that is a path, or one of the
    job's own files, is skipped), all of it the job's uid's when it has one."""
    job = {"cells": split_cells(cells, watch), "seed": seed, "language": language}
    (outside / "job.json").write_text(json.dumps(job))
    os.chmod(outside / "job.json", 0o600)
    if prefix:
        (outside / "prefix.json").write_text(json.dumps(prefix_file(prefix, seed, files, cut)))
        os.chmod(outside / "prefix.json", 0o600)
    for fname, data in (files or {}).items():
        if "/" not in fname and fname not in (*JOB_FILES, ".", ".."):
            (outside / fname).write_bytes(data)
            os.chmod(outside / fname, 0o644)
    if uid is not None:
        os.chown(outside, uid, uid)


@dataclass
class Answered:
    """A job a worker has answered for (`SandboxWorker.dispatch`): its reply, or the result of the worker's
    death, and the files `collect` reads and removes."""
    outside: Path
    results: Path
    n_cells: int
    preload_errors: list[str]
    reply: dict = field(default_factory=dict)
    died: RawResult | None = None

    def result(self) -> RawResult:
        """What the job reported: the worker's reply, and each cell's line read from the results file."""
        reply = self.reply
        cells_done = parse_results(self.results, self.n_cells)
        return RawResult(RunStatus.parse(reply.get("status")), cells_done, reply.get("seconds", 0.0),
                         reply.get("code"), reply.get("signal"), reply.get("error", ""),
                         self.preload_errors, _notes(reply.get("notes")), _prefix(reply.get("prefix")))

    def remove(self) -> None:
        shutil.rmtree(self.outside, ignore_errors=True)
        self.results.unlink(missing_ok=True)

