"""The exercise contract as data: one place for what release, grading, feedback and the site agree on.

``docs/exercise-contract.md`` says the rules in words; this module holds the parts a program
needs: the emit MIME type, nbgrader's region markers, which cell is a checks cell, how a cell
splits into outside / solution / hidden regions, which lines are secret, default tolerances,
and the time limits. It imports neither torch nor nbgrader, so notebooks, the grader, its
sandbox child and the site extension can all import it cheaply.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _

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
#: How long a hidden block should take on one core (an authoring rule; tests/notebooks/test_judged_answers.py
#: gives each checks cell twice this when it runs library functions in an answer's place).
HIDDEN_BLOCK_S = 2.0

# --------------------------------------------------------------------------- chapters


def chapters(solutions: Path) -> list[str]:
    """The course's chapters (nbgrader's assignments), in order: each folder of ``solutions/`` that holds a
    notebook, named ``NN-name`` by convention. The one list of chapters; nothing else names them, so a new
    chapter is a new folder."""
    return sorted(p.name for p in solutions.glob("*") if p.is_dir() and any(p.glob("*.ipynb")))


def chapter_number(chapter: str) -> int | None:
    """``03-parallel`` -> 3; None for a folder not named by the convention."""
    head = chapter.split("-", 1)[0]
    return int(head) if head.isdigit() else None


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


def hidden_split(source: str) -> tuple[list[str], list[str]]:
    """``(visible, hidden)`` lines of a cell: the hidden regions with their markers, and every other line, as
    ``split_regions`` reads them (the one reading of where a hidden block starts and ends)."""
    visible: list[str] = []
    hidden: list[str] = []
    for kind, line in split_regions(source):
        is_marker = kind == "marker" and line.strip().startswith((BEGIN_HIDDEN, END_HIDDEN))
        (hidden if kind == "hidden" or is_marker else visible).append(line)
    return visible, hidden


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
# The one definition of "equal" and "close": the checks in the learner's kernel (torchcourse.grading's
# expect_* helpers) and the grader's judge outside the sandbox both call plain_difference, with the
# tolerances the check used, so a value one side accepts the other accepts too.


def close_enough(got: float, ref: float, rtol: float, atol: float) -> bool:
    """``|got - ref| <= atol + rtol * |ref|`` in float64, as ``torch.isclose`` defines closeness."""
    return math.isfinite(ref) and math.isfinite(got) and abs(got - ref) <= atol + rtol * abs(ref)


def _is_array(plain: Any) -> bool:
    return type(plain) is dict and plain.get("kind") in ("tensor", "ndarray")


def _is_special_float(v: Any) -> bool:
    return type(v) is dict and set(v) == {"float"}


def _elements(data: Any, shape: list, prefix: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    """(index, element) of a tensor's nested data, in row-major order; a complex element is ``[re, im]``."""
    if len(prefix) == len(shape):
        yield prefix, data
        return
    for i, row in enumerate(data if type(data) is list else []):
        yield from _elements(row, shape, prefix + (i,))


def _scalar_difference(r: Any, g: Any, rtol: float, atol: float) -> float | None:
    """None when two tensor elements match; else how far apart they are (inf when not comparable)."""
    if type(r) is list and type(g) is list and len(r) == len(g):  # complex: real and imaginary parts
        worst = [_scalar_difference(a, b, rtol, atol) for a, b in zip(r, g)]
        bad = [w for w in worst if w is not None]
        return max(bad) if bad else None
    if type(r) is float and type(g) is float:
        return None if (r == g or close_enough(g, r, rtol, atol)) else abs(g - r)
    if r == g and type(r) is type(g):
        return None
    if type(r) in (int, float) and type(g) in (int, float) and type(r) is not bool and type(g) is not bool:
        return float(abs(g - r))
    return math.inf


def _same_text(ref: Any, got: Any) -> bool:
    """Whether two tensors' data are the same JSON text: then every element is the same value of the same
    type, and the element-by-element walk below would find nothing. Most values a check compares are equal,
    and the walk, in Python, cost the judge more than everything else it does."""
    try:
        return json.dumps(ref, allow_nan=False) == json.dumps(got, allow_nan=False)
    except (TypeError, ValueError):
        return False


def strides_match(shape: Iterable[int], ref: Iterable[int], got: Iterable[int]) -> bool:
    """Strides compared only where they mean something: PyTorch treats the stride of a dimension of size 0
    or 1 as arbitrary, and a tensor with no elements has no layout at all."""
    shape, ref, got = list(shape), list(ref), list(got)
    if any(n == 0 for n in shape):
        return True
    return len(ref) == len(got) == len(shape) and all(n <= 1 or a == b for n, a, b in zip(shape, ref, got))


