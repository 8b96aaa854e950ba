"""Shared helpers for the notebook tests: find notebooks, read their exercise cells, run them."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from torchcourse.contract import CELL_TIMEOUT_S, grade_id, is_checks_cell  # noqa: F401 (re-exported)

ROOT = Path(__file__).resolve().parents[2]


def solution_notebooks() -> list[Path]:
    return sorted(p for p in (ROOT / "solutions").glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def released_notebooks() -> list[Path]:
    return sorted(p for p in (ROOT / "chapters").glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)




def execute(path: Path, workdir: Path, allow_errors: bool = False):
    """Run a notebook top to bottom in a fresh real kernel, as a learner's "Run all" would."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT_S, allow_errors=allow_errors,
                            resources={"metadata": {"path": str(workdir)}})
    client.execute()
    return nb


def errors(nb) -> list[tuple[int, str, str]]:
    """(cell index, ename, evalue) for every error output."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                found.append((i, out.ename, out.evalue))
    return found
