"""Fixed-point explorer: a 16-bit code's sign, integer and fraction bits, what it represents, the
error, overflow and saturation; and NFU-3's piecewise-linear sigmoid in that format.

Used by notebook ``04-hardware/03-npus`` (section 1).

core: ``fixed_point_view(int_bits, value)`` -> ``FixedView``; renderer: ``draw_fixed(view)``;
wrapper: ``FixedPointExplorer``; stand-in: ``static_fixed_point()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from torchcourse.figure_text import WIDE_FIGURE_PT as TEXT_PT
from torchcourse.hardware.npu import SIGMOID_KNOTS, nfu3_sigmoid
from torchcourse.hardware.numerics import _from_fixed, _to_fixed, bit_pattern, q_range
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, fits_canvas

TOTAL_BITS = 16
_SIGMOID_X = torch.linspace(-10, 10, 401)


@dataclass(frozen=True)
class FixedView:
    int_bits: int
    frac_bits: int
    value: float
    code: int                 # the int16 code after rounding and saturation
    bits: str                 # its 16 bits, sign first
    represented: float        # the value the code stands for
    error: float              # represented - value
    overflow: bool            # the value lies outside the format's range
    wrapped: float            # what a cast without saturation would have represented
    lo: float
    hi: float
    step: float
    sigmoid_x: np.ndarray
    sigmoid_pwl: np.ndarray   # NFU-3's output in this format (nan when the knots do not fit)
    message: str = ""


def fixed_point_view(int_bits: int, value: float) -> FixedView:
    """The Q format with 1 sign bit, ``int_bits`` integer bits and the rest fraction bits."""
    int_bits = int(max(0, min(TOTAL_BITS - 1, int_bits)))
    frac = TOTAL_BITS - 1 - int_bits
    lo, hi, step = q_range(frac)
    code = int(_to_fixed(torch.tensor([value], dtype=torch.float64), frac)[0])
    rep = code * step
    raw = int(round(value * 2**frac))
    wrapped_code = ((raw + 2**15) % 2**16) - 2**15
    overflow = not (lo <= value <= hi)
    if hi >= 8.0:
        codes = _to_fixed(_SIGMOID_X, frac)
        pwl = _from_fixed(nfu3_sigmoid(codes, frac, SIGMOID_KNOTS), frac).numpy()
    else:
        pwl = np.full(len(_SIGMOID_X), np.nan)
    sentence = (N_("Q{int_bits}.{frac} (1 sign, {int_bits} integer, {frac} fraction bits): range [{lo}, {hi}], step "
                   "{step}. {value} -> code {code} = {represented}, error {error}; out of range: saturated to "
                   "{saturated} (without saturation it would wrap to {wrapped}).") if overflow else
                N_("Q{int_bits}.{frac} (1 sign, {int_bits} integer, {frac} fraction bits): range [{lo}, {hi}], step "
                   "{step}. {value} -> code {code} = {represented}, error {error}."))
    msg = _(sentence).format(int_bits=int_bits, frac=frac, lo=f"{lo:g}", hi=f"{hi:g}", step=f"{step:g}",
                             value=f"{value:g}", code=code, represented=f"{rep:.6g}", error=f"{rep - value:+.3g}",
                             saturated=f"{rep:g}", wrapped=f"{wrapped_code * step:g}")
    return FixedView(int_bits, frac, float(value), code, bit_pattern(code), rep, rep - value, overflow,
                     wrapped_code * step, lo, hi, step, _SIGMOID_X.numpy(), pwl, msg)


_BIT_COLOURS = {"sign": "#c44e52", "int": "#4c72b0", "frac": "#55a868"}


def draw_fixed(view: FixedView, fig: Figure | None = None, region=(0.0, 0.0, 1.0, 1.0)) -> Figure:
    """Left: the 16 bits (dark = 1), coloured by role. Right: NFU-3's sigmoid in this format against the true one.

    The bits are drawn straight on the figure (no axes of their own: creating and drawing an axes costs more than
    the rest of an update); ``region`` (x, y, width, height in figure fractions) lets a stand-in stack several.
    """
    if fig is None:
        fig = fits_canvas(Figure(figsize=(9.0, 3.0)))  # every artist is placed in figure fractions
    x0, y0, w, h = region
    cell = 0.52 * w / TOTAL_BITS
    for pos, bit in enumerate(view.bits):
        role = "sign" if pos == 0 else ("int" if pos <= view.int_bits else "frac")
        fig.add_artist(Rectangle((x0 + 0.02 * w + pos * cell, y0 + 0.5 * h), 0.9 * cell, 0.22 * h,
                                 transform=fig.transFigure, fc=_BIT_COLOURS[role],
                                 alpha=0.9 if bit == "1" else 0.15, ec="black", lw=0.5))
    groups = [view.bits[0], view.bits[1:1 + view.int_bits], view.bits[1 + view.int_bits:]]
    fig.text(x0 + 0.02 * w, y0 + 0.85 * h, N_("Q{int_bits}.{frac_bits}: sign (red), integer (blue), fraction (green)")
             .format(int_bits=view.int_bits, frac_bits=view.frac_bits), fontsize=TEXT_PT)
    fig.text(x0 + 0.02 * w, y0 + 0.42 * h,
             N_("bits: {bits}   (dark = 1)").format(bits=" | ".join(g for g in groups if g)) + "\n"
             + (N_("{value} -> {represented} (error {error})  SATURATED") if view.overflow
                else N_("{value} -> {represented} (error {error})")).format(
                 value=f"{view.value:g}", represented=f"{view.represented:.6g}", error=f"{view.error:+.2g}"),
             fontsize=TEXT_PT, family="monospace", va="top", linespacing=1.8)
    ax = fig.add_axes((x0 + 0.62 * w, y0 + 0.15 * h, 0.36 * w, 0.68 * h))
    true = 1 / (1 + np.exp(-view.sigmoid_x))
    ax.plot(view.sigmoid_x, true, color="black", lw=1)
    if not np.isnan(view.sigmoid_pwl).all():
        ax.plot(view.sigmoid_x, view.sigmoid_pwl, color="#c44e52", lw=1, ls="--")
        ax.set_title(N_("sigmoid (black), NFU-3 in this format (red):\nmax error {error}").format(
            error=f"{np.nanmax(np.abs(view.sigmoid_pwl - true)):.3g}"), fontsize=TEXT_PT)
    else:
        ax.set_title(N_("knots at +-8 do not fit this format"), fontsize=TEXT_PT)
    ax.set_xticks([-10, 0, 10])
    ax.set_yticks([0, 1])
    ax.tick_params(labelsize=TEXT_PT)
    return fig


class FixedPointExplorer(Explorer):
    """Move the integer/fraction split and the value: bits, represented value, error, saturation."""

    def __init__(self, int_bits: int = 5, value: float = 3.14159) -> None:
        controls = {
            "int_bits": widgets.IntSlider(value=int_bits, min=0, max=15, description=N_("integer bits")),
            "value": widgets.FloatSlider(value=value, min=-80.0, max=80.0, step=0.001, description=N_("value")),
        }
        super().__init__(controls, fixed_point_view, draw_fixed, title=N_("Fixed-point explorer"))

    def frame_space(self) -> dict:
        # Every split of the 16 bits for pi, a value that saturates narrow formats, and 0.1.
        return {"int_bits": range(16), "value": [0.1, 3.14159, 40.0]}


def static_fixed_point() -> Figure:
    """Three settings: pi in Q5.10, 40 saturating in Q5.10, pi in Q2.13 (finer steps, no room for the sigmoid)."""
    fig = Figure(figsize=(9.0, 8.4))
    for row, (ib, v) in enumerate([(5, 3.14159), (5, 40.0), (2, 3.14159)]):
        draw_fixed(fixed_point_view(ib, v), fig=fig, region=(0.0, (2 - row) / 3, 1.0, 1 / 3))
    return fig
