"""The descent playground: real SGD with and without zero_grad, drawn as contours and paths."""

from __future__ import annotations

import pytest
import torch
from matplotlib.figure import Figure

from torchcourse.autograd.descent import (
    SURFACES,
    DescentPlayground,
    descend,
    draw_descent,
    run,
    static_descent_playground,
)


@pytest.mark.parametrize("surface", list(SURFACES))
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_correct_run_is_plain_sgd(surface, momentum):
    loss_fn, start, _ = SURFACES[surface]
    path = run(surface, 0.05, momentum, 10, zero_grad=True)
    w, buf = torch.tensor(start, dtype=torch.float64), None
    for k in range(10):
        g = torch.func.grad(loss_fn)(w)
        buf = g if buf is None else momentum * buf + g
        w = w - 0.05 * buf
        assert path[k + 1] == pytest.approx(tuple(w.tolist()))


def test_forgetting_zero_grad_adds_up_every_gradient():
    loss_fn, start, _ = SURFACES["elongated bowl"]
    path = run("elongated bowl", 0.1, 0.0, 5, zero_grad=False)
    w, total = torch.tensor(start, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
    for k in range(5):
        total = total + torch.func.grad(loss_fn)(w)
        w = w - 0.1 * total
        assert path[k + 1] == pytest.approx(tuple(w.tolist()))


def test_states_and_messages():
    on = descend("elongated bowl", 0.1, 0.0, 30, True)
    assert on.forgetful is not None and len(on.correct) == 31
    assert on.correct_loss < 0.01 < on.forgetful_loss
    assert descend(forget_zero_grad=False).forgetful is None
    away = descend("elongated bowl", 0.1, 0.9, 60, True)
    assert "ran away" in away.message


def test_renderer_wrapper_stand_in():
    fig = draw_descent(descend())
    assert isinstance(fig, Figure) and len(fig.axes[0].lines) == 3
    assert len(draw_descent(descend(forget_zero_grad=False)).axes[0].lines) == 2
    w = DescentPlayground()
    w.controls["forget_zero_grad"].value = False
    assert w.state.forgetful is None
    w.controls["lr"].value = 0.2
    assert w.state.lr == 0.2
    assert len(static_descent_playground().axes) == 2


def test_a_run_that_diverges_with_zero_grad_says_so():
    state = descend("banana valley", 0.1, 0.0, 30, True)
    assert state.message.startswith("Both runs ran away: with zero_grad after 4 steps")
    assert "too large for the banana valley, with or without zero_grad" in state.message
    alone = descend("banana valley", 0.1, 0.0, 30, False)
    assert alone.message.startswith("With zero_grad: ran away after 4 steps")
    assert "too large for the banana valley even with zero_grad" in alone.message
    luckier = descend("banana valley", 0.02, 0.0, 30, True)
    assert luckier.forgetful_loss < luckier.correct_loss and "lower here" in luckier.message
    assert descend("elongated bowl", 0.1, 0.0, 30, True).message.startswith("With zero_grad: loss")
