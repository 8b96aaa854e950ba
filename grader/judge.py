"""Judge outside the sandbox: compare what each hidden cell emitted with the solution's values.

The sandbox's account of a test cell (its status, its outputs) is a claim made by a
process that ran learner code; it can be forged. An exercise therefore scores only if
(1) the test cell ran to the end without error, (2) every value it emitted equals the
value the same hidden cell emitted on solutions/ with the same grader-chosen seed (same
names, same order, nothing missing, nothing extra; values taken by the sandbox's audit hook,
not from the cell's outputs), compared as the solution's emit says (its tolerances, and its
layout flag), and (3) the sandbox recorded no tampering in this cell or any cell before it
(grader/README.md, "Threat model"). Missing or malformed values fail. Tolerances and layout
come only from the reference side. Scores are clamped to [0, max].
"""

from __future__ import annotations

from typing import Any

from grader.record import Exercise, ExerciseStatus
from grader.sanitise import Sanitised
from grader.wire import CellResult, CellStatus, RawResult
from torchcourse.contract import ATOL, RTOL, plain_difference


def emitted(records: Any, slug: str) -> tuple[list[tuple[str, Any, dict]], list[str]]:
    """The (name, value, tolerances) a hidden block emitted for `slug`, in order, and any malformed records.

    `records` are what the sandbox's audit hook took from ``torchcourse.grading.emit`` calls made by the
    hidden block itself (a display output carrying the emit MIME type counts for nothing)."""
    values, bad = [], []
    if type(records) is not list:
        return values, ["emitted values are not a list"]
    for payload in records:
        if type(payload) is not dict or type(payload.get("name")) is not str or "value" not in payload:
            bad.append("malformed emitted value")
            continue
        if payload.get("slug") != slug:
            bad.append(f"value emitted for another exercise ({str(payload.get('slug'))[:40]!r})")
            continue
        how = {k: payload[k] for k in ("rtol", "atol") if type(payload.get(k)) in (int, float)}
        if payload.get("layout") is True:
            how["layout"] = True
        values.append((payload["name"], payload["value"], how))
    return values, bad


def compare(ref: list[tuple[str, Any, dict]], got: list[tuple[str, Any, dict]]) -> str | None:
    """None when the learner's emitted sequence matches the reference's; else the first difference. Each
    value is compared as the solution's check compared it (its tolerances, and strides only where it asked
    for a layout): the same ``plain_difference`` the checks in the kernel use."""
    for k, (name, value, how) in enumerate(ref):
        if k >= len(got):
            return f"no value emitted for {name!r}"
        gname, gvalue, _ = got[k]  # the learner's comparison is ignored
        if gname != name:
            return f"emitted {gname!r} where {name!r} was expected"
        diff = plain_difference(value, gvalue, float(how.get("rtol", RTOL)), float(how.get("atol", ATOL)),
                                layout=how.get("layout") is True)
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
        if line is not None and line.status != CellStatus.UNFINISHED:
            states.append(line.status)
            continue
        if first_missing:
            first_missing = False
            if raw.status in ("timeout", "budget"):
                states.append(raw.status)
            elif raw.signal is not None or (raw.code not in (None, 0)) or raw.status.grader_side:
                states.append("crashed")
            else:
                states.append("missing")
        else:
            states.append("not_run")
    return states


def first_error(line: CellResult | None) -> str:
    if line is None:
        return ""
    for out in line.outputs:
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
        values, bad = emitted(raw.cells[pos].emits, gid)
        if bad:
            raise RuntimeError(f"the solution's test cell {gid!r} emitted malformed values: {bad}")
        refs[gid] = values
    return refs


def _tampering(raw: RawResult, upto: int) -> list[str]:
    """Tampering records of every cell up to and including `upto`: what an earlier cell did (a trace
    function set in an answer cell, a patched library) works on every check after it."""
    found = []
    for i in sorted(k for k in raw.cells if k <= upto):
        found += [str(x)[:200] for x in raw.cells[i].tampered]
    return list(dict.fromkeys(found))


