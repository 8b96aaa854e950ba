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
