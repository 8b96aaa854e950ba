"""Every exercise scores exactly what its task says, judged as autograde judges.

A checks cell scores in the course grader only when it ran to the end *and* every value its hidden block
emitted matches the solution's values under the same grader seed (``grader.judge.compare``, the judge
itself); plain nbgrader scores it when it ran to the end. So, under many seeds, in one real kernel per
notebook that has run the whole solution notebook:

- each listed RIGHT answer (``wrong_answers/<slug>.py``) passes the checks and emits values the judge
  matches with the solution's: full marks in both graders;
- each listed WRONG answer fails the checks with their own ``CheckFailed`` (not any error): 0 in both;
- answers no list names, generated from the solution (each function its answer cell defines, or each
  method of a class it defines, wrapped): its results with other strides, as copies, with
  float noise far inside any stated tolerance, or with its inputs copied first, score full marks; the
  solution changing its inputs after it ran scores full marks unless the task forbids it, and then fails;
  a task about layout, views or exact values fails the variants that break them (its ``FAILING_VARIANTS``
  says why);
- no public function of the ``torchcourse`` library scores as the answer to any exercise.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest

from grader.judge import compare, emitted
from tests.helpers.answer_kernel import AnswerKernel, defined_functions, defined_names
from tests.helpers.notebooks import grade_id, is_checks_cell, solution_notebooks
from torchcourse.contract import HIDDEN_BLOCK_S
from torchcourse.grading import DEFAULT_SEED

pytestmark = pytest.mark.notebooks

ANSWERS_DIR = Path(__file__).parent / "wrong_answers"
#: The learner's default seed and 19 others: no answer passes or fails by the luck of one draw.
SEEDS = [DEFAULT_SEED] + [1_000_003 * k + 17 for k in range(1, 20)]
#: Generated variants and library functions are judged under fewer seeds: they are many.
FEW_SEEDS = SEEDS[:3]

#: What a variant does to the solution's functions (see _VARIANTS below).
VARIANTS = ("restrided", "copied", "noisy", "inputs-copied", "inputs-changed")



def _answer_lists() -> dict[str, dict]:
    """wrong_answers/<slug>.py of every exercise: WRONG and RIGHT (lists of answer-cell sources), and where a
    task makes a generated variant wrong, FAILING_VARIANTS = {variant: why} (each must then score less: an
    entry is a claim the test checks, not a skip)."""
    return {module.stem: runpy.run_path(str(module)) for module in sorted(ANSWERS_DIR.glob("*.py"))}


ANSWERS = _answer_lists()

# Installed in the kernel once: wrap a solution function so that its results or inputs change as a variant
# says, keeping what it computes right (or, for inputs-changed, changing what the caller passed).
_VARIANTS = r"""
import math as _tc_math
import numpy as _tc_np
import torch as _tc_torch
from torchcourse.grading import fresh as _tc_fresh


def _tc_map(value, f):
    if type(value) in (list, tuple):
        return type(value)(_tc_map(v, f) for v in value)
    if type(value) is dict:
        return {k: _tc_map(v, f) for k, v in value.items()}
    return f(value)


def _tc_restride(v):
    # the same values in a tensor whose strides are all doubled (differentiable, so graphs survive)
    if type(v) is _tc_torch.Tensor and v.dim() >= 1 and v.layout == _tc_torch.strided:
        return _tc_torch.stack([v, v], -1)[..., 0]
    if type(v) is _tc_np.ndarray and v.ndim >= 1:
        return _tc_np.stack([v, v], -1)[..., 0]
    return v


def _tc_copy(v):
    if type(v) is _tc_torch.Tensor:
        return v.clone()
    if type(v) is _tc_np.ndarray:
        return v.copy()
    return v


