"""A cycle-level weight-stationary systolic array (TPU v1's matrix unit, in small), and its animator, which
also steps through the output- and input-stationary dataflows of ``torchcourse.hardware.dataflows``.

Used by notebooks ``04-hardware/02-tpu-systolic-arrays`` (sections 2-5) and ``04-hardware/04-dataflows-and-memory``
(section 2).

The model (every rule is one line of ``_run_tile``):

* The array has ``rows x cols`` processing elements (PEs, 处理单元). PE ``(i, j)`` holds one
  weight ``W[i, j]`` of the current tile ("weight stationary").
* **Load**: weights enter at the top and shift down one row per cycle: ``rows`` cycles.
* **Stream**: row ``m`` of the input ``X`` enters the array's left edge skewed: ``X[m, i]``
  enters row ``i`` at stream cycle ``m + i``. Every cycle, every PE takes the activation from its
  left neighbour and the partial sum from the PE above, and hands on
  ``a_right = a_in`` and ``psum_down = psum_in + a_in * w`` (int8 x int8 summed in int32).
* ``Y[m, j]`` leaves the bottom of column ``j`` at stream cycle ``m + (rows - 1) + j``. The stream
  ends when the last column's last result has left: ``M + (rows - 1) + (cols - 1)`` cycles.
* A matrix larger than the array is cut into tiles of ``rows x cols`` weights; each tile is
  loaded and streamed in turn (no overlap), and partial results add up in int32 accumulators.

So one tile takes ``rows + (rows - 1) + (cols - 1) + M = 2*rows + cols + M - 2`` cycles, the
count SCALE-Sim's weight-stationary model uses per fold (its report gives the last cycle's index,
one less; see ``tests/unit/hardware/test_scalesim.py``).

core: ``systolic_frame(...)`` -> ``Frame``; renderer: ``draw_frame(frame)``;
wrapper: ``SystolicAnimator``; stand-in: ``static_systolic_strip()``.

Section 4's plot of utilisation against the batch: ``utilisation_figure()``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure

from torchcourse.figure_text import text_colour_on
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes, fits_canvas

PE = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def _pe_step(a_in: torch.Tensor, psum_in: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One cycle of every PE at once: pass the activation right, the updated partial sum down."""
    return a_in, psum_in + a_in.to(torch.int32) * weight.to(torch.int32)


def _tile_cycles(m: int, rows: int, cols: int) -> int:
    """Cycles of one tile: load ``rows``, fill ``rows - 1``, stream ``m``, drain ``cols - 1``."""
    return rows + (rows - 1) + m + (cols - 1)


def _cycles(m: int, k: int, n: int, rows: int, cols: int) -> int:
    """Cycles for ``(m x k) @ (k x n)`` on a ``rows x cols`` array, tile after tile."""
    return math.ceil(k / rows) * math.ceil(n / cols) * _tile_cycles(m, rows, cols)


def utilisation(m: int, k: int, n: int, rows: int, cols: int) -> float:
    """Useful multiply-accumulates / (PEs x cycles)."""
    return m * k * n / (rows * cols * _cycles(m, k, n, rows, cols))


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


@dataclass
class TileRun:
    """What one tile's run produced; ``frames`` only when recorded (for the animator)."""

    output: torch.Tensor            # (M, cols) int32: every column's results, unused ones included
    load_cycles: int
    stream_cycles: int
    frames: list = field(default_factory=list, repr=False)

    @property
    def cycles(self) -> int:
        return self.load_cycles + self.stream_cycles


def skewed(values: torch.Tensor, lanes: int, steps: int) -> torch.Tensor:
    """(steps, lanes) int8: lane ``i`` receives ``values[i, t - i]`` at cycle ``t`` (zero outside).

    The skew every systolic dataflow feeds its array with: each lane starts one cycle after the one before.
    """
    used, length = values.shape
    t = torch.arange(steps).unsqueeze(1)
    i = torch.arange(lanes).unsqueeze(0)
    idx = t - i
    valid = (idx >= 0) & (idx < length) & (i < used)
    padded = torch.zeros(lanes, max(length, 1), dtype=torch.int8)
    padded[:used, :length] = values
    picked = padded[i.expand_as(idx), idx.clamp(0, max(length, 1) - 1)]
    return torch.where(valid, picked, torch.zeros((), dtype=torch.int8))


