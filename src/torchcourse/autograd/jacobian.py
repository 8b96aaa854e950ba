"""Jacobian explorer: the full Jacobian of a small function, and the one row combination backward gives.

Used in notebook 2.2 (``solutions/02-autograd/02-jacobians-and-stopping.ipynb``), section 2
"What backward really computes: v^T J".

core: ``explore(function, v_text)`` -> ``JacobianState``: the Jacobian from ``torch.func.jacrev``,
      ``v^T J`` from ``y.backward(v)`` (what it leaves in ``x.grad``), and the pass counts: a full
      Jacobian costs one backward pass per output (m) or one forward-mode pass per input (n).
renderer: ``draw_jacobian(state)`` -> matplotlib Figure
wrapper: ``JacobianExplorer()`` (function drop-down, a text box for v)
static stand-in: ``static_jacobian_explorer()``: one function, three choices of v.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure

from torchcourse.widgets import Explorer, figure_and_axes

_W = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.5, -1.0]], dtype=torch.float64)

#: name -> (function from R^n to R^m, the point x it is differentiated at, input names, output names)
FUNCTIONS: dict[str, tuple[Callable, list[float], list[str], list[str]]] = {
    "polar to cartesian (2 -> 2)": (lambda p: torch.stack([p[0] * torch.cos(p[1]), p[0] * torch.sin(p[1])]),
                                    [2.0, 0.5], ["r", "theta"], ["x", "y"]),
    "W tanh(x) (3 -> 2)": (lambda x: _W @ torch.tanh(x), [0.5, -1.0, 2.0], ["x0", "x1", "x2"], ["y0", "y1"]),
    "softmax (3 -> 3)": (lambda x: torch.softmax(x, dim=0), [1.0, 2.0, 0.5], ["x0", "x1", "x2"], ["p0", "p1", "p2"]),
    "sum, product, max (3 -> 3)": (lambda x: torch.stack([x.sum(), x.prod(), x.max()]), [1.0, 2.0, 3.0],
                                   ["x0", "x1", "x2"], ["sum", "prod", "max"]),
    "x squared, elementwise (4 -> 4)": (lambda x: x ** 2, [1.0, -1.0, 2.0, 0.5], ["x0", "x1", "x2", "x3"],
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


def explore(function: str, v_text: str) -> JacobianState:
    """The explorer's core: the Jacobian at the function's point, and ``v^T J`` from a real backward."""
    f, point, ins, outs = FUNCTIONS[function]
    x = torch.tensor(point, dtype=torch.float64)
    jac = torch.func.jacrev(f)(x)
    y = f(x)
    base = dict(function=function, x=tuple(point), y=tuple(y.tolist()), jacobian=tuple(map(tuple, jac.tolist())),
                inputs=tuple(ins), outputs=tuple(outs))
    try:
        v = parse_vector(v_text)
    except ValueError as exc:
        return JacobianState(v=None, vjp=None, message=f"{exc}.", **base)
    if len(v) != len(outs):
        return JacobianState(v=None, vjp=None, message=f"v must have one entry per output: {len(outs)} numbers "
                             f"(it has {len(v)}), because backward(v) weighs each output's gradient by v.", **base)
    xg = x.clone().requires_grad_()
    f(xg).backward(torch.tensor(v, dtype=torch.float64))
    vjp = tuple(xg.grad.tolist())
    msg = (f"y.backward(v) left x.grad = v^T J = [{', '.join(f'{g:.3g}' for g in vjp)}]: one backward pass, one "
           f"weighted sum of J's rows. The full {len(outs)}x{len(ins)} Jacobian costs {len(outs)} backward passes "
           f"(one per output row, jacrev) or {len(ins)} forward-mode passes (one per input column, jacfwd).")
    return JacobianState(v=v, vjp=vjp, message=msg, **base)


def draw_jacobian(state: JacobianState, ax=None) -> Figure:
    """J as a heat map with v beside its rows, v^T J as a row below it."""
    fig, ax = figure_and_axes(ax, figsize=(6.4, 4.4))
    ax.set_xticks([])
    ax.set_yticks([])
    ax.axis("off")
    m, n = state.m, state.n
    jac = torch.tensor(state.jacobian)
    scale = float(jac.abs().max()) or 1.0
    ax.imshow(jac.numpy(), cmap="RdBu", vmin=-scale, vmax=scale, extent=(0, n, m, 0), aspect="equal")
    for i in range(m):
        for j in range(n):
            dark = abs(state.jacobian[i][j]) > 0.6 * scale  # white on the darkest cells
            ax.text(j + 0.5, i + 0.5, f"{state.jacobian[i][j]:.3g}", ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
        ax.text(n + 0.1, i + 0.5, state.outputs[i], ha="left", va="center", fontsize=8)
        if state.v is not None:
            w = state.v[i]
            ax.text(-0.2, i + 0.5, f"v={w:.3g}", ha="right", va="center", fontsize=8,
                    color="#c44e52" if w else "#999999", weight="bold" if w else "normal")
    for j in range(n):
        ax.text(j + 0.5, -0.1, state.inputs[j], ha="center", va="bottom", fontsize=8)
    if state.vjp is not None:
        top = m + 0.4
        for j, g in enumerate(state.vjp):
            ax.add_patch(_rect(j, top, "#fde2c4"))
            ax.text(j + 0.5, top + 0.5, f"{g:.3g}", ha="center", va="center", fontsize=8)
        ax.text(-0.2, top + 0.5, "x.grad = v^T J", ha="right", va="center", fontsize=8, color="#c44e52")
    ax.set_xlim(-2.2, n + 1.0)
    ax.set_ylim(m + 1.6, -0.8)
    ax.text(0.5, 1.02, f"{state.function}: J is {m}x{n}\nfull J: {m} backward passes (jacrev) or {n} forward (jacfwd)",
            ha="center", va="bottom", fontsize=9, transform=ax.transAxes)
    return fig


def _rect(x: float, y: float, colour: str):
    from matplotlib.patches import Rectangle
    return Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="#333333", lw=0.8)


class JacobianExplorer(Explorer):
    """Pick a function and a vector v; see J (from jacrev) and what y.backward(v) leaves in x.grad."""

    def __init__(self, function: str = "W tanh(x) (3 -> 2)", v: str = "1, 0") -> None:
        controls = {
            "function": widgets.Dropdown(options=list(FUNCTIONS), value=function, description="f"),
            "v_text": widgets.Text(value=v, description="v", continuous_update=False),
        }
        super().__init__(controls, explore, draw_jacobian, title="Jacobian explorer")


def static_jacobian_explorer() -> Figure:
    """W tanh(x) with v = (1, 0), (0, 1) and (1, 1): a one-hot v picks a row of J, any v a weighted sum."""
    fig = Figure(figsize=(13, 4.6))
    for ax, v in zip(fig.subplots(1, 3), ("1, 0", "0, 1", "1, 1")):
        draw_jacobian(explore("W tanh(x) (3 -> 2)", v), ax=ax)
    fig.tight_layout()
    return fig