def _tc_noise(v):
    # one unit in the last place for float32, a relative 1e-12 for float64: far inside any tolerance a task
    # states for floats; zeros stay zeros, so an absolute tolerance of 0 is never tested by noise alone
    if type(v) is float and _tc_math.isfinite(v):
        return v * (1 + 1e-12)
    if type(v) is _tc_torch.Tensor and v.dtype in (_tc_torch.float32, _tc_torch.float64):
        if v.dtype == _tc_torch.float64:
            return v * (1 + 1e-12)
        up = _tc_torch.nextafter(v.detach(), _tc_torch.full_like(v.detach(), _tc_math.inf))
        bump = _tc_torch.where(_tc_torch.isfinite(v.detach()) & (v.detach() != 0), up - v.detach(), 0.0)
        return v + bump
    if type(v) is _tc_np.ndarray and v.dtype in (_tc_np.float32, _tc_np.float64):
        return _tc_np.where(_tc_np.isfinite(v) & (v != 0), _tc_np.nextafter(v, _tc_np.inf, dtype=v.dtype), v)
    return v


def _tc_change(v):
    with _tc_torch.no_grad():
        if type(v) is _tc_torch.Tensor and not v.requires_grad and v.numel():
            if v.dtype == _tc_torch.bool:
                v.logical_not_()
            else:
                v.add_(1)
        elif type(v) is _tc_np.ndarray and v.flags.writeable and v.size:
            if v.dtype == bool:
                _tc_np.logical_not(v, out=v)
            else:
                v += 1
    return v


def _tc_wrapped(original, variant, first_kept):
    # first_kept: a method's self, or an autograd Function's ctx, is never copied or changed
    def wrapped(*args, **kwargs):
        kept, rest = args[:first_kept], args[first_kept:]
        if variant == "inputs-copied":
            rest, kwargs = _tc_fresh(rest), _tc_fresh(kwargs)
        result = original(*kept, *rest, **kwargs)
        if variant == "restrided":
            return _tc_map(result, _tc_restride)
        if variant == "copied":
            return _tc_map(result, _tc_copy)
        if variant == "noisy":
            return _tc_map(result, _tc_noise)
        if variant == "inputs-changed":
            result = _tc_map(result, _tc_copy)
            _tc_map((rest, kwargs), _tc_change)
        return result

    wrapped.__name__, wrapped.__qualname__, wrapped.__doc__ = original.__name__, original.__qualname__, original.__doc__
    wrapped.__wrapped__ = original
    return wrapped


def _tc_wrap(name, variant):
    original = globals()[name]
    if not isinstance(original, type):
        globals()[name] = _tc_wrapped(original, variant, 0)
        return
    # a class: each method its body defines, so what the checks drive through it changes as the variant says
    function_ctx = issubclass(original, _tc_torch.autograd.Function)
    for attr, member in list(vars(original).items()):
        if isinstance(member, staticmethod):
            kept = 1 if function_ctx and attr in ("forward", "backward", "jvp", "setup_context") else 0
            setattr(original, attr, staticmethod(_tc_wrapped(member.__func__, variant, kept)))
        elif isinstance(member, classmethod):
            setattr(original, attr, classmethod(_tc_wrapped(member.__func__, variant, 1)))
        elif callable(member) and not isinstance(member, type) and attr not in ("__repr__", "__str__"):
            setattr(original, attr, _tc_wrapped(member, variant, 1))
"""

# The library's public functions, each once: (dotted name, number of required positional parameters, and
# whether it takes any number of positional arguments).
_LIBRARY = r"""
import importlib as _tc_importlib, inspect as _tc_inspect, pkgutil as _tc_pkgutil
import torchcourse as _tc_course
_tc_library = {{}}
for _tc_m in _tc_pkgutil.walk_packages(_tc_course.__path__, "torchcourse."):
    if _tc_m.name.split(".")[1] in {skip!r}:
        continue
    _tc_mod = _tc_importlib.import_module(_tc_m.name)
    for _tc_n, _tc_f in vars(_tc_mod).items():
        if not _tc_n.startswith("_") and _tc_inspect.isfunction(_tc_f) and _tc_f.__module__ == _tc_mod.__name__:
            _tc_library[_tc_m.name + "." + _tc_n] = _tc_f
