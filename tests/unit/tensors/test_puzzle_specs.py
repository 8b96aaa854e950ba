"""Chapter 1's loop specifications: the one a task shows is the one its check uses as the reference.

A puzzle's task shows a plain-loop ``*_spec`` function, and the checks cell defines the same function
and compares the learner's answer with it. If the two drifted apart, a learner would be graded against
a specification they were never shown.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

SOLUTIONS = Path(__file__).resolve().parents[3] / "solutions" / "01-tensors"
SPEC = re.compile(r"```python\n(def (\w+_spec)\(.*?)\n```", re.DOTALL)


def _specs() -> list[tuple[str, str, str, str]]:
    """(notebook, slug, spec name, spec source) for every task that shows a specification."""
    found = []
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if cell.cell_type == "markdown" and gid.endswith("-task"):
                for source, name in SPEC.findall(cell.source):
                    found.append((path.name, gid.removesuffix("-task"), name, source))
    return found


def test_chapter_one_has_its_specifications():
    slugs = {slug for _, slug, _, _ in _specs()}
    assert {"band-mask", "one-hot", "sequence-mask", "pairwise-sq-dists", "label-scores", "rotate-half"} <= slugs


def _case_id(value) -> str:
    return value if isinstance(value, str) and "\n" not in value else ""


@pytest.mark.parametrize("notebook,slug,name,source", _specs(), ids=_case_id)
def test_the_check_uses_the_specification_the_task_shows(notebook, slug, name, source):
    nb = nbformat.read(SOLUTIONS / notebook, as_version=4)
    check = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == slug)
    visible = check.split("### BEGIN HIDDEN TESTS")[0]
    assert source in visible, f"{slug}: the checks cell does not define {name} exactly as the task shows it"
    assert f"{name}(" in check.split(source, 1)[1], f"{slug}: the checks never call {name}"
