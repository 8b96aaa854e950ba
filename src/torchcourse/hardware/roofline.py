"""The roofline model: this machine measured from PyTorch, published accelerators beside it, and the
roofline explorer.

Used by notebook ``04-hardware/01-roofline`` (sections 2-4).

core: ``roofline_point(...)`` -> ``RooflineState``; renderer: ``draw_roofline(state)``;
wrapper: ``RooflineExplorer``; stand-in: ``static_roofline()``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from torchcourse.widgets import Explorer, figure_and_axes, fits_canvas

# --------------------------------------------------------------------------- measuring this machine

@dataclass(frozen=True)
class Machine:
    """Peak operations per second by dtype name, memory bandwidth in bytes per second, and a source."""

    name: str
    peak: dict[str, float]
    bandwidth: float
    source: str

    def ridge(self, dtype: str) -> float:
        """Arithmetic intensity (ops per byte) where the two roofs meet."""
        return self.peak[dtype] / self.bandwidth


def _best_rate(work: float, fn, seconds: float, repeats_min: int = 3) -> float:
    """Work per second of the fastest call of ``fn`` within about ``seconds`` (after one warm-up)."""
    fn()
    best = float("inf")
    start = time.perf_counter()
    n = 0
    while n < repeats_min or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        n += 1
        if time.perf_counter() - start > 4 * seconds:
            break
    return work / best


def measure_matmul_flops(n: int = 512, dtype: torch.dtype = torch.float32, seconds: float = 0.4) -> float:
    """FLOP/s of ``n x n @ n x n`` (2 n^3 floating-point operations), best of a few runs."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).to(dtype)
    b = torch.randn(n, n, generator=g).to(dtype)
    out = torch.empty(n, n, dtype=dtype)
    return _best_rate(2.0 * n**3, lambda: torch.matmul(a, b, out=out), seconds)


def measure_bandwidth(mib: int = 64, seconds: float = 0.4) -> float:
    """Bytes per second of ``dst.copy_(src)`` on ``mib`` MiB: each copy reads and writes every byte."""
    n = mib * 2**20 // 4
    src = torch.ones(n, dtype=torch.float32)
    dst = torch.empty(n, dtype=torch.float32)
    return _best_rate(2.0 * n * 4, lambda: dst.copy_(src), seconds)


def measure_cpu(seconds: float = 0.4) -> Machine:
    """This machine's CPU, measured now (numbers vary from run to run and machine to machine)."""
    flops = measure_matmul_flops(seconds=seconds)
    return Machine(f"this CPU ({torch.get_num_threads()} thread(s), measured)", {"float32": flops},
                   measure_bandwidth(seconds=seconds), "measured in this notebook")


TPU_V1 = Machine(
    "TPU v1",
    {"int8": 2 * 256 * 256 * 700e6},          # 65,536 MACs x 700 MHz x 2 ops = 91.8 TOPS ("92 TOPS")
    34e9,                                     # DDR3 weight memory, 34 GB/s
    "Jouppi et al., In-Datacenter Performance Analysis of a Tensor Processing Unit, ISCA 2017",
)
H100_SXM = Machine(
    "NVIDIA H100 SXM",
    # dense figures; the datasheet's larger tensor-core figures assume 2:4 sparsity
    {"float32": 67e12, "bfloat16": 989e12, "int8": 1979e12},
    3.35e12,                                                    # HBM3
    "NVIDIA H100 Tensor Core GPU datasheet (SXM column; dense = half the 'with sparsity' figure)",
)
PUBLISHED = [TPU_V1, H100_SXM]


# --------------------------------------------------------------------------- operations

def _matmul_ops_bytes(m: int, k: int, n: int, itemsize: int) -> tuple[int, int]:
    """(operations, bytes) of an (m x k) @ (k x n) matmul reading both inputs and writing the output once."""
    return 2 * m * k * n, itemsize * (m * k + k * n + m * n)


def _elementwise_ops_bytes(numel: int, itemsize: int, inputs: int = 2) -> tuple[int, int]:
    """(operations, bytes) of an elementwise op such as ``a + b``: one op per output element."""
    return numel, itemsize * numel * (inputs + 1)


def _conv2d_ops_bytes(batch: int, c_in: int, c_out: int, hw: int, k: int, itemsize: int) -> tuple[int, int]:
    """(operations, bytes) of a stride-1 'same' conv2d on ``hw x hw`` images, each tensor moved once."""
    ops = 2 * batch * c_out * hw * hw * c_in * k * k
    moved = itemsize * (batch * c_in * hw * hw + c_out * c_in * k * k + batch * c_out * hw * hw)
    return ops, moved


def _attainable(intensity: float, peak: float, bandwidth: float) -> float:
    """The roofline: min(peak, intensity x bandwidth)."""
    return min(peak, intensity * bandwidth)


# --------------------------------------------------------------------------- the explorer

OPERATIONS = ["matmul n x n x n", "add (n x n elements)", "conv2d 3x3, 64->64 channels, n x n image"]
DTYPES = {"float32": 4, "bfloat16": 2, "int8": 1}


@dataclass(frozen=True)
class RooflineState:
    operation: str
    n: int
    dtype: str
    ops: int
    bytes: int
    intensity: float
    machines: list[Machine]
    attainable: dict[str, float | None]     # machine name -> ops/s, None when it has no peak for the dtype
    message: str = ""


