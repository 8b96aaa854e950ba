"""DDP timeline: bucketed gradient all-reduce overlapping backward, beside DataParallel's device-0 traffic.

Used by ``chapters/03-parallel/04-ddp-in-practice.ipynb`` (section 3, "The DDP timeline").

core: ``timeline(buckets, devices)`` → ``Timeline`` (segments for DDP on one rank and for DataParallel, the
      step times, a sentence)
renderer: ``TimelineFigure().draw(tl)`` → matplotlib Figure, redrawn in place; ``draw_timeline(tl)`` on a new one
wrapper: ``DDPTimeline()``
static stand-in: ``static_timeline()`` (one bucket versus four)

A *model* in arbitrary time units: forward takes 1, backward 2 (spread evenly over the layers, last layer
first); ``comm`` is the time to send all the gradients (or the model, the same size) once over one link. DDP's
ring all-reduce sends 2(N-1)/N of that from every device at once (split evenly over the buckets, run one after
another on their own stream). DataParallel's device 0 sends the model to each of the N-1 replicas before the
forward pass and receives N-1 gradients after the backward pass, one after another and without overlap
(NCCL may pipeline DataParallel's copies through the other GPUs; this model does not).
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.transforms import ScaledTranslation

from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.parallel.redraw import Fixed, agg_figure, pin_label
from torchcourse.widgets import Explorer, fits_canvas

FORWARD, BACKWARD = 1.0, 2.0
# The names are the key's words on the figure (and the bars' kinds).
COLOURS = {N_("forward"): "#4c72b0", N_("backward"): "#55a868", N_("all-reduce"): "#c44e52",
           N_("replicate"): "#dd8452", N_("reduce to device 0"): "#937860", N_("optimizer"): "#8172b3"}


@dataclass(frozen=True)
class Bar:
    row: str
    kind: str
    start: float
    end: float


@dataclass(frozen=True)
class Timeline:
    buckets: int
    devices: int
    bars: tuple[Bar, ...]
    ddp_step: float
    dp_step: float
    message: str


def timeline(buckets: int = 4, devices: int = 4, comm: float = 0.8) -> Timeline:
    bars = [Bar("DDP compute", "forward", 0.0, FORWARD), Bar("DDP compute", "backward", FORWARD, FORWARD + BACKWARD)]
    ring = comm * 2 * (devices - 1) / devices   # what each rank sends in a ring all-reduce, in time
    piece, t_comm = BACKWARD / buckets, ring / buckets
    free = 0.0
    for b in range(buckets):
        ready = FORWARD + (b + 1) * piece        # bucket b's gradients are all computed
        start = max(ready, free)
        free = start + t_comm
        bars.append(Bar("DDP all-reduce", "all-reduce", start, free))
    ddp_end = max(free, FORWARD + BACKWARD)
    bars.append(Bar("DDP compute", "optimizer", ddp_end, ddp_end + 0.2))
    copy = comm * (devices - 1)                 # device 0 sends the model to each replica in turn
    bars += [Bar("DP device 0", "replicate", 0.0, copy),
             Bar("DP device 0", "forward", copy, copy + FORWARD),
             Bar("DP device 0", "backward", copy + FORWARD, copy + FORWARD + BACKWARD)]
    reduce_end = copy + FORWARD + BACKWARD + comm * (devices - 1)   # and receives each replica's gradients
    bars += [Bar("DP device 0", "reduce to device 0", copy + FORWARD + BACKWARD, reduce_end),
             Bar("DP device 0", "optimizer", reduce_end, reduce_end + 0.2)]
    ddp_step, dp_step = ddp_end + 0.2, reduce_end + 0.2
    hidden = FORWARD + BACKWARD + ring + 0.2 - ddp_step
    msg = _("DDP with {buckets} bucket(s): step {ddp_step}; {hidden} of the {ring} of communication hidden behind "
            "backward. DataParallel on {devices} devices: step {dp_step} (a model, in units of one forward pass)."
            ).format(buckets=buckets, ddp_step=f"{ddp_step:.2f}", hidden=f"{hidden:.2f}", ring=f"{ring:.2f}",
                     devices=devices, dp_step=f"{dp_step:.2f}")
    return Timeline(buckets, devices, tuple(bars), ddp_step, dp_step, msg)


ROWS = [N_("DDP compute"), N_("DDP all-reduce"), N_("DP device 0")]


class TimelineFigure:
    """The timeline's axes, built once and redrawn in place: each redraw replaces the bars (one collection)
    and rewrites the title and time ticks; the row names, the time label and the key of colours never change
    and are drawn once (see ``torchcourse.parallel.redraw``). With ``ax`` it draws on a stand-in's panel."""

    def __init__(self, ax=None) -> None:
        self.own = ax is None
        if self.own:
            self.figure = agg_figure((7.0, 2.6))
            ax = self.figure.add_subplot()
            fits_canvas(self.figure, left=0.17, right=0.78, bottom=0.19, top=0.87)
        self.figure, self.ax = ax.figure, ax
        self.bars = ax.add_collection(PolyCollection([], edgecolors="white"), autolim=False)
        ax.set_ylim(len(ROWS) - 0.5, -0.5)  # first row on top
        ax.set_yticks([])
        pin_label(ax.yaxis, 0.0)  # no y label: the row names below are texts of their own
        ax.tick_params(axis="x", labelsize=8)
        fixed = Fixed(self.figure)
        left_of_axes = ax.get_yaxis_transform() + ScaledTranslation(-3.5 / 72, 0, self.figure.dpi_scale_trans)
        for r, row in enumerate(ROWS):  # where the y tick labels would be, 3.5 points left of the axes
            fixed.text(0.0, r, row, left_of_axes, ha="right", va="center", fontsize=8)
        fixed.xlabel(ax, N_("time (units of one forward pass; a model)"), 19.0, fontsize=8)
        fixed.key(ax, list(COLOURS.items()), outside=True)

    def draw(self, tl: Timeline) -> Figure:
        rects, colours = [], []
        for b in tl.bars:
            y = ROWS.index(b.row)
            rects.append([(b.start, y - 0.4), (b.end, y - 0.4), (b.end, y + 0.4), (b.start, y + 0.4)])
            colours.append(COLOURS[b.kind])
        self.bars.set_verts(rects)
        self.bars.set_facecolor(colours)
        self.ax.set_xlim(0, 1.05 * max(b.end for b in tl.bars))
        # y given: matplotlib does not re-place it at every draw
        self.ax.set_title(N_("{buckets} bucket(s): DDP step {ddp:.2f}, DataParallel step {dp:.2f}").format(
            buckets=tl.buckets, ddp=tl.ddp_step, dp=tl.dp_step), fontsize=9, y=1.0)
        return self.figure


def draw_timeline(tl: Timeline, ax=None) -> Figure:
    """One timeline on a figure of its own, or on ``ax``."""
    return TimelineFigure(ax).draw(tl)


class DDPTimeline(Explorer):
    def __init__(self, buckets: int = 4, devices: int = 4) -> None:
        controls = {
            "buckets": widgets.IntSlider(value=buckets, min=1, max=8, description=N_("buckets")),
            "devices": widgets.IntSlider(value=devices, min=2, max=8, description=N_("devices")),
        }
        # One figure for the widget's life, redrawn in place at each change (see TimelineFigure).
        super().__init__(controls, timeline, TimelineFigure().draw, title=N_("DDP timeline beside DataParallel"))

    def frame_space(self) -> dict:
        # Every bucket count on 2, 3, 4, 6 and 8 devices.
        return {"buckets": range(1, 9), "devices": [2, 3, 4, 6, 8]}


def static_timeline() -> Figure:
    fig = Figure(figsize=(8, 5))
    for ax, b in zip(fig.subplots(2, 1), (1, 4)):
        draw_timeline(timeline(b, 4), ax=ax)
    fig.subplots_adjust(hspace=0.6, right=0.78)
    return fig
