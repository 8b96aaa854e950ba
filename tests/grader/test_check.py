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


def _saved(tmp_path) -> str:
    from tests.helpers.tiny import write

    nb = answered_nb(x="    return x * 3")  # ex answered wrong, ey right
    by_id(nb, "ex").source = "expect_equal(double(1), 2, call='double(1)')\n"
    by_id(nb, "ey").source = "expect_equal(triple(1), 3, call='triple(1)')\n"
    path = tmp_path / "nb.ipynb"
    write(nb, path)
    return str(path)


def test_check_in_the_kernel_reruns_one_exercise_with_the_messages_of_grader_check(tmp_path, capsys):
    from torchcourse.grading import check, expect_equal

    ns = {"expect_equal": expect_equal, "double": lambda x: x * 3, "triple": lambda x: x * 3}
    assert check("ey", notebook=_saved(tmp_path), namespace=ns) is True
    assert check("ex", notebook=_saved(tmp_path), namespace=ns) is False
    ns["triple"] = lambda x: (_ for _ in ()).throw(NotImplementedError())
    assert check("ey", notebook=_saved(tmp_path), namespace=ns) is False
    assert check("nope", notebook=_saved(tmp_path), namespace=ns) is False
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "PASS  ey: passed"
    assert out[2].startswith("FAIL  ex: CheckFailed: double(1) returned an int 3; expected an int 2")
    assert out[4] == "FAIL  ey: not answered yet (the answer cell still raises NotImplementedError)"
    assert out[6].startswith("FAIL  nope: no checks cell")


def test_check_runs_in_a_real_kernel_and_finds_its_notebook(tmp_path):
    from nbclient import NotebookClient

    from torchcourse.grading import CHECK_FOOTER as FOOTER

    path = _saved(tmp_path)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("from torchcourse.grading import check\ncheck('ex')\ncheck('ey')"))
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "FAIL  ex: CheckFailed: double(1) returned an int 3; expected an int 2" in text
    assert "PASS  ey: passed" in text and FOOTER in text
