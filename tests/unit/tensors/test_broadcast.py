"""The broadcasting explorer: its core against PyTorch, its renderer's artists, its wrapper's state."""

from __future__ import annotations

import math
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from torchcourse.tensors.broadcast import (
    GALLERY,
    BroadcastExplorer,
    _expanded_strides,
    allocations,
    broadcast,
    draw_broadcast,
    explore,
    parse_shape,
    read_grid,
    static_broadcast_gallery,
)

# Sizes drawn mostly from {0, 1, 2, 3} so that compatible and incompatible pairs both come up often.
shapes = st.lists(st.sampled_from([0, 1, 1, 2, 3, 4]), min_size=0, max_size=5).map(tuple)
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True)


def _torch_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(torch.broadcast_shapes(a, b))
    except RuntimeError:
        return None


@SETTINGS
@given(shapes, shapes)
def test_result_matches_torch_broadcast_shapes(a, b):
    state = broadcast(a, b)
    want = _torch_broadcast(a, b)
    assert state.result == want
    assert state.ok == (want is not None)
    assert state.status == ("ok" if want is not None else "incompatible")


@SETTINGS
@given(shapes, shapes)
def test_expanded_strides_match_torch_expand(a, b):
    result = _torch_broadcast(a, b)
    if result is None:
        return
    state = broadcast(a, b)
    assert state.strides_a == torch.empty(a).expand(result).stride()
    assert state.strides_b == torch.empty(b).expand(result).stride()
    assert _expanded_strides(a, a) == torch.empty(a).stride()  # nothing stretched: a new tensor's strides
    assert _expanded_strides(a, result) == state.strides_a


@SETTINGS
@given(shapes, shapes)
def test_stretched_dimensions_are_exactly_the_stride_zero_ones(a, b):
    state = broadcast(a, b)
    if not state.ok:
        return
    for k, column in enumerate(state.columns):
        for stretched, strides, shape in ((column.stretched_a, state.strides_a, a),
                                          (column.stretched_b, state.strides_b, b)):
            if column.size_out > 1:
                # A dimension of size > 1 read with stride 0 is stretched, and only such a dimension.
                assert stretched == (strides[k] == 0)
            has_dim = -column.dim <= len(shape)
            missing_and_grown = not has_dim and column.size_out != 1
            assert stretched == (missing_and_grown or (has_dim and shape[column.dim] != column.size_out))


@SETTINGS
@given(shapes, shapes)
def test_failing_dimension_is_the_one_pytorch_names(a, b):
    state = broadcast(a, b)
    if state.ok:
        assert state.failing_dims == ()
        return
    ndim = max(len(a), len(b))
    with pytest.raises(RuntimeError) as info:
        torch.empty(a) + torch.empty(b)
    named = int(re.search(r"non-singleton dimension (\d+)", str(info.value)).group(1))
    assert ndim + state.failing_dims[0] == named
    for dim in state.failing_dims:
        assert _torch_broadcast((a[dim],), (b[dim],)) is None
    first = state.failing_dims[0]
    assert f"dimension {first} " in state.message
    assert f"a has size {a[first]} and b has size {b[first]}" in state.message
    assert "Traceback" not in state.message


@SETTINGS
@given(shapes, shapes)
def test_read_grid_names_the_elements_pytorch_reads(a, b):
    result = _torch_broadcast(a, b)
    if result is None or math.prod(result) == 0:
        return
    state = broadcast(a, b)
    for shape, strides in ((a, state.strides_a), (b, state.strides_b)):
        expanded = torch.arange(math.prod(shape)).reshape(shape).expand(result)
        corner = expanded[(0,) * max(len(result) - 2, 0)]
        if corner.ndim < 2:
            corner = corner.reshape(1, -1)
        grid = read_grid(strides, result)
        assert grid == corner[: len(grid), : len(grid[0])].tolist()


def test_known_pairs_and_messages():
    state = broadcast((3, 1), (4,))
    assert state.result == (3, 4)
    assert state.strides_a == (1, 0) and state.strides_b == (0, 1)
    assert [(c.stretched_a, c.stretched_b) for c in state.columns] == [(False, True), (True, False)]
    assert "broadcast to (3, 4)" in state.message
    assert "a along dimension -1 (size 1, read 4 times)" in state.message
    assert "b along dimension -2 (missing, read 3 times)" in state.message

    bad = broadcast((2, 3), (2,))
    assert bad.failing_dims == (-1,) and bad.result is None and bad.strides_a is None
    assert "at dimension -1" in bad.message and "PyTorch's error calls it dimension 1" in bad.message

    several = broadcast((2, 3), (3, 2))
    assert several.failing_dims == (-1, -2)
    assert "Also at dimension -2" in several.message

    assert broadcast((0,), (1,)).result == (0,)  # the size that is not 1, even when it is 0
    assert broadcast((), ()).result == ()
    assert read_grid(broadcast((), ()).strides_a, ()) == [[0]]
    with pytest.raises(ValueError):
        broadcast((-1,), (2,))


