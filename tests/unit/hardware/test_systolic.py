"""The weight-stationary systolic array (weight_stationary): exact against torch.matmul, cycle counts, utilisation;
its animator (systolic)."""

import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from torchcourse.hardware import systolic, weight_stationary


def _operands(seed, m, k, n):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8),
            torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8))


@pytest.mark.parametrize("seed", range(12))
def test_random_shapes_equal_torch_matmul_and_the_cycle_formula(seed):
    r = np.random.default_rng(seed)
    m, k, n, rows, cols = (int(v) for v in (r.integers(1, 12), r.integers(1, 20), r.integers(1, 20),
                                            r.integers(1, 7), r.integers(1, 7)))
    x, w = _operands(seed, m, k, n)
    y, cycles = weight_stationary.systolic_matmul(x, w, rows, cols)
    assert y.dtype == torch.int32
    assert torch.equal(y, torch.matmul(x.to(torch.int32), w.to(torch.int32)))
    assert cycles == weight_stationary._cycles(m, k, n, rows, cols)
    assert cycles == math.ceil(k / rows) * math.ceil(n / cols) * (2 * rows + cols + m - 2)


def test_extreme_int8_values_need_int32_accumulation():
    x = torch.full((3, 16), -128, dtype=torch.int8)
    w = torch.full((16, 2), -128, dtype=torch.int8)
    y, _ = weight_stationary.systolic_matmul(x, w, 16, 2)
    assert int(y[0, 0]) == 16 * 128 * 128
    # the wrong PE: an int8 product wraps
    bad = lambda a, s, wt: (a, s + a * wt)  # noqa: E731
    y_bad, _ = weight_stationary.systolic_matmul(x, w, 16, 2, pe=bad)
    assert not torch.equal(y_bad, y)


def test_a_pe_passing_sums_the_wrong_way_does_not_compute_the_product():
    x, w = _operands(0, 4, 3, 3)
    swapped = lambda a, s, wt: (s + a.to(torch.int32) * wt.to(torch.int32), a)  # noqa: E731
    try:
        y, _ = weight_stationary.systolic_matmul(x, w, 3, 3, pe=swapped)
    except (RuntimeError, TypeError):
        return
    assert not torch.equal(y, x.to(torch.int32) @ w.to(torch.int32))


def test_one_tile_cycles_split_into_load_fill_steady_drain():
    x, w = _operands(1, 5, 4, 4)
    run = weight_stationary._run_tile(x, w, 4, 4, weight_stationary._pe_step, False)
    assert run.load_cycles == 4
    assert run.stream_cycles == (4 - 1) + 5 + (4 - 1)
    assert weight_stationary._tile_cycles(5, 4, 4) == run.cycles == 15


def test_operands_must_be_int8_and_compatible():
    with pytest.raises(TypeError, match="int8"):
        weight_stationary.systolic_matmul(torch.ones(2, 2), torch.ones(2, 2), 2, 2)
    with pytest.raises(ValueError, match="cannot be multiplied"):
        weight_stationary.systolic_matmul(*_operands(0, 2, 3, 2)[:1], torch.zeros(2, 2, dtype=torch.int8), 2, 2)


def test_utilisation_grows_with_m_and_never_exceeds_one():
    utilisation = weight_stationary.utilisation
    values = [utilisation(m, 256, 256, 256, 256) for m in (1, 16, 256, 4096, 65536)]
    assert values == sorted(values)
    assert 0 < values[0] < 0.01 and values[-1] < 1
    assert utilisation(4096, 100, 100, 256, 256) < utilisation(4096, 256, 256, 256, 256)


def test_the_notebooks_call_the_simulator_through_systolic():
    assert systolic.systolic_matmul is weight_stationary.systolic_matmul
    assert systolic.utilisation is weight_stationary.utilisation


def test_busy_pe_cycles_equal_the_useful_macs():
    m, k, n, rows, cols = 6, 3, 4, 4, 5
    frames = [systolic.systolic_frame(rows, cols, m, k, n, t) for t in range(m + rows + cols - 2)]
    assert sum(int(f.busy.sum()) for f in frames) == m * k * n
    assert frames[-1].done == m * n and frames[0].done == 0


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
def test_every_dataflow_busy_pe_cycles_equal_the_useful_macs(dataflow):
    m, k, n, rows, cols = 3, 4, 2, 4, 5
    first = systolic.systolic_frame(rows, cols, m, k, n, 0, dataflow)
    frames = [systolic.systolic_frame(rows, cols, m, k, n, t, dataflow) for t in range(first.steps)]
    assert sum(int(f.busy.sum()) for f in frames) == m * k * n
    assert frames[-1].done == m * n and frames[0].done == 0
    assert {f.dataflow for f in frames} == {dataflow}


