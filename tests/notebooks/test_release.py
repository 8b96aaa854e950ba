"""chapters/ is exactly nbgrader's release of solutions/: no hand edits, no drift, no leaks."""

import filecmp
import json
import shutil
import subprocess
import sys

import pytest

from grader.release import find_leaks
from tests.helpers.notebooks import ROOT, released_notebooks, solution_notebooks
from torchcourse.contract import cell_source, is_answer_cell, split_regions

pytestmark = pytest.mark.notebooks


def test_solutions_carry_no_outputs():
    for path in solution_notebooks():
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            assert not cell.get("outputs"), f"{path}: committed outputs"
            assert cell.get("execution_count") is None, f"{path}: committed execution counts"
        assert "widgets" not in nb["metadata"], f"{path}: committed widget state"


def test_every_solution_is_released_and_nothing_else():
    sol = {p.relative_to(ROOT / "solutions") for p in solution_notebooks()}
    rel = {p.relative_to(ROOT / "chapters") for p in released_notebooks()}
    assert sol == rel


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory):
    """A release made from scratch in a copy of the course, with nbgrader itself."""
    course = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "solutions", course / "solutions")
    shutil.copytree(ROOT / "grader", course / "grader", ignore=shutil.ignore_patterns("__pycache__", "tests"))
    shutil.copy(ROOT / "nbgrader_config.py", course)
    done = subprocess.run([sys.executable, "-m", "grader", "release"], cwd=course, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return course / "chapters"


def test_committed_chapters_equal_a_fresh_release(fresh_release):
    for path in released_notebooks():
        fresh = fresh_release / path.relative_to(ROOT / "chapters")
        assert fresh.exists(), f"{fresh} was not released"
        assert filecmp.cmp(path, fresh, shallow=False), (
            f"{path.relative_to(ROOT)} differs from a fresh release: run `make release` and commit chapters/")


def test_no_solution_or_hidden_test_reaches_the_chapters():
    for chapter in sorted({p.parent.name for p in solution_notebooks()}):
        assert find_leaks(ROOT / "solutions" / chapter, ROOT / "chapters" / chapter) == []


def test_leak_check_catches_a_leaked_answer(tmp_path):
    """The check itself must be able to fail: plant a solution line in a copy of a release."""
    src = solution_notebooks()[0]
    sol_dir, rel_dir = tmp_path / "sol", tmp_path / "rel"
    sol_dir.mkdir()
    rel_dir.mkdir()
    shutil.copy(src, sol_dir)
    released = json.loads((ROOT / "chapters" / src.parent.name / src.name).read_text())
    nb = json.loads(src.read_text())
    answer = next(c for c in nb["cells"] if is_answer_cell(c))
    secret = "\n".join(line for kind, line in split_regions(cell_source(answer)) if kind == "solution")
    released["cells"].append({"cell_type": "code", "execution_count": None, "id": "leak", "metadata": {},
                              "outputs": [], "source": secret.splitlines(keepends=True)})
    (rel_dir / src.name).write_text(json.dumps(released))
    leaks = find_leaks(sol_dir, rel_dir)
    assert leaks and "solution or hidden-test line" in leaks[0]
