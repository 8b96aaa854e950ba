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
