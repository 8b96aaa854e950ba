"""Judge outside the sandbox: compare what each hidden cell emitted with the solution's values.

The sandbox's account of a test cell (its status, its outputs) is a claim made by a
process that ran learner code; it can be forged. An exercise therefore scores only if
(1) the test cell ran to the end without error, (2) every value it emitted equals the
value the same hidden cell emitted on solutions/ with the same grader-chosen seed (same
names, same order, nothing missing, nothing extra), and (3) no library the checks rely
on was rebound. Missing or malformed values fail. Tolerances come only from the
reference side. Scores are clamped to [0, max].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from grader.sandbox import RawResult
from grader.sanitise import Sanitised
from torchcourse.contract import ATOL, EMIT_MIME, RTOL, plain_difference


@dataclass
class Exercise:
    grade_id: str
    notebook: str
    max_points: float
    score: float = 0.0
    status: str = "not_run"        # passed, failed, not_run, timeout, budget, crashed, tampered, error
    reason: str = ""               # for the learner and the report: the first failing check or what went wrong
    flags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def emitted(outputs: Any, slug: str) -> tuple[list[tuple[str, Any, dict]], list[str]]:
    """The (name, value, tolerances) a cell emitted for `slug`, in order, and any malformed payloads."""
    values, bad = [], []
    if type(outputs) is not list:
        return values, ["outputs are not a list"]
    for out in outputs:
        if type(out) is not dict or out.get("output_type") != "display_data":
            continue
        data = out.get("data")
        if type(data) is not dict or EMIT_MIME not in data:
            continue
        payload = data[EMIT_MIME]
        if type(payload) is not dict or type(payload.get("name")) is not str or "value" not in payload:
            bad.append("malformed emitted value")
            continue
        if payload.get("slug") != slug:
            bad.append(f"value emitted for another exercise ({str(payload.get('slug'))[:40]!r})")
            continue
        tol = {k: payload[k] for k in ("rtol", "atol") if type(payload.get(k)) in (int, float)}
        values.append((payload["name"], payload["value"], tol))
    return values, bad


def compare(ref: list[tuple[str, Any, dict]], got: list[tuple[str, Any, dict]]) -> str | None:
    """None when the learner's emitted sequence matches the reference's; else the first difference."""
    for k, (name, value, tol) in enumerate(ref):
        if k >= len(got):
            return f"no value emitted for {name!r}"
        gname, gvalue, _ = got[k]  # the learner's tolerances are ignored
        if gname != name:
            return f"emitted {gname!r} where {name!r} was expected"
        diff = plain_difference(value, gvalue, float(tol.get("rtol", RTOL)), float(tol.get("atol", ATOL)))
        if diff:
            return f"{name}: {diff}"
    if len(got) > len(ref):
        return f"{len(got) - len(ref)} unexpected extra emitted value(s)"
    return None


def cell_states(raw: RawResult, n_cells: int) -> list[str]:
    """Per code cell: ok, error, output_limit, or why it has no result (timeout, budget, crashed, not_run)."""
    states = []
    first_missing = True
    for i in range(n_cells):
        line = raw.cells.get(i)
        if line is not None:
            states.append(line["status"])
            continue
        if first_missing:
            first_missing = False
            if raw.status in ("timeout", "budget"):
                states.append(raw.status)
            elif raw.signal is not None or (raw.code not in (None, 0)) or raw.status in ("worker_died",
                                                                                          "worker_error"):
                states.append("crashed")
            else:
                states.append("missing")
        else:
            states.append("not_run")
    return states


def first_error(line: dict | None) -> str:
    if not line:
        return ""
    for out in line.get("outputs", []):
        if type(out) is dict and out.get("output_type") == "error":
            ename, evalue = str(out.get("ename", "")), str(out.get("evalue", ""))
            return f"{ename}: {evalue}"[:500]
    return ""


def reference_values(sol: Sanitised, raw: RawResult) -> dict[str, list[tuple[str, Any, dict]]]:
    """Values the solution's hidden cells emitted; the solution failing its own checks is an error."""
    states = cell_states(raw, len(sol.code_cells))
    refs = {}
    for gid, pos in sol.grade_cells.items():
        if states[pos] != "ok":
            raise RuntimeError(f"the solution fails its own test cell {gid!r} ({states[pos]}): "
                               f"{first_error(raw.cells.get(pos))} [run: {raw.status}, exit code {raw.code}, "
                               f"signal {raw.signal}, {raw.error[-300:]}]")
        values, bad = emitted(raw.cells[pos]["outputs"], gid)
        if bad:
            raise RuntimeError(f"the solution's test cell {gid!r} emitted malformed values: {bad}")
        refs[gid] = values
    return refs


def judge(notebook: str, sub: Sanitised, raw: RawResult, refs: dict[str, list]) -> list[Exercise]:
    """Score every test cell of one notebook."""
    states = cell_states(raw, len(sub.code_cells))
    result = []
    for gid, max_points in sub.points.items():
        ex = Exercise(gid, notebook, max_points)
        pos = sub.grade_cells.get(gid)
        if pos is None:
            ex.status, ex.reason = "error", "the test cell is missing and could not be restored"
            result.append(ex)
            continue
        state = states[pos]
        line = raw.cells.get(pos)
        tampered = line.get("tampered") if line and type(line.get("tampered")) is list else []
        if tampered:  # worth an instructor's look even when the check failed anyway
            ex.flags.append("tampered: " + ", ".join(str(t) for t in tampered[:5]))
        if state != "ok":
            ex.status = "failed" if state == "error" else state
            ex.reason = first_error(line) or {
                "timeout": "a cell ran past its time limit before this check",
                "budget": "the notebook ran past its total time budget before this check",
                "crashed": "the Python process died (os._exit, a crash or a limit) before this check finished",
                "not_run": "an earlier cell stopped the notebook, so this check never ran",
                "missing": "no result was reported for this check",
                "output_limit": "the check's output was over the size limit",
            }.get(state, state)
            if state in ("timeout", "budget", "crashed", "missing", "output_limit"):
                ex.flags.append(state)
            result.append(ex)
            continue
        got, bad = emitted(line.get("outputs"), gid)
        ref = refs.get(gid, [])
        diff = compare(ref, got)
        if tampered:
            ex.status, ex.reason = "tampered", "library functions the checks rely on were replaced: " + ", ".join(
                str(t) for t in tampered[:5])
        elif bad:
            ex.status, ex.reason = "failed", "; ".join(bad[:3])
            ex.flags.append("malformed emitted values")
        elif diff:
            ex.status, ex.reason = "failed", "a graded check's value differs from the solution's: " + diff
            # The sandbox said every check passed, yet the values are wrong: someone fooled the checks.
            ex.flags.append("checks passed in the sandbox but the values are wrong")
        else:
            ex.status, ex.score = "passed", max_points
            if not ref:
                ex.flags.append("this exercise emits no values: judged by the cell's status only")
        ex.score = min(max(ex.score, 0.0), max_points)
        result.append(ex)
    return result
