"""Throw-away course folders: the fixture course with its attack cases, and copies of the real chapters.

A submission is nbgrader's release of a notebook with each answer cell filled from the
solution (an honest, correct learner), left as released, or filled with one of the
plausible wrong answers in tests/notebooks/wrong_answers/<slug>.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from torchcourse.contract import grade_id, is_answer_cell, is_checks_cell, nbgrader_meta

REPO = Path(__file__).resolve().parents[2]
WRONG_DIR = REPO / "tests" / "notebooks" / "wrong_answers"

# --------------------------------------------------------------------------- the fixture course
# A small two-notebook chapter (tests/grading/fixtures/course) and one submission file per attack
# (tests/grading/fixtures/cases), graded by the robustness and batch tests.

FIXTURES = REPO / "tests" / "grading" / "fixtures"
CASES = FIXTURES / "cases"
CHAPTER = "01-tensors"


def fixture_course(tmp: Path) -> Path:
    """A copy of the fixture course (solutions only) under `tmp`."""
    root = tmp / "course"
    shutil.copytree(FIXTURES / "course", root)
    return root


def submit(root: Path, student: str, files: dict[str, Path | None]) -> Path:
    """Put files into submitted/<student>/01-tensors/ (None: leave that notebook out)."""
    folder = root / "submitted" / student / CHAPTER
    folder.mkdir(parents=True, exist_ok=True)
    for name, src in files.items():
        if src is not None:
            shutil.copyfile(src, folder / name)
    return folder


def submit_case(root: Path, case: str) -> Path:
    return submit(root, case, {"a-basics.ipynb": CASES / f"{case}.ipynb",
                               "b-more.ipynb": CASES / "correct-b-more.ipynb"})


# --------------------------------------------------------------------------- the real chapters


def course_chapters() -> list[str]:
    """Every chapter with solution notebooks, in course order: the end-to-end tests run over each."""
    return sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def install_config(dest: Path) -> None:
    """The course's nbgrader configuration in `dest`; it takes its settings from the grader package
    (grader.course), so the package travels with it."""
    shutil.copytree(REPO / "grader", dest / "grader", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "README.md"))
    shutil.copy(REPO / "nbgrader_config.py", dest / "nbgrader_config.py")


def course_copy(dest: Path, chapter: str, release: bool = True) -> Path:
    """solutions/<chapter> and the nbgrader configuration in `dest`, released there with plain nbgrader."""
    (dest / "solutions").mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "solutions" / chapter, dest / "solutions" / chapter,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    install_config(dest)
    if release:
        nbgrader(dest, "generate_assignment", chapter, "--force", "--no-db")
    return dest


def nbgrader(root: Path, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Plain nbgrader, as an instructor runs it from the course folder."""
    full_env = {**os.environ, **(env or {})}
    full_env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + full_env.get("PATH", "")
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, capture_output=True, text=True,
                          env=full_env, timeout=1800)
    if check and done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def answer_cells(nb: nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> source of every autograded-answer cell."""
    out = {}
    for c in nb.cells:
        if is_answer_cell(c):
            out[grade_id(c)] = c.source
    return out


def grade_points(nb: nbformat.NotebookNode) -> dict[str, float]:
    """Test grade_id -> points."""
    return {grade_id(c): float(nbgrader_meta(c).get("points", 0)) for c in nb.cells if is_checks_cell(c)}


def wrong_answer(slug: str, k: int = 0) -> str | None:
    path = WRONG_DIR / f"{slug}.py"
    if not path.exists():
        return None
    ns: dict = {"__file__": str(path)}  # a list may build on another beside it
    exec(path.read_text(), ns)  # a list of answer sources written by the course's authors
    wrong = ns.get("WRONG", [])
    return wrong[k % len(wrong)] if wrong else None


def submission(released: Path, solution: Path, wrong: set[str] = frozenset(), k: int = 0) -> nbformat.NotebookNode:
    """The released notebook with answers: from the solution, except slugs in `wrong`."""
    sol = answer_cells(nbformat.read(str(solution), as_version=4))
    nb = nbformat.read(str(released), as_version=4)
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid in sol:
            slug = gid[: -len("-answer")] if gid.endswith("-answer") else gid
            if slug in wrong:
                c.source = wrong_answer(slug, k) or c.source  # no wrong answer on file: leave it unanswered
            else:
                c.source = sol[gid]
    return nb


def slugs(solution: Path) -> list[str]:
    return list(grade_points(nbformat.read(str(solution), as_version=4)))


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def dump(obj) -> str:
    return json.dumps(obj, indent=1, sort_keys=True)
