"""Three systolic dataflows, each a cycle-level simulator equal to ``torch.matmul`` on int8 operands:
weight-stationary (TPU v1's, in ``weight_stationary``), output-stationary and input-stationary.

Used by notebook ``04-hardware/02-tpu-systolic-arrays`` (section 5).

For ``Y = X @ W`` with ``X`` of shape ``M x K`` and ``W`` of shape ``K x N``, a ``rows x cols`` array
keeps one operand's tile in place and streams the others past it:

* **weight-stationary** (WS, 权重固定): PE ``(i, j)`` holds ``W[k, n]``; rows of ``X`` stream in from
  the left, partial sums flow down. A tile covers ``rows`` of K and ``cols`` of N.
* **output-stationary** (OS, 输出固定): PE ``(i, j)`` accumulates ``Y[m, n]`` in place; ``X[m, k]``
  enters row ``i`` from the left at cycle ``k + i`` and ``W[k, n]`` enters column ``j`` from the top at
  cycle ``k + j``, so they meet in PE ``(i, j)`` at cycle ``k + i + j``. A tile covers ``rows`` of M
  and ``cols`` of N; the last multiply happens at cycle ``(K - 1) + (rows - 1) + (cols - 1)``.
* **input-stationary** (IS, 输入固定): PE ``(i, j)`` holds ``X[m, k]`` (``i`` along K, ``j`` along M);
  the columns of ``W`` stream past. It is weight-stationary applied to ``Y^T = W^T @ X^T``: the same
  array with the operands' roles swapped. A tile covers ``rows`` of K and ``cols`` of M.

Cycles per tile, the counts SCALE-Sim 3.0.0 uses per fold for the same dataflows (its report gives
the last cycle's index, one less; ``tests/unit/hardware/test_scalesim.py`` runs it):

====  ==========================================  ==========================
WS    ``ceil(K/rows) * ceil(N/cols)`` tiles       ``2*rows + cols + M - 2``
OS    ``ceil(M/rows) * ceil(N/cols)`` tiles       ``K + rows + cols - 2``
IS    ``ceil(K/rows) * ceil(M/cols)`` tiles       ``2*rows + cols + N - 2``
====  ==========================================  ==========================

So the best dataflow depends on the layer's shape: the dimension that is streamed (M for WS, K for
OS, N for IS) is the one whose length is amortised over the tile's fixed fill and drain cycles.
"""

from __future__ import annotations

import math

import torch

from torchcourse.hardware import weight_stationary
from torchcourse.i18n import N_

DATAFLOWS = {"ws": N_("weight-stationary"), "os": N_("output-stationary"), "is": N_("input-stationary")}


def _tiles(dataflow: str, m: int, k: int, n: int, rows: int, cols: int) -> int:
    """How many tiles (SCALE-Sim: folds) the product is cut into."""
    if dataflow == "ws":
        return math.ceil(k / rows) * math.ceil(n / cols)
    if dataflow == "os":
        return math.ceil(m / rows) * math.ceil(n / cols)
    return math.ceil(k / rows) * math.ceil(m / cols)


def _tile_cycles(dataflow: str, m: int, k: int, n: int, rows: int, cols: int) -> int:
    """Cycles of one tile: the streamed dimension plus the fixed load, fill and drain."""
    if dataflow == "ws":
        return 2 * rows + cols + m - 2
    if dataflow == "os":
        return k + rows + cols - 2
    return 2 * rows + cols + n - 2


def _check_dataflow(dataflow: str) -> None:
    if dataflow not in DATAFLOWS:
        raise ValueError(f"dataflow must be one of {sorted(DATAFLOWS)}; got {dataflow!r}")


def _check_array(rows: int, cols: int) -> None:
    if rows < 1 or cols < 1:
        raise ValueError(f"the array needs at least one row and one column; got {rows} x {cols}")


