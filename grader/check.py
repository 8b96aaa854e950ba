"""check: a learner's self-check, in a fresh kernel: one line per exercise.

Only the visible checks are in a learner's notebook; graded checks include more cases. In a kernel,
``from torchcourse.grading import check; check("slug")`` reruns one exercise with the same messages.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from torchcourse.contract import CELL_TIMEOUT_S, grade_id, is_checks_cell
from torchcourse.grading import CHECK_FOOTER, check_message
from torchcourse.i18n import gettext as _
from torchcourse.i18n import language_of, speaking


def exercise_lines(nb: nbformat.NotebookNode) -> list[tuple[str, bool, str]]:
    """(exercise id, passed, message) for every test cell of an executed notebook."""
    lines = []
    for cell in nb.cells:
        if not is_checks_cell(cell):
            continue
        gid = grade_id(cell) or "?"
        err = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        ok, message = check_message(None if err is None else str(err.get("ename")), str((err or {}).get("evalue")))
        lines.append((gid, ok, message))
    return lines


def check(path: Path, timeout: int = CELL_TIMEOUT_S) -> int:
    from nbclient import NotebookClient

    nb = nbformat.read(str(path), as_version=4)
    # A Chinese release notebook is checked in Chinese, in its kernel and here; otherwise LANG decides.
    with speaking(language_of(nb.metadata)):
        client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                                resources={"metadata": {"path": str(Path(path).resolve().parent)}})
        client.execute()
        lines = exercise_lines(nb)
        for gid, ok, msg in lines:
            print(f"{'PASS' if ok else 'FAIL'}  {gid}: {msg}")
        if not lines:
            print(_("no exercises found in this notebook"))
        print(_(CHECK_FOOTER))
    return 0 if all(ok for _, ok, _ in lines) else 1
