"""check: one line per exercise of an executed notebook, from its checks cells only."""

from __future__ import annotations

import nbformat

from grader.check import exercise_lines
from tests.helpers.tiny import answered_nb, by_id, error_output


def test_one_line_per_checks_cell_passed_unanswered_or_failed():
    nb = answered_nb()
    nb.cells.append(nbformat.v4.new_code_cell("1/0", outputs=[nbformat.from_dict(error_output("ZeroDivisionError",
                                                                                               "division by zero"))]))
    by_id(nb, "ey").outputs = [nbformat.from_dict(error_output("NotImplementedError", ""))]
    assert exercise_lines(nb) == [
        ("ex", True, "passed"),
        ("ey", False, "not answered yet (the answer cell still raises NotImplementedError)"),
    ]
    by_id(nb, "ex").outputs = [nbformat.from_dict(error_output("CheckFailed", "double(1) returned 3, expected 2"))]
    assert exercise_lines(nb)[0] == ("ex", False, "CheckFailed: double(1) returned 3, expected 2")


def test_answer_cells_and_ungraded_cells_are_no_exercises():
    nb = answered_nb()
    for gid in ("ex", "ey"):
        by_id(nb, gid).metadata["nbgrader"]["grade"] = False
    assert exercise_lines(nb) == []