def test_a_tile_too_large_for_its_dataflow_says_which_sizes_to_change():
    assert "1 <= M <= rows (4)" in systolic.systolic_frame(4, 4, 5, 4, 4, 0, "os").message
    assert "1 <= M <= cols (4)" in systolic.systolic_frame(4, 4, 5, 4, 4, 0, "is").message
    assert "choose" in systolic.systolic_frame(4, 4, 4, 4, 4, 0, "xs").message


def test_frame_shows_the_simulator_state_and_messages():
    f = systolic.systolic_frame(4, 4, 5, 4, 4, 3)
    assert f.activations.shape == f.psums.shape == f.busy.shape == (4, 4)
    assert f.busy[0, 3] and f.busy[3, 0] and not f.busy[3, 3]
    assert "WS, stream cycle 4 of 11 (plus 4 load cycles)" in f.message
    # 80 MACs over 16 PEs x 15, 20 and 28 cycles
    assert "PEs busy: WS 33%, OS 25%, IS 18%; fewest cycles: weight-stationary" in f.message
    bad = systolic.systolic_frame(4, 4, 5, 9, 4, 0)
    assert "one tile" in bad.message


def test_renderer_and_standin_draw_figures():
    fig = systolic.draw_frame(systolic.systolic_frame(3, 3, 3, 3, 3, 2))
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.images) == 1 and "stream cycle 3/" in ax.get_title()
    assert len(ax.texts) == int(systolic.systolic_frame(3, 3, 3, 3, 3, 2).busy.sum()) + 1   # values, caption
    strip = systolic.static_systolic_strip()
    assert len(strip.axes) == 6
    flows = systolic.static_dataflow_strip()
    assert [ax.get_title()[:2] for ax in flows.axes] == ["WS", "OS", "IS"]


def test_wrapper_updates_state_when_a_control_changes():
    w = systolic.SystolicAnimator()
    assert w.state.cycle == 3
    w.controls["cycle"].value = 6
    assert w.state.cycle == 6 and isinstance(w.figure, Figure)
    w.controls["rows"].value = 16
    w.controls["cols"].value = 16
    w.controls["k"].value = 16
    w.controls["n"].value = 16
    assert w.state.busy.shape == (16, 16)
    w.controls["dataflow"].value = "os"
    assert w.state.dataflow == "os" and "stream cycle" in w.state.message


def test_throughput_is_measured_in_simulated_macs_per_second():
    t = weight_stationary.measure_throughput(rows=8, cols=8, m=16, repeats=1)
    assert t["macs_per_s"] > 0 and t["cycles_per_s"] > 0
    assert t["cycles_per_s"] * t["seconds"] == pytest.approx(weight_stationary._cycles(16, 8, 8, 8, 8))


def test_the_utilisation_figure_plots_utilisation_with_its_words_in_the_catalog():
    """Section 4's plot: a line per K = N, each point the model's utilisation; drawn in Chinese, no word left."""
    import json
    from pathlib import Path

    from torchcourse.figure_words import _translated

    fig = systolic.utilisation_figure()
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["K = N = 64", "K = N = 256", "K = N = 300", "K = N = 512"]
    for line, k in zip(lines, (64, 256, 300, 512)):
        ms, ys = line.get_data()
        assert list(ms) == [2**e for e in range(15)]
        assert list(ys) == [systolic.utilisation(m, k, k, 256, 256) for m in ms]
    assert ax.get_xscale() == "log"
    for english in (ax.get_xlabel(), ax.get_ylabel()):
        chinese = _translated(english, "zh_CN")
        assert chinese != english and not any(w in chinese for w in ("rows", "streamed", "utilisation", "array"))
    # the notebook draws it with the library, so the Chinese edition gets these words too
    notebook = Path(__file__).resolve().parents[3] / "solutions" / "04-hardware" / "02-tpu-systolic-arrays.ipynb"
    cells = ["".join(c["source"]) for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    assert any("systolic.utilisation_figure()" in c for c in cells)
    assert not any("set_xlabel" in c or "set_ylabel" in c for c in cells)