"""
#: Library modules that are the course's machinery, not its subject: none of them is an answer to anything.
LIBRARY_MACHINERY = ("grading", "contract", "setup_check", "widgets", "budgets")


def _exercises() -> list[tuple[Path, str]]:
    found = []
    for path in solution_notebooks():
        nb = nbformat.read(path, as_version=4)
        found += [(path, grade_id(c)) for c in nb.cells if is_checks_cell(c)]
    return found


EXERCISES = _exercises()
_NOTEBOOK_OF = {slug: path for path, slug in EXERCISES}


def _listed() -> list[tuple[Path, str, str, int, str]]:
    cases = []
    for slug, answers in ANSWERS.items():
        assert slug in _NOTEBOOK_OF, f"wrong_answers/{slug}.py: no exercise with grade_id {slug!r}"
        for kind in ("WRONG", "RIGHT"):
            cases += [(_NOTEBOOK_OF[slug], slug, kind, i, source) for i, source in enumerate(answers.get(kind, []))]
    return cases


LISTED = _listed()


class Kernels:
    """One kernel per solution notebook, and the solution's own emitted values per (slug, seed)."""

    def __init__(self, tmp_path_factory):
        self.tmp = tmp_path_factory
        self.kernels: dict[Path, AnswerKernel] = {}
        self.references: dict[str, dict[int, list]] = {}

    def __call__(self, path: Path) -> AnswerKernel:
        if path not in self.kernels:
            self.kernels[path] = AnswerKernel(path, self.tmp.mktemp("answers"))
        return self.kernels[path]

    def reference(self, path: Path, slug: str) -> dict[int, list]:
        """The solution's emitted values for `slug` under every seed, as the judge reads them."""
        if slug not in self.references:
            refs = {}
            for seed, outcome, message, records in self(path).check_under_seeds(slug, SEEDS):
                assert outcome == "passed", f"the solution fails its own checks for {slug} (seed {seed}): {message}"
                values, bad = emitted(records, slug)
                assert values and not bad, f"{slug}: the solution emitted {len(values)} values, malformed: {bad}"
                refs[seed] = values
            self.references[slug] = refs
        return self.references[slug]

    def close(self):
        for kernel in self.kernels.values():
            kernel.close()


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    pool = Kernels(tmp_path_factory)
    yield pool
    pool.close()


def _scores(kernels: Kernels, path: Path, slug: str, seeds: list[int]) -> list[tuple[int, str, str, str | None]]:
    """(seed, checks outcome, message, the judge's difference or None) of the answer the kernel holds now."""
    refs = kernels.reference(path, slug)
    rows = []
    for seed, outcome, message, records in kernels(path).check_under_seeds(slug, seeds):
        got, bad = emitted(records, slug)
        rows.append((seed, outcome, message, "; ".join(bad) or compare(refs[seed], got)))
    return rows


def _full_marks(row) -> bool:
    """Full marks in the course grader (the checks ran to the end and the judge matched every value), which
    implies full marks in plain nbgrader (the checks ran to the end)."""
    _, outcome, _, difference = row
    return outcome == "passed" and difference is None


def _case_id(case) -> str:
    path, slug, kind, index, _ = case
    return f"{path.parent.name}/{slug}/{kind}/{index}"


@pytest.mark.parametrize("path,slug,kind,index,source", LISTED, ids=[_case_id(c) for c in LISTED])
def test_a_listed_answer_scores_what_it_deserves(kernels, path, slug, kind, index, source):
    kernel = kernels(path)
    kernels.reference(path, slug)
    ok, err = kernel.run(source)
    assert ok, f"the {kind} answer #{index} for {slug} does not even define: {err}"
    try:
        rows = _scores(kernels, path, slug, SEEDS)
    finally:
        kernel.restore(slug)
    if kind == "RIGHT":
        lost = [r for r in rows if not _full_marks(r)]
        assert not lost, f"{slug}: right answer #{index} loses marks (seed, checks, message, judge): {lost[:3]}"
    else:
        # the checks cell itself fails, so plain nbgrader gives 0 as well as the course grader
        escaped = [r[:3] for r in rows if r[1] != "CheckFailed"]
        assert not escaped, f"{slug}: wrong answer #{index} was not failed by the checks themselves: {escaped[:3]}"


