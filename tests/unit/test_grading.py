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
    assert "broadcast_shape((3, 1), (4,)) returned (3, 1)" in text
    assert "expected (3, 4)" in text and "See: section 2" in text


@pytest.mark.parametrize("got,want", [
    ([3, 4], (3, 4)), ((3, 4), [3, 4]), (6.0, 6), (6, 6.0), (True, 1), (1, True), (np.int64(6), 6),
    ((3.0, 4.0), (3, 4)), (torch.tensor([1, 2]), torch.tensor([1.0, 2.0])), ({"a": 1}, {"a": 1.0}),
])
def test_expect_equal_compares_types_as_well_as_values(got, want):
    with pytest.raises(CheckFailed) as info:
        grading.expect_equal(got, want, call="f()")
    assert "expected" in str(info.value)


def test_expect_equal_names_the_type_a_learner_returned():
    with pytest.raises(CheckFailed, match=r"expected a tuple \(3, 4\) \(a list is not what was asked\)"):
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
