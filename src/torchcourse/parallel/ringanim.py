"""Ring all-reduce animator: N ranks, chunks moving through reduce-scatter then all-gather, step by step.

Used by ``chapters/03-parallel/03-ddp-for-real.ipynb`` (section 3, "The ring all-reduce animator").

core: ``ring_frame(ranks, step, numel)`` → ``RingFrame`` (how many ranks' contributions each chunk of each
      rank holds after ``step`` steps, this step's messages, bytes sent per link so far, a sentence)
renderer: ``RingFigure().draw(frame)`` → matplotlib Figure, redrawn in place; ``draw_ring(frame)`` on a new one
wrapper: ``RingAnimator()`` (ranks and step sliders)
static stand-in: ``static_ring()`` (every step of a 3-rank ring)

The frames come from the schedule of ``torchcourse.parallel.ring.schedule``.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from torchcourse.figure_text import text_colour_on
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.parallel.redraw import Fixed, agg_figure
from torchcourse.parallel.ring import chunk_bounds, schedule
from torchcourse.widgets import Explorer, fits_canvas


@dataclass(frozen=True)
class RingFrame:
    ranks: int
    step: int                         # 0: before any message; 2(N-1): done
    phase: str
    counts: tuple[tuple[int, ...], ...]   # counts[rank][chunk]: how many ranks' values that chunk holds summed
    messages: tuple[tuple[int, int, int], ...]  # (src, dst, chunk) sent in this step
    message: str


def ring_frame(ranks: int = 4, step: int = 0, numel: int = 1024, itemsize: int = 4) -> RingFrame:
    n = ranks
    if n < 2:
        return RingFrame(n, 0, "done", ((1,),) * max(n, 1), (),
                         _("With one rank there is nothing to send: the tensor is already the sum."))
    total = 2 * (n - 1)
    asked = step
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
    # The caption, in the learner's language; a sentence that follows another starts with its space, so a
    # language that needs none can drop it.
    if step == 0:
        phase, text = "start", _("Each of {ranks} ranks holds its own tensor, cut into {ranks} chunks.").format(ranks=n)
    elif step <= n - 1:
        phase = N_("reduce-scatter")
        text = _("Reduce-scatter step {step} of {steps}: each rank adds the chunk it received into its own.").format(
            step=step, steps=n - 1)
    else:
        phase = N_("all-gather")
        text = _("All-gather step {step} of {steps}: finished chunks are copied around the ring.").format(
            step=step - n + 1, steps=n - 1)
    per_rank = 2 * (n - 1) * numel * itemsize / n
    text += _(" Bytes on the busiest link so far: {busiest}; a whole ring sends 2(N-1)/N of {total_bytes} = "
              "{per_link} bytes per link on average (with unequal chunks some links carry a few more).").format(
        busiest=max(link), total_bytes=numel * itemsize, per_link=f"{per_rank:.0f}")
    if asked > total:
        text += _(" (The ring is done after {total} steps; step {asked} shows the end.)").format(total=total,
                                                                                              asked=asked)
    return RingFrame(n, step, phase, counts, msgs, text)


NUMBERED = 4       # up to this many ranks the cells carry their counts; beyond, the shade says the same
EXPLAINED = N_("shade = ranks summed; red triangle sends, circle receives")


class RingFigure:
    """The animator's axes, built once and redrawn in place: each redraw sets the image, the cells' counts,
    the markers and the ticks from the frame; the axis names (and, on a figure of its own, what shade and
    markers mean) never change and are drawn once (see ``torchcourse.parallel.redraw``). With ``ax`` it
    draws on a stand-in's panel."""

    def __init__(self, ax=None) -> None:
        self.own = ax is None
        if self.own:
            self.figure = agg_figure((5.5, 3.0))
            ax = self.figure.add_subplot()
            fits_canvas(self.figure, left=0.1, right=0.97, bottom=0.18, top=0.9)
        self.figure, self.ax = ax.figure, ax
        self.image = ax.imshow(np.zeros((2, 2)), cmap="Blues", vmin=0, vmax=1.15, aspect="auto")
        self.counts = [ax.text(0, 0, "", ha="center", va="center", fontsize=8) for _ in range(NUMBERED ** 2)]
        self.sends = ax.scatter([], [], marker="^", color="#c44e52", s=30, label=N_("sends"))
        self.receives = ax.scatter([], [], marker="o", facecolors="none", edgecolors="#c44e52", s=30,
                                   label=N_("receives"))
        ax.tick_params(labelsize=8)
        fixed = Fixed(self.figure)
        fixed.xlabel(ax, N_("chunk  ({explained})").format(explained=EXPLAINED) if self.own else N_("chunk"), 18.0,
                     fontsize=8)
        fixed.ylabel(ax, N_("process rank"), 15.0, fontsize=8)

    def draw(self, frame: RingFrame) -> Figure:
        n = frame.ranks
        self.image.set_data(np.array(frame.counts, dtype=float) / n)
        self.image.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
        self.ax.set_xlim(-0.5, n - 0.5)
        self.ax.set_ylim(n - 0.5, -0.5)
        cells = [(r, c, k) for r, row in enumerate(frame.counts) for c, k in enumerate(row)] if n <= NUMBERED else []
        for text, cell in zip(self.counts, cells + [None] * (len(self.counts) - len(cells))):
            text.set_visible(cell is not None)
            if cell is not None:
                r, c, k = cell
                text.set_position((c, r))
                text.set_text(f"{k}/{n}")
                text.set_color(text_colour_on(self.image.to_rgba(k / n)))
        msgs = frame.messages
        self.sends.set_offsets(np.array([(c + 0.3, s) for s, _, c in msgs], dtype=float).reshape(-1, 2))
        self.receives.set_offsets(np.array([(c + 0.3, d) for _, d, c in msgs], dtype=float).reshape(-1, 2))
        self.ax.set_xticks(range(n), [str(c) for c in range(n)])
        self.ax.set_yticks(range(n), [str(r) for r in range(n)])
        self.ax.set_title(N_("{phase}, step {step} of {steps}").format(phase=frame.phase, step=frame.step,
                                                                         steps=2 * (n - 1)), fontsize=9, y=1.0)
        return self.figure


