"""The systolic array animator: one tile of the cycle-level weight-stationary array of
``torchcourse.hardware.weight_stationary`` (TPU v1's matrix unit, in small), cycle by cycle, also in the output- and
input-stationary dataflows of ``torchcourse.hardware.dataflows``; and the plot of the array's utilisation.

Used by notebooks ``04-hardware/02-tpu-systolic-arrays`` (sections 2-5) and ``04-hardware/04-dataflows-and-memory``
(section 2). The notebooks call the simulator through this module too (``systolic.systolic_matmul``,
``systolic.utilisation``).

core: ``systolic_frame(...)`` -> ``Frame``; renderer: ``draw_frame(frame)``;
wrapper: ``SystolicAnimator``; stand-in: ``static_systolic_strip()``.

Section 4's plot of utilisation against the batch: ``utilisation_figure()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure

from torchcourse.figure_text import text_colour_on
from torchcourse.hardware import dataflows
from torchcourse.hardware.weight_stationary import _one_thread, _pe_step, _run_tile, utilisation

# The notebooks run the simulator through this module (systolic.systolic_matmul): it is weight_stationary's.
from torchcourse.hardware.weight_stationary import systolic_matmul as systolic_matmul
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes, fits_canvas


def utilisation_figure(ks=(64, 256, 300, 512), rows: int = 256, cols: int = 256, max_exponent: int = 14) -> Figure:
    """The utilisation of a ``rows x cols`` array against M (1 to 2**max_exponent, log scale), one line for each
    square weight matrix K = N in ``ks``: section 4's plot (for TPU v1's 256 x 256 array)."""
    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.add_subplot()
    ms = [2**e for e in range(0, max_exponent + 1)]
    for k in ks:
        ax.semilogx(ms, [utilisation(m, k, k, rows, cols) for m in ms], marker=".",
                    label=f"K = N = {k}")
    ax.set_xlabel(N_("M (rows of X streamed through)"))
    ax.set_ylabel(N_("utilisation of a {rows} x {cols} array").format(rows=rows, cols=cols))
    ax.legend(fontsize=8)
    return fig


# --------------------------------------------------------------------------- the animator

@dataclass(frozen=True)
class Frame:
    """The array at one stream cycle of a single tile (core of the animator)."""

    rows: int
    cols: int
    m: int
    k: int
    n: int
    cycle: int                      # stream cycle shown, 0-based
    steps: int                      # stream cycles of the tile
    activations: np.ndarray         # (rows, cols) streamed value each PE multiplied this cycle
    psums: np.ndarray               # (rows, cols) partial sum each PE passed down (OS: its accumulator)
    busy: np.ndarray                # (rows, cols) bool: the PE did useful work this cycle
    done: int                       # results that have left the array (OS: are complete) so far
    message: str = ""
    dataflow: str = "ws"            # "ws", "os" or "is" (see ``torchcourse.hardware.dataflows``)


@dataclass
class _Cache:
    key: tuple = ()
    run: tuple[int, list] | None = None     # (stream cycles, frames) of the tile ``key`` names


_cache = _Cache()
_CMAP = matplotlib.colormaps["coolwarm"]
#: What each dataflow keeps in the PEs, and which of M, K, N one tile may hold (the others stream).
_HELD = {"ws": (N_("weights"), "k", "n"), "os": (N_("outputs"), "m", "n"), "is": (N_("inputs"), "k", "m")}


def _example(m: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randint(-9, 10, (m, k), generator=g, dtype=torch.int8),
            torch.randint(-9, 10, (k, 64), generator=g, dtype=torch.int8))


def _whole_product_cycles(rows: int, cols: int, m: int, k: int, n: int) -> str:
    """The three dataflows' utilisation for the whole product, and which takes the fewest cycles."""
    shares = dataflows.compare_dataflows(m, k, n, rows, cols)
    best = max(shares, key=lambda f: shares[f]["utilisation"])
    listed = ", ".join(f"{f.upper()} {c['utilisation']:.0%}" for f, c in shares.items())
    return _("Whole product, any size, PEs busy: {listed}; fewest cycles: {best}.").format(
        listed=listed, best=_(dataflows.DATAFLOWS[best]))


def _record(rows: int, cols: int, m: int, k: int, n: int, dataflow: str) -> tuple[int, list]:
    """(stream cycles, per-cycle (streamed values, sums)) of one tile of the example product."""
    x, w = _example(m, k)
    w = w[:, :n]
    with _one_thread():
        if dataflow == "ws":
            run = _run_tile(x, w, rows, cols, _pe_step, True)
            return run.stream_cycles, run.frames
        if dataflow == "is":
            run = _run_tile(w.T.contiguous(), x.T.contiguous(), rows, cols, _pe_step, True)
            return run.stream_cycles, run.frames
        _, steps, frames = dataflows.os_tile(x, w, rows, cols, record=True)
        return steps, [(a, acc) for a, _, acc in frames]


