"""A cycle-level weight-stationary systolic array: TPU v1's matrix unit, in small.

Used by notebook ``04-hardware/02-tpu-systolic-arrays`` (sections 2-5) through ``torchcourse.hardware.systolic``,
whose animator steps through one tile of it; ``torchcourse.hardware.dataflows`` builds the other dataflows on it.

The model (every rule is one line of ``_run_tile``):

* The array has ``rows x cols`` processing elements (PEs, 处理单元). PE ``(i, j)`` holds one
  weight ``W[i, j]`` of the current tile ("weight stationary").
* **Load**: weights enter at the top and shift down one row per cycle: ``rows`` cycles.
* **Stream**: row ``m`` of the input ``X`` enters the array's left edge skewed: ``X[m, i]``
  enters row ``i`` at stream cycle ``m + i``. Every cycle, every PE takes the activation from its
  left neighbour and the partial sum from the PE above, and hands on
  ``a_right = a_in`` and ``psum_down = psum_in + a_in * w`` (int8 x int8 summed in int32).
* ``Y[m, j]`` leaves the bottom of column ``j`` at stream cycle ``m + (rows - 1) + j``. The stream
  ends when the last column's last result has left: ``M + (rows - 1) + (cols - 1)`` cycles.
* A matrix larger than the array is cut into tiles of ``rows x cols`` weights; each tile is
  loaded and streamed in turn (no overlap), and partial results add up in int32 accumulators.

So one tile takes ``rows + (rows - 1) + (cols - 1) + M = 2*rows + cols + M - 2`` cycles, the
count SCALE-Sim's weight-stationary model uses per fold (its report gives the last cycle's index,
one less; see ``tests/unit/hardware/test_scalesim.py``).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

PE = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def _pe_step(a_in: torch.Tensor, psum_in: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One cycle of every PE at once: pass the activation right, the updated partial sum down."""
    return a_in, psum_in + a_in.to(torch.int32) * weight.to(torch.int32)


def _tile_cycles(m: int, rows: int, cols: int) -> int:
    """Cycles of one tile: load ``rows``, fill ``rows - 1``, stream ``m``, drain ``cols - 1``."""
    return rows + (rows - 1) + m + (cols - 1)


def _cycles(m: int, k: int, n: int, rows: int, cols: int) -> int:
    """Cycles for ``(m x k) @ (k x n)`` on a ``rows x cols`` array, tile after tile."""
    return math.ceil(k / rows) * math.ceil(n / cols) * _tile_cycles(m, rows, cols)


def utilisation(m: int, k: int, n: int, rows: int, cols: int) -> float:
    """Useful multiply-accumulates / (PEs x cycles)."""
    return m * k * n / (rows * cols * _cycles(m, k, n, rows, cols))


@dataclass
class TileRun:
    """What one tile's run produced; ``frames`` only when recorded (for the animator)."""

    output: torch.Tensor            # (M, cols) int32: every column's results, unused ones included
    load_cycles: int
    stream_cycles: int
    frames: list = field(default_factory=list, repr=False)

    @property
    def cycles(self) -> int:
        return self.load_cycles + self.stream_cycles


def skewed(values: torch.Tensor, lanes: int, steps: int) -> torch.Tensor:
    """(steps, lanes) int8: lane ``i`` receives ``values[i, t - i]`` at cycle ``t`` (zero outside).

    The skew every systolic dataflow feeds its array with: each lane starts one cycle after the one before.
    """
    used, length = values.shape
    t = torch.arange(steps).unsqueeze(1)
    i = torch.arange(lanes).unsqueeze(0)
    idx = t - i
    valid = (idx >= 0) & (idx < length) & (i < used)
    padded = torch.zeros(lanes, max(length, 1), dtype=torch.int8)
    padded[:used, :length] = values
    picked = padded[i.expand_as(idx), idx.clamp(0, max(length, 1) - 1)]
    return torch.where(valid, picked, torch.zeros((), dtype=torch.int8))


