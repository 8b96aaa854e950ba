"""Parallelism planner: model size, batch, devices and strategy in; memory, bytes and a timeline out.

Used by ``chapters/03-parallel/02-splitting-the-work.ipynb`` (section 4, "The parallelism planner").

core: ``plan(params_b, batch, devices, strategy, link)`` → ``Plan`` (per-device memory by kind, bytes each
      device sends per step, timeline segments, the note's worker/site label, a sentence)
renderer: ``PlanFigure().draw(plan)`` → matplotlib Figure (memory bars, bytes, timeline), redrawn in place;
          ``draw_plan(plan)`` on a new figure
wrapper: ``ParallelismPlanner()``
static stand-in: ``static_planner()`` (four strategies for one model, side by side)

Everything is a labelled *model*: a transformer-like stack of ``LAYERS`` layers whose hidden size follows
from the parameter count (about 12·layers·hidden² parameters), mixed-precision Adam (16 bytes per parameter
as the ZeRO paper counts them), an assumed sustained ``TFLOPS`` per device and the chosen link's published
bandwidth inside a server of ``PER_SERVER`` devices; beyond one server every collective also crosses the network
(``costs.INTER_NODE``, 50 GB/s per device), and the slower of the two links sets its pace. The memory panel marks
an 80 GB device (an H100's memory). It shows the shape of the trade-offs, not a prediction for a given machine.
DataParallel is modelled with direct copies from and to device 0 (NCCL may pipeline them through the other
GPUs, which spreads the sending but not the per-step repetition).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

import ipywidgets as widgets
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from torchcourse.figure_text import WIDE_FIGURE_PT as TEXT_PT
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.parallel.costs import GRAD_BYTES, INTER_NODE, LINKS, OPTIM_BYTES, PARAM_BYTES
from torchcourse.parallel.redraw import Fixed, agg_figure, pin_label
from torchcourse.widgets import Explorer, fits_canvas

# The names of PyTorch's and DeepSpeed's methods stay as they are in both editions; the others are words.
STRATEGIES = [N_("single device"), "DataParallel", "DDP", "ZeRO-1", "ZeRO-2", "FSDP (ZeRO-3)", N_("pipeline"),
              N_("tensor")]
LAYERS = 32
TOKENS = 2048            # tokens per sample
TFLOPS = 100.0           # assumed sustained bf16 throughput per device (an assumption, not a datasheet figure)
PER_SERVER = 8           # devices per server, as in an 8-GPU server
CAPACITY_GB = 80.0       # one H100's memory, drawn as a line on the memory panel
KINDS = (N_("parameters"), N_("gradients"), N_("optimizer"), N_("activations"))  # the key's words too
COLOURS = {"parameters": "#4c72b0", "gradients": "#dd8452", "optimizer": "#55a868", "activations": "#c44e52"}
TIME_COLOURS = {"compute": "#4c72b0", "communicate": "#c44e52"}


@dataclass(frozen=True)
class Segment:
    device: int
    kind: str   # "compute" or "communicate"
    start: float  # seconds
    end: float
    label: str = ""


@dataclass(frozen=True)
class Plan:
    strategy: str
    devices: int
    memory: tuple[dict[str, float], ...]  # bytes by kind, one dict per device
    sent: tuple[float, ...]               # bytes each device sends per step
    segments: tuple[Segment, ...]
    analogy: str
    message: str  # the caption, in the learner's language
    figure_message: str = ""  # the same sentence in English, for the figure's title (all figure text is English)

    def total(self, d: int) -> float:
        return sum(self.memory[d].values())


def _ring_bytes(nbytes: float, world_size: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``nbytes``: 2(N-1)/N of the data."""
    return 2 * (world_size - 1) * nbytes / world_size


def hidden_size(params: float) -> int:
    return max(64, int(math.sqrt(params / (12 * LAYERS))))


def analogy(devices: int, per_site: int = PER_SERVER) -> str:
    if devices == 1:
        return N_("one worker: one device does everything")
    if devices <= per_site:
        return N_("many workers, one site: {devices} devices in one server, joined by a fast link").format(
            devices=devices)
    return N_("many sites: {devices} devices, {servers} servers, network ({bandwidth:.0f} GB/s per device)").format(
        devices=devices, servers=math.ceil(devices / per_site), bandwidth=INTER_NODE.gb_per_s)


def link_bandwidth(link: str, devices: int) -> float:
    """Bytes per second each device's collectives run at: the chosen link inside one server; across servers
    a ring also crosses the network, and its slowest link sets the pace."""
    bw = next(lk.gb_per_s for lk in LINKS if lk.name == link)
    if devices > PER_SERVER:
        bw = min(bw, INTER_NODE.gb_per_s)
    return bw * 1e9


