"""judge: emitted values against the reference's, types exact, tolerances only from the reference."""

from __future__ import annotations

import pytest
import torch

from grader.judge import cell_states, compare, emitted, judge, reference_values
from grader.record import ExerciseStatus
from grader.sanitise import Sanitised
from tests.helpers.tiny import emit_output, error_output, line, raw, solution_nb
from torchcourse import grading

EX, EY = 2, 3  # positions of the checks cells among the code cells


def _sub() -> Sanitised:
    nb = solution_nb()
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    return Sanitised(nb, code, {"ex": EX, "ey": EY}, {"ex": 2.0, "ey": 3.0}, [])


def _judge(ex_outputs, ref_ex, ex_status="ok", **line_extra):
    """Judge a run where `ex` emitted `ex_outputs` and `ey` matched its reference exactly."""
    refs = {"ex": ref_ex, "ey": [("v", 21, {})]}
    run = raw([line(0), line(1), line(EX, ex_outputs, ex_status, **line_extra), line(EY, [emit_output("ey", "v", 21)])])
    result = {e.grade_id: e for e in judge("nb", _sub(), run, refs)}
    assert result["ey"].status == "passed" and result["ey"].score == 3.0
    return result["ex"]


def test_matching_values_pass_with_full_points():
    ex = _judge([emit_output("ex", "a", 1), emit_output("ex", "b", [1.5, "s"])], [("a", 1, {}), ("b", [1.5, "s"], {})])
    assert (ex.status, ex.score, ex.flags) == ("passed", 2.0, [])


@pytest.mark.parametrize("ref, got", [
    (1, 1.0),                       # an int is not a float
    (True, 1),                      # a bool is not an int
    (1, True),
    ("1", 1),
    ({"tuple": [1, 2]}, [1, 2]),    # a tuple (encoded) is not a list
    ([1, 2], {"tuple": [1, 2]}),
    (None, 0),
])
def test_types_are_compared_exactly(ref, got):
    ex = _judge([emit_output("ex", "a", got)], [("a", ref, {})])
    assert ex.status == "failed" and ex.score == 0.0
    assert "differs from the solution's" in ex.reason
    assert "checks passed in the sandbox but the values are wrong" in ex.flags


def test_floats_match_within_the_default_tolerance_only():
    assert _judge([emit_output("ex", "a", 1.0 + 1e-9)], [("a", 1.0, {})]).status == "passed"
    assert _judge([emit_output("ex", "a", 1.001)], [("a", 1.0, {})]).status == "failed"


def test_tolerances_come_from_the_reference():
    assert _judge([emit_output("ex", "a", 1.001)], [("a", 1.0, {"rtol": 1e-2})]).status == "passed"
    assert _judge([emit_output("ex", "a", 1.1)], [("a", 1.0, {"rtol": 1e-2})]).status == "failed"


def test_a_learners_own_tolerance_is_ignored():
    ex = _judge([emit_output("ex", "a", 5.0, rtol=100.0, atol=100.0)], [("a", 1.0, {})])
    assert ex.status == "failed" and ex.score == 0
    values, bad = emitted([{"slug": "ex", "name": "a", "value": 5.0, "rtol": 100.0}], "ex")
    assert values == [("a", 5.0, {"rtol": 100.0})] and not bad  # read, then never used by compare
    assert compare([("a", 1.0, {})], values) is not None


def test_a_missing_value_fails():
    ex = _judge([emit_output("ex", "a", 1)], [("a", 1, {}), ("b", 2, {})])
    assert ex.status == "failed" and "no value emitted for 'b'" in ex.reason


def test_an_extra_value_fails():
    ex = _judge([emit_output("ex", "a", 1), emit_output("ex", "b", 2)], [("a", 1, {})])
    assert ex.status == "failed" and "1 unexpected extra emitted value(s)" in ex.reason


def test_a_renamed_value_fails_even_when_equal():
    ex = _judge([emit_output("ex", "z", 1)], [("a", 1, {})])
    assert ex.status == "failed" and "emitted 'z' where 'a' was expected" in ex.reason


def test_values_in_another_order_fail():
    ex = _judge([emit_output("ex", "b", 2), emit_output("ex", "a", 1)], [("a", 1, {}), ("b", 2, {})])
    assert ex.status == "failed"


def test_nothing_emitted_where_values_were_expected_fails():
    ex = _judge([], [("a", 1, {})])
    assert ex.status == "failed" and ex.score == 0


@pytest.mark.parametrize("payload", [
    "a string",
    ["a", "list"],
    {"slug": "ex", "value": 1},                    # no name
    {"slug": "ex", "name": 7, "value": 1},         # a name that is not a str
    {"slug": "ex", "name": "a"},                   # no value
])
def test_malformed_payloads_fail_and_are_flagged(payload):
    from torchcourse.contract import EMIT_MIME

    out = {"output_type": "display_data", "data": {EMIT_MIME: payload}, "metadata": {}}
    ex = _judge([out, emit_output("ex", "a", 1)], [("a", 1, {})])
    assert ex.status == "failed" and ex.score == 0
    assert "malformed emitted value" in ex.reason and "malformed emitted values" in ex.flags


