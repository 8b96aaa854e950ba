"""Broadcasting explorer: two shapes in, the broadcast drawn right-aligned with stride-0 stretching.

Used in notebook 1.7 (``01-tensors/07-broadcasting``), section 1.3, "The broadcasting explorer";
``allocations`` in section 1.4, "Broadcasting copies nothing".

core: ``broadcast(a, b)`` → ``BroadcastState`` (pure data: aligned sizes, result shape,
      the strides each operand is read with, the failing dimension and a sentence);
      ``explore(text_a, text_b)`` does the same from text such as ``"3, 1"`` and ``"4"``.
renderer: ``draw_broadcast(state)`` → matplotlib Figure
wrapper: ``BroadcastExplorer()`` (two text boxes)
static stand-in: ``static_broadcast_gallery()`` draws four instructive pairs in one figure.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import ipywidgets as widgets
from matplotlib.collections import PatchCollection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from torchcourse.i18n import LIST_SEPARATOR, N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes

#: The explorer draws at most this many dimensions (the rules themselves have no limit).
MAX_NDIM = 6
#: The element grids show at most this many rows and columns of the last two dimensions.
GRID_ROWS, GRID_COLS = 4, 6


@dataclass(frozen=True)
class Column:
    """One aligned dimension, ``dim`` counted from the right (-1 is the last)."""

    dim: int
    size_a: int | None  # None: the operand has no such dimension (missing, treated as 1)
    size_b: int | None
    size_out: int | None  # None when this dimension cannot broadcast
    stretched_a: bool  # a is read along this dimension with stride 0
    stretched_b: bool

    @property
    def ok(self) -> bool:
        return self.size_out is not None


@dataclass(frozen=True)
class BroadcastState:
    """Everything the explorer shows for one pair of shapes."""

    status: str  # "ok", "incompatible" or "bad input"
    a: tuple[int, ...] | None
    b: tuple[int, ...] | None
    columns: tuple[Column, ...]  # from the leftmost aligned dimension to dim -1
    result: tuple[int, ...] | None
    failing_dims: tuple[int, ...]  # counted from the right, the rightmost first
    strides_a: tuple[int, ...] | None  # strides of a contiguous ``a`` expanded to the result
    strides_b: tuple[int, ...] | None
    message: str  # the caption, in the learner's language
    figure_text: str = ""  # what the figure says instead of a drawing ("bad input"): English, as all figure text


    @property
    def ok(self) -> bool:
        return self.status == "ok"


def parse_shape(text: str) -> tuple[int, ...]:
    """Read a shape typed by a person: ``"3, 1"``, ``"(3, 1)"``, ``"[3 1]"``, ``"4"``, ``""`` or ``"()"``."""
    inner = text.strip()
    inner = inner.removeprefix("torch.Size")
    inner = inner.strip().strip("()[]").strip()
    if not inner:
        return ()
    parts = [p for p in re.split(r"[,\s]+", inner) if p]
    if not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ValueError(f"could not read {text!r} as a shape: write sizes such as 3, 1")
    return tuple(int(p) for p in parts)


def _expanded_strides(shape: tuple[int, ...], target: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of ``torch.empty(shape).expand(target)``: 0 wherever the operand is stretched.

    Assumes ``shape`` broadcasts to ``target``. Dimensions of size 1 that stay size 1 keep
    a stride, as PyTorch's ``expand`` gives them (it never matters for addressing).
    """
    if not shape:
        return (0,) * len(target)  # a scalar is read with stride 0 everywhere
    base, step = [0] * len(shape), 1  # row-major strides of a new tensor (a size of 0 counts as 1)
    for j in reversed(range(len(shape))):
        base[j] = step
        step *= max(shape[j], 1)
    offset = len(target) - len(shape)
    out = [0] * len(target)
    for i in reversed(range(len(target))):
        j = i - offset
        if j >= 0:
            out[i] = base[j] if shape[j] == target[i] else 0
        elif target[i] != 1:
            out[i] = 0  # a new leading dimension: every index reads the same elements
        else:
            out[i] = out[i + 1] * target[i + 1] if i + 1 < len(target) else 1
    return tuple(out)