def plan(params_b: float, batch: int, devices: int, strategy: str, link: str = "NVLink 4 (H100 SXM)") -> Plan:
    """A model of one training step (forward, backward, optimizer) under ``strategy``."""
    n = 1 if strategy == "single device" else devices
    psi = params_b * 1e9
    h = hidden_size(psi)
    act_sample = LAYERS * TOKENS * h * 2 * 16.0   # about 16 stored bf16 values per token per layer (a rough model)
    bw = link_bandwidth(link, n)
    flops = 6 * psi * TOKENS * batch               # forward + backward, 6 flops per parameter per token
    compute = flops / (TFLOPS * 1e12)
    p, g, o = PARAM_BYTES * psi, GRAD_BYTES * psi, OPTIM_BYTES * psi
    grads = g
    memory, sent, segs = [], [], []
    said: tuple[str, dict] | None = None  # the plan's sentence (marked N_) and its values
    if n > batch and strategy in ("DataParallel", "DDP", "ZeRO-1", "ZeRO-2", "FSDP (ZeRO-3)"):
        said = (N_("A batch of {batch} cannot give each of {devices} devices a sample: some devices would idle."),
                dict(batch=batch, devices=n))
    if strategy == "single device":
        memory.append(dict(parameters=p, gradients=g, optimizer=o, activations=batch * act_sample))
        sent.append(0.0)
        segs.append(Segment(0, "compute", 0.0, compute, "forward + backward"))
    elif strategy == "DataParallel":
        chunks = [min(math.ceil(batch / n), max(0, batch - i * math.ceil(batch / n))) for i in range(n)]
        copy_t = p / bw
        for d in range(n):
            mem = dict(parameters=p, gradients=g, optimizer=o if d == 0 else 0.0, activations=chunks[d] * act_sample)
            memory.append(mem)
            sent.append(p * (n - 1) if d == 0 else grads)
            seg_c = compute * chunks[d] / batch
            segs.append(Segment(d, "communicate", 0.0, copy_t * (n - 1), "replicate from device 0"))
            segs.append(Segment(d, "compute", copy_t * (n - 1), copy_t * (n - 1) + seg_c, "forward + backward"))
            end = copy_t * (n - 1) + compute * chunks[0] / batch
            segs.append(Segment(d, "communicate", end, end + grads * (n - 1) / bw, "gradients to device 0"))
    elif strategy in ("DDP", "ZeRO-1", "ZeRO-2", "FSDP (ZeRO-3)"):
        shard = {"DDP": (1, 1, 1), "ZeRO-1": (1, 1, n), "ZeRO-2": (1, n, n), "FSDP (ZeRO-3)": (n, n, n)}[strategy]
        traffic = _ring_bytes(grads, n) * (1.5 if strategy == "FSDP (ZeRO-3)" else 1.0)
        comm = traffic / bw
        for d in range(n):
            memory.append(dict(parameters=p / shard[0], gradients=g / shard[1], optimizer=o / shard[2],
                               activations=math.ceil(batch / n) * act_sample))
            sent.append(traffic)
            c = compute / n
            segs.append(Segment(d, "compute", 0.0, c, "forward + backward"))
            # gradients are reduced bucket by bucket during backward: overlap from a third of the way in; the
            # bar lasts the modelled communication time (the step ends when both bars have)
            start = c / 3
            segs.append(Segment(d, "communicate", start, start + comm, "bucketed all-reduce"
                                if strategy == "DDP" else "gather / reduce-scatter"))
    elif strategy == "pipeline":
        boundary = batch * TOKENS * h * 2.0
        for d in range(n):
            memory.append(dict(parameters=p / n, gradients=g / n, optimizer=o / n, activations=batch * act_sample / n))
            sent.append(2 * boundary if 0 < d < n - 1 else (boundary if n > 1 else 0.0))
            c = compute / n
            segs.append(Segment(d, "compute", d * c, (d + 1) * c, "forward + backward (no micro-batches)"))
        if n > 1:
            said = said or (N_("Without micro-batches each stage idles {share} of the step: the pipeline bubble."),
                            dict(share=f"{(n - 1) / n:.0%}"))
    elif strategy == "tensor":
        per_ar = batch * TOKENS * h * 2.0
        traffic = 4 * LAYERS * _ring_bytes(per_ar, n)
        comm = traffic / bw
        for d in range(n):
            memory.append(dict(parameters=p / n, gradients=g / n, optimizer=o / n,
                               activations=batch * act_sample / n))
            sent.append(traffic)
            segs.append(Segment(d, "compute", 0.0, compute / n, "forward + backward"))
            segs.append(Segment(d, "communicate", compute / n, compute / n + comm,
                                f"{4 * LAYERS} all-reduces (2 per layer per pass), not overlapped here"))
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    fullest = max(sum(m.values()) for m in memory)
    if not said and fullest > CAPACITY_GB * 1e9:
        said = (N_("{used} GB on the fullest device: more than an {capacity} GB GPU holds."),
                dict(used=f"{fullest / 1e9:.0f}", capacity=f"{CAPACITY_GB:.0f}"))
    sentence, values = said or ("", {})
    return Plan(strategy, n, tuple(memory), tuple(sent), tuple(segs), analogy(n), _(sentence).format(**values),
                sentence.format(**values))


