"""Rank gallery: tensors of rank 0 to 5 drawn as nested boxes, with the data each holds.

Used in notebook 1.1 (``01-tensors/01-what-is-a-tensor``), section 1, "The rank gallery".

core: ``rank_example(rank)`` → ``RankExample`` (pure data)
renderer: ``draw_rank(example)`` → matplotlib Figure
wrapper: ``RankGallery()`` (an ipywidgets slider over ranks 0-5)
static stand-in: ``static_rank_gallery()`` draws all six ranks in one figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import ipywidgets as widgets
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes

MAX_RANK = 5

# (name, Chinese term, example shape, dimension names, typical data: marked N_, the caption translates it)
_CATALOGUE = [
    (N_("scalar"), "标量", (), (), N_("a single number: a loss value, a learning rate")),
    (N_("vector"), "向量", (4,), ("F",), N_("one sample's features, a bias vector, a word embedding")),
    (N_("matrix"), "矩阵", (3, 4), ("N", "F"), N_("a batch of feature vectors, a linear layer's weights")),
    (N_("rank-3 tensor"), "三阶张量", (2, 3, 4), ("N", "T", "F"),
     N_("a batch of time series or token sequences: N sequences of T steps with F features")),
    (N_("rank-4 tensor"), "四阶张量", (2, 3, 2, 3), ("N", "C", "H", "W"),
     N_("a batch of images: N images, C channels, H rows (height), W columns (width)")),
    (N_("rank-5 tensor"), "五阶张量", (2, 2, 3, 2, 2), ("N", "T", "C", "H", "W"),
     N_("a batch of video clips: N clips of T frames, each a C x H x W image")),
]


@dataclass(frozen=True)
class Box:
    """One rectangle of the drawing: ``depth`` 0 is the outermost level."""

    depth: int
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class RankExample:
    rank: int
    name: str
    chinese: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    typical: str
    numel: int
    boxes: list[Box] = field(repr=False)
    cells: list[Box] = field(repr=False)

    @property
    def layout(self) -> str:
        """PyTorch's layout of this example, e.g. ``(N, C, H, W) = (2, 3, 2, 3)``."""
        if not self.shape:
            return N_("() : no dimensions, one element")  # the caption translates it
        return f"({', '.join(self.dims)}) = {self.shape}"


def _layout(shape: tuple[int, ...], x: float, y: float, w: float, h: float, depth: int,
            boxes: list[Box], cells: list[Box]) -> None:
    """Split a region into the first dimension's slots, recursively, alternating direction.

    Even nesting levels (counted from the innermost dimension) are laid out along x,
    odd ones along y, so a matrix looks like rows of columns, as PyTorch prints it.
    """
    if not shape:
        cells.append(Box(depth, x, y, w, h))
        return
    n, rest = shape[0], shape[1:]
    along_x = len(shape) % 2 == 1
    pad = 0.08 * min(w, h) / (1 + len(rest))
    for i in range(n):
        if along_x:
            cw = (w - pad * (n + 1)) / n
            sub = (x + pad + i * (cw + pad), y + pad, cw, h - 2 * pad)
        else:
            ch = (h - pad * (n + 1)) / n
            sub = (x + pad, y + h - pad - (i + 1) * ch - i * pad, w - 2 * pad, ch)
        if rest:
            boxes.append(Box(depth, *sub))
        _layout(rest, *sub, depth + 1, boxes, cells)


def rank_example(rank: int) -> RankExample:
    """The gallery's example for ``rank`` (0-5): shape, meaning and drawing geometry."""
    if not 0 <= rank <= MAX_RANK:
        raise ValueError(f"rank must be between 0 and {MAX_RANK}, got {rank}")
    name, chinese, shape, dims, typical = _CATALOGUE[rank]
    boxes: list[Box] = []
    cells: list[Box] = []
    _layout(shape, 0.0, 0.0, 1.0, 1.0, 0, boxes, cells)
    return RankExample(rank, name, chinese, shape, dims, typical, math.prod(shape), boxes, cells)


_LEVEL_COLOURS = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974"]


def draw_rank(example: RankExample, ax=None) -> Figure:
    """Draw one example: a box per slice at each level, a small square per element."""
    fig, ax = figure_and_axes(ax, figsize=(4.2, 3.6))
    for box in example.boxes:
        colour = _LEVEL_COLOURS[box.depth % len(_LEVEL_COLOURS)]
        ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, fill=False, lw=1.4, ec=colour))
    cell_side = None
    for cell in example.cells:
        side = min(cell.w, cell.h) * 0.8
        cell_side = side
        ax.add_patch(Rectangle((cell.x + (cell.w - side) / 2, cell.y + (cell.h - side) / 2), side, side,
                               fc="#dddddd", ec="#555555", lw=0.6))
    if example.rank == 0 and cell_side:
        ax.text(0.5, 0.5, "3.14", ha="center", va="center", fontsize=14)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(N_("rank {rank}: {name}").format(rank=example.rank, name=example.name) + "\n" + example.layout,
                 fontsize=9)
    return fig


def describe(example: RankExample) -> str:
    """The gallery's caption, in the learner's language (the figure keeps the English name and layout)."""
    # TRANSLATORS: {name} is the English term and {chinese} its Chinese one; {layout} is code-like.
    return _("<b>rank {rank}</b>: {name} ({chinese}); layout {layout}; {numel} element(s).<br>"
             "Typically: {typical}.").format(rank=example.rank, name=example.name, chinese=example.chinese,
                                             layout=_(example.layout), numel=example.numel,
                                             typical=_(example.typical))


@dataclass(frozen=True)
class GalleryState:
    example: RankExample
    message: str


def _compute(rank: int) -> GalleryState:
    example = rank_example(rank)
    return GalleryState(example, describe(example))


class RankGallery(Explorer):
    """Move the slider to see a tensor of each rank and what it typically holds."""

    def __init__(self, rank: int = 4) -> None:
        slider = widgets.IntSlider(value=rank, min=0, max=MAX_RANK, description=N_("rank"))
        super().__init__({"rank": slider}, _compute, lambda s: draw_rank(s.example),
                         title=N_("Rank gallery"))


def static_rank_gallery() -> Figure:
    """All six ranks, three to a row: the gallery's stand-in for readers without a kernel."""
    # Narrow enough for the page's column to show it at full size (tests/unit/test_figure_text.py).
    fig = Figure(figsize=(7.6, 5.2))
    axes = fig.subplots(2, (MAX_RANK + 2) // 2)
    for rank, ax in enumerate(axes.flat):
        draw_rank(rank_example(rank), ax=ax)
    fig.tight_layout()
    return fig