def test_every_exercise_lists_three_right_alternatives_and_its_wrong_answers():
    counts = {slug: {"RIGHT": 0, "WRONG": 0} for _, slug in EXERCISES}
    for _, slug, kind, _, _ in LISTED:
        counts[slug][kind] += 1
    short = {slug: c for slug, c in counts.items() if c["RIGHT"] < 3 or c["WRONG"] < 1}
    assert not short, f"exercises with fewer than 3 RIGHT or no WRONG answers listed: {short}"


_VARIANT_CASES = [(path, slug, variant) for path, slug in EXERCISES for variant in VARIANTS]


@pytest.mark.parametrize("path,slug,variant", _VARIANT_CASES,
                         ids=[f"{p.parent.name}/{s}/{v}" for p, s, v in _VARIANT_CASES])
def test_a_generated_variant_of_the_solution_scores_as_its_task_says(kernels, path, slug, variant):
    kernel = kernels(path)
    names = defined_names(kernel.answer_source(slug))
    assert names, f"{slug}: its answer cell defines no function or class"
    kernels.reference(path, slug)
    ok, err = kernel.run(_VARIANTS)
    assert ok, err
    ok, err = kernel.run("\n".join(f"_tc_wrap({name!r}, {variant!r})" for name in names))
    assert ok, err
    try:
        rows = _scores(kernels, path, slug, FEW_SEEDS)
    finally:
        kernel.restore(slug)
    why = ANSWERS.get(slug, {}).get("FAILING_VARIANTS", {}).get(variant)
    if why is None:
        lost = [r for r in rows if not _full_marks(r)]
        assert not lost, (f"{slug}: the solution {variant} loses marks (seed, checks, message, judge): {lost[:2]}; "
                          f"if its task makes this variant wrong, say why in wrong_answers/{slug}.py's "
                          f"FAILING_VARIANTS = {{{variant!r}: '...'}}")
    else:
        kept = [r[0] for r in rows if _full_marks(r)]
        assert not kept, f"{slug}: the solution {variant} scores full marks under seeds {kept}, yet {why}"


@pytest.mark.parametrize("path,slug", EXERCISES, ids=[f"{p.parent.name}/{s}" for p, s in EXERCISES])
def test_no_library_function_is_an_answer(kernels, path, slug):
    """Each public function of the library in place of each function the answer defines (the others raising
    NotImplementedError, so only a function that answers alone can score)."""
    kernel = kernels(path)
    names = defined_functions(kernel.answer_source(slug))
    if not names:
        pytest.skip("the answer is a class: no library function can stand in for it")
    seed = FEW_SEEDS[1]
    refs = kernels.reference(path, slug)
    ok, err = kernel.run(_LIBRARY.format(skip=LIBRARY_MACHINERY))
    assert ok, err
    scored = []
    try:
        for name in names:
            stubs = "".join(f"def {other}(*a, **k):\n    raise NotImplementedError()\n" for other in names)
            ok, err = kernel.run(stubs)
            assert ok, err
            # a right answer's checks cell runs inside twice the hidden block's authoring limit (HIDDEN_BLOCK_S
            # for the hidden block, as much again for the visible checks)
            for dotted, outcome, records in kernel.check_with_each(slug, name, "_tc_library", seed,
                                                                   limit=2 * HIDDEN_BLOCK_S):
                got, bad = emitted(records, slug)
                if outcome == "passed" and not bad and compare(refs[seed], got) is None:
                    scored.append(f"{name} = {dotted}")
    finally:
        kernel.restore(slug)
    assert not scored, f"{slug}: one call into the course library answers it: {scored}"