def os_tile(x: torch.Tensor, w: torch.Tensor, rows: int, cols: int, record: bool = False):
    """One output-stationary tile: ``x`` (<= rows x K) and ``w`` (K x <= cols), int8.

    Returns ``(outputs, cycles, frames)``: the (rows, cols) int32 accumulators (unused PEs hold 0),
    the cycles the tile took, and, when ``record``, per cycle the activations and weights each PE
    multiplied and the accumulators after the cycle.
    """
    k = x.shape[1]
    steps = k + rows + cols - 2
    left = weight_stationary.skewed(x, rows, steps)                   # X[i, k] enters row i at cycle k + i
    top = weight_stationary.skewed(w.T, cols, steps)                  # W[k, j] enters column j at cycle k + j
    a = torch.zeros(rows, cols, dtype=torch.int8)
    b = torch.zeros(rows, cols, dtype=torch.int8)
    acc = torch.zeros(rows, cols, dtype=torch.int32)
    frames = []
    for t in range(steps):
        a = torch.cat([left[t].unsqueeze(1), a[:, :-1]], dim=1)     # activations move one PE right
        b = torch.cat([top[t].unsqueeze(0), b[:-1]], dim=0)         # weights move one PE down
        acc = acc + a.to(torch.int32) * b.to(torch.int32)           # int32: int8 products would wrap
        if record:
            frames.append((a.clone(), b.clone(), acc.clone()))
    return acc, steps, frames


def dataflow_matmul(x: torch.Tensor, w: torch.Tensor, rows: int, cols: int,
                    dataflow: str = "ws") -> tuple[torch.Tensor, int]:
    """``x @ w`` (int8 in, int32 out) on a ``rows x cols`` array with the given dataflow: (result, cycles)."""
    _check_dataflow(dataflow)
    _check_array(rows, cols)
    if dataflow == "ws":
        return weight_stationary.systolic_matmul(x, w, rows, cols)
    if dataflow == "is":
        # The inputs held in place, the weights streamed: weight-stationary on the transposed product.
        y_t, cycles = weight_stationary.systolic_matmul(w.T.contiguous(), x.T.contiguous(), rows, cols)
        return y_t.T.contiguous(), cycles
    weight_stationary._check_operands(x, w)
    m, k = x.shape
    n = w.shape[1]
    y = torch.zeros(m, n, dtype=torch.int32)
    cycles = 0
    with weight_stationary._one_thread():
        for m0 in range(0, m, rows):
            for n0 in range(0, n, cols):
                acc, steps, _ = os_tile(x[m0:m0 + rows], w[:, n0:n0 + cols], rows, cols)
                y[m0:m0 + rows, n0:n0 + cols] = acc[:min(rows, m - m0), :min(cols, n - n0)]
                cycles += steps
    return y, cycles


def _dataflow_cycles(dataflow: str, m: int, k: int, n: int, rows: int, cols: int) -> int:
    """Cycles of the whole product: tiles x cycles per tile (private: exercise 2 of 4.2 asks for the WS count)."""
    return _tiles(dataflow, m, k, n, rows, cols) * _tile_cycles(dataflow, m, k, n, rows, cols)


def compare_dataflows(m: int, k: int, n: int, rows: int, cols: int) -> dict[str, dict[str, float]]:
    """Tiles and utilisation (useful MACs / (PEs x cycles)) of each dataflow for one layer shape.

    The dataflow with the highest utilisation takes the fewest cycles for the same product.
    """
    if min(m, k, n) < 1:
        raise ValueError(f"M, K and N must be at least 1; got {m}, {k}, {n}")
    _check_array(rows, cols)
    return {flow: {"tiles": _tiles(flow, m, k, n, rows, cols),
                   "utilisation": m * k * n / (rows * cols * _dataflow_cycles(flow, m, k, n, rows, cols))}
            for flow in DATAFLOWS}


def sram_reads(dataflow: str, m: int, k: int, n: int, rows: int, cols: int) -> dict[str, int]:
    """Words of X and of W the array reads from its on-chip buffers (SRAM) for ``X @ W``.

    The stationary operand is read once; a streamed operand is read again for every tile along the
    dimension it does not share: X (M x K) once per column tile of N in WS and OS, W (K x N) once per
    tile of M in OS (``rows`` of M at a time) and IS (``cols`` of M at a time). These are SCALE-Sim's
    SRAM read counts for the same dataflows.
    """
    _check_dataflow(dataflow)
    _check_array(rows, cols)
    x_words, w_words = m * k, k * n
    if dataflow == "ws":
        return {"X": x_words * math.ceil(n / cols), "W": w_words}
    if dataflow == "os":
        return {"X": x_words * math.ceil(n / cols), "W": w_words * math.ceil(m / rows)}
    return {"X": x_words, "W": w_words * math.ceil(m / cols)}


