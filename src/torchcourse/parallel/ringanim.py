"""Ring all-reduce animator: N ranks, chunks moving through reduce-scatter then all-gather, step by step.

Used by ``chapters/03-parallel/03-ddp-for-real.ipynb`` (section 3, "The ring all-reduce animator").

core: ``ring_frame(ranks, step, numel)`` → ``RingFrame`` (how many ranks' contributions each chunk of each
      rank holds after ``step`` steps, this step's messages, bytes sent per link so far, a sentence)
renderer: ``draw_ring(frame)`` → matplotlib Figure
wrapper: ``RingAnimator()`` (ranks and step sliders)
static stand-in: ``static_ring()`` (every step of a 3-rank ring)

The frames come from the same schedule as ``torchcourse.parallel.ring.simulate_ring_allreduce``.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from torchcourse.parallel.ring import chunk_bounds, schedule
from torchcourse.widgets import Explorer, figure_and_axes, fits_canvas


@dataclass(frozen=True)
class RingFrame:
    ranks: int
    step: int                         # 0: before any message; 2(N-1): done
    phase: str
    counts: tuple[tuple[int, ...], ...]   # counts[rank][chunk]: how many ranks' values that chunk holds summed
    messages: tuple[tuple[int, int, int], ...]  # (src, dst, chunk) sent in this step
    link_bytes: tuple[int, ...]       # bytes sent so far on link r -> r+1
    message: str


def ring_frame(ranks: int = 4, step: int = 0, numel: int = 1024, itemsize: int = 4) -> RingFrame:
    n = ranks
    if n < 2:
        return RingFrame(n, 0, "done", ((1,),) * max(n, 1), (), (0,) * max(n, 1),
                         "With one rank there is nothing to send: the tensor is already the sum.")
    total = 2 * (n - 1)
    step = max(0, min(step, total))
    owners = [[{r} for _ in range(n)] for r in range(n)]   # which ranks' values each chunk holds
    bounds = chunk_bounds(numel, n)
    link = [0] * n
    sched = schedule(n)
    msgs: tuple = ()
    for s in range(step):
        phase = "reduce-scatter" if s < n - 1 else "all-gather"
        local = s if s < n - 1 else s - (n - 1)
        now = [(src, dst, c) for ph, st, src, dst, c in sched if ph == phase and st == local]
        sent = [set(owners[src][c]) for src, _, c in now]
        for (src, dst, c), data in zip(now, sent):
            owners[dst][c] = owners[dst][c] | data if phase == "reduce-scatter" else set(data)
            link[src] += (bounds[c][1] - bounds[c][0]) * itemsize
        msgs = tuple(now)
    counts = tuple(tuple(len(o) for o in row) for row in owners)
    if step == 0:
        phase, text = "start", f"Each of {n} ranks holds its own tensor, cut into {n} chunks."
    elif step <= n - 1:
        phase = "reduce-scatter"
        text = f"Reduce-scatter step {step} of {n - 1}: each rank adds the chunk it received into its own."
    else:
        phase = "all-gather"
        text = f"All-gather step {step - n + 1} of {n - 1}: finished chunks are copied around the ring."
    per_rank = 2 * (n - 1) * numel * itemsize / n
    text += f" Bytes per link so far: {max(link)} (of {per_rank:.0f} = 2(N-1)/N of {numel * itemsize} bytes)."
    return RingFrame(n, step, phase, counts, msgs, tuple(link), text)


def draw_ring(frame: RingFrame, ax=None) -> Figure:
    own = ax is None
    fig, ax = figure_and_axes(ax, figsize=(5.5, 3.0))
    n = frame.ranks
    ax.imshow(np.array(frame.counts, dtype=float) / n, cmap="Blues", vmin=0, vmax=1.15, aspect="auto")
    if n <= 4:  # the numbers fit; beyond that the shade says the same
        for r, row in enumerate(frame.counts):
            for c, k in enumerate(row):
                ax.text(c, r, f"{k}/{n}", ha="center", va="center", fontsize=8, color="white" if k == n else "black")
    if frame.messages:
        ax.scatter([c + 0.3 for _, _, c in frame.messages], [s for s, _, _ in frame.messages], marker="^",
                   color="#c44e52", s=30, label="sends")
        ax.scatter([c + 0.3 for _, _, c in frame.messages], [d for _, d, _ in frame.messages], marker="o",
                   facecolors="none", edgecolors="#c44e52", s=30, label="receives")
    ax.set_xticks(range(n), [f"chunk {c}" for c in range(n)], fontsize=7)
    ax.set_yticks(range(n), [f"rank {r}" for r in range(n)], fontsize=7)
    ax.set_title(f"{frame.phase}, step {frame.step} of {2 * (n - 1)}: shade = ranks summed; "
                 "red triangle sends, circle receives", fontsize=8)
    return fits_canvas(fig, left=0.13, right=0.96, bottom=0.1, top=0.88) if own else fig


class RingAnimator(Explorer):
    def __init__(self, ranks: int = 4, step: int = 0) -> None:
        controls = {
            "ranks": widgets.IntSlider(value=ranks, min=2, max=8, description="ranks"),
            "step": widgets.IntSlider(value=step, min=0, max=14, description="step"),
        }
        super().__init__(controls, lambda ranks, step: ring_frame(ranks, step), draw_ring,
                         title="Ring all-reduce, step by step")

    def frame_space(self) -> list[dict]:
        # Every step on 2, 4 and 8 ranks (2(N-1) steps each; past the last, the ring stays finished).
        return {"ranks": [2, 4, 8], "step": range(15)}


def static_ring() -> Figure:
    """Every step of a 3-rank ring: start, two reduce-scatter steps, two all-gather steps."""
    fig = Figure(figsize=(15, 3.2))
    for i, ax in enumerate(fig.subplots(1, 5)):
        draw_ring(ring_frame(3, i), ax=ax)
        ax.set_title(["start", "reduce-scatter 1", "reduce-scatter 2", "all-gather 1", "all-gather 2"][i], fontsize=9)
    fig.suptitle("Ring all-reduce over 3 ranks: a cell's shade (and k/3) counts the ranks whose values it holds "
                 "summed; red triangle: sent this step, circle: received", fontsize=9)
    fig.subplots_adjust(wspace=0.35, top=0.8)
    return fig
