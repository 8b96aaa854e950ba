"""Jacobian explorer: the full Jacobian of a small function, and the one row combination backward gives.

Used in notebook 2.2 (``solutions/02-autograd/02-jacobians-and-stopping.ipynb``), section 2
"Full Jacobians exist: rows from VJPs, columns from JVPs", subsection "The Jacobian explorer".

core: ``explore(function, v_text)`` -> ``JacobianState``: the Jacobian from ``torch.func.jacrev``,
      ``v^T J`` from ``y.backward(v)`` (what it leaves in ``x.grad``), and the pass counts: a full
      Jacobian costs one vector-Jacobian product per output (m) or one Jacobian-vector product per input (n).
renderer: ``draw_jacobian(state)`` -> matplotlib Figure
wrapper: ``JacobianExplorer()`` (function drop-down, a text box for v)
static stand-in: ``static_jacobian_explorer()``: one function, three choices of v.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as widgets
import torch
from matplotlib.collections import PatchCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import Affine2D

from torchcourse.autograd.textpaths import patch, place
from torchcourse.figure_text import GREY_ON_WHITE, text_colour_on
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes

_W = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.5, -1.0]], dtype=torch.float64)

#: name -> (function from R^n to R^m, the point x it is differentiated at, input names, output names). A name in
#: words is marked for the catalog (the drop-down and the figure show it in the learner's language); a name that
#: is code (W tanh(x), softmax) stays as it is.
FUNCTIONS: dict[str, tuple[Callable, list[float], list[str], list[str]]] = {
    N_("polar to cartesian (2 -> 2)"): (lambda p: torch.stack([p[0] * torch.cos(p[1]), p[0] * torch.sin(p[1])]),
                                        [2.0, 0.5], ["r", "theta"], ["x", "y"]),
    "W tanh(x) (3 -> 2)": (lambda x: _W @ torch.tanh(x), [0.5, -1.0, 2.0], ["x0", "x1", "x2"], ["y0", "y1"]),
    "softmax (3 -> 3)": (lambda x: torch.softmax(x, dim=0), [1.0, 2.0, 0.5], ["x0", "x1", "x2"], ["p0", "p1", "p2"]),
    N_("sum, product, max (3 -> 3)"): (lambda x: torch.stack([x.sum(), x.prod(), x.max()]), [1.0, 2.0, 3.0],
                                       ["x0", "x1", "x2"], ["sum", "prod", "max"]),
    N_("x squared, elementwise (4 -> 4)"): (lambda x: x ** 2, [1.0, -1.0, 2.0, 0.5], ["x0", "x1", "x2", "x3"],
                                            ["y0", "y1", "y2", "y3"]),
}


@dataclass(frozen=True)
class JacobianState:
    function: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    jacobian: tuple[tuple[float, ...], ...] | None  # m rows (outputs) x n columns (inputs), from jacrev
    v: tuple[float, ...] | None
    vjp: tuple[float, ...] | None  # what y.backward(v) left in x.grad
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    message: str

    @property
    def m(self) -> int:
        return len(self.outputs)

    @property
    def n(self) -> int:
        return len(self.inputs)


def parse_vector(text: str) -> tuple[float, ...]:
    parts = [p for p in re.split(r"[,\s]+", text.strip().strip("()[]")) if p]
    try:
        return tuple(float(p) for p in parts)
    except ValueError:
        raise ValueError(f"could not read {text!r} as numbers: write them as 1, 0, 0") from None


@functools.cache
def _jacobian(function: str) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """f(x) and J from ``torch.func.jacrev`` at the function's point: computed once per function."""
    f, point, _, _ = FUNCTIONS[function]
    x = torch.tensor(point, dtype=torch.float64)
    return tuple(f(x).tolist()), tuple(map(tuple, torch.func.jacrev(f)(x).tolist()))


def explore(function: str, v_text: str) -> JacobianState:
    """The explorer's core: the Jacobian at the function's point, and ``v^T J`` from a real backward."""
    f, point, ins, outs = FUNCTIONS[function]
    y, jac = _jacobian(function)
    base = dict(function=function, x=tuple(point), y=y, jacobian=jac, inputs=tuple(ins), outputs=tuple(outs))
    try:
        v = parse_vector(v_text)
    except ValueError:
        return JacobianState(v=None, vjp=None, **base, message=_(
            "could not read {text} as numbers: write them as 1, 0, 0.").format(text=repr(v_text)))
    if len(v) != len(outs):
        return JacobianState(v=None, vjp=None, **base, message=_(
            "v must have one entry per output: {outputs} numbers (it has {given}), because backward(v) weighs each "
            "output's gradient by v.").format(outputs=len(outs), given=len(v)))
    xg = torch.tensor(point, dtype=torch.float64, requires_grad=True)
    f(xg).backward(torch.tensor(v, dtype=torch.float64))
    vjp = tuple(xg.grad.tolist())
    msg = _("y.backward(v) left x.grad = v^T J = [{vjp}]: one backward pass, one weighted sum of J's rows. The full "
            "{m}x{n} Jacobian costs {m} VJPs, one per output row (jacrev batches them into one vmapped pass; "
            "autograd.functional.jacobian loops), or {n} JVPs, one per input column (jacfwd).").format(
        vjp=", ".join(f"{g:.3g}" for g in vjp), m=len(outs), n=len(ins))
    return JacobianState(v=v, vjp=vjp, message=msg, **base)