def test_a_value_emitted_for_another_exercise_fails():
    ex = _judge([emit_output("ey", "a", 1), emit_output("ex", "a", 1)], [("a", 1, {})])
    assert ex.status == "failed" and "value emitted for another exercise ('ey')" in ex.reason


def test_only_values_the_sandbox_took_from_emit_count():
    # Emit outputs in a cell's outputs are claims anyone could print; the sandbox's audit hook records the
    # values a hidden block emitted in "emits", and only those are judged.
    ex = _judge([emit_output("ex", "a", 1)], [("a", 1, {})], emits=[])
    assert ex.status == "failed" and "no value emitted for 'a'" in ex.reason
    assert emitted("not a list", "ex") == ([], ["emitted values are not a list"])


def test_the_learner_reads_which_value_differs_not_the_solutions_value():
    ex = _judge([emit_output("ex", "case3", 41.5)], [("case3", 42.25, {})])
    assert "(case3)" in ex.reason and "42.25" not in ex.reason and "42.25" in ex.detail


def test_tampering_in_an_earlier_cell_zeroes_every_later_exercise():
    refs = {"ex": [("a", 1, {})], "ey": [("v", 21, {})]}
    run = raw([line(0), line(1, tampered=["sys.settrace called from notebook code"]),
               line(EX, [emit_output("ex", "a", 1)]), line(EY, [emit_output("ey", "v", 21)])])
    result = {e.grade_id: e for e in judge("nb", _sub(), run, refs)}
    assert all(e.status == "tampered" and e.score == 0 for e in result.values())
    assert "sys.settrace" in result["ey"].flags[0]
    late = raw([line(0), line(1), line(EX, [emit_output("ex", "a", 1)]),
                line(EY, [emit_output("ey", "v", 21)], tampered=["gc.get_objects called from notebook code"])])
    result = {e.grade_id: e for e in judge("nb", _sub(), late, refs)}
    assert (result["ex"].status, result["ey"].status) == ("passed", "tampered")


def test_messages_are_quoted_only_from_before_any_hidden_code():
    hidden_error = [error_output("ValueError", "aGlkZGVuIHRlc3Q=")]  # the learner's own text, raised in hidden code
    ex = _judge(hidden_error, [("a", 1, {})], ex_status="error", shown=0)
    assert "graded check" in ex.reason and "aGlk" not in ex.reason and "aGlk" in ex.detail
    ex = _judge(hidden_error, [("a", 1, {})], ex_status="error", shown=1)  # the visible part, no hidden code yet
    assert ex.reason == "ValueError: aGlkZGVuIHRlc3Q="
    refs = {"ex": [("a", 1, {})], "ey": [("v", 21, {})]}
    run = raw([line(0), line(1), line(EX, [emit_output("ex", "a", 1)], shown=0),
               line(EY, [error_output("CheckFailed", "f(1) returned 'aGlk'")], "error", shown=1)])
    ey = {e.grade_id: e for e in judge("nb", _sub(), run, refs)}["ey"]
    assert "aGlk" not in ey.reason and "visible check failed (CheckFailed)" in ey.reason


def test_errors_match_errors_of_the_same_type():
    ref = [("a", {"error": "ValueError: shapes (2,) and (3,) differ"}, {})]
    assert _judge([emit_output("ex", "a", {"error": "ValueError: other words"})], ref).status == "passed"
    ex = _judge([emit_output("ex", "a", {"error": "TypeError: shapes differ"})], ref)
    assert ex.status == "failed" and "raised TypeError, expected ValueError" in ex.detail


def test_an_error_is_not_a_value_and_a_value_is_not_an_error():
    assert _judge([emit_output("ex", "a", 3)], [("a", {"error": "ValueError: no"}, {})]).status == "failed"
    assert _judge([emit_output("ex", "a", {"error": "ValueError: no"})], [("a", 3, {})]).status == "failed"


def test_a_cell_that_raised_fails_with_its_message_even_if_values_match():
    ex = _judge([emit_output("ex", "a", 1), error_output("CheckFailed", "double(1) returned 3")], [("a", 1, {})],
                ex_status="error", shown=2)
    assert ex.status == "failed" and ex.reason == "CheckFailed: double(1) returned 3"


def test_tampered_libraries_score_nothing_and_are_flagged():
    run = raw([line(0), line(1), line(EX, [emit_output("ex", "a", 1)], tampered=["torch.allclose"])])
    ex = judge("nb", _sub(), run, {"ex": [("a", 1, {})], "ey": []})[0]
    assert ex.status == "tampered" and ex.score == 0
    assert "tampered: torch.allclose" in ex.flags


def test_an_exercise_without_reference_values_is_unverified_never_passed():
    ex = _judge([], [])
    assert ex.status == "unverified" and ex.score == 0.0
    assert "unverified" in " ".join(ex.flags)