def _fmt(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _ok_message(a: tuple[int, ...], b: tuple[int, ...], columns: list[Column], result: tuple[int, ...]) -> str:
    parts = []
    for name in ("a", "b"):
        for c in columns:
            if c.stretched_a if name == "a" else c.stretched_b:
                size = c.size_a if name == "a" else c.size_b
                how = (N_("{name} along dimension {dim} (missing, read {times} times)") if size is None
                       else N_("{name} along dimension {dim} (size 1, read {times} times)"))
                parts.append(_(how).format(name=name, dim=c.dim, times=c.size_out))
    if parts:
        detail = _("Stretched with stride 0, nothing copied: {parts}.").format(parts=_(LIST_SEPARATOR).join(parts))
    else:
        detail = _("Nothing is stretched.")
    return _("{a} and {b} broadcast to {result}. {detail} Only the result's {count} elements are new memory."
             ).format(a=_fmt(a), b=_fmt(b), result=_fmt(result), detail=detail, count=math.prod(result))


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> BroadcastState:
    """Apply the broadcasting rules to shapes ``a`` and ``b``: align from the right, and in each
    dimension the sizes must be equal or one of them 1 or missing; the result takes the other size."""
    a, b = tuple(int(s) for s in a), tuple(int(s) for s in b)
    if any(s < 0 for s in a + b):
        raise ValueError(f"sizes cannot be negative: {a}, {b}")
    ndim = max(len(a), len(b))
    columns: list[Column] = []
    for dim in range(-ndim, 0):
        sa = a[dim] if -dim <= len(a) else None
        sb = b[dim] if -dim <= len(b) else None
        ea, eb = 1 if sa is None else sa, 1 if sb is None else sb
        if ea == eb or ea == 1 or eb == 1:
            out = eb if ea == 1 else ea  # the size that is not 1 (it may be 0)
            # Stretched: read with stride 0 along a dimension the operand lacks or has as size 1.
            columns.append(Column(dim, sa, sb, out, stretched_a=ea != out or (sa is None and out != 1),
                                  stretched_b=eb != out or (sb is None and out != 1)))
        else:
            columns.append(Column(dim, sa, sb, None, False, False))
    failing = tuple(c.dim for c in reversed(columns) if not c.ok)
    if failing:
        first = next(c for c in columns if c.dim == failing[0])
        msg = _("{a} and {b} cannot broadcast: at dimension {dim} (counting from the right) a has size {size_a} "
                "and b has size {size_b}; they differ and neither is 1. PyTorch's error calls it dimension "
                "{left}, counting from the left of the result.").format(
            a=_fmt(a), b=_fmt(b), dim=first.dim, size_a=first.size_a, size_b=first.size_b, left=ndim + first.dim)
        if len(failing) > 1:
            msg += _(" Also at dimension {dims}.").format(dims=", ".join(map(str, failing[1:])))
        return BroadcastState("incompatible", a, b, tuple(columns), None, failing, None, None, msg)
    result = tuple(c.size_out for c in columns)
    return BroadcastState("ok", a, b, tuple(columns), result, (), _expanded_strides(a, result),
                          _expanded_strides(b, result), _ok_message(a, b, columns, result))


def explore(text_a: str, text_b: str) -> BroadcastState:
    """The explorer's core call: shapes as text in, a state out; unreadable text becomes a sentence."""
    shapes = []
    for text in (text_a, text_b):
        try:
            shapes.append(parse_shape(text))
        except ValueError as exc:
            caption = _("could not read {text} as a shape: write sizes such as 3, 1.").format(text=repr(text))
            return BroadcastState("bad input", None, None, (), None, (), None, None, caption, f"{exc}.")
    a, b = shapes
    if max(len(a), len(b)) > MAX_NDIM:
        too_many = N_("The explorer draws at most {count} dimensions; the rules are the same beyond.")
        return BroadcastState("bad input", a, b, (), None, (), None, None, _(too_many).format(count=MAX_NDIM),
                              too_many.format(count=MAX_NDIM))
    return broadcast(a, b)


def read_grid(strides: tuple[int, ...], result: tuple[int, ...]) -> list[list[int]]:
    """Which stored element (its index in the operand's storage) each result position reads,
    for the last two dimensions at index 0 of all leading ones, cut to GRID_ROWS x GRID_COLS."""
    rows = result[-2] if len(result) >= 2 else 1
    cols = result[-1] if result else 1
    s_row = strides[-2] if len(result) >= 2 else 0
    s_col = strides[-1] if result else 0
    return [[i * s_row + j * s_col for j in range(min(cols, GRID_COLS))] for i in range(min(rows, GRID_ROWS))]


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence the profiler's C++ start/stop lines, which a notebook would show as red stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def allocations(fn: Callable[[], object]) -> dict[str, int]:
    """Net bytes of CPU memory each PyTorch operator kept while ``fn()`` ran.

    The profiler's ``self_cpu_memory_usage``: what the operator allocated minus what it freed before
    returning (net bytes kept), so memory an operator allocates and frees inside itself nets to zero.
    Evidence for "broadcasting copies nothing": ``allocations(lambda: a + b)`` shows the result's
    bytes and nothing for the stretched operand.

    ``torch.profiler.profile`` is built on the autograd profiler used here, with the same Kineto
    back end (``use_kineto=True``); it also imports TorchInductor and TorchDynamo when it starts
    (a second or more, once a process), which counting CPU memory does not need.
    """
    from torch.autograd.profiler import profile

    with _quiet_stderr(), profile(profile_memory=True, use_kineto=True) as prof:
        fn()
    return {e.key: int(e.self_cpu_memory_usage) for e in prof.key_averages() if e.self_cpu_memory_usage > 0}


# --------------------------------------------------------------------------- renderer

_COLOURS = {"a": "#4c72b0", "b": "#55a868", "out": "#8172b2", "bad": "#c44e52", "stretch": "#f0a04b"}
_CELL_W, _CELL_H = 0.9, 0.8
_GRID = 0.55  # side of one element in the element grids


class _Canvas:
    """Collects rectangles and draws them as a few collections: one artist each, so updates stay fast."""

    def __init__(self, ax) -> None:
        self.ax = ax
        self.plain: list[tuple[Rectangle, tuple]] = []
        self.hatched: list[tuple[Rectangle, tuple]] = []
        self.dashed: list[tuple[Rectangle, tuple]] = []

    def rect(self, x: float, y: float, w: float, h: float, colour: str, alpha: float, *,
             hatch: bool = False, dashed: bool = False) -> None:
        face = to_rgba(colour, alpha)
        (self.hatched if hatch else self.dashed if dashed else self.plain).append((Rectangle((x, y), w, h), face))

    def cell(self, x: float, y: float, text: str, colour: str, alpha: float, *, fontsize: float = 10,
             hatch: bool = False, dashed: bool = False) -> None:
        self.rect(x, y, _CELL_W, _CELL_H, colour, alpha, hatch=hatch, dashed=dashed)
        # A white backing keeps a label readable on top of hatching.
        backing = {"bbox": {"fc": "white", "ec": "none", "pad": 0.6, "alpha": 0.85}} if hatch else {}
        self.ax.text(x + _CELL_W / 2, y + _CELL_H / 2, text, ha="center", va="center", fontsize=fontsize, **backing)

    def finish(self) -> None:
        for items, extra in ((self.plain, {}), (self.hatched, {"hatch": "//"}), (self.dashed, {"linestyle": "--"})):
            if items:
                patches, faces = zip(*items)
                self.ax.add_collection(PatchCollection(list(patches), facecolors=list(faces), edgecolors="#333333",
                                                       linewidths=0.8, **extra))


def _draw_table(canvas: _Canvas, state: BroadcastState, top: float) -> None:
    """Rows a, b, result; one column per aligned dimension, right-aligned."""
    ax = canvas.ax
    for k, c in enumerate(state.columns):
        x = k
        ax.text(x + _CELL_W / 2, top + 0.15, N_("dim {dim}").format(dim=c.dim), ha="center", va="bottom", fontsize=8,
                color="#555555")
        for row, (name, size, stretched) in enumerate((("a", c.size_a, c.stretched_a),
                                                       ("b", c.size_b, c.stretched_b))):
            y = top - 1 - row
            if not c.ok:
                canvas.cell(x, y, str(size), _COLOURS["bad"], 0.6)
            elif size is None:
                canvas.cell(x, y, f"-→{c.size_out}" if stretched else "-", _COLOURS["stretch"] if stretched
                            else "white", 0.45, dashed=True, fontsize=8)
            elif stretched:
                canvas.cell(x, y, f"1→{c.size_out}", _COLOURS["stretch"], 0.45, hatch=True, fontsize=8)
            else:
                canvas.cell(x, y, str(size), _COLOURS[name], 0.35)
        y = top - 3.2
        if c.ok:
            canvas.cell(x, y, str(c.size_out), _COLOURS["out"], 0.35)
        else:
            canvas.cell(x, y, "✗", _COLOURS["bad"], 0.85)
    out = (N_("result {shape}").format(shape=_fmt(state.result)) if state.result is not None
           else N_("result error"))
    labels = (("a " + _fmt(state.a), top - 1), ("b " + _fmt(state.b), top - 2), (out, top - 3.2))
    for text, y in labels:
        ax.text(-0.15, y + _CELL_H / 2, text, ha="right", va="center", fontsize=9,
                weight="bold" if text == out else "normal")
    ax.plot([-0.1, len(state.columns)], [top - 2.3, top - 2.3], color="#333333", lw=1)


def _draw_grid(canvas: _Canvas, x0: float, top: float, title: str, grid: list[list[int]], label: str) -> None:
    """One operand's reads: each stored element its own colour; its first read labelled, re-reads hatched."""
    seen: set[int] = set()
    for i, row in enumerate(grid):
        for j, index in enumerate(row):
            colour = _SHADES[index % len(_SHADES)]
            x, y = x0 + j * _GRID, top - (i + 1) * _GRID
            if index in seen:
                canvas.rect(x, y, _GRID * 0.92, _GRID * 0.92, colour, 0.25, hatch=True)
            else:
                seen.add(index)
                canvas.rect(x, y, _GRID * 0.92, _GRID * 0.92, colour, 0.75)
                canvas.ax.text(x + _GRID * 0.46, y + _GRID * 0.46, f"{label}{index}", ha="center", va="center",
                               fontsize=8)
    canvas.ax.text(x0, top + 0.1, title, ha="left", va="bottom", fontsize=8)


_SHADES = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd"]


def draw_broadcast(state: BroadcastState, ax=None) -> Figure:
    """Draw the aligned shapes and, for a valid pair, which stored element each result position reads."""
    fig, ax = figure_and_axes(ax, figsize=(6.4, 4.6))
    # No ticks at all: even a hidden axis computes them when placing a title, which doubles the cost.
    ax.set_xticks([])
    ax.set_yticks([])
    ax.axis("off")
    if state.status == "bad input":
        ax.text(0.5, 0.5, state.figure_text, ha="center", va="center", fontsize=10, wrap=True,
                transform=ax.transAxes)
        return fig
    canvas = _Canvas(ax)
    _draw_table(canvas, state, 0.0)
    width = max(len(state.columns), 2)
    bottom = -3.6
    if state.ok and state.result is not None and math.prod(state.result) > 0:
        grid_top = bottom - 0.6
        x = -3.0
        for name in ("a", "b"):
            grid = read_grid(_expanded_strides(getattr(state, name), state.result), state.result)
            _draw_grid(canvas, x, grid_top, N_("{name} as read").format(name=name), grid, name)
            x += _GRID * len(grid[0]) + 0.5
        rows, cols = (state.result[-2] if len(state.result) >= 2 else 1), state.result[-1]
        corner = rows > GRID_ROWS or cols > GRID_COLS
        ax.text(-3.0, grid_top - _GRID * len(grid) - 0.2,
                N_("last two dims (top-left corner); aK = stored element K; hatched = read again, stride 0") if corner
                else N_("last two dims; aK = stored element K; hatched = read again, stride 0"),
                ha="left", va="top", fontsize=8, color="#555555")
        width = max(width, x)
        bottom = grid_top - _GRID * GRID_ROWS - 0.8
    elif not state.ok:
        ax.text(-3.0, bottom - 0.4, N_("cannot broadcast at dimension {dim}").format(dim=state.failing_dims[0]),
                ha="left", va="top", fontsize=10, color=_COLOURS["bad"])
        bottom -= 0.6 + _GRID * GRID_ROWS + 0.8  # the space the grids would take: panels keep one scale
        width = max(width, 4.0)
    canvas.finish()
    ax.set_xlim(-3.2, width + 0.2)
    ax.set_ylim(bottom, 0.8)
    ax.set_aspect("equal")
    verdict = N_("{a} with {b} → {result}") if state.ok else N_("{a} with {b} → error")
    ax.text(0.5, 1.0, verdict.format(a=_fmt(state.a), b=_fmt(state.b), result=_fmt(state.result) if state.ok else ""),
            ha="center", va="bottom", fontsize=10,
            transform=ax.transAxes)
    return fig


# --------------------------------------------------------------------------- wrapper and stand-in

class BroadcastExplorer(Explorer):
    """Type two shapes; see them aligned from the right, stretched with stride 0, or why they fail."""

    def __init__(self, a: str = "3, 1", b: str = "4") -> None:
        controls = {
            "text_a": widgets.Text(value=a, description=N_("shape a"), placeholder=N_("e.g. 3, 1")),
            "text_b": widgets.Text(value=b, description=N_("shape b"), placeholder=N_("e.g. 4")),
        }
        super().__init__(controls, explore, draw_broadcast, title=N_("Broadcasting explorer"))

    def frame_space(self) -> dict:
        # The site's curated inputs (the text boxes accept anything): the stand-in's pairs and more.
        return {"text_a": ["3, 1", "2, 3", "2, 1, 3", "4"], "text_b": ["4", "3", "4, 1", "2", "1, 3"]}


#: The stand-in's pairs: a column against a row, a row against a matrix, three dimensions, a failure.
GALLERY = (((3, 1), (4,)), ((2, 3), (3,)), ((2, 1, 3), (4, 1)), ((2, 3), (2,)))


def static_broadcast_gallery() -> Figure:
    """Four instructive pairs, two to a row: the explorer's stand-in for readers without a kernel."""
    fig = Figure(figsize=(8.6, 8.4))  # narrow enough for the page's column to show it at full size
    axes = fig.subplots(2, 2).ravel()
    for (a, b), ax in zip(GALLERY, axes):
        draw_broadcast(broadcast(a, b), ax=ax)
    fig.tight_layout()
    return fig
