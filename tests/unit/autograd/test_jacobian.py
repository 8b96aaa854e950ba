"""The Jacobian explorer: J against torch.autograd.functional.jacobian, v^T J against backward."""

from __future__ import annotations

import pytest
import torch
from matplotlib.figure import Figure

from torchcourse.autograd.jacobian import (
    FUNCTIONS,
    JacobianExplorer,
    draw_jacobian,
    explore,
    parse_vector,
    static_jacobian_explorer,
)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_jacobian_and_vjp_match_pytorch(name):
    f, point, ins, outs = FUNCTIONS[name]
    g = torch.Generator().manual_seed(len(name))
    v = torch.randn(len(outs), generator=g, dtype=torch.float64)
    state = explore(name, ", ".join(str(float(a)) for a in v))
    J = torch.autograd.functional.jacobian(f, torch.tensor(point, dtype=torch.float64))
    assert torch.allclose(torch.tensor(state.jacobian, dtype=torch.float64), J)
    assert torch.allclose(torch.tensor(state.vjp, dtype=torch.float64), v @ J)
    assert (state.m, state.n) == tuple(J.shape)
    assert f"{state.m} VJPs, one per output row" in state.message and f"{state.n} JVPs, one per input" in state.message


def test_one_hot_v_picks_a_row():
    state = explore("W tanh(x) (3 -> 2)", "0, 1")
    assert state.vjp == pytest.approx(state.jacobian[1])


def test_bad_v_is_a_sentence():
    assert "one entry per output" in explore("softmax (3 -> 3)", "1, 2").message
    assert "could not read" in explore("softmax (3 -> 3)", "a, b, c").message
    assert explore("softmax (3 -> 3)", "a").vjp is None
    assert parse_vector("[1, 2.5 3]") == (1.0, 2.5, 3.0)


def test_renderer_and_wrapper():
    fig = draw_jacobian(explore("polar to cartesian (2 -> 2)", "1, 1"))
    assert isinstance(fig, Figure) and len(fig.axes[0].images) == 1
    from matplotlib.patches import PathPatch
    outlines = [a for a in fig.axes[0].get_children() if isinstance(a, PathPatch)]
    assert {tuple(a.get_facecolor()[:3]) for a in outlines} >= {(0.0, 0.0, 0.0), (1.0, 1.0, 1.0)}  # black, white
    assert "J is 2x2" in fig.axes[0].texts[0].get_text()
    assert len(fig.axes[0].collections) == 1  # the v^T J row
    w = JacobianExplorer()
    w.controls["function"].value = "softmax (3 -> 3)"
    assert w.state.vjp is None and "3 numbers" in w.message.value
    w.controls["v_text"].value = "1, 0, 0"
    assert w.state.vjp == pytest.approx(w.state.jacobian[0])
    assert len(static_jacobian_explorer().axes) == 3