def test_a_test_cell_that_could_not_be_restored_is_an_error():
    sub = _sub()
    del sub.grade_cells["ex"]
    result = {e.grade_id: e for e in judge("nb", sub, raw([line(0)]), {"ex": [], "ey": []})}
    assert result["ex"].status == "error" and result["ex"].score == 0


@pytest.mark.parametrize("status, sig, code, state", [
    ("timeout", None, None, "timeout"),
    ("budget", None, None, "budget"),
    ("exited", 11, None, "crashed"),
    ("exited", None, 3, "crashed"),
    ("worker_died", None, None, "crashed"),
    ("exited", None, 0, "missing"),
])
def test_a_run_that_stopped_before_the_checks_scores_them_zero(status, sig, code, state):
    run = raw([line(0), line(1)], status=status, code=code, signal=sig)
    assert cell_states(run, 4) == ["ok", "ok", state, "not_run"]
    result = {e.grade_id: e for e in judge("nb", _sub(), run, {"ex": [], "ey": []})}
    assert (result["ex"].status, result["ex"].score) == (state, 0.0)
    assert all(type(e.status) is ExerciseStatus for e in result.values())  # one vocabulary, judge's and the record's
    assert (result["ey"].status, result["ey"].score) == ("not_run", 0.0)
    if state != "not_run":
        assert state in result["ex"].flags


def test_scores_stay_within_zero_and_the_maximum():
    sub = _sub()
    sub.points["ex"] = 0.5
    run = raw([line(EX, [emit_output("ex", "a", 1)]), line(EY, [emit_output("ey", "v", 21)])])
    result = {e.grade_id: e for e in judge("nb", sub, run, {"ex": [("a", 1, {})], "ey": [("v", 21, {})]})}
    assert result["ex"].score == 0.5 and result["ey"].score == 3.0


def test_reference_values_are_read_from_the_solutions_run():
    run = raw([line(0), line(1), line(EX, [emit_output("ex", "a", 2.0, rtol=0.1)]),
               line(EY, [emit_output("ey", "v", 21)])])
    assert reference_values(_sub(), run) == {"ex": [("a", 2.0, {"rtol": 0.1})], "ey": [("v", 21, {})]}


def test_a_solution_failing_its_own_checks_is_an_error_for_the_instructor():
    run = raw([line(0), line(1), line(EX, [error_output("NameError", "name 'x' is not defined")], "error"),
               line(EY)])
    with pytest.raises(RuntimeError, match="solution fails its own test cell 'ex'.*NameError"):
        reference_values(_sub(), run)
    bad = raw([line(0), line(1), line(EX, [emit_output("ey", "a", 1)]), line(EY)])
    with pytest.raises(RuntimeError, match="'ex' emitted malformed values"):
        reference_values(_sub(), bad)


def _tensor(t):
    return grading.to_plain(t)


def test_strides_are_judged_only_where_the_solutions_check_asked_for_a_layout():
    t = torch.arange(6.0).reshape(2, 3)
    other = t.t().contiguous().t()
    assert _judge([emit_output("ex", "a", _tensor(other))], [("a", _tensor(t), {})]).status == "passed"
    assert _judge([emit_output("ex", "a", _tensor(other))], [("a", _tensor(t), {"layout": True})]).status == "failed"
    # the stride of a dimension of size 1 is arbitrary: a layout check does not compare it
    row = torch.arange(3.0).reshape(3, 1).t()
    ref = [("a", _tensor(torch.arange(3.0)[None]), {"layout": True})]
    assert _judge([emit_output("ex", "a", _tensor(row))], ref).status == "passed"
    values, _ = emitted([{"slug": "ex", "name": "a", "value": 1, "layout": True}], "ex")
    assert values == [("a", 1, {"layout": True})]


def test_the_judge_and_the_kernels_checks_accept_and_refuse_the_same_values():
    # one comparison on both sides: whatever expect_close accepts under a tolerance, the judge accepts
    # under the same tolerance carried by the solution's emit, and the reverse
    want = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    for got, rtol in [(want * (1 + 5e-10), 1e-9), (want * (1 + 5e-9), 1e-9), (want + 1e-7, 1e-5),
                      (want.float().double(), 1e-12), (want.t(), 0.0)]:
        try:
            grading.expect_close(got, want, call="f()", rtol=rtol, atol=0.0)
            kernel = True
        except grading.CheckFailed:
            kernel = False
        judged = _judge([emit_output("ex", "a", _tensor(got))], [("a", _tensor(want), {"rtol": rtol, "atol": 0.0})])
        assert (judged.status == "passed") == kernel, (got, rtol)


def test_a_learner_chosen_exception_name_is_quoted_only_as_a_short_identifier():
    from grader.judge import learner_reason
    from tests.helpers.tiny import cell

    smuggled = "case0_x_is_3_2_and_the_answer_is_" + "7" * 60
    for ename, shown in [(smuggled, "(an error)"), ("seed: 1234", "(an error)"), ("ValueError", "(ValueError)")]:
        result = cell(0, outputs=[error_output(ename, "whatever it says")], status="error", shown=1)
        reason = learner_reason(result, before_hidden=False)
        assert shown in reason and "whatever" not in reason, reason