def draw_ring(frame: RingFrame, ax=None) -> Figure:
    """One frame on a figure of its own, or on ``ax``."""
    return RingFigure(ax).draw(frame)


class RingAnimator(Explorer):
    def __init__(self, ranks: int = 4, step: int = 0) -> None:
        controls = {
            "ranks": widgets.IntSlider(value=ranks, min=2, max=8, description=N_("ranks")),
            "step": widgets.IntSlider(value=step, min=0, max=14, description=N_("step")),
        }
        # One figure for the widget's life, redrawn in place at each change (see RingFigure).
        super().__init__(controls, lambda ranks, step: ring_frame(ranks, step), RingFigure().draw,
                         title=N_("Ring all-reduce, step by step"))

    def frame_space(self) -> list[dict]:
        # Every step on 2, 4 and 8 ranks (2(N-1) steps each; past the last, the ring stays finished).
        return {"ranks": [2, 4, 8], "step": range(15)}


def static_ring() -> Figure:
    """Every step of a 3-rank ring: start, two reduce-scatter steps, two all-gather steps."""
    # Three steps above, two below: narrow enough for the page's column to show it at full size.
    fig = Figure(figsize=(7.6, 6.4))
    grid = fig.add_gridspec(2, 6)  # sixths, so the two below sit centred under the three above
    panels = [grid[0, 0:2], grid[0, 2:4], grid[0, 4:6], grid[1, 1:3], grid[1, 3:5]]
    for i, ax in enumerate(fig.add_subplot(panel) for panel in panels):
        draw_ring(ring_frame(3, i), ax=ax)
        ax.set_title([N_("start"), N_("reduce-scatter 1"), N_("reduce-scatter 2"), N_("all-gather 1"),
                      N_("all-gather 2")][i], fontsize=9)
    fig.suptitle(N_("Ring all-reduce over 3 ranks: a cell's shade (and k/3) counts the ranks whose values it\n"
                    "holds summed; red triangle: sent this step, circle: received"), fontsize=9)
    fig.subplots_adjust(wspace=1.2, hspace=0.45, top=0.86)
    return fig