def _rect(x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float]]:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def sent_label(sent: tuple[float, ...]) -> str:
    """The memory panel's x label: the GB each device sends per step, devices that send the same grouped."""
    runs: list[list] = []  # [first device, last device, GB as shown]
    for d, b in enumerate(sent):
        gb = f"{b / 1e9:.3g}"
        if runs and runs[-1][2] == gb:
            runs[-1][1] = d
        else:
            runs.append([d, d, gb])
    if len(sent) == 1:
        return N_("device (one device sends nothing)")
    if len(runs) == 1:
        return N_("device (each sends {gb} GB per step)").format(gb=runs[0][2])
    return N_("device; GB sent per step: {runs}").format(runs=", ".join(
        f"{gb} ({a})" if a == b else f"{gb} ({a}-{b})" for a, b, gb in runs))


def _device_ticks(n: int) -> list[int]:
    # Every device up to 8; beyond that every fifth (a tick label is a text to lay out at every redraw).
    return list(range(n)) if n <= 8 else list(range(0, n, 5))


class PlanFigure:
    """The planner's two panels (memory bars and a step's timeline), built once and redrawn in place.

    The wrapper keeps one PlanFigure and each redraw only replaces the bars' rectangles (one collection per
    panel, not a patch per bar) and rewrites the texts that depend on the plan; the labels and key that
    never change are drawn once (see ``torchcourse.parallel.redraw``). With ``axes`` (a pair) it draws on a
    stand-in's panels instead of a figure of its own.
    """

    def __init__(self, axes=None) -> None:
        self.own = axes is None
        if self.own:
            self.figure = agg_figure((9, 3.2))
            axes = self.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
            fits_canvas(self.figure, left=0.07, right=0.98, bottom=0.2, top=0.85, wspace=0.25)
            self.suptitle = self.figure.suptitle("", fontsize=9, color="#a00")
        else:
            self.figure = axes[0].figure
        self.ax_mem, self.ax_time = axes
        self.headroom = 1.7 if self.own else 2.2  # a stand-in's panels are lower: the key takes more of them
        self.memory = self.ax_mem.add_collection(PolyCollection([], edgecolors="none"), autolim=False)
        self.timeline = self.ax_time.add_collection(PolyCollection([], edgecolors="none"), autolim=False)
        # Labels at fixed distances (points) from their axes, with room for the widest tick labels.
        fixed = Fixed(self.figure)
        fixed.key(self.ax_mem, [(k, COLOURS[k]) for k in KINDS], fontsize=TEXT_PT)
        fixed.ylabel(self.ax_mem, N_("memory (GB, model)"), 31.0, fontsize=TEXT_PT)  # clear of "1000"
        fixed.xlabel(self.ax_time, N_("time in one step (ms, model): blue compute, red communication"), 18.0,
                     fontsize=TEXT_PT)
        fixed.ylabel(self.ax_time, N_("device"), 15.5, fontsize=TEXT_PT)
        pin_label(self.ax_mem.xaxis, 14.5)  # the bytes sent: it changes with the plan
        self.capacity = self.ax_mem.axhline(CAPACITY_GB, color="#444", linestyle="--", linewidth=0.8)
        # Placed at each draw, at an end of its line (see draw).
        self.capacity_label = self.ax_mem.text(0.0, CAPACITY_GB, f" {CAPACITY_GB:.0f} GB GPU", fontsize=TEXT_PT,
                                               va="bottom", color="#444",
                                               bbox={"fc": "white", "ec": "none", "pad": 1.0},  # readable over a bar
                                               transform=self.ax_mem.get_yaxis_transform())
        self.ax_mem.locator_params(axis="y", nbins=3)
        self.ax_time.locator_params(axis="x", nbins=4)
        for ax in axes:
            ax.tick_params(labelsize=TEXT_PT)
        # Device axes need no tick marks: the bars and rows are the marks.
        self.ax_mem.tick_params(axis="x", length=0)
        self.ax_time.tick_params(axis="y", length=0)

    def draw(self, plan_: Plan) -> Figure:
        n = plan_.devices
        tops, rects, colours = [], [], []
        for d in range(n):
            bottom = 0.0
            for kind in KINDS:
                height = plan_.memory[d][kind] / 1e9
                rects.append(_rect(d - 0.4, bottom, d + 0.4, bottom + height))
                colours.append(COLOURS[kind])
                bottom += height
            tops.append(bottom)
        self.memory.set_verts(rects)
        self.memory.set_facecolor(colours)
        ticks = _device_ticks(n)
        self.ax_mem.set_xticks(ticks, [str(d) for d in ticks])
        self.ax_mem.set_xlim(-0.6, n - 0.4)
        self.ax_mem.set_ylim(0, self.headroom * max(tops))  # room for the key above the tallest bar
        self.capacity_label.set_visible(CAPACITY_GB < self.headroom * max(tops))  # the line clips itself
        # At the line's left end, where the key (upper right) is never in the way; at its right end when the
        # first bar (DataParallel's device 0) rises past the line above the others, so the label's box cuts no
        # more than a lower bar.
        right = tops[0] > max(CAPACITY_GB, tops[-1])
        self.capacity_label.set_x(1.0 if right else 0.0)
        self.capacity_label.set_horizontalalignment("right" if right else "left")
        self.ax_mem.set_xlabel(sent_label(plan_.sent), fontsize=TEXT_PT)
        self.ax_mem.set_title(N_("{strategy}: memory per device").format(strategy=plan_.strategy), fontsize=9,
                              y=1.0)  # y: not re-placed
        # Compute on a device's upper row, communication on its lower one (the y axis runs downwards).
        rects, colours = [], []
        for s in plan_.segments:
            row = s.device + (0.0 if s.kind == "compute" else 0.4)
            rects.append(_rect(s.start * 1e3, row, s.end * 1e3, row + 0.35))
            colours.append(TIME_COLOURS[s.kind])
        self.timeline.set_verts(rects)
        self.timeline.set_facecolor(colours)
        self.ax_time.set_yticks([d + 0.375 for d in ticks], [str(d) for d in ticks])
        self.ax_time.set_xlim(0, 1.05 * max(s.end for s in plan_.segments) * 1e3)
        self.ax_time.set_ylim(n - 0.1, -0.15)
        self.ax_time.set_title(plan_.analogy, fontsize=9, y=1.0)
        if self.own:
            self.suptitle.set_text("\n".join(textwrap.wrap(plan_.figure_message, 110)))  # stays on the canvas
        return self.figure


