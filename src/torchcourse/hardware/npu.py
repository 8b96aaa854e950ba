"""Simulated NPUs of the DianNao family: a fully connected layer through DianNao's NFU, the same layer
spread over DaDianNao's tiles and eDRAM, neighbour reuse in ShiDianNao's PE array, and PuDianNao's
algorithms as a table.

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


# --------------------------------------------------------------------------- DaDianNao

# DaDianNao's node (Chen et al., "DaDianNao: A Machine-Learning Supercomputer", MICRO 2014, section V):
# 16 tiles, each a DianNao-style NFU of 16 output neurons x 16 inputs beside 2 MB of eDRAM for its
# synapses (four banks), and a central eDRAM of 4 MB for the neurons: 36 MB per chip, 16-bit operands.
DADIANNAO_TILES = 16
DADIANNAO_TILE_EDRAM_BYTES = 2 * 2**20
DADIANNAO_CENTRAL_EDRAM_BYTES = 4 * 2**20
DADIANNAO_WORD_BYTES = 2


def dadiannao_macs_per_cycle(nodes: int = 1) -> int:
    """Multiply-accumulates per cycle: 16 tiles x 16 x 16 per node."""
    if nodes < 1:
        raise ValueError(f"need at least one node; got {nodes}")
    return nodes * DADIANNAO_TILES * TN * TN


def dadiannao_synapse_bytes_per_cycle(nodes: int = 1) -> int:
    """Bytes of weights the tiles' eDRAM must deliver per cycle to keep every NFU busy.

    A fully connected layer at batch 1 uses each weight once, so every multiply needs a fresh 16-bit
    weight: this is the bandwidth the design keeps on chip instead of asking it of DRAM.
    """
    return dadiannao_macs_per_cycle(nodes) * DADIANNAO_WORD_BYTES


def _tile_rows(n_out: int, tiles: int) -> list[torch.Tensor]:
    """Output neurons of each tile: blocks of 16 dealt round-robin, so the tiles' loads differ by one block."""
    blocks = torch.arange(math.ceil(n_out / TN))
    return [torch.cat([torch.arange(blk * TN, min(blk * TN + TN, n_out)) for blk in blocks[t::tiles]])
            if len(blocks[t::tiles]) else torch.zeros(0, dtype=torch.long) for t in range(tiles)]


def dadiannao_nodes_for(n_in: int, n_out: int) -> int:
    """The fewest nodes whose tiles' eDRAM holds an ``n_out x n_in`` layer's 16-bit weights."""
    if n_in < 1 or n_out < 1:
        raise ValueError(f"a layer needs at least one input and one output; got {n_in} and {n_out}")
    if TN * n_in * DADIANNAO_WORD_BYTES > DADIANNAO_TILE_EDRAM_BYTES:
        raise ValueError(f"one block of 16 neurons with {n_in} inputs does not fit a tile's eDRAM "
                         f"({DADIANNAO_TILE_EDRAM_BYTES} bytes)")
    blocks_per_tile = DADIANNAO_TILE_EDRAM_BYTES // (TN * n_in * DADIANNAO_WORD_BYTES)
    tiles = math.ceil(math.ceil(n_out / TN) / blocks_per_tile)
    return math.ceil(tiles / DADIANNAO_TILES)


@dataclass(frozen=True)
class DaDianNaoRun:
    output: torch.Tensor          # (Nn,) float32, the fixed-point result as values
    codes: torch.Tensor           # (Nn,) int16, equal to nfu_layer's codes for the same layer
    max_error: float              # against sigmoid(W x + b) in float32
    nodes: int
    tiles_used: int
    cycles: int                   # the busiest tile's NFU cycles; the tiles run in parallel
    largest_tile_bytes: int       # weights held by the fullest tile's eDRAM


def dadiannao_layer(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, nodes: int | None = None,
                    frac_bits: int = 10) -> DaDianNaoRun:
    """``sigmoid(w @ x + b)`` on DaDianNao: each tile's NFU computes its own output neurons from its eDRAM.

    The output neurons are dealt to the ``nodes x 16`` tiles in blocks of 16; every tile keeps its rows of
    ``w`` in its eDRAM and sees the whole input ``x`` (broadcast from the central eDRAM), so no weight
    leaves the chip. ``nodes`` defaults to the fewest that hold the weights. The cycles are the busiest
    tile's NFU cycles: moving neurons between tiles and chips is left out, so they are a lower bound.
    """
    if w.ndim != 2 or x.shape != (w.shape[1],) or b.shape != (w.shape[0],):
        raise ValueError(f"need w (Nn, Ni), x (Ni,), b (Nn,); got {tuple(w.shape)}, {tuple(x.shape)}, "
                         f"{tuple(b.shape)}")
    n_out, n_in = w.shape
    needed = dadiannao_nodes_for(n_in, n_out)
    nodes = needed if nodes is None else nodes
    if nodes < needed:
        raise ValueError(f"{n_out} x {n_in} 16-bit weights need {needed} node(s) of 16 x "
                         f"{DADIANNAO_TILE_EDRAM_BYTES // 2**20} MB eDRAM; got {nodes}")
    codes = torch.zeros(n_out, dtype=torch.int16)
    cycles, tiles_used, largest = 0, 0, 0
    for rows in _tile_rows(n_out, nodes * DADIANNAO_TILES):
        if len(rows) == 0:
            continue
        run = nfu_layer(x, w[rows], b[rows], frac_bits)
        codes[rows] = run.codes
        cycles, tiles_used = max(cycles, run.cycles), tiles_used + 1
        largest = max(largest, len(rows) * n_in * DADIANNAO_WORD_BYTES)
    out = _from_fixed(codes, frac_bits)
    ref = torch.sigmoid(w.to(torch.float32) @ x.to(torch.float32) + b.to(torch.float32))
    return DaDianNaoRun(out, codes, float((out - ref).abs().max()), nodes, tiles_used, cycles, largest)


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