def _run_tile(x: torch.Tensor, w: torch.Tensor, rows: int, cols: int, pe: PE, record: bool) -> TileRun:
    m, k = x.shape
    n = w.shape[1]
    # Load: the weight rows shift in from the top, one row per cycle (last row first).
    w_full = torch.zeros(rows, cols, dtype=torch.int8)
    w_full[:k, :n] = w
    held = torch.zeros(rows, cols, dtype=torch.int8)
    load = 0
    for c in range(rows):
        held = torch.cat([w_full[rows - 1 - c].unsqueeze(0), held[:-1]])
        load += 1
    assert torch.equal(held, w_full)
    # Stream: one pe() call updates the whole array each cycle.
    steps = m + rows + cols - 2
    left = skewed(x.T, rows, steps)                    # X[t - i, i] enters row i at stream cycle t
    a = torch.zeros(rows, cols, dtype=torch.int8)
    p = torch.zeros(rows, cols, dtype=torch.int32)
    zero_row = torch.zeros(1, cols, dtype=torch.int32)
    bottom = []
    frames = []
    outstanding = m * cols
    t = 0
    while outstanding:
        a_in = torch.cat([left[t].unsqueeze(1), a[:, :-1]], dim=1)
        p_in = torch.cat([zero_row, p[:-1]], dim=0)
        a, p = pe(a_in, p_in, held.clone())    # a PE function that changes its arguments cannot change the array
        bottom.append(p[-1].clone())           # a copy: a view would keep the whole grid alive
        # Columns whose result for some row m leaves the bottom now: j = t - (rows - 1) - m.
        j = t - (rows - 1) - np.arange(m)
        outstanding -= int(((j >= 0) & (j < cols)).sum())
        if record:
            frames.append((a_in.clone(), p.clone()))
        t += 1
    leaving = torch.stack(bottom)                        # (steps, cols)
    mm = torch.arange(m).unsqueeze(1)
    jj = torch.arange(cols).unsqueeze(0)
    out = leaving[mm + (rows - 1) + jj, jj]
    return TileRun(out, load, t, frames)


def _check_operands(x: torch.Tensor, w: torch.Tensor) -> None:
    if x.dtype != torch.int8 or w.dtype != torch.int8:
        raise TypeError(f"the array multiplies int8 operands; got {x.dtype} and {w.dtype}")
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0]:
        raise ValueError(f"shapes {tuple(x.shape)} and {tuple(w.shape)} cannot be multiplied")


def systolic_matmul(x: torch.Tensor, w: torch.Tensor, rows: int, cols: int,
                    pe: PE = _pe_step) -> tuple[torch.Tensor, int]:
    """``x @ w`` (int8 in, int32 out) on a ``rows x cols`` weight-stationary array: (result, cycles).

    ``pe(a_in, psum_in, weight) -> (a_right, psum_down)`` is called on whole (rows, cols) grids.
    """
    _check_operands(x, w)
    m, k = x.shape
    n = w.shape[1]
    y = torch.zeros(m, n, dtype=torch.int32)
    cycles = 0
    with _one_thread():
        for k0 in range(0, k, rows):
            for n0 in range(0, n, cols):
                tile = _run_tile(x[:, k0:k0 + rows], w[k0:k0 + rows, n0:n0 + cols], rows, cols, pe, False)
                width = min(cols, n - n0)
                y[:, n0:n0 + width] += tile.output[:, :width]
                cycles += tile.cycles
    return y, cycles


@contextlib.contextmanager
def _one_thread():
    """Each cycle is a few small tensor operations: threads only add synchronisation, so use one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def measure_throughput(rows: int = 64, cols: int = 64, m: int = 128, repeats: int = 3) -> dict[str, float]:
    """Simulated MACs and array cycles per second of wall time, best of ``repeats`` one-tile runs."""
    import time

    g = torch.Generator().manual_seed(0)
    x = torch.randint(-128, 128, (m, rows), generator=g, dtype=torch.int8)
    w = torch.randint(-128, 128, (rows, cols), generator=g, dtype=torch.int8)
    best = float("inf")
    for _repeat in range(repeats):
        t0 = time.perf_counter()
        _product, cycles = systolic_matmul(x, w, rows, cols)
        best = min(best, time.perf_counter() - t0)
    return {"macs_per_s": m * rows * cols / best, "cycles_per_s": cycles / best, "seconds": best}


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
    from torchcourse.hardware import dataflows  # imported here: dataflows builds on this module

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
        from torchcourse.hardware import dataflows  # imported here: dataflows builds on this module

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
