"""Descent playground: gradient descent on a two-parameter loss, with and without ``zero_grad``.

Used in notebook 2.3 (``solutions/02-autograd/03-custom-functions-and-engine.ipynb``), section 3
"Autograd at work: a training loop", subsection "The descent playground".

core: ``descend(surface, lr, momentum, steps, forget_zero_grad)`` -> ``DescentState``: two real
      ``torch.optim.SGD`` runs from the same start, one calling ``optimizer.zero_grad()`` each step
      and one that forgets it (so ``backward`` keeps adding into ``.grad``).
renderer: ``draw_descent(state)`` -> matplotlib Figure (contours and both trajectories)
wrapper: ``DescentPlayground()`` (surface, step size, momentum, steps, the "forget zero_grad" switch)
static stand-in: ``static_descent_playground()``: both surfaces, correct and forgetful runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes


def _bowl(w: torch.Tensor) -> torch.Tensor:
    return 0.5 * w[..., 0] ** 2 + 2.0 * w[..., 1] ** 2


def _rosenbrock(w: torch.Tensor) -> torch.Tensor:
    return (1 - w[..., 0]) ** 2 + 5.0 * (w[..., 1] - w[..., 0] ** 2) ** 2


#: name -> (loss of a (..., 2) tensor, start point, plot box (x0, x1, y0, y1))
SURFACES: dict[str, tuple[Callable, tuple[float, float], tuple[float, float, float, float]]] = {
    N_("elongated bowl"): (_bowl, (-2.5, 1.5), (-3.0, 3.0, -2.0, 2.0)),
    N_("banana valley"): (_rosenbrock, (-1.5, 1.5), (-2.0, 2.0, -1.0, 3.0)),
}
#: A run is stopped once the loss passes this: it has run away.
RUNAWAY = 1e4


@dataclass(frozen=True)
class DescentState:
    surface: str
    lr: float
    momentum: float
    correct: tuple[tuple[float, float], ...]  # parameters after each step, start included
    forgetful: tuple[tuple[float, float], ...] | None  # the same without zero_grad (None: switch off)
    correct_loss: float
    forgetful_loss: float | None
    message: str


def run(surface: str, lr: float, momentum: float, steps: int, zero_grad: bool) -> list[tuple[float, float]]:
    """Real SGD on the surface from its start point; the parameters after every step."""
    loss_fn, start, _ = SURFACES[surface]
    w = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=lr, momentum=momentum, foreach=False)
    path = [tuple(w.tolist())]
    for _ in range(steps):
        if zero_grad:
            opt.zero_grad()
        loss = loss_fn(w)
        loss.backward()
        opt.step()
        path.append(tuple(w.tolist()))
        if not np.isfinite(path[-1]).all() or loss.item() > RUNAWAY:  # the loss before this step
            break
    return path


def _verdict(surface: str, good: list, bad: list | None, final: Callable, ran_away: Callable) -> str:
    """What happened, blaming the missing zero_grad only for what the correct run does not share.

    In the learner's language: whole sentences with named placeholders; a sentence that follows another
    starts with its space, so a language that needs none can drop it. The surface keeps its English name,
    as the drop-down shows it.
    """
    def loss(path):
        return f"{final(path):.3g}"

    if ran_away(good):
        if bad is not None and ran_away(bad):
            return _("Both runs ran away: with zero_grad after {good_steps} steps (loss {good_loss}), without it "
                     "after {bad_steps} (loss {bad_loss}). The step size is too large for the {surface}, with or "
                     "without zero_grad: try a smaller one.").format(
                good_steps=len(good) - 1, good_loss=loss(good), bad_steps=len(bad) - 1, bad_loss=loss(bad),
                surface=_(surface))
        msg = _("With zero_grad: ran away after {steps} steps (loss {loss}): this step size is too large for the "
                "{surface} even with zero_grad.").format(steps=len(good) - 1, loss=loss(good), surface=_(surface))
        return msg if bad is None else msg + _(" Without it: loss {loss}.").format(loss=loss(bad))
    msg = _("With zero_grad: loss {loss} after {steps} steps.").format(loss=loss(good), steps=len(good) - 1)
    if bad is None:
        return msg
    if ran_away(bad):
        return msg + _(" Without it: ran away after {steps} steps (loss {loss}): the stale gradients kept adding up, "
                       "so the steps kept growing.").format(steps=len(bad) - 1, loss=loss(bad))
    if final(bad) < final(good):
        return msg + _(" Without it: loss {loss}; each step used the sum of every gradient so far (lower here: that "
                       "sum acts like momentum, which happens to help this run).").format(loss=loss(bad))
    return msg + _(" Without it: loss {loss}; each step used the sum of every gradient so far.").format(
        loss=loss(bad))


def descend(surface: str = "elongated bowl", lr: float = 0.1, momentum: float = 0.0, steps: int = 30,
            forget_zero_grad: bool = True) -> DescentState:
    """The playground's core: the correct run, and (when the switch is on) the run that forgets zero_grad."""
    loss_fn = SURFACES[surface][0]
    good = run(surface, lr, momentum, steps, zero_grad=True)
    bad = run(surface, lr, momentum, steps, zero_grad=False) if forget_zero_grad else None

    def final(path):
        return float(loss_fn(torch.tensor(path[-1], dtype=torch.float64)))

    def ran_away(path):
        loss = final(path)
        return len(path) < steps + 1 or not np.isfinite(loss) or loss > RUNAWAY

    msg = _verdict(surface, good, bad, final, ran_away)
    return DescentState(surface, lr, momentum, tuple(good), None if bad is None else tuple(bad), final(good),
                        None if bad is None else final(bad), msg)


