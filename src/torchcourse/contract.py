"""The exercise contract as data: one place for what release, grading, feedback and the site agree on.

``docs/exercise-contract.md`` says the rules in words; this module holds the parts a program
needs: the emit MIME type, nbgrader's region markers, which cell is a checks cell, how a cell
splits into outside / solution / hidden regions, which lines are secret, default tolerances,
and the time limits. It imports neither torch nor nbgrader, so notebooks, the grader, its
sandbox child and the site extension can all import it cheaply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

# --------------------------------------------------------------------------- what is emitted

#: The MIME type of a value a hidden check emits: JupyterLab and the site render nothing for it.
EMIT_MIME = "application/vnd.torchcourse.emit+json"

#: Default tolerances for floats, when an exercise's reference run names none.
RTOL = 1e-5
ATOL = 1e-8

# --------------------------------------------------------------------------- nbgrader's markers
# nbgrader's defaults (ClearSolutions.begin_solution_delimeter, ClearHiddenTests.begin_test_delimeter,
# with the course's "###" comment prefix); tests/unit/test_contract.py checks they still agree.

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
REGIONS = {"solution": (BEGIN_SOLUTION, END_SOLUTION), "hidden": (BEGIN_HIDDEN, END_HIDDEN)}
MARKERS = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)

# --------------------------------------------------------------------------- time limits
# One source, so a learner's `python -m grader check` and the grader agree on whether a cell
# that runs for 90 seconds passes.

#: Wall seconds one cell may run before it is interrupted.
CELL_TIMEOUT_S = 60
#: Wall seconds a whole notebook may take in the grader.
NOTEBOOK_BUDGET_S = 300
#: How long a hidden block should take on one core (an authoring rule, checked by the benchmark).
HIDDEN_BLOCK_S = 2.0

# --------------------------------------------------------------------------- cells


def cell_source(cell: Mapping) -> str:
    """A cell's source as one string, whether stored as a string or a list of lines."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def nbgrader_meta(cell: Mapping) -> Mapping:
    meta = cell.get("metadata", {})
    nbg = meta.get("nbgrader", {}) if isinstance(meta, Mapping) else {}
    return nbg if isinstance(nbg, Mapping) else {}


def grade_id(cell: Mapping) -> str | None:
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def is_checks_cell(cell: Mapping) -> bool:
    """nbgrader's "Autograder tests": a graded code cell that is not an answer (nbgrader.utils' is_grade
    and not is_solution)."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and meta.get("grade") is True and not meta.get("solution")


def is_answer_cell(cell: Mapping) -> bool:
    """nbgrader's "Autograded answer": a code cell the learner writes, not itself graded."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and meta.get("solution") is True and not meta.get("grade")


# --------------------------------------------------------------------------- regions


def split_regions(source: str) -> list[tuple[str, str]]:
    """``[(kind, line), ...]`` for each line of a cell: kind is ``outside``, ``solution``, ``hidden``
    or ``marker``. A region runs from its begin marker to its end marker (or the cell's end)."""
    out: list[tuple[str, str]] = []
    inside: str | None = None
    for line in source.splitlines():
        text = line.strip()
        begin = next((k for k, (b, _) in REGIONS.items() if text.startswith(b)), None)
        end = next((k for k, (_, e) in REGIONS.items() if text.startswith(e)), None)
        if begin is not None:
            inside = begin
            out.append(("marker", line))
        elif end is not None:
            inside = None
            out.append(("marker", line))
        else:
            out.append((inside or "outside", line))
    return out


def region_lines(sources: Iterable[str], kinds: set[str]) -> tuple[set[str], set[str]]:
    """(inside, outside): stripped lines inside a region of one of ``kinds``, and the lines outside every
    region, over many cells."""
    inside: set[str] = set()
    outside: set[str] = set()
    for source in sources:
        for kind, line in split_regions(source):
            if kind in kinds:
                inside.add(line.strip())
            elif kind == "outside":
                outside.add(line.strip())
    return inside, outside


#: The shortest line that counts as a secret: shorter ones (``return x``) say nothing about an answer.
SECRET_MIN_CHARS = 13


def secret_lines(sources: Iterable[str], kinds: set[str] = frozenset({"solution", "hidden"})) -> set[str]:
    """The one rule for what must never reach a learner: every stripped line inside a region of
    ``kinds`` that is at least ``SECRET_MIN_CHARS`` long, is not a comment, and does not also appear
    outside every region (a line the learner already sees is no secret)."""
    inside, outside = region_lines(list(sources), set(kinds))
    return {t for t in inside - outside if len(t) >= SECRET_MIN_CHARS and not t.startswith("#")}


# --------------------------------------------------------------------------- judging plain values


def plain_difference(ref: Any, got: Any, rtol: float = RTOL, atol: float = ATOL, path: str = "") -> str | None:
    """None when ``got`` matches ``ref``; else where and how it differs. Both are plain JSON data as
    ``torchcourse.grading.to_plain`` makes it. Types are compared exactly: ``bool``, ``int``, ``float``
    and ``str`` differ from one another (a ``1.0`` is not a ``1``, a ``True`` not a ``1``); floats match
    within ``rtol``/``atol`` (NaN and infinities are encoded and must match exactly)."""
    where = path or "value"
    if type(ref) is not type(got):
        return f"{where}: got {type_name(got)} {_short(got)}, expected {type_name(ref)} {_short(ref)}"
    if type(ref) is float:
        if math.isfinite(ref) and math.isfinite(got) and abs(got - ref) <= atol + rtol * abs(ref):
            return None
        return f"{where}: got {_short(got)}, expected {_short(ref)}"
    if type(ref) is dict:
        if set(ref) == {"error"} and set(got) == {"error"}:  # both raised: the exception type must agree
            rt, gt = str(ref["error"]).split(":")[0], str(got["error"]).split(":")[0]
            return None if rt == gt else f"{where}: raised {gt}, expected {rt}"
        if set(ref) != set(got):
            return f"{where}: got {_short(got)}, expected {_short(ref)}"
        for k in ref:
            diff = plain_difference(ref[k], got[k], rtol, atol, f"{path}.{k}" if path else k)
            if diff:
                return diff
        return None
    if type(ref) is list:
        if len(ref) != len(got):
            return f"{where}: {len(got)} items, expected {len(ref)}"
        for i, (r, g) in enumerate(zip(ref, got)):
            diff = plain_difference(r, g, rtol, atol, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if ref == got else f"{where}: got {_short(got)}, expected {_short(ref)}"


def type_name(plain: Any) -> str:
    """What a plain value was before encoding, in a learner's words (``a tuple``, ``a float``, ...)."""
    if type(plain) is dict:
        if "tuple" in plain and len(plain) == 1:
            return "a tuple"
        if plain.get("kind") in ("tensor", "ndarray"):
            return f"a {plain['kind']} of dtype {plain.get('dtype')}"
        if plain.get("kind") == "numpy-scalar":
            return f"a NumPy {plain.get('dtype')} scalar"
        if set(plain) == {"float"}:
            return "a float"
        if set(plain) == {"error"}:
            return "an error"
        return "a dict"
    return {bool: "a bool", int: "an int", float: "a float", str: "a str", list: "a list",
            type(None): "None"}.get(type(plain), type(plain).__name__)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."
