"""Number formats of AI accelerators: int8 with scale and zero point, 16-bit fixed point, and a
piecewise-linear sigmoid (DianNao's NFU-3), as chapter 4's notebooks ``04-hardware/02-tpu-systolic-arrays``
(section 6) and ``04-hardware/03-npus`` (sections 1-2) use them.

The conversions the chapter's exercises ask a learner to write (``quantize_int8``, ``to_fixed``,
``from_fixed``, ``pwl_sigmoid``) are private here: the simulators need them, a learner must not be able to
import them as answers. The public functions are what the lessons show: affine parameters, the symmetric
codes of a whole tensor with their scale, a dequantisation, Q-format ranges and bit patterns, the
piecewise-linear sigmoid's table and its largest error.
"""

from __future__ import annotations

import torch

INT8_MIN, INT8_MAX = -128, 127
INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1


# --------------------------------------------------------------------------- int8 (section 4.2.5)

def _quantize_int8(x: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    """``clamp(round(x / scale) + zero_point, -128, 127)`` as int8 (torch.round: half to even)."""
    q = torch.round(x.to(torch.float32) / scale) + zero_point
    return q.clamp(INT8_MIN, INT8_MAX).to(torch.int8)


def dequantize_int8(q: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    """``(q - zero_point) * scale`` as float32."""
    return (q.to(torch.float32) - zero_point) * scale


def qparams(lo: float, hi: float) -> tuple[float, int]:
    """Affine (asymmetric) int8 parameters covering ``[lo, hi]`` (and 0): ``(scale, zero_point)``."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / (INT8_MAX - INT8_MIN) or 1.0
    zero_point = int(round(INT8_MIN - lo / scale))
    return scale, max(INT8_MIN, min(INT8_MAX, zero_point))


def symmetric_int8(x: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Symmetric int8 codes of a whole tensor and the scale it chose: ``(codes, max|x| / 127)``, zero point 0."""
    scale = float(x.abs().max()) / INT8_MAX or 1.0
    return _quantize_int8(x, scale, 0), scale


# --------------------------------------------------------------------------- fixed point (4.3.1)

def _to_fixed(x: torch.Tensor, frac_bits: int) -> torch.Tensor:
    """16-bit fixed point with ``frac_bits`` fraction bits: round to nearest, saturate, int16."""
    q = torch.round(x.to(torch.float64) * 2.0**frac_bits)
    return q.clamp(INT16_MIN, INT16_MAX).to(torch.int16)


def _from_fixed(q: torch.Tensor, frac_bits: int) -> torch.Tensor:
    """The float32 value a 16-bit fixed-point code stands for."""
    return (q.to(torch.float64) / 2.0**frac_bits).to(torch.float32)


def q_range(frac_bits: int, total_bits: int = 16) -> tuple[float, float, float]:
    """(smallest, largest, step) representable with ``total_bits`` bits, ``frac_bits`` of fraction."""
    step = 2.0**-frac_bits
    return -(2 ** (total_bits - 1)) * step, (2 ** (total_bits - 1) - 1) * step, step


def bit_pattern(code: int, total_bits: int = 16) -> str:
    """Two's-complement bits of an integer code, most significant first."""
    return format(code & (2**total_bits - 1), f"0{total_bits}b")


# --------------------------------------------------------------------------- piecewise-linear sigmoid

def _pwl_sigmoid(x: torch.Tensor, knots: torch.Tensor) -> torch.Tensor:
    """Sigmoid interpolated linearly between ``knots`` (sorted), held constant outside them; float32.

    Each segment is ``a_i * x + b_i``: NFU-3 of DianNao stores such (a_i, b_i) pairs in a table.
    """
    x = x.to(torch.float32)
    k = knots.to(torch.float32)
    y = torch.sigmoid(k)
    xc = x.clamp(k[0], k[-1])
    i = (torch.searchsorted(k, xc, right=True) - 1).clamp(0, len(k) - 2)
    slope = (y[i + 1] - y[i]) / (k[i + 1] - k[i])
    return y[i] + slope * (xc - k[i])


def pwl_error(x: torch.Tensor, knots: torch.Tensor) -> float:
    """The largest distance, over the values ``x``, between the sigmoid and its interpolation at ``knots``."""
    return float((_pwl_sigmoid(x, knots) - torch.sigmoid(x.to(torch.float32))).abs().max())


def pwl_table(knots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-segment (slope, intercept) of the interpolated sigmoid: what NFU-3's table holds."""
    k = knots.to(torch.float64)
    y = torch.sigmoid(k)
    slope = (y[1:] - y[:-1]) / (k[1:] - k[:-1])
    return slope, y[:-1] - slope * k[:-1]