def systolic_frame(rows: int, cols: int, m: int, k: int, n: int, cycle: int, dataflow: str = "ws") -> Frame:
    """Stream cycle ``cycle`` of one tile of ``X (m x k) @ W (k x n)`` in the given dataflow.

    One tile holds K <= rows and N <= cols (weight-stationary), M <= rows and N <= cols (output-stationary)
    or K <= rows and M <= cols (input-stationary).
    """
    empty = np.zeros((max(rows, 1), max(cols, 1)))
    held, along_rows, along_cols = _HELD.get(dataflow, _HELD["ws"])
    sizes = {"m": m, "k": k, "n": n}
    if dataflow not in _HELD or min(rows, cols, m, k, n) < 1 or sizes[along_rows] > rows or sizes[along_cols] > cols:
        return Frame(rows, cols, m, k, n, 0, 0, empty, empty, empty.astype(bool), 0,
                     _("The animator shows one tile: {dataflow} holds {held} in the PEs, so choose 1 <= {along_rows} "
                       "<= rows ({rows}), 1 <= {along_cols} <= cols ({cols}), and the other sizes >= 1.").format(
                         dataflow=repr(dataflow), held=_(held), along_rows=along_rows.upper(), rows=rows,
                         along_cols=along_cols.upper(), cols=cols), dataflow)
    key = (rows, cols, m, k, n, dataflow)
    if _cache.key != key:
        _cache.key = key
        _cache.run = _record(rows, cols, m, k, n, dataflow)
    steps, frames = _cache.run
    t = max(0, min(cycle, steps - 1))
    a_in, p = frames[t]
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    if dataflow == "os":
        busy = (t - i - j >= 0) & (t - i - j < k) & (i < m) & (j < n)
        done = int(((k - 1 + i + j <= t) & (i < m) & (j < n)).sum())
    else:
        streamed, across = (m, n) if dataflow == "ws" else (n, m)
        busy = (t - i - j >= 0) & (t - i - j < streamed) & (i < k) & (j < across)
        leave = np.arange(streamed)[:, None] + (rows - 1) + np.arange(across)[None, :]
        done = int((leave <= t).sum())
    sentence = (N_("{dataflow}, stream cycle {cycle} of {steps} (no load: each sum starts at zero in place): {busy} of "
                   "{pes} PEs busy; {done} of {results} results complete. {whole_product}") if dataflow == "os" else
                N_("{dataflow}, stream cycle {cycle} of {steps} (plus {rows} load cycles): {busy} of {pes} PEs busy; "
                   "{done} of {results} results out. {whole_product}"))
    msg = _(sentence).format(dataflow=dataflow.upper(), cycle=t + 1, steps=steps, rows=rows, busy=int(busy.sum()),
                             pes=rows * cols, done=done, results=m * n,
                             whole_product=_whole_product_cycles(rows, cols, m, k, n))
    return Frame(rows, cols, m, k, n, t, steps, a_in.numpy(), p.numpy(), busy, done, msg, dataflow)


_CAPTIONS = {
    "ws": ("a", N_("activations flow right \u2192; partial sums flow down \u2193; weights stay; grey: idle")),
    "os": ("a", N_("activations flow right \u2192; weights flow down \u2193; sums stay; grey: idle")),
    "is": ("w", N_("weights flow right \u2192; partial sums flow down \u2193; inputs stay; grey: idle")),
}


def draw_frame(frame: Frame, ax=None) -> Figure:
    """Busy PEs coloured by the partial sum they pass down (OS: hold), idle PEs grey; values written in
    arrays of up to 16 PEs.

    Tick labels are left out (they cost most of a redraw); captions say which way data flows.
    """
    own = ax is None
    fig, ax = figure_and_axes(ax, figsize=(4.6, 4.4))
    lim = float(np.abs(frame.psums[frame.busy]).max()) if frame.busy.any() else 1.0
    norm = np.clip(frame.psums / (2 * max(lim, 1.0)) + 0.5, 0, 1)
    rgb = _CMAP(norm)[..., :3]
    rgb[~frame.busy] = 0.55                 # darker than coolwarm's pale middle (a sum near 0)
    ax.imshow(rgb, interpolation="nearest")
    streamed, caption = _CAPTIONS.get(frame.dataflow, _CAPTIONS["ws"])
    if frame.rows * frame.cols <= 16:
        for (i, j), busy in np.ndenumerate(frame.busy):
            if busy:  # coolwarm's ends are dark: each label in whichever of black or white reads on its PE
                ax.text(j, i, f"{streamed}={int(frame.activations[i, j])}\n\u03a3={int(frame.psums[i, j])}",
                        ha="center", va="center", fontsize=8, color=text_colour_on(rgb[i, j]))
    ax.axis("off")
    ax.text(0.5, -0.04, caption, transform=ax.transAxes, ha="center", va="top", fontsize=8)
    ax.set_title(N_("{dataflow}, {rows}x{cols} array, M={m} K={k} N={n}: stream cycle {cycle}/{steps}").format(
        dataflow=frame.dataflow.upper(), rows=frame.rows, cols=frame.cols, m=frame.m, k=frame.k, n=frame.n,
        cycle=frame.cycle + 1, steps=frame.steps), fontsize=8)
    return fits_canvas(fig, left=0.02, right=0.98, bottom=0.07, top=0.93) if own else fig


