"""torchcourse.contract: the one place for markers, cell predicates, regions, secret lines and limits."""

from pathlib import Path

import yaml

from torchcourse import contract

ROOT = Path(__file__).resolve().parents[2]


def test_markers_are_nbgraders_delimiters():
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    from grader.course import Course

    assert contract.BEGIN_SOLUTION.endswith(ClearSolutions.begin_solution_delimeter.default_value)
    assert contract.END_SOLUTION.endswith(ClearSolutions.end_solution_delimeter.default_value)
    assert contract.BEGIN_HIDDEN.endswith(ClearHiddenTests.begin_test_delimeter.default_value)
    assert contract.END_HIDDEN.endswith(ClearHiddenTests.end_test_delimeter.default_value)
    config = Course().config()  # the course keeps nbgrader's delimiters
    assert "begin_solution_delimeter" not in config.get("ClearSolutions", {})
    assert "begin_test_delimeter" not in config.get("ClearHiddenTests", {})


def test_one_cell_time_limit_for_check_grader_and_site():
    """A cell that runs 90 s fails everywhere or nowhere: grader, plain nbgrader, self-check and both sites share
    the limit."""
    from grader.sandbox import Limits

    assert Limits().cell_timeout == contract.CELL_TIMEOUT_S
    assert Limits().budget == contract.NOTEBOOK_BUDGET_S
    for name in ("_config.yml", "_config_instructor.yml"):
        assert yaml.safe_load((ROOT / name).read_text())["execute"]["timeout"] == contract.CELL_TIMEOUT_S, name
    from traitlets.config.loader import PyFileConfigLoader

    nbgrader = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "grader")).load_config()
    assert nbgrader.Execute.timeout == contract.CELL_TIMEOUT_S, "plain nbgrader autograde's cell limit"


def _cell(source, **nbgrader):
    return {"cell_type": "code", "source": source, "metadata": {"nbgrader": nbgrader} if nbgrader else {}}


def test_checks_and_answer_cells_are_told_apart():
    assert contract.is_checks_cell(_cell("x", grade=True, solution=False, grade_id="a"))
    assert not contract.is_checks_cell(_cell("x", grade=True, solution=True))  # manually graded answer
    assert not contract.is_checks_cell(_cell("x", grade="yes"))  # only a real True
    assert contract.is_answer_cell(_cell("x", solution=True, grade=False))
    assert not contract.is_answer_cell({"cell_type": "markdown", "source": "", "metadata": {}})
    assert contract.cell_source({"source": ["a\n", "b"]}) == "a\nb"


def test_regions_split_a_cell_and_secret_lines_keep_only_what_a_learner_must_not_see():
    src = ("def f(x):\n    ### BEGIN SOLUTION\n    return sorted(x, reverse=True)\n    ### END SOLUTION\n"
           "check(f)\n### BEGIN HIDDEN TESTS\nfor case in range(20):\n# a comment line\ncheck(f)\n")
    kinds = [k for k, _ in contract.split_regions(src)]
    assert kinds == ["outside", "marker", "solution", "marker", "outside", "marker", "hidden", "hidden", "hidden"]
    assert contract.secret_lines([src]) == {"return sorted(x, reverse=True)", "for case in range(20):"}
    assert contract.secret_lines([src], kinds={"hidden"}) == {"for case in range(20):"}  # check(f) is visible


def test_plain_difference_compares_types_exactly():
    assert contract.plain_difference(1.0, 1.0 + 1e-9) is None
    assert "a float" in contract.plain_difference(1.0, 1)
    assert "a tuple" in contract.plain_difference({"tuple": [1]}, [1])
    assert contract.plain_difference({"error": "KeyError: 'a'"}, {"error": "KeyError: 'b'"}) is None
    assert "raised ValueError" in contract.plain_difference({"error": "KeyError: x"}, {"error": "ValueError: y"})


def test_tensors_match_element_by_element_with_types_exact_whatever_the_shortcut_for_equal_data():
    """Two tensors' data that Python calls equal but whose elements differ in type (a 1 and a 1.0, a 1 and a
    True), or that hold a NaN, are compared element by element; equal data, -0.0 against 0.0 and values within
    the tolerances match."""
    import torch

    from torchcourse.grading import to_plain

    def tensor(data, dtype="float32"):
        return {"kind": "tensor", "dtype": dtype, "shape": [len(data)], "stride": [1], "data": data}

    x = to_plain(torch.arange(6.0).reshape(2, 3))
    assert contract.plain_difference(x, to_plain(torch.arange(6.0).reshape(2, 3))) is None
    assert "1 element(s) differ" in contract.plain_difference(x, to_plain(torch.tensor([[0.0, 1, 2], [3, 4, 6]])))
    assert contract.plain_difference(tensor([0.0, 1.0]), tensor([-0.0, 1.0 + 1e-9])) is None
    assert "element(s) differ" in contract.plain_difference(tensor([1, 2], "int64"), tensor([1.0, 2], "int64"))
    assert "element(s) differ" in contract.plain_difference(tensor([1, 0], "int64"), tensor([True, 0], "int64"))
    assert "element(s) differ" in contract.plain_difference(tensor([float("nan")]), tensor([float("nan")]))
    nan = to_plain(torch.tensor([float("nan"), 1.0]))
    assert contract.plain_difference(nan, to_plain(torch.tensor([float("nan"), 1.0]))) is None
