"""The exercise contract's run-time helpers: seeds, encoding, emitted values and checks."""

import math

import numpy as np
import pytest
import torch

from torchcourse import grading
from torchcourse.contract import plain_difference
from torchcourse.grading import CheckFailed


@pytest.fixture(autouse=True)
def _default_seed():
    grading.set_seed(grading.DEFAULT_SEED)
    yield
    grading.set_seed(grading.DEFAULT_SEED)


def test_rng_is_repeatable_per_slug_and_differs_between_slugs():
    a = grading.rng("broadcast-shape").integers(0, 10**9, size=5)
    b = grading.rng("broadcast-shape").integers(0, 10**9, size=5)
    c = grading.rng("contiguous-strides").integers(0, 10**9, size=5)
    assert a.tolist() == b.tolist()
    assert a.tolist() != c.tolist()


def test_set_seed_changes_the_cases_so_they_cannot_be_precomputed():
    default = grading.rng("x").random(3).tolist()
    default_torch = torch.rand(3, generator=grading.torch_generator("x")).tolist()
    grading.set_seed(12345)
    assert grading.get_seed() == 12345
    assert grading.rng("x").random(3).tolist() != default
    assert torch.rand(3, generator=grading.torch_generator("x")).tolist() != default_torch


def test_to_plain_encodes_tensors_with_dtype_shape_and_strides():
    t = torch.arange(6, dtype=torch.int32).reshape(2, 3).t()
    plain = grading.to_plain(t)
    assert plain == {"kind": "tensor", "dtype": "torch.int32", "shape": [3, 2], "stride": [1, 3],
                     "data": [[0, 3], [1, 4], [2, 5]]}
    arr = np.zeros((2, 3), dtype=np.float64)
    assert grading.to_plain(arr)["stride"] == [3, 1]
    assert grading.to_plain(np.int64(4)) == {"kind": "numpy-scalar", "dtype": "int64", "data": 4}


def test_to_plain_tags_types_so_no_two_encode_alike():
    values = [True, 1, 1.0, "1", (1,), [1], {"a": 1}, torch.Size([1]), np.int64(1), None]
    plains = [grading.to_plain(v) for v in values]
    # torch.Size is a tuple; every other pair differs
    assert plains[4] == plains[7]
    distinct = [p for i, p in enumerate(plains) if i != 7]
    for i, a in enumerate(distinct):
        for b in distinct[i + 1:]:
            assert plain_difference(a, b) is not None, (a, b)


def test_to_plain_encodes_nan_and_infinities_explicitly():
    plain = grading.to_plain([math.nan, math.inf, -math.inf, 1.5])
    assert plain == [{"float": "nan"}, {"float": "inf"}, {"float": "-inf"}, 1.5]


class Liar:
    def __eq__(self, other):
        return True

    def __bool__(self):
        return True


class IntLike(int):
    def __eq__(self, other):
        return True


def test_to_plain_refuses_objects_that_lie_about_equality():
    with pytest.raises(grading.NotPlainError):
        grading.to_plain(Liar())
    with pytest.raises(grading.NotPlainError):
        grading.to_plain(IntLike(3))


def test_expect_equal_passes_equal_values_and_explains_a_failure():
    grading.expect_equal((3, 4), (3, 4), call="f()")
    grading.expect_equal(torch.Size([3, 4]), (3, 4), call="f()")
    with pytest.raises(CheckFailed) as info:
        grading.expect_equal((3, 1), (3, 4), call="broadcast_shape((3, 1), (4,))", taught="section 2")
    text = str(info.value)
    assert "broadcast_shape((3, 1), (4,)) returned a tuple (3, 1); expected a tuple (3, 4)" in text
    assert "[1]: got 1, expected 4" in text
    assert "See: section 2" in text


@pytest.mark.parametrize("got,want", [
    ([3, 4], (3, 4)), ((3, 4), [3, 4]), (6.0, 6), (6, 6.0), (True, 1), (1, True), (np.int64(6), 6),
    ((3.0, 4.0), (3, 4)), (torch.tensor([1, 2]), torch.tensor([1.0, 2.0])), ({"a": 1}, {"a": 1.0}),
])
def test_expect_equal_compares_types_as_well_as_values(got, want):
    with pytest.raises(CheckFailed) as info:
        grading.expect_equal(got, want, call="f()")
    assert "expected" in str(info.value)


def test_expect_equal_names_the_type_a_learner_returned():
    with pytest.raises(CheckFailed, match=r"returned a list \[3, 4\]; expected a tuple \(3, 4\)"):
        grading.expect_equal([3, 4], (3, 4), call="f()")