def draw_plan(plan_: Plan) -> Figure:
    """One plan on a figure of its own."""
    return PlanFigure().draw(plan_)


class ParallelismPlanner(Explorer):
    def __init__(self, params_b: float = 7.0, batch: int = 16, devices: int = 4, strategy: str = "DDP",
                 link: str = "NVLink 4 (H100 SXM)") -> None:
        controls = {
            "params_b": widgets.SelectionSlider(options=[0.1, 1.0, 7.0, 13.0, 70.0], value=params_b,
                                                description=N_("params (B)")),
            "batch": widgets.IntSlider(value=batch, min=1, max=64, description=N_("batch")),
            "devices": widgets.SelectionSlider(options=[1, 2, 4, 8, 16], value=devices, description=N_("devices")),
            "strategy": widgets.Dropdown(options=STRATEGIES, value=strategy, description=N_("strategy")),
            "link": widgets.Dropdown(options=[lk.name for lk in LINKS], value=link, description=N_("link")),
        }
        # One figure for the widget's life, redrawn in place at each change (see PlanFigure).
        super().__init__(controls, plan, PlanFigure().draw,
                         title=N_("Parallelism planner (a cost model, not a measurement)"))

    def frame_space(self) -> list[dict]:
        # Every strategy on 1 to 16 devices; model size for DataParallel (the notebook's start), DDP and FSDP;
        # batch for DataParallel and DDP; the link where it sets the step time at 7B, batch 16, 4 devices:
        # DataParallel and tensor parallelism (DDP hides its all-reduce behind compute there, on every link).
        return [{"strategy": STRATEGIES, "devices": [1, 4, 16]},
                {"strategy": ["DataParallel", "DDP", "FSDP (ZeRO-3)"], "params_b": [0.1, 1.0, 7.0, 13.0, 70.0]},
                {"strategy": ["DataParallel", "DDP"], "batch": [1, 16, 64]},
                {"strategy": ["DataParallel", "tensor"], "link": [lk.name for lk in LINKS]}]


def static_planner() -> Figure:
    """DataParallel, DDP, FSDP and tensor parallelism for a 7B model, batch 16, 4 devices."""
    # The explorer's width, four rows high: the page's column shows it at the same scale as the explorer.
    fig = Figure(figsize=(9, 11.2))
    grid = fig.subplots(4, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    for row, strategy in zip(grid, ["DataParallel", "DDP", "FSDP (ZeRO-3)", "tensor"]):
        PlanFigure(row).draw(plan(7.0, 16, 4, strategy))
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.05, top=0.97, hspace=0.55, wspace=0.25)
    return fig
