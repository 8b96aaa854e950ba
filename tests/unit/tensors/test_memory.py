"""Memory explorer: core values against PyTorch, renderer, wrapper and static stand-in."""

import math

import numpy as np
import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from torchcourse.tensors import memory

ALL_CASES = [(shape, op, layout) for shape in memory.SHAPES for op in memory.OPS for layout in memory.LAYOUTS]


def _positions_by_pointer(t: torch.Tensor) -> list[int]:
    """Each element's storage position from its address: an oracle independent of the strides."""
    base = t.untyped_storage().data_ptr()
    flat_index = np.ndindex(*t.shape)
    return [(t[idx].data_ptr() - base) // t.element_size() for idx in flat_index]


def _random_cases(count: int, seed: int = 3):
    """Shapes beyond the drop-down's: rank 1-4, sizes 1-4, every op, both layouts where possible."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 5))))
        layout = memory.LAYOUTS[int(rng.integers(0, 2))] if len(shape) >= 2 else "contiguous"
        cases.append((shape, str(rng.choice(list(memory.OPS))), layout))
    return cases


@pytest.mark.parametrize("shape,op,layout", ALL_CASES + _random_cases(60))
def test_core_agrees_with_pytorch(shape, op, layout):
    state = memory.explore(shape, op, layout)
    x = memory.make_source(shape, layout)
    assert state.shape == tuple(x.shape) == shape
    assert state.source_strides == x.stride() and state.source_offset == x.storage_offset()
    assert list(state.source_indices) == _positions_by_pointer(x)
    if state.kind == "error":
        with pytest.raises(RuntimeError):
            memory.OPS[op].run(x)
        return
    y = memory.OPS[op].run(x)
    assert state.result_shape == tuple(y.shape) and state.result_strides == y.stride()
    assert state.result_offset == y.storage_offset() and state.result_contiguous == y.is_contiguous()
    assert list(state.result_values) == y.reshape(-1).tolist()
    shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert state.is_view == shares and state.kind == ("view" if shares else "copy")
    if shares:
        # the storage holds 0, 1, 2, ...: a view's values are the positions it reads
        assert list(state.storage_indices) == _positions_by_pointer(y) == list(state.result_values)
    else:
        assert state.storage_indices is None and state.shared_cells == frozenset()
    assert state.reason and state.expression in state.message and state.kind in state.message


def test_slice_of_a_3x4_matrix():
    s = memory.explore((3, 4), "slice")
    assert s.expression == "x[1:, ::2]"
    assert (s.result_shape, s.result_strides, s.result_offset) == ((2, 2), (4, 2), 4)
    assert s.shared_cells == {4, 6, 8, 10} and s.is_view


def test_transpose_swaps_strides_and_expand_adds_a_zero_stride():
    t = memory.explore((3, 4), "transpose")
    assert (t.result_shape, t.result_strides, t.result_contiguous) == ((4, 3), (1, 4), False)
    e = memory.explore((3, 4), "expand")
    assert e.result_strides == (0, 4, 1) and e.is_view
    assert e.storage_indices[:12] == e.storage_indices[12:]  # both copies read the same cells
    r = memory.explore((3, 4), "repeat")
    assert r.kind == "copy" and r.result_strides == (12, 4, 1)


def test_view_fails_on_a_transposed_source_and_reshape_copies():
    v = memory.explore((3, 4), "view", "transposed")
    assert v.kind == "error" and not v.is_view and v.result_shape is None
    assert "view size is not compatible" in v.reason and "reshape" in v.message
    r = memory.explore((3, 4), "reshape", "transposed")
    assert r.kind == "copy" and r.result_values == (0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11)
    assert memory.explore((3, 4), "reshape", "contiguous").is_view


def test_contiguous_copies_only_when_needed_and_clone_keeps_dense_strides():
    assert memory.explore((3, 4), "contiguous", "contiguous").is_view
    c = memory.explore((3, 4), "contiguous", "transposed")
    assert c.kind == "copy" and c.result_strides == (4, 1)
    k = memory.explore((3, 4), "clone", "transposed")
    assert k.kind == "copy" and k.result_strides == (1, 3) and k.result_contiguous is False


def test_indexing_with_tensors_copies_and_detach_shares():
    a = memory.explore((3, 4), "advanced indexing")
    assert a.kind == "copy" and a.result_values == (8, 9, 10, 11, 0, 1, 2, 3)
    assert "x[torch.tensor([2, 0])]" == a.expression
    m = memory.explore((2, 3), "boolean mask")
    assert m.kind == "copy" and m.result_values == (0, 3) and m.result_shape == (2,)
    assert memory.explore((2, 3), "detach").is_view


def test_a_0dim_integer_tensor_index_is_basic_indexing_a_view():
    z = memory.explore((3, 4), "0-dim tensor index")
    assert z.expression == "x[torch.tensor(2)]"
    assert z.kind == "view" and z.result_shape == (4,) and z.result_values == (8, 9, 10, 11)
    assert z.shared_cells == frozenset({8, 9, 10, 11}) and "0-dim" in z.message
    t = memory.explore((3, 4), "0-dim tensor index", layout="transposed")
    assert t.kind == "view" and t.result_strides == (3,)


def test_element_positions_match_addresses_on_random_strided_tensors():
    rng = np.random.default_rng(7)
    base = torch.arange(200)
    for _ in range(50):
        rank = int(rng.integers(0, 4))
        size = tuple(int(n) for n in rng.integers(0, 4, size=rank))
        stride = tuple(int(s) for s in rng.integers(0, 6, size=rank))
        offset = int(rng.integers(0, 20))
        t = base.as_strided(size, stride, offset)
        assert list(memory.element_positions(t)) == _positions_by_pointer(t) == t.reshape(-1).tolist()


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="op must be one of"):
        memory.explore((3, 4), "squash")
    with pytest.raises(ValueError, match="layout must be one of"):
        memory.make_source((3, 4), "diagonal")
    with pytest.raises(ValueError, match="at least two dimensions"):
        memory.make_source((5,), "transposed")


def test_one_dimensional_sources_work():
    s = memory.explore((6,), "slice")
    assert (s.expression, s.result_strides, s.result_offset, s.result_values) == ("x[1::2]", (2,), 1, (1, 3, 5))


def _fills(fig, part):
    """Face colours of one part's squares, in row-major order."""
    return [to_hex(c) for ax in fig.axes for coll in ax.collections if coll.get_gid() == part
            for c in coll.get_facecolors()]


def _title(fig, part):
    return " ".join(t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == f"{part}-title")


def test_renderer_highlights_the_cells_a_view_reads():
    state = memory.explore((3, 4), "slice")
    fig = memory.draw_memory(state)
    assert isinstance(fig, Figure)
    assert len(_fills(fig, "storage")) == 12 and len(_fills(fig, "source")) == 12
    assert len(_fills(fig, "result")) == 4
    green = [i for i, c in enumerate(_fills(fig, "storage")) if c == memory.SHARED]
    assert green == [4, 6, 8, 10]
    assert set(_fills(fig, "result")) == {memory.SHARED}
    assert "VIEW" in _title(fig, "result") and "strides (4, 2), offset 4" in _title(fig, "result")
    assert "strides (4, 1), offset 0" in _title(fig, "source")
    # the numbers are one outline per part, lying inside that part's squares
    for part in ("storage", "source", "result"):
        numbers = [a for a in fig.axes[0].get_children() if a.get_gid() == f"{part}-numbers"]
        squares = [c for c in fig.axes[0].collections if c.get_gid() == part]
        assert len(numbers) == 1 and len(squares) == 1
        inner, outer = numbers[0].get_path().get_extents(), squares[0].get_datalim(fig.axes[0].transData)
        assert outer.x0 < inner.x0 < inner.x1 < outer.x1 and outer.y0 < inner.y0 < inner.y1 < outer.y1


def test_renderer_marks_copies_and_errors():
    fig = memory.draw_memory(memory.explore((3, 4), "clone"))
    assert memory.SHARED not in _fills(fig, "storage")
    assert set(_fills(fig, "result")) == {memory.COPIED} and "COPY" in _title(fig, "result")
    fig = memory.draw_memory(memory.explore((3, 4), "view", "transposed"))
    assert "error" in _title(fig, "result") and not _fills(fig, "result")


def test_renderer_draws_rank_3_and_4_results():
    state = memory.explore((2, 3, 4), "expand")
    fig = memory.draw_memory(state)
    assert len(_fills(fig, "result")) == math.prod(state.result_shape) == 48


def test_wrapper_updates_state_when_controls_change():
    explorer = memory.MemoryExplorer()
    assert explorer.state.op == "slice" and explorer.state.is_view
    first = explorer.figure
    explorer.controls["layout"].value = "transposed"
    explorer.controls["op"].value = "view"
    assert explorer.state.kind == "error" and "reshape" in explorer.message.value
    explorer.controls["op"].value = "reshape"
    assert explorer.state.kind == "copy" and "copy" in explorer.message.value
    explorer.controls["shape"].value = (2, 3, 4)
    assert explorer.state.shape == (2, 3, 4) and explorer.state.result_shape == (24,)
    assert explorer.figure is not first


def test_static_stand_in_shows_its_cases():
    fig = memory.static_memory_explorer()
    titles = [" ".join(t.get_text() for t in ax.texts if t.get_gid() == "result-title") for ax in fig.axes]
    assert len(titles) == len(memory.STATIC_CASES) == 6
    assert ["VIEW" in t for t in titles] == [True, True, True, False, False, False]
    assert "error" in titles[3] and "COPY" in titles[4] and "COPY" in titles[5]


def test_the_source_title_in_chinese_names_its_layout_in_chinese_and_keeps_the_method_name():
    """The layout is an adjective (连续, 转置 in the Chinese figure); the contiguous() operation in the result's title
    is a method's name and stays as the code writes it."""
    from torchcourse.figure_words import in_language

    for layout, word in (("contiguous", "连续"), ("transposed", "转置")):
        fig = memory.draw_memory(memory.explore((3, 4), "contiguous", layout))
        english = _title(fig, "source")
        assert english.startswith(f"x ({layout}): shape (3, 4)")
        with in_language(fig, "zh_CN"):
            source, result = _title(fig, "source"), _title(fig, "result")
        assert source.startswith(f"x（{word}）：形状 (3, 4)") and layout not in source
        assert "x.contiguous()" in result
        assert _title(fig, "source") == english  # the English is back once the picture is saved
