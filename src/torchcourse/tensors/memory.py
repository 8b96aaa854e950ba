"""Memory explorer: does an operation give a view of the source's storage, or a copy?

Used in notebook 1.5 (``01-tensors/05-shapes-and-views``), section 3.4, "The memory explorer".

core: ``explore(shape, op, layout)`` → ``MemoryState`` (pure data, computed with real PyTorch ops)
renderer: ``draw_memory(state)`` → matplotlib Figure (storage strip, source grid, result grid)
wrapper: ``MemoryExplorer()`` (drop-downs for shape, source layout and operation)
static stand-in: ``static_memory_explorer()`` draws the most instructive cases in one figure.

The source is ``torch.arange(n)`` arranged into ``shape``, so every storage cell holds its own
position: a result element's value *is* the storage position it was read from. For a view that
position lies in the source's storage; for a copy it is where the value was copied from.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as widgets
import torch
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch, Rectangle
from matplotlib.path import Path
from matplotlib.text import TextPath
from matplotlib.transforms import Affine2D

from torchcourse.grading import shares_storage
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer

#: Shapes offered by the explorer's drop-down (the core accepts any shape of rank >= 1).
SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (2, 3), (4, 2), (2, 3, 4))
#: How the source is laid out: row-major, or the transpose of a row-major tensor (same shape). The words are
#: adjectives (shown in the learner's language), the values the code passes stay English.
LAYOUTS = (N_("contiguous"), N_("transposed"))
#: The source's title, one sentence per layout.
SOURCE_TITLES = {"contiguous": N_("x (contiguous): shape {shape}"), "transposed": N_("x (transposed): shape {shape}")}


def _slice(x: torch.Tensor) -> torch.Tensor:
    return x[1::2] if x.ndim == 1 else x[1:, ..., ::2]


def _last_two_swapped(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-2, -1) if x.ndim >= 2 else x


def _rotate(x: torch.Tensor) -> torch.Tensor:
    return x.permute(*range(1, x.ndim), 0)


def _index(x: torch.Tensor) -> torch.Tensor:
    return x[torch.tensor([x.shape[0] - 1, 0])]


def _index_0d(x: torch.Tensor) -> torch.Tensor:
    return x[torch.tensor(x.shape[0] - 1)]  # like argmax's result: a tensor, yet basic indexing


def _repeat_like_expand(x: torch.Tensor) -> torch.Tensor:
    return x.unsqueeze(0).repeat(2, *([1] * x.ndim))


def _expand(x: torch.Tensor) -> torch.Tensor:
    return x.unsqueeze(0).expand(2, *x.shape)


@dataclass(frozen=True)
class Op:
    """One operation of the explorer: how to write it, how to run it, and why it views or copies."""

    label: str
    expression: Callable[[torch.Tensor], str]  # source -> the code shown, e.g. "x[1:, ::2]"
    run: Callable[[torch.Tensor], torch.Tensor]
    why_view: str  # marked N_: the caption shows it in the learner's language
    why_copy: str


def _slice_text(x: torch.Tensor) -> str:
    return "x[1::2]" if x.ndim == 1 else ("x[1:, ::2]" if x.ndim == 2 else "x[1:, ..., ::2]")


def _perm_text(x: torch.Tensor) -> str:
    return f"x.permute({', '.join(str(d) for d in [*range(1, x.ndim), 0])})"


OPS: dict[str, Op] = {
    "slice": Op("slice", _slice_text, _slice,
                N_("basic slicing only changes the shape, strides and offset; it reads the source's storage"), ""),
    "view": Op("view", lambda x: "x.view(-1)", lambda x: x.view(-1),
               N_("view never copies: it reads the same storage with a new shape and strides"), ""),
    "reshape": Op("reshape", lambda x: "x.reshape(-1)", lambda x: x.reshape(-1),
                  N_("the source's strides allow the new shape, so reshape returned a view"),
                  N_("no strides over the existing storage give this shape in row-major order, "
                  "so reshape copied (as x.contiguous().view(-1) would)")),
    "transpose": Op("transpose", lambda x: "x.transpose(-2, -1)" if x.ndim >= 2 else "x.transpose(0, 0)",
                    _last_two_swapped, N_("transpose swaps two strides; no element moves"), ""),
    "permute": Op("permute", _perm_text, _rotate, N_("permute reorders the strides; no element moves"), ""),
    "expand": Op("expand", lambda x: "x.unsqueeze(0).expand(2, *x.shape)", _expand,
                 N_("the new dimension has stride 0, so both positions along it read the same storage cells: "
                 "nothing is copied"), ""),
    "repeat": Op("repeat", lambda x: f"x.unsqueeze(0).repeat(2{', 1' * x.ndim})", _repeat_like_expand,
                 "", N_("repeat writes every repetition into new memory (compare expand)")),
    "contiguous": Op("contiguous", lambda x: "x.contiguous()", lambda x: x.contiguous(),
                     N_("x is already contiguous, so contiguous() returned x itself"),
                     N_("x is not contiguous, so contiguous() copied it into new row-major memory")),
    "clone": Op("clone", lambda x: "x.clone()", lambda x: x.clone(),
                "", N_("clone always allocates new memory (it keeps the strides of a dense source)")),
    "advanced indexing": Op("advanced indexing", lambda x: f"x[torch.tensor([{len(x) - 1}, 0])]", _index,
                            "", N_("indexing with an integer tensor gathers the chosen elements into new memory")),
    "0-dim tensor index": Op("0-dim tensor index", lambda x: f"x[torch.tensor({len(x) - 1})]", _index_0d,
                             N_("a 0-dim integer tensor as the index counts as an int: basic indexing, so a view"),
                             ""),
    "boolean mask": Op("boolean mask", lambda x: "x[x % 3 == 0]", lambda x: x[x % 3 == 0],
                       "", N_("indexing with a boolean mask copies the selected elements into a new 1-D tensor")),
    "detach": Op("detach", lambda x: "x.detach()", lambda x: x.detach(),
                 N_("detach shares the storage; it only leaves out the autograd history"), ""),
}
#: The operations named by words, shown in the learner's language; the others are the names of the methods the
#: notebook's code calls (`contiguous` among them, though the layout's "contiguous" is a word), kept as they are.
OP_WORDS = (N_("slice"), N_("advanced indexing"), N_("0-dim tensor index"), N_("boolean mask"))
METHOD_OPS = frozenset(OPS) - set(OP_WORDS)


@dataclass(frozen=True)
class MemoryState:
    """What the explorer shows: source and result geometry, and the verdict with its reason.

    ``storage_indices`` gives, for each result element in row-major order, the position in the
    source's storage it reads; it is ``None`` for a copy (and for an error). ``kind`` is "view",
    "copy" or "error" (``view`` refused the shape); ``message`` is one sentence for the wrapper.
    """

    shape: tuple[int, ...]
    layout: str
    op: str
    expression: str
    storage_size: int
    source_strides: tuple[int, ...]
    source_offset: int
    source_indices: tuple[int, ...]
    result_shape: tuple[int, ...] | None
    result_strides: tuple[int, ...] | None
    result_offset: int | None
    result_values: tuple[int, ...] | None
    result_contiguous: bool | None
    storage_indices: tuple[int, ...] | None
    kind: str
    reason: str
    message: str

    @property
    def is_view(self) -> bool:
        return self.kind == "view"

    @property
    def shared_cells(self) -> frozenset[int]:
        """Storage positions of the source that the result reads (empty for a copy)."""
        return frozenset(self.storage_indices or ())


def make_source(shape: tuple[int, ...], layout: str = "contiguous") -> torch.Tensor:
    """``arange`` arranged into ``shape``; "transposed" lays it out as the transpose of a row-major tensor."""
    shape = tuple(int(s) for s in shape)
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    n = math.prod(shape)
    if layout == "contiguous":
        return torch.arange(n).reshape(shape)
    if len(shape) < 2:
        raise ValueError("a transposed source needs at least two dimensions")
    stored = (*shape[:-2], shape[-1], shape[-2])
    return torch.arange(n).reshape(stored).transpose(-2, -1)


def element_positions(t: torch.Tensor) -> tuple[int, ...]:
    """Storage position of each element in row-major order: offset + sum(index * stride)."""
    if t.numel() == 0:
        return ()
    positions = torch.full((), t.storage_offset(), dtype=torch.int64)
    for size, stride in zip(t.shape, t.stride()):
        positions = positions.unsqueeze(-1) + torch.arange(size) * stride
    return tuple(int(p) for p in positions.reshape(-1))


def explore(shape: tuple[int, ...], op: str, layout: str = "contiguous") -> MemoryState:
    """Run ``op`` on a small ``arange`` source of ``shape`` and report whether it viewed or copied."""
    if op not in OPS:
        raise ValueError(f"op must be one of {list(OPS)}, got {op!r}")
    spec = OPS[op]
    x = make_source(shape, layout)
    expression = spec.expression(x)
    common = {"shape": tuple(x.shape), "layout": layout, "op": op, "expression": expression,
              "storage_size": x.untyped_storage().nbytes() // x.element_size(),
              "source_strides": tuple(x.stride()), "source_offset": x.storage_offset(),
              "source_indices": element_positions(x)}
    try:
        y = spec.run(x)
    except RuntimeError as exc:
        reason = (f"{expression} raised RuntimeError: {str(exc).split('(')[0].strip()}. "
                  "No strides over x's storage walk its elements in row-major order; "
                  "reshape would copy instead, and so would x.contiguous().view(-1)")
        message = _("<b>error</b>: {expression} raised RuntimeError: {error}. No strides over x's storage walk its "
                    "elements in row-major order; reshape would copy instead, and so would x.contiguous().view(-1)."
                    ).format(expression=expression, error=str(exc).split('(')[0].strip())
        return MemoryState(**common, result_shape=None, result_strides=None, result_offset=None,
                           result_values=None, result_contiguous=None, storage_indices=None,
                           kind="error", reason=reason, message=message)
    view = shares_storage(x, y)
    kind = "view" if view else "copy"
    reason = spec.why_view if view else spec.why_copy
    result = {"result_shape": tuple(y.shape), "result_strides": tuple(y.stride()),
              "result_offset": y.storage_offset(), "result_values": tuple(int(v) for v in y.reshape(-1)),
              "result_contiguous": y.is_contiguous(),
              "storage_indices": element_positions(y) if view else None}
    # One sentence per verdict, so a translation can word each as its language needs.
    verdict = (N_("<code>{expression}</code> is a <b>view</b>: {reason}. Result shape {shape}, strides {strides}, "
                  "offset {offset}.") if view else
               N_("<code>{expression}</code> is a <b>copy</b>: {reason}. Result shape {shape}, strides {strides}, "
                  "offset {offset}."))
    message = _(verdict).format(expression=expression, reason=_(reason), shape=tuple(y.shape),
                                strides=tuple(y.stride()), offset=y.storage_offset())
    return MemoryState(**common, **result, kind=kind, reason=reason, message=message)


# --------------------------------------------------------------------------- renderer

SHARED = "#8fd18f"   # a storage cell the result reads, and a result element living there
COPIED = "#f2b8a0"   # a result element in new memory
PLAIN = "#eeeeee"
_GAP = 2.0           # blank cells between the storage strip, the source and the result
_CELL_INCHES = 0.3


def _grid_cells(shape: tuple[int, ...]) -> list[tuple[float, float]]:
    """(column, row) of each element, row-major; rank >= 3 puts the last-two-dims blocks side by side."""
    if len(shape) == 0:
        return [(0.0, 0.0)]
    if len(shape) == 1:
        return [(float(c), 0.0) for c in range(shape[0])]
    rows, cols = shape[-2], shape[-1]
    blocks = math.prod(shape[:-2])
    return [(b * (cols + 0.6) + c, float(r)) for b in range(blocks) for r in range(rows) for c in range(cols)]


def _extent(shape: tuple[int, ...]) -> tuple[float, float]:
    cells = _grid_cells(shape)
    return max(cx for cx, _ in cells) + 1, max(cy for _, cy in cells) + 1


@functools.lru_cache(maxsize=512)
def _number_path(text: str) -> Path:
    """The outline of ``text``, centred on (0, 0), about 0.3 cells tall; cached, since digits repeat."""
    path = TextPath((0, 0), text, size=0.42)
    box = path.get_extents()
    return path.transformed(Affine2D().translate(-(box.x0 + box.x1) / 2, -(box.y0 + box.y1) / 2))


def _draw_grid(ax, x0: float, y0: float, shape, values, colours, title: str, gid: str) -> None:
    """One grid with its top-left corner at (x0, y0).

    The squares are one collection tagged ``gid`` (row-major order), the numbers one outline patch tagged
    "<gid>-numbers", the title a text tagged "<gid>-title": a few artists instead of two per cell keep a
    redraw well under 100 ms.
    """
    cells = _grid_cells(shape)
    squares = [Rectangle((x0 + cx, y0 - cy - 0.92), 0.92, 0.92) for cx, cy in cells]
    ax.add_collection(PatchCollection(squares, facecolors=list(colours), edgecolors="#555555", linewidths=0.6,
                                      gid=gid))
    numbers = [_number_path(str(v)).transformed(Affine2D().translate(x0 + cx + 0.46, y0 - cy - 0.46))
               for (cx, cy), v in zip(cells, values)]
    if numbers:
        # add_artist, not add_patch: the limits are set by hand, and fitting them to glyph curves is slow
        ax.add_artist(PathPatch(Path.make_compound_path(*numbers), fc="black", lw=0, gid=f"{gid}-numbers"))
    ax.text(x0, y0 + 0.25, title, fontsize=8, va="bottom", ha="left", gid=f"{gid}-title")


_GRID_TOP = -1 - _GAP - 0.6  # the grids' top edge: below the strip, with room for two title lines


def _layout(state: MemoryState) -> tuple[float, float, float]:
    """(x of the result grid, width, height) of a drawing, in cells."""
    src_w, src_h = _extent(state.shape)
    res_w, res_h = _extent(state.result_shape) if state.result_shape is not None else (8.0, 3.0)
    res_x = max(src_w, 8.5) + _GAP  # room for the source's title
    return res_x, max(float(state.storage_size), res_x + res_w), 1.7 - _GRID_TOP + max(src_h, res_h)


def draw_memory(state: MemoryState, ax=None, size: tuple[float, float] | None = None) -> Figure:
    """One axes: the storage strip on top, the source and the result below with shape, strides, offset.

    ``size`` (width, height in cells) gives several drawings one scale. Squares carry gid "storage",
    "source" or "result" and titles "<part>-title", so tests can find them.
    """
    n = state.storage_size
    res_x, width, height = _layout(state)
    width, height = size or (width, height)
    grid_top = _GRID_TOP
    if ax is None:
        fig = Figure(figsize=(min(0.6 + _CELL_INCHES * width, 13), 0.4 + _CELL_INCHES * height))
        ax = fig.add_axes((0, 0, 1, 1))
    else:
        fig = ax.figure
    shared = state.shared_cells
    _draw_grid(ax, 0, 0, (n,), range(n), [SHARED if i in shared else PLAIN for i in range(n)],
               N_("source storage: {cells} cells (green: read by the result)").format(cells=n), "storage")
    _draw_grid(ax, 0, grid_top, state.shape, state.source_indices, [PLAIN] * len(state.source_indices),
               SOURCE_TITLES[state.layout].format(shape=state.shape) + "\n"
               + N_("strides {strides}, offset {offset}").format(strides=state.source_strides,
                                                                 offset=state.source_offset),
               "source")
    if state.kind == "error":
        ax.text(res_x, grid_top + 0.25, state.expression + "\n" + N_("error: view is impossible"), fontsize=8,
                va="bottom",
                color="#b03030", gid="result-title")
        ax.text(res_x, grid_top - 0.5, N_("no strides over x's storage\ngive this shape: use reshape\n"
                                          "(which copies here)"), fontsize=8, va="top")
    else:
        colour = SHARED if state.is_view else COPIED
        _draw_grid(ax, res_x, grid_top, state.result_shape, state.result_values, [colour] * len(state.result_values),
                   (N_("{expression}: VIEW") if state.is_view else N_("{expression}: COPY")).format(
                       expression=state.expression) + "\n"
                   + N_("shape {shape}, strides {strides}, offset {offset}").format(
                       shape=state.result_shape, strides=state.result_strides, offset=state.result_offset),
                   "result")
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(1.4 - height, 1.4)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


# --------------------------------------------------------------------------- wrapper

def _compute(shape: tuple[int, ...], layout: str, op: str) -> MemoryState:
    if layout == "transposed" and len(shape) < 2:
        layout = "contiguous"
    return explore(shape, op, layout)


class MemoryExplorer(Explorer):
    """Pick a source and an operation; see which storage cells the result reads, or that it copied."""

    CODE_OPTIONS = {"op": METHOD_OPS}

    def __init__(self, shape: tuple[int, ...] = (3, 4), layout: str = "contiguous", op: str = "slice") -> None:
        controls = {
            "shape": widgets.Dropdown(options=[(str(s), s) for s in SHAPES], value=tuple(shape),
                                      description=N_("shape")),
            "layout": widgets.Dropdown(options=list(LAYOUTS), value=layout, description=N_("source x")),
            "op": widgets.Dropdown(options=list(OPS), value=op, description=N_("operation")),
        }
        super().__init__(controls, _compute, draw_memory, title=N_("Memory explorer"))

    def frame_space(self) -> list[dict]:
        # The site's frames: every operation on both layouts of a 3x4 source, and the ops whose
        # answer depends on the shape (slice, view, reshape) on every source shape.
        return [{"shape": [(3, 4)], "layout": list(LAYOUTS), "op": list(OPS)},
                {"shape": list(SHAPES), "layout": list(LAYOUTS), "op": ["slice", "view", "reshape"]}]


#: The stand-in's cases: (shape, op, layout), the ones that most often surprise.
STATIC_CASES = (((3, 4), "slice", "contiguous"), ((3, 4), "transpose", "contiguous"),
                ((3, 4), "expand", "contiguous"), ((3, 4), "view", "transposed"),
                ((3, 4), "reshape", "transposed"), ((3, 4), "advanced indexing", "contiguous"))


def static_memory_explorer() -> Figure:
    """Six instructive cases, one panel each: the explorer's stand-in for readers without a kernel."""
    states = [explore(*case) for case in STATIC_CASES]
    size = tuple(max(_layout(s)[k] for s in states) for k in (1, 2))  # one scale for all panels
    # One above another, each at the explorer's own scale: two side by side would be too wide for the
    # page's column to show their text at a readable size.
    width, height = (0.2 + _CELL_INCHES * size[0], 0.3 + _CELL_INCHES * size[1])
    fig = Figure(figsize=(width, height * len(states)))
    axes = fig.subplots(len(states), 1, gridspec_kw={"hspace": 0.08})
    for ax, state in zip(axes.flat, states):
        draw_memory(state, ax=ax, size=size)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.995, bottom=0.005)
    return fig
