"""A fifth chapter is a new folder: in a copy of the course with `solutions/05-scratch/` added and no other file
edited, `make release`'s two steps (`make docs`, then the grader's release of the chapter) succeed, and the
chapter's erratum, once its author writes one, is accepted by the errata table. No list of chapters is written
anywhere (`contract.chapters` discovers them). Grading and the site are the same for any chapter number:
tests/grading/test_new_chapter.py takes a throw-away chapter through both."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.course import Course
from tests.grading.test_new_chapter import scratch_notebook
from tests.helpers.course import REPO, install_config

pytestmark = pytest.mark.grading
CHAPTER = "05-scratch"


def _course(dest: Path) -> Path:
    """The files `make docs` and `make release` read, the real chapters' solutions, and a fifth chapter."""
    for folder in ("solutions", "docs"):
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (dest / "book").mkdir()
    for name in ("errata_table.py", "errata.yml"):
        shutil.copy(REPO / "book" / name, dest / "book" / name)
    shutil.copy(REPO / "Makefile", dest / "Makefile")
    (dest / ".venv").symlink_to(REPO / ".venv")  # the installed environment; `make -o` keeps it as it is
    install_config(dest)
    nb = scratch_notebook()
    nb.cells[0].source = nb.cells[0].source.replace("9.1", "5.1").replace("Chapter 9", "Chapter 5")
    (dest / "solutions" / CHAPTER).mkdir()
    nbformat.write(nb, str(dest / "solutions" / CHAPTER / "01-scratch.ipynb"))
    return dest


def _make_docs(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-o", ".venv/.installed", "docs"], cwd=root, capture_output=True, text=True,
                          timeout=120)


def test_a_fifth_chapter_goes_through_make_release_with_nothing_else_edited(tmp_path):
    root = _course(tmp_path / "course")
    syllabus = (root / "docs" / "syllabus.md").read_text(encoding="utf-8")
    assert CHAPTER in Course(root).assignments()

    done = _make_docs(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "docs" / "syllabus.md").read_text(encoding="utf-8") == syllabus  # nothing to change

    done = subprocess.run([sys.executable, "-m", "grader", "--root", str(root), "release", CHAPTER], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    released = (root / "chapters" / CHAPTER / "01-scratch.ipynb").read_text(encoding="utf-8")
    assert "raise NotImplementedError()" in released and "torch.randint" not in released

    # The chapter's author writes its erratum where every erratum is written; the table takes chapter 5.
    with open(root / "book" / "errata.yml", "a", encoding="utf-8") as f:
        f.write('  - id: E99\n    chapter: 5\n    keywords: [scratch]\n    note: "A scratch claim."\n'
                '    truth: "The scratch truth."\n')
    done = _make_docs(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "E99" in (root / "docs" / "syllabus.md").read_text(encoding="utf-8")