def roofline_point(operation: str, n: int, dtype: str, cpu: Machine | None = None) -> RooflineState:
    """Intensity of the chosen operation and its attainable rate on each machine."""
    machines = ([cpu] if cpu else []) + PUBLISHED
    if dtype not in DTYPES or operation not in OPERATIONS or n < 1:
        return RooflineState(operation, n, dtype, 0, 0, 0.0, machines, {}, "Choose an operation, n >= 1 and a dtype.")
    size = DTYPES[dtype]
    if operation == OPERATIONS[0]:
        ops, moved = _matmul_ops_bytes(n, n, n, size)
    elif operation == OPERATIONS[1]:
        ops, moved = _elementwise_ops_bytes(n * n, size)
    else:
        ops, moved = _conv2d_ops_bytes(1, 64, 64, n, 3, size)
    intensity = ops / moved
    att = {m.name: (_attainable(intensity, m.peak[dtype], m.bandwidth) if dtype in m.peak else None) for m in machines}
    parts = []
    for m in machines:
        if att[m.name] is None:
            parts.append(f"{m.name}: no {dtype} figure")
        else:
            bound = "memory-bound" if intensity < m.ridge(dtype) else "compute-bound"
            parts.append(f"{m.name}: {att[m.name] / 1e12:.3g} T op/s ({bound})")
    msg = f"{ops:.3g} ops over {moved:.3g} bytes: intensity {intensity:.3g} op/byte. " + "; ".join(parts)
    return RooflineState(operation, n, dtype, ops, moved, intensity, machines, att, msg)


_COLOURS = ["#4c72b0", "#c44e52", "#55a868", "#8172b2"]


def _log_ticks(ax) -> None:
    # The axes are linear in log10 units with plain-text labels: log-scaled axes and mathtext tick labels
    # cost most of a redraw.
    ax.set_xlim(-2, 4)
    ax.set_ylim(8, 16)
    ax.set_xticks([-2, 0, 2, 4], ["0.01", "1", "100", "10000"])
    ax.set_yticks([8, 12, 16], ["1e8 (0.1 G)", "1e12 (1 T)", "1e16"])


def draw_roofline(state: RooflineState, ax=None) -> Figure:
    """Each machine's roof for the chosen dtype on log-log axes, and the operation's point on each."""
    own = ax is None
    fig, ax = figure_and_axes(ax, figsize=(6.4, 4.4))
    xs = np.linspace(-2, 4, 61)
    for colour, m in zip(_COLOURS, state.machines):
        if state.dtype not in m.peak:
            continue
        ridge = np.log10(m.ridge(state.dtype))
        x = np.array([-2.0, ridge, 4.0]) if -2 < ridge < 4 else xs       # the roof's corner drawn exactly
        roof = np.minimum(np.log10(m.peak[state.dtype]), x + np.log10(m.bandwidth))
        ax.plot(x, roof, color=colour, label=m.name)
        if state.attainable.get(m.name):
            ax.plot([np.log10(state.intensity)], [np.log10(state.attainable[m.name])], "o", color=colour)
    if state.intensity > 0:
        ax.axvline(np.log10(state.intensity), color="grey", ls=":", lw=1)
    _log_ticks(ax)
    ax.set_xlabel("arithmetic intensity (operations per byte, log scale)")
    ax.set_ylabel("attainable operations per second (log scale)")
    ax.set_title(f"{state.operation}, n={state.n}, {state.dtype}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return fits_canvas(fig, left=0.2, right=0.95, bottom=0.12, top=0.93) if own else fig


class RooflineExplorer(Explorer):
    """Pick an operation, a size and a dtype: where does it sit under each machine's roof?"""

    def __init__(self, cpu: Machine | None = None, operation: str = OPERATIONS[0], n: int = 512,
                 dtype: str = "float32") -> None:
        self.cpu = cpu
        controls = {
            "operation": widgets.Dropdown(options=OPERATIONS, value=operation, description="operation"),
            "n": widgets.SelectionSlider(options=[8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], value=n,
                                         description="n"),
            "dtype": widgets.Dropdown(options=list(DTYPES), value=dtype, description="dtype"),
        }
        super().__init__(controls, lambda **v: roofline_point(cpu=self.cpu, **v), draw_roofline,
                         title="Roofline explorer")

    def frame_space(self) -> list[dict]:
        # Every operation at every size in float32, and every dtype at a small, a middle and a large n.
        return [{"operation": OPERATIONS, "n": [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], "dtype": ["float32"]},
                {"operation": OPERATIONS, "n": [64, 512, 4096], "dtype": list(DTYPES)}]


def static_roofline(cpu: Machine | None = None) -> Figure:
    """Matmul, add and conv2d in float32 and int8: the explorer's stand-in."""
    fig = Figure(figsize=(12, 4.2))
    axes = fig.subplots(1, 2)
    for ax, dtype in zip(axes, ["float32", "int8"]):
        state = roofline_point(OPERATIONS[0], 512, dtype, cpu)
        draw_roofline(state, ax=ax)
        for op, height in zip(OPERATIONS, [8.5, 8.5, 10.5]):
            s = roofline_point(op, 512 if op != OPERATIONS[2] else 56, dtype, cpu)
            ax.axvline(np.log10(s.intensity), color="grey", ls=":", lw=1)
            ax.text(np.log10(s.intensity) + 0.06, height, op.split()[0], rotation=90, fontsize=7)
        ax.set_title(f"{dtype}: matmul (n=512), add (n=512), conv2d (56x56)", fontsize=9)
    fig.tight_layout()
    return fig
