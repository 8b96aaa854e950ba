"""The parallelism planner and the DDP timeline: cores, renderers, wrappers, stand-ins."""

from __future__ import annotations

import pytest

from torchcourse.parallel.planner import STRATEGIES, ParallelismPlanner, draw_plan, plan, static_planner
from torchcourse.parallel.timeline import DDPTimeline, draw_timeline, static_timeline, timeline


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_planner_core(strategy):
    p = plan(7.0, 16, 4, strategy)
    assert p.devices == (1 if strategy == "single device" else 4)
    assert len(p.memory) == len(p.sent) == p.devices
    assert all(s.end >= s.start for s in p.segments)


def test_planner_orders_memory_as_zero_says():
    totals = {s: plan(7.0, 16, 4, s).total(0) for s in ["DDP", "ZeRO-1", "ZeRO-2", "FSDP (ZeRO-3)"]}
    assert totals["DDP"] > totals["ZeRO-1"] > totals["ZeRO-2"] > totals["FSDP (ZeRO-3)"]
    dp = plan(7.0, 16, 4, "DataParallel")
    assert dp.total(0) > dp.total(1)
    assert "bubble" in plan(7.0, 16, 4, "pipeline").message
    assert "idle" in plan(7.0, 2, 8, "DDP").message
    assert "one worker" in plan(7.0, 16, 1, "DDP").analogy and "sites" in plan(7.0, 16, 16, "DDP").analogy


def test_planner_renderer_and_wrapper():
    fig = draw_plan(plan(1.0, 8, 2, "DDP"))
    assert len(fig.axes) == 2 and "memory per device" in fig.axes[0].get_title()
    w = ParallelismPlanner()
    w.controls["strategy"].value = "tensor"
    assert w.state.strategy == "tensor" and w.figure is not None
    assert len(static_planner().axes) == 8


def test_timeline_buckets_hide_communication():
    one, four = timeline(1, 4), timeline(4, 4)
    assert four.ddp_step < one.ddp_step < one.dp_step
    assert sum(b.kind == "all-reduce" for b in four.bars) == 4
    fig = draw_timeline(four)
    assert "4 bucket" in fig.axes[0].get_title()
    w = DDPTimeline()
    w.controls["buckets"].value = 1
    assert w.state.buckets == 1
    assert len(static_timeline().axes) == 2


# ------------------------------------------------------------------------------------ redrawn in place
# Each wrapper keeps one figure and redraws it in place; every state, reached after others, must look
# exactly as it does on a fresh figure. The states change what a stale artist would show: device counts
# (bars, rows, ticks), a message appearing and going, cell counts shown then hidden, markers or none.

def _moved_through(widget, moves):
    from torchcourse.widgets import figure_png

    for name, value in moves:
        widget.controls[name].value = value
        yield figure_png(widget.figure), widget.state


def test_planner_redrawn_in_place_matches_fresh_figures():
    from torchcourse.widgets import figure_png

    w = ParallelismPlanner()
    moves = [("devices", 16), ("strategy", "DataParallel"), ("batch", 2), ("devices", 1), ("strategy", "pipeline")]
    for png, state in _moved_through(w, moves):
        assert png == figure_png(draw_plan(state)), f"{state.strategy} on {state.devices} devices"


def test_timeline_redrawn_in_place_matches_fresh_figures():
    from torchcourse.widgets import figure_png

    w = DDPTimeline()
    for png, state in _moved_through(w, [("buckets", 1), ("devices", 8), ("buckets", 8), ("devices", 2)]):
        assert png == figure_png(draw_timeline(state)), f"{state.buckets} buckets, {state.devices} devices"


def test_ring_redrawn_in_place_matches_fresh_figures():
    from torchcourse.parallel.ringanim import RingAnimator, draw_ring
    from torchcourse.widgets import figure_png

    w = RingAnimator()
    for png, state in _moved_through(w, [("ranks", 8), ("step", 9), ("ranks", 2), ("ranks", 3)]):
        assert png == figure_png(draw_ring(state)), f"{state.ranks} ranks, step {state.step}"


def test_fixed_layer_pastes_what_drawing_draws():
    """Texts and a key drawn once and pasted give the pixels that drawing them at each draw gives."""
    import io

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    from torchcourse.parallel.redraw import Fixed, agg_figure
    from torchcourse.widgets import figure_png

    def picture(fixed_layer: bool) -> np.ndarray:
        fig = agg_figure((4, 2.5)) if fixed_layer else Figure(figsize=(4, 2.5))
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1])
        target = Fixed(fig) if fixed_layer else None
        if target is None:  # the same artists, drawn directly every time
            target = Fixed(fig)
            target.draw = lambda renderer: [a.draw(renderer) for a in target.children]
        target.xlabel(ax, "time (a model)", 18.0, fontsize=8)
        target.ylabel(ax, "rank", 15.0, fontsize=8)
        target.key(ax, [("forward", "#4c72b0"), ("backward", "#55a868")])
        figure_png(fig)  # the first draw builds the pasted image; compare a later one
        return np.asarray(Image.open(io.BytesIO(figure_png(fig))).convert("RGBA")).astype(int)

    pasted, drawn = picture(True), picture(False)
    assert pasted.shape == drawn.shape
    assert np.abs(pasted - drawn).max() <= 2
    assert (drawn[..., :3] < 128).any(axis=2).sum() > 200  # the texts are there to compare


def test_planner_crosses_the_network_beyond_one_server():
    from torchcourse.parallel.costs import INTER_NODE
    from torchcourse.parallel.planner import PER_SERVER, link_bandwidth

    assert link_bandwidth("NVLink 4 (H100 SXM)", PER_SERVER) == 450e9
    assert link_bandwidth("NVLink 4 (H100 SXM)", 16) == INTER_NODE.gb_per_s * 1e9 == 50e9
    assert link_bandwidth("PCIe 3.0 x16", 16) == 15.75e9  # the slower link still sets the pace
    assert "network (50 GB/s per device)" in plan(7.0, 16, 16, "DDP").analogy
    # the same all-reduce takes 9 times longer across servers than over NVLink
    inside, across = (plan(7.0, 16, n, "DDP") for n in (8, 16))
    t_in, t_across = ([s.end - s.start for s in p_.segments if s.kind == "communicate"][0] for p_ in (inside, across))
    bytes_in, bytes_across = inside.sent[0], across.sent[0]
    assert t_in == pytest.approx(bytes_in / 450e9) and t_across == pytest.approx(bytes_across / 50e9)


def test_planner_communication_bars_last_the_modelled_time_and_the_capacity_is_marked():
    for strategy in ("DDP", "ZeRO-1", "FSDP (ZeRO-3)"):
        p_ = plan(1.0, 8, 4, strategy)
        comm = [s for s in p_.segments if s.kind == "communicate"]
        assert all(s.end - s.start == pytest.approx(p_.sent[s.device] / 450e9) for s in comm)
    assert "more than an 80 GB GPU holds" in plan(7.0, 16, 4, "DDP").message  # 112 GB of model state alone
    assert plan(7.0, 16, 4, "FSDP (ZeRO-3)").message == ""
    fig = draw_plan(plan(7.0, 16, 4, "DDP"))
    assert any(t.get_text() == " 80 GB GPU" and t.get_visible() for t in fig.axes[0].texts)