def _run_tile(x: torch.Tensor, w: torch.Tensor, rows: int, cols: int, pe: PE, record: bool) -> TileRun:
    m, k = x.shape
    n = w.shape[1]
    # Load: the weight rows shift in from the top, one row per cycle (last row first).
    w_full = torch.zeros(rows, cols, dtype=torch.int8)
    w_full[:k, :n] = w
    held = torch.zeros(rows, cols, dtype=torch.int8)
    load = 0
    for c in range(rows):
        held = torch.cat([w_full[rows - 1 - c].unsqueeze(0), held[:-1]])
        load += 1
    assert torch.equal(held, w_full)
    # Stream: one pe() call updates the whole array each cycle.
    steps = m + rows + cols - 2
    left = skewed(x.T, rows, steps)                    # X[t - i, i] enters row i at stream cycle t
    a = torch.zeros(rows, cols, dtype=torch.int8)
    p = torch.zeros(rows, cols, dtype=torch.int32)
    zero_row = torch.zeros(1, cols, dtype=torch.int32)
    bottom = []
    frames = []
    outstanding = m * cols
    t = 0
    while outstanding:
        a_in = torch.cat([left[t].unsqueeze(1), a[:, :-1]], dim=1)
        p_in = torch.cat([zero_row, p[:-1]], dim=0)
        a, p = pe(a_in, p_in, held.clone())    # a PE function that changes its arguments cannot change the array
        bottom.append(p[-1].clone())           # a copy: a view would keep the whole grid alive
        # Columns whose result for some row m leaves the bottom now: j = t - (rows - 1) - m.
        j = t - (rows - 1) - np.arange(m)
        outstanding -= int(((j >= 0) & (j < cols)).sum())
        if record:
            frames.append((a_in.clone(), p.clone()))
        t += 1
    leaving = torch.stack(bottom)                        # (steps, cols)
    mm = torch.arange(m).unsqueeze(1)
    jj = torch.arange(cols).unsqueeze(0)
    out = leaving[mm + (rows - 1) + jj, jj]
    return TileRun(out, load, t, frames)


def _check_operands(x: torch.Tensor, w: torch.Tensor) -> None:
    if x.dtype != torch.int8 or w.dtype != torch.int8:
        raise TypeError(f"the array multiplies int8 operands; got {x.dtype} and {w.dtype}")
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0]:
        raise ValueError(f"shapes {tuple(x.shape)} and {tuple(w.shape)} cannot be multiplied")


def systolic_matmul(x: torch.Tensor, w: torch.Tensor, rows: int, cols: int,
                    pe: PE = _pe_step) -> tuple[torch.Tensor, int]:
    """``x @ w`` (int8 in, int32 out) on a ``rows x cols`` weight-stationary array: (result, cycles).

    ``pe(a_in, psum_in, weight) -> (a_right, psum_down)`` is called on whole (rows, cols) grids.
    """
    _check_operands(x, w)
    m, k = x.shape
    n = w.shape[1]
    y = torch.zeros(m, n, dtype=torch.int32)
    cycles = 0
    with _one_thread():
        for k0 in range(0, k, rows):
            for n0 in range(0, n, cols):
                tile = _run_tile(x[:, k0:k0 + rows], w[k0:k0 + rows, n0:n0 + cols], rows, cols, pe, False)
                width = min(cols, n - n0)
                y[:, n0:n0 + width] += tile.output[:, :width]
                cycles += tile.cycles
    return y, cycles


@contextlib.contextmanager
def _one_thread():
    """Each cycle is a few small tensor operations: threads only add synchronisation, so use one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def measure_throughput(rows: int = 64, cols: int = 64, m: int = 128, repeats: int = 3) -> dict[str, float]:
    """Simulated MACs and array cycles per second of wall time, best of ``repeats`` one-tile runs."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-128, 128, (m, rows), generator=g, dtype=torch.int8)
    w = torch.randint(-128, 128, (rows, cols), generator=g, dtype=torch.int8)
    best = float("inf")
    for _repeat in range(repeats):
        t0 = time.perf_counter()
        _product, cycles = systolic_matmul(x, w, rows, cols)
        best = min(best, time.perf_counter() - t0)
    return {"macs_per_s": m * rows * cols / best, "cycles_per_s": cycles / best, "seconds": best}
