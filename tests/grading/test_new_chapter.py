"""A chapter nobody has written a test for: a throw-away chapter with one exercise, made here in a copy of
the course, follows the contract's checked rules, is released by the course's release (leak checks
included), graded end to end by plain nbgrader and by the course grader, and built into the site, with
the same helpers the real chapters use. It shows that adding a chapter needs no test edited to name it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from tests.helpers import site as sitebuild
from tests.helpers.course import REPO, install_config
from tests.helpers.endtoend import course_grader_round, exchange_round
from tests.helpers.rules import notebook_problems

pytestmark = [pytest.mark.grading, pytest.mark.site]
CHAPTER = "09-scratch"
SLUG = "scratch-double"


def _nbgrader(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def scratch_notebook() -> nbformat.NotebookNode:
    """The smallest notebook the contract allows: a title, a seeded first cell, a lesson, one exercise."""
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell("# 9.1 A scratch chapter\n\n*Chapter 9, part 1 of 1 · about 5 minutes · syllabus item "
                             "S1*\n\nDoubling a **tensor** (张量)."),
        v4.new_code_cell("import torch\n\ntorch.manual_seed(0)\nprint(torch.arange(3) * 2)"),
        v4.new_markdown_cell("## Exercise: double (1 point, syllabus S1)\n\nWrite `double(t)`: a new tensor, "
                             "twice `t`, same dtype.", metadata=_nbgrader(f"{SLUG}-task", locked=True)),
        v4.new_code_cell('def double(t):\n    """Twice t."""\n    ### BEGIN SOLUTION\n    return t * 2\n'
                         "    ### END SOLUTION", metadata=_nbgrader(f"{SLUG}-answer", solution=True)),
        v4.new_code_cell(
            "from torchcourse.grading import call, emit, expect_equal, torch_generator\n\n"
            'expect_equal(call(double, torch.tensor([1, 2])), torch.tensor([2, 4]), call="double(tensor([1, 2]))")\n'
            "### BEGIN HIDDEN TESTS\n"
            f'g = torch_generator("{SLUG}")\n'
            "for case in range(3):\n"
            "    t = torch.randint(-9, 9, (4,), generator=g)\n"
            "    got = call(double, t.clone())\n"
            f'    emit("{SLUG}", f"case{{case}}", got)\n'
            '    expect_equal(got, t * 2, call=f"double({t})")\n'
            "### END HIDDEN TESTS",
            metadata={**_nbgrader(SLUG, grade=True, locked=True, points=1), "tags": ["raises-exception",
                                                                                     "remove-output"]}),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    return nb


def make_course(dest: Path) -> Path:
    """A course folder with the grader, the site's configuration and pages, and only the scratch chapter."""
    install_config(dest)
    path = dest / "solutions" / CHAPTER / "01-scratch.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(scratch_notebook(), str(path))
    return dest


def test_a_new_chapter_is_released_graded_and_published(tmp_path):
    root = make_course(tmp_path / "course")
    assert notebook_problems(root / "solutions" / CHAPTER / "01-scratch.ipynb") == []

    # nbgrader's own round trip works on the unreleased course, like a real chapter's.
    plain = tmp_path / "plain"
    shutil.copytree(root, plain / "course")
    exchange_round(plain, plain / "course", CHAPTER)

    # The course's release: nbgrader plus the leak checks.
    done = subprocess.run([sys.executable, "-m", "grader", "--root", str(root), "release", CHAPTER], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    released = (root / "chapters" / CHAPTER / "01-scratch.ipynb").read_text()
    assert "raise NotImplementedError()" in released
    assert "return t * 2" not in released and "torch.randint" not in released  # solution and hidden block

    course_grader_round(root, CHAPTER, workers=1)

    # The site: the course's configuration and book pages, a table of contents with the new chapter's part.
    sitebuild.vendor()
    for name in ("_config.yml", "package.json"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "book", root / "book", ignore=shutil.ignore_patterns("__pycache__"))
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    toc["parts"] = [part for part in toc["parts"] if not any(
        entry["file"].startswith("chapters/") for entry in part["chapters"])]
    toc["parts"].append({"caption": "Chapter 9: Scratch", "chapters": [{"file": f"chapters/{CHAPTER}/01-scratch"}]})
    (root / "_toc.yml").write_text(yaml.safe_dump(toc, allow_unicode=True), encoding="utf-8")
    site = sitebuild.jupyter_book(tmp_path / "site", root=root)
    page = (site.html / "chapters" / CHAPTER / "01-scratch.html").read_text(encoding="utf-8")
    assert "A scratch chapter" in page and "Your turn" in page
    assert "return t * 2" not in page and "BEGIN HIDDEN" not in page