def dram_traffic(dataflow: str, m: int, k: int, n: int, rows: int, cols: int,
                 words_per_transfer: int = 1) -> dict[str, int]:
    """Words of X and W read from DRAM and of Y written to it, when the on-chip buffers hold every operand.

    Each operand then crosses from DRAM once, in whole tiles: a dimension the array splits into tiles is
    padded to a multiple of the array's side (the idle PEs' slots are fetched too), and reads are rounded up
    to whole transfers of ``words_per_transfer``. Outputs leave once in OS; in WS and IS each tile of K
    writes its partial sums (the accumulators of TPU v1 add them on chip instead). These are SCALE-Sim's
    counts for the same dataflows.
    """
    _check_dataflow(dataflow)
    _check_array(rows, cols)

    def padded(size: int, side: int) -> int:
        return math.ceil(size / side) * side

    def transfers(words: int) -> int:
        return math.ceil(words / words_per_transfer) * words_per_transfer

    if dataflow == "ws":
        x, w, y = m * padded(k, rows), k * padded(n, cols), m * n * math.ceil(k / rows)
    elif dataflow == "os":
        x, w, y = padded(m, rows) * k, k * padded(n, cols), m * n
    else:
        x, w, y = k * padded(m, cols), padded(k, rows) * n, m * n * math.ceil(k / rows)
    return {"X": transfers(x), "W": transfers(w), "Y": y}


def write_back_cycles(dataflow: str, m: int, k: int, n: int, rows: int, cols: int, words_per_cycle: int) -> int:
    """Cycles to write the outputs (``dram_traffic``'s Y words) to DRAM at ``words_per_cycle``.

    With buffers that hold every operand, this is how a narrower DRAM interface shows in SCALE-Sim 3.0.0:
    its overall span grows by exactly this many cycles, and it counts no stall (the operands are read
    before the array starts). Stalls appear in SCALE-Sim only when the buffers must be refilled mid-run.
    """
    if words_per_cycle < 1:
        raise ValueError(f"need at least one word per cycle; got {words_per_cycle}")
    return math.ceil(dram_traffic(dataflow, m, k, n, rows, cols)["Y"] / words_per_cycle)


# --------------------------------------------------------------------------- convolution as a matmul

def im2col(image: torch.Tensor, kh: int, kw: int) -> torch.Tensor:
    """(C, H, W) -> (Ho * Wo, C * kh * kw): one row per output pixel, holding the window it sees.

    Stride 1, no padding. The columns are ordered (channel, kernel row, kernel column), the order of
    ``kernel.reshape(out_channels, -1)``, so the convolution becomes ``im2col(image) @ kernel_matrix``.
    Every input value is copied into up to ``kh * kw`` rows: the array pays that in buffer space and reads.
    """
    if image.ndim != 3:
        raise ValueError(f"image must be (C, H, W); got shape {tuple(image.shape)}")
    c, h, w = image.shape
    if not (1 <= kh <= h and 1 <= kw <= w):
        raise ValueError(f"a {kh} x {kw} kernel does not fit a {h} x {w} image")
    windows = image.unfold(1, kh, 1).unfold(2, kw, 1)           # (C, Ho, Wo, kh, kw), a view
    ho, wo = windows.shape[1], windows.shape[2]
    return windows.permute(1, 2, 0, 3, 4).reshape(ho * wo, c * kh * kw)


def conv2d_on_array(image: torch.Tensor, kernel: torch.Tensor, rows: int, cols: int,
                    dataflow: str = "ws") -> tuple[torch.Tensor, int, tuple[int, int, int]]:
    """A stride-1 convolution of an int8 (C, H, W) image with an int8 (O, C, kh, kw) kernel, on the array.

    Returns the int32 (O, Ho, Wo) output, the array's cycles, and the matmul's (M, K, N): M output pixels,
    K = C * kh * kw values per window, N = O output channels.
    """
    if kernel.ndim != 4 or kernel.shape[1] != image.shape[0]:
        raise ValueError(f"kernel must be (O, C, kh, kw) with C = {image.shape[0]}; got {tuple(kernel.shape)}")
    o, _, kh, kw = kernel.shape
    x = im2col(image, kh, kw)
    w = kernel.reshape(o, -1).T.contiguous()
    y, cycles = dataflow_matmul(x.contiguous(), w, rows, cols, dataflow)
    ho, wo = image.shape[1] - kh + 1, image.shape[2] - kw + 1
    return y.T.reshape(o, ho, wo), cycles, (x.shape[0], x.shape[1], o)