def test_expect_close_wants_the_type_it_was_given():
    grading.expect_close(0.5, 0.5 + 1e-9, call="f()")
    with pytest.raises(CheckFailed, match="expected a float"):
        grading.expect_close(1, 1.0, call="f()")
    with pytest.raises(CheckFailed, match="dtype"):
        grading.expect_close(torch.tensor([1.0], dtype=torch.float64), torch.tensor([1.0]), call="f()")
    with pytest.raises(CheckFailed, match="expected a torch.Tensor"):
        grading.expect_close(1.0, torch.tensor(1.0), call="f()")


def test_expect_equal_is_not_fooled_by_lying_objects():
    with pytest.raises(CheckFailed):
        grading.expect_equal(Liar(), (3, 4), call="f()")
    with pytest.raises(CheckFailed):
        grading.expect_equal(IntLike(5), 3, call="f()")


def test_expect_equal_reports_an_exception_caught_by_call():
    def broken():
        raise KeyError("oops")

    got = grading.call(broken)
    assert got == {"error": "KeyError: 'oops'"}
    with pytest.raises(CheckFailed, match="raised KeyError"):
        grading.expect_equal(got, 1, call="broken()")


def test_expect_tensor_checks_type_shape_dtype_and_strides():
    t = torch.zeros(2, 3)
    grading.expect_tensor(t, call="f()", shape=(2, 3), dtype=torch.float32, stride=(3, 1))
    with pytest.raises(CheckFailed, match="dtype torch.float64"):
        grading.expect_tensor(t, call="f()", dtype=torch.float64)
    with pytest.raises(CheckFailed, match="strides"):
        grading.expect_tensor(t.t(), call="f()", stride=(3, 1))
    with pytest.raises(CheckFailed, match="expected a torch.Tensor"):
        grading.expect_tensor(np.zeros(3), call="f()")


def test_expect_close_uses_the_exercise_tolerance_and_ignores_patched_allclose(monkeypatch):
    grading.expect_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-9]), call="f()")
    monkeypatch.setattr(torch, "allclose", lambda *a, **k: True)
    with pytest.raises(CheckFailed, match="largest difference"):
        grading.expect_close(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]), call="f()")
    with pytest.raises(CheckFailed, match="shape"):
        grading.expect_close(torch.zeros(3), torch.zeros(2), call="f()")


def test_expect_raises_checks_type_and_message():
    def bad():
        raise ValueError("dimension 1: sizes 3 and 4")

    assert "dimension 1" in grading.expect_raises(bad, ValueError, call="f()", match="dimension 1")
    with pytest.raises(CheckFailed, match="should mention"):
        grading.expect_raises(bad, ValueError, call="f()", match="dimension 0")
    with pytest.raises(CheckFailed, match="expected it to raise"):
        grading.expect_raises(lambda: 1, ValueError, call="f()")


def test_expect_true_accepts_only_a_real_true():
    grading.expect_true(True, "fine")
    with pytest.raises(CheckFailed, match="nope"):
        grading.expect_true(Liar(), "nope")
    with pytest.raises(CheckFailed):
        grading.expect_true(torch.tensor(True), "a tensor is not True")


def test_shares_storage_tells_views_from_copies():
    x = torch.arange(6)
    assert grading.shares_storage(x, x[2:])
    assert not grading.shares_storage(x, x.clone())


def test_emit_publishes_one_output_with_only_the_emit_mime_type():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    published = []
    original = shell.display_pub.publish
    shell.display_pub.publish = lambda data, metadata=None, **kw: published.append(data)
    try:
        grading.emit("tensor-facts", "case0", (2, (2, 3), 6))
        grading.emit("tensor-facts", "case1", Liar())
        grading.emit("standardise", "case0", 0.5, rtol=1e-5, atol=1e-6)
    finally:
        shell.display_pub.publish = original
    value = {"tuple": [2, {"tuple": [2, 3]}, 6]}
    assert published[0] == {grading.EMIT_MIME: {"slug": "tensor-facts", "name": "case0", "value": value}}
    assert list(published[1]) == [grading.EMIT_MIME]
    assert published[1][grading.EMIT_MIME]["value"]["error"].startswith("NotPlainError")
    assert published[2][grading.EMIT_MIME] == {"slug": "standardise", "name": "case0", "value": 0.5,
                                               "rtol": 1e-5, "atol": 1e-6}


def test_call_lets_an_unanswered_stub_say_so():
    def stub():
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        grading.call(stub)