def learner_reason(line: CellResult | None, before_hidden: bool) -> str:
    """What a learner may read about a failed checks cell. Only what provably came before any hidden code
    was in the process is quoted (an error of the visible checks, which the learner can rerun at home
    anyway); afterwards learner code could have smuggled hidden cases into any message it shapes (an
    exception's text, a returned string in "f(x) returned ..."), so the learner reads which kind of check
    failed, not its text. The instructor has the text in ``detail``."""
    if line is None:
        return ""
    for k, out in enumerate(line.outputs):
        if type(out) is dict and out.get("output_type") == "error":
            ename, evalue = str(out.get("ename", "")), str(out.get("evalue", ""))
            if ename == "NotImplementedError":
                return "not answered yet (the answer cell still raises NotImplementedError)"
            if k < line.shown:
                if before_hidden:
                    return f"{ename}: {evalue}"[:500]
                # an exception's class name is learner text too: quoted only as a short identifier
                kind = ename if ename.isidentifier() and len(ename) <= 40 else "an error"
                return f"a visible check failed ({kind}); run this exercise's checks in your notebook to see why"
            return "a graded check (with more cases than the visible ones) failed"
    return ""


def _hidden_started(raw: RawResult, grade_positions) -> int:
    """The position of the first checks cell whose hidden block ran (its visible part passed); beyond the
    last cell when none did."""
    for pos in sorted(grade_positions):
        line = raw.cells.get(pos)
        if line is None:
            continue
        if not any(type(o) is dict and o.get("output_type") == "error" for o in line.outputs[:line.shown]):
            return pos
    return 1 << 30


def judge(notebook: str, sub: Sanitised, raw: RawResult, refs: dict[str, list]) -> list[Exercise]:
    """Score every test cell of one notebook."""
    states = cell_states(raw, len(sub.code_cells))
    hidden_from = _hidden_started(raw, sub.grade_cells.values())
    result = []
    for gid, max_points in sub.points.items():
        ex = Exercise(gid, notebook, max_points)
        pos = sub.grade_cells.get(gid)
        if pos is None:
            ex.status, ex.reason = ExerciseStatus.ERROR, "the test cell is missing and could not be restored"
            result.append(ex)
            continue
        state = states[pos]
        line = raw.cells.get(pos)
        tampered = _tampering(raw, pos)
        if tampered:  # scores 0 whatever the checks said; the instructor sees why
            ex.status = ExerciseStatus.TAMPERED
            ex.reason = "the notebook interfered with the grader's checks, so this exercise is not scored"
            ex.flags.append("tampered: " + "; ".join(tampered[:5]))
            result.append(ex)
            continue
        if state != "ok":
            ex.status = ExerciseStatus.FAILED if state == CellStatus.ERROR else ExerciseStatus(state)
            ex.detail = first_error(line)
            ex.reason = learner_reason(line, pos <= hidden_from) or {
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
        got, bad = emitted(line.emits, gid)
        ref = refs.get(gid, [])
        diff = compare(ref, got)
        if bad:
            ex.status, ex.reason = ExerciseStatus.FAILED, "; ".join(bad[:3])
            ex.flags.append("malformed emitted values")
        elif diff:
            # The learner reads which value differs, not the solution's value (hidden test data).
            ex.status, ex.detail = ExerciseStatus.FAILED, diff
            ex.reason = "a graded check's value differs from the solution's (" + diff.split(":")[0][:80] + ")"
            # The sandbox said every check passed, yet the values are wrong: someone fooled the checks.
            ex.flags.append("checks passed in the sandbox but the values are wrong")
        elif not ref:
            # Nothing to compare outside: a status claimed inside the learner's process is no proof.
            ex.status = ExerciseStatus.UNVERIFIED
            ex.reason = "the grader has no values to compare for this exercise; your instructor will review it"
            ex.flags.append("this exercise emits no values: unverified, scored 0 until reviewed")
        else:
            ex.status, ex.score = ExerciseStatus.PASSED, max_points
        ex.score = min(max(ex.score, 0.0), max_points)
        result.append(ex)
    if result and raw.notes:  # what the sandbox saw of the whole run (its temp space full, ...), said once
        result[0].flags += [str(n) for n in raw.notes]
    return result
