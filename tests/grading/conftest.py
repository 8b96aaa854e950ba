"""Shared helpers for the grading tests: throw-away course copies built from the fixture course."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = FIXTURES / "cases"
CHAPTER = "01-tensors"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


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


@pytest.fixture(scope="session")
def sandbox_facilities():
    from grader.sandbox import facilities

    return facilities()