def test_strides_count_only_where_the_check_asks_for_a_layout():
    t = torch.arange(6.0).reshape(2, 3)
    column_major = t.t().contiguous().t()
    grading.expect_equal(column_major, t, call="f()")
    grading.expect_close(column_major, t, call="f()")
    with pytest.raises(CheckFailed, match="strides"):
        grading.expect_equal(column_major, t, call="f()", layout=True)
    # the stride of a dimension of size 1 or 0 is arbitrary in PyTorch: never compared
    row = torch.arange(3.0).reshape(1, 3)
    grading.expect_equal(torch.arange(3.0).reshape(3, 1).t(), row, call="f()", layout=True)
    grading.expect_equal(torch.empty(0, 3).t(), torch.empty(3, 0), call="f()", layout=True)
    grading.expect_tensor(torch.arange(3.0)[None, :].expand(1, 3), call="f()", stride=(3, 1))


def test_close_means_the_same_float64_closeness_on_both_sides():
    # a float is never rounded to float32 on the way: 1 + 1e-7 is not within a relative 1e-9 of 1
    with pytest.raises(CheckFailed):
        grading.expect_close(1.0 + 1e-7, 1.0, call="f()", rtol=1e-9, atol=0.0)
    grading.expect_close(0.1 + 0.2, 0.3, call="f()", rtol=1e-12, atol=0.0)
    assert plain_difference(0.3, 0.1 + 0.2, rtol=1e-12, atol=0.0) is None
    assert plain_difference(1.0, 1.0 + 1e-7, rtol=1e-9, atol=0.0) is not None


def test_a_tensor_difference_names_the_first_index_and_the_largest_difference():
    want = torch.zeros(50, 4)
    got = want.clone()
    got[17, 2] = 0.25
    got[30, 1] = -1.5
    with pytest.raises(CheckFailed) as info:
        grading.expect_close(got, want, call="f(x)")
    text = str(info.value)
    assert "2 element(s) differ; the first at index (17, 2): got 0.25, expected 0.0" in text
    assert "largest difference 1.5" in text
    assert len(text) < 1200


def test_messages_name_types_as_python_does_and_keep_the_hint_when_learner_code_raised():
    with pytest.raises(CheckFailed) as info:
        grading.expect_close(None, 1.0, call="f()")
    assert "returned None; expected a float 1.0" in str(info.value)
    with pytest.raises(CheckFailed, match=r"returned a numpy.float64 (.|\n)*convert it with float"):
        grading.expect_close(np.float64(1.0), 1.0, call="f()")
    got = grading.call(lambda: torch.empty(2**62))
    with pytest.raises(CheckFailed, match=r"raised RuntimeError(.|\n)*Hint: compute with Python ints"):
        grading.expect_equal(got, (1,), call="f()", hint="compute with Python ints")


def test_fresh_copies_inputs_and_expect_unchanged_sees_any_change():
    x = torch.arange(4.0).reshape(2, 2).t().requires_grad_()
    copy = grading.fresh(x)
    assert copy is not x and copy.requires_grad and copy.stride() == x.stride()
    assert not grading.shares_storage(copy, x)
    nested = grading.fresh([x, {"a": np.zeros(2)}, (3, "s")])
    assert nested[0] is not x and type(nested[2]) is tuple
    w = torch.ones(3, requires_grad=True)
    before = grading.fresh(w)
    grading.expect_unchanged(before, w, call="f(w)", what="w")
    w.detach_()
    with pytest.raises(CheckFailed, match="requires_grad was True, is now False"):
        grading.expect_unchanged(before, w, call="f(w)", what="w")
    v = torch.ones(3)
    before = grading.fresh(v)
    v[1] = 2.0
    with pytest.raises(CheckFailed, match=r"changed v .*index 1"):
        grading.expect_unchanged(before, v, call="f(v)", what="v")
    model = torch.nn.Linear(2, 1)
    snapshot = grading.fresh(model)
    grading.expect_unchanged(snapshot, model, call="f(model)", what="the model")
    with torch.no_grad():
        model.bias += 1
    with pytest.raises(CheckFailed, match="the model"):
        grading.expect_unchanged(snapshot, model, call="f(model)", what="the model")


def test_call_keeps_a_learners_warning_off_stderr_where_plain_nbgrader_would_score_it_zero(capsys):
    import warnings

    def warns(x):
        warnings.warn("deprecated", DeprecationWarning, stacklevel=2)
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert grading.call(warns, 1) == 2
        assert grading.attempt(warns, 2) == 3
        warnings.warn("the check's own warning still shows", stacklevel=1)
    assert [str(w.message) for w in caught] == ["the check's own warning still shows"]
    assert capsys.readouterr().err == ""