def _array_difference(ref: dict, got: dict, rtol: float, atol: float, layout: bool, where: str) -> str | None:
    if ref.get("kind") != got.get("kind"):
        return _("{where}: got {got}, expected {want}").format(where=where, got=type_name(got), want=type_name(ref))
    if ref.get("dtype") != got.get("dtype"):
        message = _("{where}: got dtype {got}, expected dtype {want}")
        return message.format(where=where, got=got.get("dtype"), want=ref.get("dtype"))
    if ref.get("shape") != got.get("shape"):
        message = _("{where}: got shape {got}, expected shape {want}")
        return message.format(where=where, got=tuple(got.get("shape") or ()), want=tuple(ref.get("shape") or ()))
    if layout and not strides_match(ref.get("shape") or [], ref.get("stride") or [], got.get("stride") or []):
        message = _("{where}: got strides {got}, expected strides {want}")
        return message.format(where=where, got=tuple(got.get("stride") or ()), want=tuple(ref.get("stride") or ()))
    if _same_text(ref.get("data"), got.get("data")):
        return None
    shape = list(ref.get("shape") or [])
    first, worst, count = None, 0.0, 0
    for (index, r), (_same_index, g) in zip(_elements(ref.get("data"), shape), _elements(got.get("data"), shape)):
        if _is_special_float(r) or _is_special_float(g):
            far = None if r == g else math.inf
        else:
            far = _scalar_difference(r, g, rtol, atol)
        if far is not None:
            count += 1
            worst = max(worst, far)
            if first is None:
                first = (index, r, g)
    if first is None:
        return None
    index, r, g = first
    at = index if len(index) != 1 else index[0]
    text = _("{where}: {count} element(s) differ; the first at index {index}: got {got}, expected {want}").format(
        where=where, count=count, index=at, got=_short(g), want=_short(r))
    return text + (_("; largest difference {worst}").format(worst=f"{worst:.3g}") if math.isfinite(worst) else "")


def plain_difference(ref: Any, got: Any, rtol: float = RTOL, atol: float = ATOL, path: str = "",
                     layout: bool = False) -> str | None:
    """None when ``got`` matches ``ref``; else where and how it differs. Both are plain JSON data as
    ``torchcourse.grading.to_plain`` makes it. Types are compared exactly: ``bool``, ``int``, ``float``
    and ``str`` differ from one another (a ``1.0`` is not a ``1``, a ``True`` not a ``1``); floats match
    within ``rtol``/``atol`` in float64 (NaN and infinities must match exactly). Tensors and arrays agree
    in kind, dtype, shape and every element; their strides count only with ``layout`` (an exercise about
    memory layout), and then never in a dimension of size 0 or 1."""
    where = path or "value"
    if type(ref) is not type(got):
        return _typed_difference(where, got, ref)
    if type(ref) is float:
        if close_enough(got, ref, rtol, atol) or got == ref:
            return None
        return _("{where}: got {got}, expected {want} (difference {difference})").format(
            where=where, got=_short(got), want=_short(ref), difference=f"{abs(got - ref):.3g}")
    if type(ref) is dict:
        if set(ref) == {"error"} and set(got) == {"error"}:  # both raised: the exception type must agree
            rt, gt = str(ref["error"]).split(":")[0], str(got["error"]).split(":")[0]
            message = _("{where}: raised {got}, expected {want}")
            return None if rt == gt else message.format(where=where, got=gt, want=rt)
        if _is_array(ref) and _is_array(got):
            return _array_difference(ref, got, rtol, atol, layout, where)
        if len(ref) == 1 and set(ref) == set(got) and next(iter(ref)) in ("tuple", "dict"):  # a type tag
            return plain_difference(ref[next(iter(ref))], got[next(iter(got))], rtol, atol, path, layout)
        if set(ref) != set(got):
            return _typed_difference(where, got, ref)
        for k in ref:
            diff = plain_difference(ref[k], got[k], rtol, atol, f"{path}.{k}" if path else k, layout)
            if diff:
                return diff
        return None
    if type(ref) is list:
        if len(ref) != len(got):
            return _("{where}: {got} items, expected {want}").format(where=where, got=len(got), want=len(ref))
        for i, (r, g) in enumerate(zip(ref, got)):
            diff = plain_difference(r, g, rtol, atol, f"{path}[{i}]", layout)
            if diff:
                return diff
        return None
    if ref == got:
        return None
    return _("{where}: got {got}, expected {want}").format(where=where, got=_short(got), want=_short(ref))


def without_root(difference: str) -> str:
    """A difference without its leading "value: " (the whole value's name), in either language's punctuation:
    where the first line of a message already shows the whole value, the difference need not name it."""
    return re.sub(r"^value\s*[:\uff1a]\s*", "", difference)


def _typed_difference(where: str, got: Any, ref: Any) -> str:
    return _("{where}: got {got}, expected {want}").format(
        where=where, got=f"{type_name(got)} {_short(got)}", want=f"{type_name(ref)} {_short(ref)}")


#: How a message names each Python type (``type_name``), translated where it is shown.
_TYPE_NAMES = {bool: N_("a bool"), int: N_("an int"), float: N_("a float"), str: N_("a str"), list: N_("a list"),
               type(None): "None"}


def type_name(plain: Any) -> str:
    """What a plain value was before encoding, named as Python names it (``a tuple``, ``a float``,
    ``a torch.Tensor of dtype torch.float32``, ``a numpy.float64``), in the learner's language."""
    if type(plain) is dict:
        if "tuple" in plain and len(plain) == 1:
            return _("a tuple")
        if plain.get("kind") == "tensor":
            return _("a torch.Tensor of dtype {dtype}").format(dtype=plain.get("dtype"))
        if plain.get("kind") == "ndarray":
            return _("a numpy.ndarray of dtype {dtype}").format(dtype=plain.get("dtype"))
        if plain.get("kind") == "numpy-scalar":
            return _("a numpy.{dtype}").format(dtype=plain.get("dtype"))
        if set(plain) == {"float"}:
            return _("a float")
        if set(plain) == {"error"}:
            return _("an error")
        return _("a dict")
    return _(_TYPE_NAMES.get(type(plain), type(plain).__name__))


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."
