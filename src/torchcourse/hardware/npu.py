"""Simulated NPUs of the DianNao family: a fully connected layer through DianNao's NFU, neighbour
reuse in ShiDianNao's PE array, and PuDianNao's algorithms as a table.

Used by notebook ``04-hardware/03-npus`` (sections 2-4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from torchcourse.hardware.numerics import INT16_MAX, INT16_MIN, _from_fixed, _to_fixed, pwl_table

TN = 16                      # DianNao: NFU-1 is Tn x Tn = 16 x 16 = 256 multipliers
PIPELINE_STAGES = 3          # NFU-1 (multiply), NFU-2 (adder trees), NFU-3 (activation)
SIGMOID_KNOTS = torch.linspace(-8.0, 8.0, 17)   # 16 segments, as a table of (slope, intercept)


@dataclass(frozen=True)
class NFURun:
    output: torch.Tensor          # (Nn,) float32: the fixed-point result, as values
    codes: torch.Tensor           # (Nn,) int16: the same, as Q codes
    reference: torch.Tensor       # (Nn,) float32: sigmoid(W x + b) in float32
    max_error: float
    blocks: int                   # 16 x 16 blocks of weights through NFU-1 and NFU-2
    cycles: int                   # blocks + pipeline fill (PIPELINE_STAGES - 1)
    multiplies: int               # multiplier operations issued, padding included
    saturated: int                # pre-activation sums clipped to the Q range
    pre_activation: torch.Tensor  # (Nn,) float32: W x + b as NFU-2 hands it to NFU-3 (rounded, saturated)


def _saturate16(v: torch.Tensor) -> torch.Tensor:
    return v.clamp(INT16_MIN, INT16_MAX)


def _round_shift(v: torch.Tensor, bits: int) -> torch.Tensor:
    """Divide an integer tensor by 2**bits, rounding to nearest (ties away from zero)."""
    if bits == 0:
        return v
    half = 1 << (bits - 1)
    return torch.where(v >= 0, (v + half) >> bits, -((-v + half) >> bits))


SLOPE_BITS = 15   # the sigmoid's slopes are all below 1/4: the table keeps them with 15 fraction bits


def nfu3_sigmoid(codes: torch.Tensor, frac_bits: int, knots: torch.Tensor = SIGMOID_KNOTS) -> torch.Tensor:
    """NFU-3: a table of (slope, intercept) in fixed point; one multiply and one add per value.

    Intercepts are in the data's Q format; slopes keep ``SLOPE_BITS`` fraction bits, because a slope's
    rounding error is multiplied by x (up to 8 here) while an intercept's is not.
    """
    slope, intercept = pwl_table(knots)
    a = _to_fixed(slope, SLOPE_BITS).to(torch.int64)
    b = _to_fixed(intercept, frac_bits).to(torch.int64)
    k = _to_fixed(knots, frac_bits).to(torch.int64)
    x = codes.to(torch.int64).clamp(int(k[0]), int(k[-1]))
    seg = (torch.searchsorted(k, x, right=True) - 1).clamp(0, len(k) - 2)
    y = _round_shift(a[seg] * x, SLOPE_BITS) + b[seg]
    return _saturate16(y).to(torch.int16)


def nfu_layer(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, frac_bits: int = 10) -> NFURun:
    """``sigmoid(w @ x + b)`` through a simulated DianNao NFU in 16-bit fixed point.

    NFU-1 multiplies 16 inputs by 16 weights for each of 16 output neurons per cycle (int16 x int16
    -> exact int32 products); NFU-2's 16 adder trees (15 adders each) sum each neuron's 16 products,
    and a partial-sum register adds them up across input blocks (kept wide here, an assumption of
    this model); the sum is rounded back to the Q format with saturation; NFU-3 applies the
    piecewise-linear sigmoid. One block per cycle, pipelined over the three stages.
    """
    nn_, ni = w.shape
    xq, wq, bq = _to_fixed(x, frac_bits), _to_fixed(w, frac_bits), _to_fixed(b, frac_bits)
    ni_p, nn_p = math.ceil(ni / TN) * TN, math.ceil(nn_ / TN) * TN
    xp = torch.zeros(ni_p, dtype=torch.int32)
    xp[:ni] = xq
    wp = torch.zeros(nn_p, ni_p, dtype=torch.int32)
    wp[:nn_, :ni] = wq
    blocks = (nn_p // TN) * (ni_p // TN)
    # NFU-1: per block, a (16 neurons x 16 inputs) grid of products, exact in int32.
    products = wp.view(nn_p // TN, TN, ni_p // TN, TN) * xp.view(1, 1, ni_p // TN, TN)
    # NFU-2: adder trees over the 16 inputs of a block, then accumulation across blocks.
    tree = products.to(torch.int64).sum(dim=3)                  # (neuron blocks, 16, input blocks)
    acc = tree.sum(dim=2).reshape(nn_p)[:nn_] + (bq.to(torch.int64) << frac_bits)
    pre = _round_shift(acc, frac_bits)
    saturated = int(((pre < INT16_MIN) | (pre > INT16_MAX)).sum())
    pre16 = _saturate16(pre)
    codes = nfu3_sigmoid(pre16, frac_bits)
    out = _from_fixed(codes, frac_bits)
    ref = torch.sigmoid(w.to(torch.float32) @ x.to(torch.float32) + b.to(torch.float32))
    return NFURun(out, codes, ref, float((out - ref).abs().max()), blocks, blocks + PIPELINE_STAGES - 1,
                  blocks * TN * TN, saturated, _from_fixed(pre16, frac_bits))


# --------------------------------------------------------------------------- ShiDianNao

@dataclass(frozen=True)
class ReuseCount:
    output: torch.Tensor          # (H_out, W_out) float32, equal to conv2d
    steps: int                    # kernel positions visited (K*K), one per cycle per PE
    naive_reads: int              # every PE reading every input it needs from the buffer
    buffer_reads: int             # inputs that had to come from the buffer
    neighbour_moves: int          # inputs taken from a neighbouring PE instead


def shidiannao_conv(image: torch.Tensor, kernel: torch.Tensor) -> ReuseCount:
    """A single-channel convolution on a PE grid with one PE per output pixel.

    The kernel positions are visited in a snake order (left to right along a kernel row, then down,
    then right to left, ...). After each step, PE (i, j) needs the input its neighbour (on the
    right, on the left, or below) used in the previous step, so it takes it from that PE; only
    inputs no PE held come from the buffer. This is the course's model: ShiDianNao itself shifts
    data only leftwards and upwards and keeps older inputs in FIFOs for later reuse. The counts
    come from comparing, step by step, which input each PE needs with which input each PE held.
    """
    h, w = image.shape
    kh, kw = kernel.shape
    ho, wo = h - kh + 1, w - kw + 1
    order = []
    for ky in range(kh):
        xs = range(kw) if ky % 2 == 0 else range(kw - 1, -1, -1)
        order += [(ky, kx) for kx in xs]
    ii = torch.arange(ho).unsqueeze(1)
    jj = torch.arange(wo).unsqueeze(0)
    acc = torch.zeros(ho, wo, dtype=torch.float32)
    held = None
    prev = order[0]
    buffer_reads = neighbour = 0
    for ky, kx in order:
        need = (ii + ky) * w + (jj + kx)                    # flat index of the input each PE needs
        if held is None:
            from_neighbour = torch.zeros(ho, wo, dtype=torch.bool)
        else:
            # what the neighbour in the direction of the move held last step
            dy, dx = ky - prev[0], kx - prev[1]
            src = torch.full((ho, wo), -1, dtype=torch.int64)
            ys, xs = slice(max(0, -dy), ho - max(0, dy)), slice(max(0, -dx), wo - max(0, dx))
            yt, xt = slice(max(0, dy), ho - max(0, -dy)), slice(max(0, dx), wo - max(0, -dx))
            src[ys, xs] = held[yt, xt]
            from_neighbour = src == need
        neighbour += int(from_neighbour.sum())
        buffer_reads += int((~from_neighbour).sum())
        acc += image[ii + ky, jj + kx] * kernel[ky, kx]
        held, prev = need, (ky, kx)
    return ReuseCount(acc, len(order), ho * wo * kh * kw, buffer_reads, neighbour)


# --------------------------------------------------------------------------- PuDianNao

PUDIANNAO_ALGORITHMS = [
    # (technique, Chinese term, what dominates its computation)
    ("k-means", "k 均值聚类", "distances between samples and centroids"),
    ("k-nearest neighbours", "k 近邻", "distances between a query and stored samples, then sorting"),
    ("naive Bayes", "朴素贝叶斯", "counting and multiplying probabilities"),
    ("support vector machine", "支持向量机", "dot products (kernel functions)"),
    ("linear regression", "线性回归", "dot products, matrix arithmetic"),
    ("classification tree", "分类树", "counting and comparisons"),
    ("deep neural network", "深度神经网络", "dot products and activation functions"),
]