class SystolicAnimator(Explorer):
    """Step through the stream cycles of one tile: choose the dataflow and the layer's shape."""

    def __init__(self, rows: int = 4, cols: int = 4, m: int = 5, k: int = 4, n: int = 4, cycle: int = 3,
                 dataflow: str = "ws") -> None:
        controls = {
            "dataflow": widgets.Dropdown(options=["ws", "os", "is"], value=dataflow, description=N_("dataflow")),
            "rows": widgets.IntSlider(value=rows, min=1, max=16, description=N_("rows")),
            "cols": widgets.IntSlider(value=cols, min=1, max=16, description=N_("cols")),
            "m": widgets.IntSlider(value=m, min=1, max=32, description=N_("M")),
            "k": widgets.IntSlider(value=k, min=1, max=16, description=N_("K")),
            "n": widgets.IntSlider(value=n, min=1, max=16, description=N_("N")),
            "cycle": widgets.IntSlider(value=cycle, min=0, max=80, description=N_("cycle")),
        }
        super().__init__(controls, systolic_frame, draw_frame, title=N_("Systolic array animator"))

    def frame_space(self) -> list[dict]:
        # Only tiles the array holds (a shape it cannot hold is a sentence, not a lesson): every cycle of the
        # default tile (4x4 array, M=5, K=4, N=4) in weight-stationary; at cycle 3, larger arrays, other M and
        # K on 4x4, and K and N up to 8 on 8x8; the three dataflows on a tile each can hold (4x4, M=K=N=4),
        # the other two every third cycle. Each set shares a frame with the next, so one control moves at a time.
        return [{"cycle": range(12)},
                {"rows": [4, 8], "cols": [4, 8], "cycle": [3]},
                {"m": [1, 5, 16], "k": [2, 4], "cycle": [3]},
                {"rows": [8], "cols": [8], "k": [2, 4, 8], "n": [4, 8], "cycle": [3]},
                {"dataflow": ["ws", "os", "is"], "m": [4], "cycle": [3]},
                {"dataflow": ["os", "is"], "m": [4], "cycle": [0, 3, 6, 9]}]


def static_systolic_strip(rows: int = 4, cols: int = 4, m: int = 5, cycles=(0, 2, 4, 6, 8, 10)) -> Figure:
    """Frames of one 4x4 tile, three to a row: the stand-in for readers without a kernel."""
    # Three frames to a row: narrow enough for the page's column to show it at full size.
    per_row = min(3, len(cycles))
    rows_of_frames = (len(cycles) + per_row - 1) // per_row
    fig = Figure(figsize=(2.5 * per_row, 2.9 * rows_of_frames + 0.4))
    axes = list(fig.subplots(rows_of_frames, per_row, squeeze=False).flat)
    for ax in axes[len(cycles):]:
        ax.set_visible(False)
    for ax, c in zip(axes, cycles):
        draw_frame(systolic_frame(rows, cols, m, rows, cols, c), ax=ax)
        ax.set_title(N_("cycle {cycle}").format(cycle=c + 1), fontsize=9)
        ax.texts[-1].remove()                       # one caption for the strip, below
    fig.suptitle(N_("A 4x4 weight-stationary array, M = 5: activations flow right, partial sums flow\n"
                    "down; colour: the partial sum passed down; grey: idle"), fontsize=9, y=0.01, va="bottom")
    fig.tight_layout(rect=(0, 0.4 / fig.get_figheight(), 1, 1))
    return fig


def static_dataflow_strip(size: int = 4, cycle: int = 4) -> Figure:
    """The same cycle of a size x size tile (M = K = N = size) in each dataflow: the stand-in beside the
    animator in ``04-dataflows-and-memory``."""
    fig = Figure(figsize=(7.6, 3.6))  # narrow enough for the page's column to show it at full size
    axes = fig.subplots(1, 3)
    moves = {"ws": N_("{flow}: a \u2192, \u03a3 \u2193, weights stay"),
             "os": N_("{flow}: a \u2192, w \u2193, \u03a3 stays"),
             "is": N_("{flow}: w \u2192, \u03a3 \u2193, inputs stay")}
    for ax, flow in zip(axes, ["ws", "os", "is"]):
        draw_frame(systolic_frame(size, size, size, size, size, cycle, flow), ax=ax)
        ax.texts[-1].remove()                       # one caption for the strip, below; the moves in the title
        ax.set_title(moves[flow].format(flow=flow.upper()), fontsize=9)
    fig.suptitle(N_("Stream cycle {cycle} of a {size}x{size} tile, M = K = N = {size}: weight-, output- and "
                    "input-stationary;\ncolour: the sum each PE passes down or holds; grey: idle").format(
                        cycle=cycle + 1, size=size),
                 fontsize=9, y=0.01, va="bottom")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
