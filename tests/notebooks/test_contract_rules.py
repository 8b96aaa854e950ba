"""Every rule of the exercise contract that a program can check, over every chapter (tests/helpers/rules.py):
cell anatomy, points, locks and tags of checks cells, hidden blocks that emit, no committed outputs, the
notebook header and seed, slugs unique across the course and never dropped once released, and errata
ids named in misconception boxes."""

from __future__ import annotations

import pytest

from tests.helpers.notebooks import ROOT, solution_notebooks
from tests.helpers.rules import course_problems, notebook_problems, slugs

pytestmark = pytest.mark.notebooks
RELEASED_SLUGS = ROOT / "docs" / "released-slugs.txt"


@pytest.mark.parametrize("path", solution_notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_follows_the_contract(path):
    assert notebook_problems(path) == []


def test_course_follows_the_contract():
    assert course_problems(ROOT / "solutions", ROOT / "book") == []


def test_released_slugs_never_disappear():
    """Gradebooks key on slugs: one released stays (docs/released-slugs.txt lists them); a new one is added there."""
    listed = [ln.split("#")[0].strip() for ln in RELEASED_SLUGS.read_text(encoding="utf-8").splitlines()]
    listed = [s for s in listed if s]
    present = set(slugs(ROOT / "solutions"))
    assert not [s for s in listed if s not in present], "released slugs were renamed or removed"
    assert not sorted(present - set(listed)), "new slugs: add them to docs/released-slugs.txt"


def test_a_hidden_blocks_checks_and_emits_must_judge_alike():
    """The rule catches a check whose tolerance or layout the judge would not use."""
    from tests.helpers.rules import comparison_problems

    same = 'emit("s", "a", got, rtol=1e-6)\nexpect_close(got, want, call="f()", rtol=1e-6)\n'
    assert comparison_problems(same) == []
    assert comparison_problems('emit("s", "a", got)\nexpect_close(got, want, call="f()")\n') == []
    looser = 'emit("s", "a", got)\nexpect_close(got, want, call="f()", rtol=1e-3)\n'
    assert comparison_problems(looser) == [
        "expect_close uses rtol=0.001, atol=1e-08, which no emit of the block carries"]
    layout = 'emit("s", "a", got)\nexpect_equal(got, want, call="f()", layout=True)\n'
    assert comparison_problems(layout) == ["the checks compare strides but no emit says layout=True"]
    strides = 'emit("s", "a", got, layout=True)\nexpect_tensor(got, call="f()", stride=(3, 1))\n'
    assert comparison_problems(strides) == []


def test_a_checks_cell_reads_only_its_own_names_the_libraries_and_the_answers():
    from tests.helpers.rules import free_name_problems

    own = ("from torchcourse.grading import call\nx = torch.ones(2)\n\n\n"
           "def helper(v):\n    return call(answer, v)\n\n\n"
           "helper(x)\ntry:\n    pass\nexcept ValueError as err:\n    print(err, [k for k in range(2)])\n")
    assert free_name_problems(own, {"answer"}) == []
    assert free_name_problems("call(answer, mse)\n", {"answer"}) == [
        "reads 'mse', which is neither its own, a library's nor a learner's answer"]
    assert free_name_problems("def f():\n    return lesson_helper(1)\n", set()) == [
        "reads 'lesson_helper', which is neither its own, a library's nor a learner's answer"]