@functools.lru_cache(maxsize=8)
def _contours(surface: str) -> list:
    """Contour lines of log(1 + loss) as line segments, computed once per surface (contourpy, matplotlib's own)."""
    import contourpy

    loss_fn, _, (x0, x1, y0, y1) = SURFACES[surface]
    xs, ys = torch.linspace(x0, x1, 48, dtype=torch.float64), torch.linspace(y0, y1, 48, dtype=torch.float64)
    gx, gy = torch.meshgrid(xs, ys, indexing="xy")
    z = np.log1p(loss_fn(torch.stack([gx, gy], dim=-1)).numpy())
    gen = contourpy.contour_generator(gx.numpy(), gy.numpy(), z)
    segments = []
    for level in np.linspace(z.min(), z.max(), 14)[1:-1]:
        segments.extend(gen.lines(level))
    return segments


#: The key's lines sit on white, not on the contours' grey, so their colours keep their contrast.
_KEY_BOX = {"fc": "white", "ec": "none", "pad": 1.0}


def draw_descent(state: DescentState, ax=None) -> Figure:
    """Contours of log(1 + loss), the correct trajectory in blue, the forgetful one in red."""
    fig, ax = figure_and_axes(ax, figsize=(6.0, 4.6))
    ax.add_collection(LineCollection(_contours(state.surface), colors="#bbbbbb", linewidths=0.7))
    (x0, x1, y0, y1) = SURFACES[state.surface][2]
    good = np.array(state.correct)
    ax.plot(good[:, 0], good[:, 1], "o-", color="#4c72b0", ms=3, lw=1.2)
    ax.text(0.02, 0.97, N_("blue: zero_grad() each step"), color="#4c72b0", fontsize=8, transform=ax.transAxes,
            va="top", bbox=_KEY_BOX)
    if state.forgetful is not None:
        bad = np.array(state.forgetful)
        ax.plot(bad[:, 0], bad[:, 1], "s--", color="#c44e52", ms=3, lw=1.2)
        ax.text(0.02, 0.91, N_("red: zero_grad() forgotten"), color="#c44e52", fontsize=8, transform=ax.transAxes,
                va="top", bbox=_KEY_BOX)
    ax.plot(*good[0], "k*", ms=10, zorder=4)  # the start, above the key's white box
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    # No ticks (they cost more than the whole drawing); the box's corners are named in the title instead.
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 1.01, N_("{surface}: lr {lr:g}, momentum {momentum:g}   (w0 from {x0:g} to {x1:g}, w1 from {y0:g} "
                          "to {y1:g})").format(surface=state.surface, lr=state.lr, momentum=state.momentum, x0=x0,
                                               x1=x1, y0=y0, y1=y1), fontsize=8,
            ha="center", va="bottom", transform=ax.transAxes)
    return fig


class DescentPlayground(Explorer):
    """Step size, momentum, steps, and a switch that also runs the loop without ``optimizer.zero_grad()``."""

    def __init__(self, surface: str = "elongated bowl", lr: float = 0.1, momentum: float = 0.0, steps: int = 30,
                 forget_zero_grad: bool = True) -> None:
        controls = {
            "surface": widgets.Dropdown(options=list(SURFACES), value=surface, description=N_("loss")),
            "lr": widgets.FloatSlider(value=lr, min=0.01, max=0.5, step=0.01, description=N_("step size")),
            "momentum": widgets.FloatSlider(value=momentum, min=0.0, max=0.95, step=0.05, description=N_("momentum")),
            "steps": widgets.IntSlider(value=steps, min=1, max=60, description=N_("steps")),
            "forget_zero_grad": widgets.Checkbox(value=forget_zero_grad, description=N_("forget zero_grad")),
        }
        super().__init__(controls, descend, draw_descent, title=N_("Descent playground"))

    def frame_space(self) -> dict:
        # A small, a good and a too-large step, with and without momentum, short and long runs.
        return {"surface": list(SURFACES), "lr": [0.02, 0.1, 0.45], "momentum": [0.0, 0.9], "steps": [10, 30],
                "forget_zero_grad": [False, True]}


def static_descent_playground() -> Figure:
    """Both surfaces at a safe step size, each with the forgetful run beside the correct one."""
    # One above the other: narrow enough for the page's column to show it at full size.
    fig = Figure(figsize=(7.4, 9.2))
    for ax, (surface, lr) in zip(fig.subplots(2, 1), (("elongated bowl", 0.1), ("banana valley", 0.02))):
        draw_descent(descend(surface, lr, 0.0, 40, True), ax=ax)
    fig.tight_layout()
    return fig