@pytest.mark.parametrize("text, shape", [
    ("3, 1", (3, 1)), ("(3, 1)", (3, 1)), ("[3 1]", (3, 1)), ("4", (4,)), ("4,", (4,)), ("", ()),
    ("()", ()), ("torch.Size([2, 5])", (2, 5)), (" 2 ,3,  4 ", (2, 3, 4)),
])
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["x", "3, -1", "2.5", "3,,a"])
def test_parse_shape_rejects_with_a_sentence(text):
    with pytest.raises(ValueError, match="could not read"):
        parse_shape(text)
    state = explore(text, "2")
    assert state.status == "bad input" and "could not read" in state.message


def test_explore_limits_the_drawing_not_the_rules():
    state = explore("1, 1, 1, 1, 1, 1, 2", "2")
    assert state.status == "bad input" and "at most" in state.message
    assert broadcast((1,) * 6 + (2,), (2,)).result == (1,) * 6 + (2,)


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_renderer_draws_aligned_shapes_and_reads():
    fig = draw_broadcast(broadcast((3, 1), (4,)))
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    texts = _texts(fig)
    assert "(3, 1) with (4,) → (3, 4)" in texts
    assert ["dim -2", "dim -1"] == [t for t in texts if t.startswith("dim ")]
    assert "1→4" in texts and "-→3" in texts  # a stretched along -1, b along its missing -2
    assert "result (3, 4)" in texts
    # Element labels: a's three stored elements and b's four, each labelled once (re-reads are hatched).
    assert sorted(t for t in texts if re.fullmatch(r"[ab]\d+", t)) == ["a0", "a1", "a2", "b0", "b1", "b2", "b3"]
    hatched = [c for c in fig.axes[0].collections if c.get_hatch() == "//"]
    # Hatched: a's stretched table cell, plus 9 re-reads by a and 8 by b in the 3 x 4 grids.
    assert sum(len(c.get_paths()) for c in hatched) == 1 + 9 + 8


def test_renderer_marks_the_failing_dimension():
    fig = draw_broadcast(broadcast((2, 3), (2,)))
    texts = _texts(fig)
    assert "✗" in texts and "result error" in texts
    assert "cannot broadcast at dimension -1" in texts
    assert not any(re.fullmatch(r"[ab]\d+", t) for t in texts)  # no element grids for a failure


def test_renderer_shows_bad_input_as_a_sentence():
    state = explore("three", "4")
    assert _texts(draw_broadcast(state)) == [state.message]


def test_wrapper_updates_state_when_a_control_changes():
    explorer = BroadcastExplorer()
    assert explorer.state.result == (3, 4)
    explorer.controls["text_b"].value = "2"
    assert explorer.state.result == (3, 2)
    explorer.controls["text_a"].value = "2, 3"
    assert explorer.state.status == "incompatible" and explorer.state.failing_dims == (-1,)
    assert explorer.message.value == explorer.state.message
    assert isinstance(explorer.figure, Figure)
    explorer.controls["text_a"].value = "2, 3,"
    explorer.controls["text_b"].value = "oops"
    assert explorer.state.status == "bad input"


def test_static_gallery_has_one_panel_per_pair():
    fig = static_broadcast_gallery()
    assert len(fig.axes) == len(GALLERY) == 4
    titles = [t for t in _texts(fig) if " with " in t]
    assert titles[-1] == "(2, 3) with (2,) → error"
    assert sum(1 for t in titles if t.endswith("error")) == 1


def test_allocations_show_broadcasting_allocates_only_the_result():
    a, b = torch.rand(300, 1), torch.rand(300)
    assert allocations(lambda: a + b) == {"aten::add": 300 * 300 * 4}
    copied = allocations(lambda: a.expand(300, 300).contiguous() + b)
    assert sum(copied.values()) == 2 * 300 * 300 * 4  # the materialised copy, then the result