def draw_jacobian(state: JacobianState, ax=None) -> Figure:
    """J as a heat map with v beside its rows, v^T J as a row below it (labels as text outlines: fast)."""
    fig, ax = figure_and_axes(ax, figsize=(6.4, 4.4))
    ax.set_xticks([])
    ax.set_yticks([])
    ax.axis("off")
    m, n = state.m, state.n
    jac = torch.tensor(state.jacobian)
    scale = float(jac.abs().max()) or 1.0
    heat = ax.imshow(jac.numpy(), cmap="RdBu", vmin=-scale, vmax=scale, extent=(0, n, m, 0), aspect="equal")
    size = 0.22
    dark, light, red, grey = [], [], [], []
    for i in range(m):
        for j in range(n):
            # the y axis points down here: flip each outline so the text reads upright
            target = dark if text_colour_on(heat.to_rgba(state.jacobian[i][j])) == "white" else light
            target.append(_flip(place(f"{state.jacobian[i][j]:.3g}", j + 0.5, -(i + 0.5), size)))
        light.append(_flip(place(state.outputs[i], n + 0.12, -(i + 0.5), size, ha="left")))
        if state.v is not None:
            (red if state.v[i] else grey).append(_flip(place(f"v={state.v[i]:.3g}", -0.15, -(i + 0.5), size,
                                                             ha="right")))
    for j in range(n):
        light.append(_flip(place(state.inputs[j], j + 0.5, 0.25, size)))
    if state.vjp is not None:
        top = m + 0.4
        ax.add_collection(PatchCollection([Rectangle((j, top), 1, 1) for j in range(n)], facecolor="#fde2c4",
                                          edgecolor="#333333", linewidths=0.8))
        for j, g in enumerate(state.vjp):
            light.append(_flip(place(f"{g:.3g}", j + 0.5, -(top + 0.5), size)))
        red.append(_flip(place("x.grad = v^T J", -0.15, -(top + 0.5), size, ha="right")))
    for paths, colour in ((light, "black"), (dark, "white"), (red, "#c44e52"), (grey, GREY_ON_WHITE)):
        if paths:
            ax.add_artist(patch(paths, colour, size=size, zorder=3))
    ax.set_xlim(-2.4, n + 1.0)
    ax.set_ylim(m + 1.6, -0.8)
    ax.text(0.5, 1.02, N_("{function}: J is {m}x{n}").format(function=state.function, m=m, n=n) + "\n"
            + N_("full J: {m} VJPs (jacrev) or {n} JVPs (jacfwd)").format(m=m, n=n),
            ha="center", va="bottom", fontsize=9, transform=ax.transAxes)
    return fig


def _flip(path):
    """Mirror an outline placed at (x, -y) to (x, y) upside down, for axes whose y grows downwards."""
    return path.transformed(Affine2D().scale(1, -1))


class JacobianExplorer(Explorer):
    """Pick a function and a vector v; see J (from jacrev) and what y.backward(v) leaves in x.grad."""

    def __init__(self, function: str = "W tanh(x) (3 -> 2)", v: str = "1, 0") -> None:
        controls = {
            "function": widgets.Dropdown(options=list(FUNCTIONS), value=function, description=N_("f")),
            "v_text": widgets.Text(value=v, description=N_("v"), continuous_update=False),
        }
        super().__init__(controls, explore, draw_jacobian, title=N_("Jacobian explorer"))

    def frame_space(self) -> list[dict]:
        # The site's curated vectors v (the text box accepts anything): for each function the one-hot and
        # all-ones vectors of its own output size, and "1, 0" (the notebook's start) on every function, so
        # that changing f alone always has a frame; for a function of 3 or 4 outputs that one frame is
        # the sentence a v of the wrong length gets, the one error the site shows per function.
        by_outputs = {2: ["1, 0", "0, 1", "1, 1"], 3: ["1, 0, 0", "0, 0, 1", "1, 1, 1"],
                      4: ["1, 0, 0, 0", "0, 0, 0, 1", "1, 1, 1, 1"]}
        return [{"function": list(FUNCTIONS), "v_text": ["1, 0"]}] + [
            {"function": [name], "v_text": by_outputs[len(outputs)]} for name, (*_, outputs) in FUNCTIONS.items()]


def static_jacobian_explorer() -> Figure:
    """W tanh(x) with v = (1, 0), (0, 1) and (1, 1): a one-hot v picks a row of J, any v a weighted sum."""
    # Two above, the third centred below: narrow enough for the page's column to show it at full size.
    fig = Figure(figsize=(7.6, 6.6))
    grid = fig.add_gridspec(2, 4)  # quarters, so the third panel is as wide as the others
    axes = [fig.add_subplot(grid[0, :2]), fig.add_subplot(grid[0, 2:]), fig.add_subplot(grid[1, 1:3])]
    for ax, v in zip(axes, ("1, 0", "0, 1", "1, 1")):
        draw_jacobian(explore("W tanh(x) (3 -> 2)", v), ax=ax)
    fig.tight_layout()
    return fig
