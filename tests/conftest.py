"""Test-suite set-up. Helpers are imported from the ``tests.helpers`` package (pytest puts the repository
root on ``sys.path``: ``pythonpath`` in pyproject.toml); conftest files hold fixtures only."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Folders a learner or author owns: the suite may read them, never leave anything in them.
GUARDED = ("chapters", "solutions")


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(ROOT)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="session", autouse=True)
def nothing_left_in_course_folders():
    """Fails the session (as an error in teardown) if a test left a file, e.g. .ipynb_checkpoints."""
    before = set().union(*(_files(ROOT / name) for name in GUARDED))
    yield
    # A new chapter notebook is an author's work in progress, not a test's residue.
    left = {f for f in set().union(*(_files(ROOT / name) for name in GUARDED)) - before
            if not (f.endswith(".ipynb") and f.count("/") == 2 and ".ipynb_checkpoints" not in f)}
    assert not left, f"tests left files in {', '.join(GUARDED)}: {sorted(left)[:10]}"
