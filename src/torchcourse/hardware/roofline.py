"""The roofline model: the roofs of this machine, measured from PyTorch, and of published accelerators beside it
(``torchcourse.hardware.machines``), the roofline explorer, and performance per watt.

Used by notebook ``04-hardware/01-roofline`` (sections 1-5), which prints its lines and tables through it (in the
learner's language).

core: ``roofline_point(...)`` -> ``RooflineState``; renderer: ``draw_roofline(state)``;
wrapper: ``RooflineExplorer``; stand-in: ``static_roofline()``.

Two ways of counting bytes meet here. For this CPU and the GPU every tensor an operation reads or writes
counts once (Williams et al.'s rule). For TPU v1 only the bytes of *weights* count, as Jouppi et al. define
it: activations stay in the 24 MiB on-chip unified buffer, while weights must stream in from the 34 GB/s
off-chip weight memory, so weight bytes are what limit it.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from torchcourse.hardware.machines import PUBLISHED, Machine

# The notebook measures this machine and names TPU v1 through this module (roofline.measure_cpu(), roofline.TPU_V1):
# defined in `machines`, named here too.
from torchcourse.hardware.machines import TPU_V1 as TPU_V1
from torchcourse.hardware.machines import last_level_cache_bytes as last_level_cache_bytes
from torchcourse.hardware.machines import measure_cpu as measure_cpu
from torchcourse.i18n import LIST_SEPARATOR, N_, language, translate_text
from torchcourse.i18n import gettext as _
from torchcourse.text_table import Column, text_table
from torchcourse.widgets import Explorer, figure_and_axes, fits_canvas

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


def _memory_bound(intensity: float, machine: Machine, dtype: str) -> bool:
    """Whether the slanted roof limits an operation of this intensity (by the machine's own rule) in ``dtype``: left
    of the ridge point. At the ridge point and right of it the flat roof, compute, does."""
    return intensity < machine.ridge(dtype)


# --------------------------------------------------------------------------- lines the notebook prints

def threads_line(threads: int) -> str:
    """The first cell's note of how many CPU threads PyTorch's operations use here, in the learner's language."""
    return _("CPU threads PyTorch uses: {threads}").format(threads=threads)


def add_timing(numel: int, seconds: float, per_element: float) -> str:
    """Section 1's line for an add of ``numel`` elements, in the learner's language: ``seconds`` per call (shown in
    microseconds) and ``per_element`` seconds per element (in nanoseconds), the numbers padded into columns."""
    return _("{numel} elements: {per_call} us per add, {per_element} ns per element").format(
        numel=f"{numel:>9}", per_call=f"{seconds * 1e6:9.2f}", per_element=f"{per_element * 1e9:10.4f}")


def ridge_line(ridge: float) -> str:
    """Section 2's line for this CPU's ridge point (FLOPs per byte), in the learner's language."""
    return _("ridge point: {ridge} FLOPs per byte").format(ridge=f"{ridge:.1f}")


# --------------------------------------------------------------------------- the explorer

OPERATIONS = [N_("matmul n x n x n"), N_("add (n x n elements)"), N_("conv2d 3x3, 64->64 channels, n x n image")]
DTYPES = {"float32": 4, "bfloat16": 2, "int8": 1}


def _weight_bytes(operation: str, n: int, itemsize: int) -> int | None:
    """Bytes of the operation's weights (the second matmul operand, the conv kernel); None for an add."""
    if operation == OPERATIONS[0]:
        return itemsize * n * n
    if operation == OPERATIONS[2]:
        return itemsize * 64 * 64 * 3 * 3
    return None


@dataclass(frozen=True)
class RooflineState:
    operation: str
    n: int
    dtype: str
    ops: int
    bytes: int
    intensity: float                        # operations per byte, every tensor counted once
    weight_intensity: float | None          # operations per byte of weights (TPU v1's rule); None: no weights
    machines: list[Machine]
    attainable: dict[str, float | None]     # machine name -> ops/s, None when it has no peak for the dtype
    message: str = ""

    def intensity_on(self, machine: Machine) -> float | None:
        """The intensity by the machine's own rule."""
        return self.weight_intensity if machine.weight_bytes_only else self.intensity


def roofline_point(operation: str, n: int, dtype: str, cpu: Machine | None = None) -> RooflineState:
    """Intensity of the chosen operation and its attainable rate on each machine."""
    machines = ([cpu] if cpu else []) + PUBLISHED
    if dtype not in DTYPES or operation not in OPERATIONS or n < 1:
        return RooflineState(operation, n, dtype, 0, 0, 0.0, None, machines, {},
                             _("Choose an operation, n >= 1 and a dtype."))
    size = DTYPES[dtype]
    if operation == OPERATIONS[0]:
        ops, moved = _matmul_ops_bytes(n, n, n, size)
    elif operation == OPERATIONS[1]:
        ops, moved = _elementwise_ops_bytes(n * n, size)
    else:
        ops, moved = _conv2d_ops_bytes(1, 64, 64, n, 3, size)
    weights = _weight_bytes(operation, n, size)
    state = RooflineState(operation, n, dtype, ops, moved, ops / moved, ops / weights if weights else None,
                          machines, {})
    att: dict[str, float | None] = {}
    parts = []
    for m in machines:
        intensity = state.intensity_on(m)
        if dtype not in m.peak:
            att[m.name] = None
            parts.append(_("{machine}: no {dtype} figure").format(machine=m.name, dtype=dtype))
        elif intensity is None:
            att[m.name] = None
            parts.append(_("{machine}: no weights, so its per-weight-byte roofline does not apply").format(
                machine=m.name))
        else:
            att[m.name] = _attainable(intensity, m.peak[dtype], m.bandwidth)
            memory_bound = _memory_bound(intensity, m, dtype)
            if m.weight_bytes_only:
                part = (N_("{machine}: {rate} T op/s (memory-bound at {intensity} op per weight byte)") if memory_bound
                        else N_("{machine}: {rate} T op/s (compute-bound at {intensity} op per weight byte)"))
            else:
                part = (N_("{machine}: {rate} T op/s (memory-bound)") if memory_bound
                        else N_("{machine}: {rate} T op/s (compute-bound)"))
            parts.append(_(part).format(machine=m.name, rate=f"{att[m.name] / 1e12:.3g}", intensity=f"{intensity:.3g}"))
    msg = _("{ops} ops over {bytes} bytes: intensity {intensity} op/byte. {machines}").format(
        ops=f"{ops:.3g}", bytes=f"{moved:.3g}", intensity=f"{state.intensity:.3g}",
        machines=_(LIST_SEPARATOR).join(parts))
    return RooflineState(operation, n, dtype, ops, moved, state.intensity, state.weight_intensity, machines, att, msg)


_COLOURS = ["#4c72b0", "#c44e52", "#55a868", "#8172b2"]
_X_MIN, _X_MAX = -2.0, 6.0


def _log_ticks(ax) -> None:
    # The axes are linear in log10 units with plain-text labels: log-scaled axes and mathtext tick labels
    # cost most of a redraw.
    ax.set_xlim(_X_MIN, _X_MAX)
    ax.set_ylim(8, 16)
    ax.set_xticks([-2, 0, 2, 4, 6], ["0.01", "1", "100", "1e4", "1e6"])
    ax.set_yticks([8, 12, 16], ["1e8 (0.1 G)", "1e12 (1 T)", "1e16"])


def draw_roofline(state: RooflineState, ax=None) -> Figure:
    """Each machine's roof for the chosen dtype on log-log axes, and the operation's point on each.

    TPU v1's roof and point use its paper's intensity (per weight byte), drawn dashed; a point beyond the
    axis is drawn at its edge as an arrowhead.
    """
    own = ax is None
    fig, ax = figure_and_axes(ax, figsize=(6.4, 4.4))
    for colour, m in zip(_COLOURS, state.machines):
        if state.dtype not in m.peak:
            continue
        style = "--" if m.weight_bytes_only else "-"
        ridge = np.log10(m.ridge(state.dtype))
        x = np.array([_X_MIN, ridge, _X_MAX]) if _X_MIN < ridge < _X_MAX else np.linspace(_X_MIN, _X_MAX, 81)
        roof = np.minimum(np.log10(m.peak[state.dtype]), x + np.log10(m.bandwidth))
        label = N_("{machine} (per weight byte)").format(machine=m.name) if m.weight_bytes_only else m.name
        ax.plot(x, roof, style, color=colour, label=label)
        intensity = state.intensity_on(m)
        if state.attainable.get(m.name) and intensity:
            x_point = np.log10(intensity)
            marker = ">" if x_point > _X_MAX else "o"
            ax.plot([min(x_point, _X_MAX - 0.05)], [np.log10(state.attainable[m.name])], marker, color=colour)
            if m.weight_bytes_only and x_point <= _X_MAX:
                ax.axvline(x_point, color=colour, ls=":", lw=1)
    if state.intensity > 0:
        ax.axvline(np.log10(state.intensity), color="grey", ls=":", lw=1)
    _log_ticks(ax)
    ax.set_xlabel(N_("arithmetic intensity (operations per byte, log scale)"))
    ax.set_ylabel(N_("attainable operations per second (log scale)"))
    ax.set_title(N_("{operation}, n={n}, in {dtype}").format(operation=state.operation, n=state.n, dtype=state.dtype),
                 fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    return fits_canvas(fig, left=0.2, right=0.95, bottom=0.12, top=0.93) if own else fig


class RooflineExplorer(Explorer):
    """Pick an operation, a size and a dtype: where does it sit under each machine's roof?"""

    def __init__(self, cpu: Machine | None = None, operation: str = OPERATIONS[0], n: int = 512,
                 dtype: str = "float32") -> None:
        self.cpu = cpu
        controls = {
            "operation": widgets.Dropdown(options=OPERATIONS, value=operation, description=N_("operation")),
            "n": widgets.SelectionSlider(options=[8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], value=n,
                                         description=N_("n")),
            "dtype": widgets.Dropdown(options=list(DTYPES), value=dtype, description=N_("dtype")),
        }
        super().__init__(controls, lambda **v: roofline_point(cpu=self.cpu, **v), draw_roofline,
                         title=N_("Roofline explorer"))

    def frame_space(self) -> list[dict]:
        # Every operation at every size in float32, and every dtype at a small, a middle and a large n.
        return [{"operation": OPERATIONS, "n": [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], "dtype": ["float32"]},
                {"operation": OPERATIONS, "n": [64, 512, 4096], "dtype": list(DTYPES)}]


def static_roofline(cpu: Machine | None = None) -> Figure:
    """Matmul, add and conv2d in float32 and int8: the explorer's stand-in."""
    # One above the other: narrow enough for the page's column to show it at full size.
    fig = Figure(figsize=(7.4, 8.4))
    axes = fig.subplots(2, 1)
    for ax, dtype in zip(axes, ["float32", "int8"]):
        state = roofline_point(OPERATIONS[0], 512, dtype, cpu)
        draw_roofline(state, ax=ax)
        for op, height in zip(OPERATIONS, [8.5, 8.5, 10.5]):
            s = roofline_point(op, 512 if op != OPERATIONS[2] else 56, dtype, cpu)
            ax.axvline(np.log10(s.intensity), color="grey", ls=":", lw=1)
            ax.text(np.log10(s.intensity) + 0.06, height, op.split()[0], rotation=90, fontsize=8)
        ax.set_title(N_("{dtype}: matmul (n=512), add (n=512), conv2d (56x56); dotted: all bytes").format(dtype=dtype),
                     fontsize=9)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- operations measured here

def _in_language(columns: tuple[Column, ...]) -> list[Column]:
    """The columns with their headings in the learner's language (a heading that is code stays as it is)."""
    return [column._replace(heading=_(column.heading)) for column in columns]


#: Section 3's table of operations measured on this machine (headings in English, shown in the learner's language).
MEASURED_COLUMNS = (Column(N_("operation")), Column(N_("intensity"), 10, True), Column(N_("roofline bound"), 15, True),
                    Column(N_("measured"), 12, True), Column(N_("limited by")))
# TRANSLATORS: the roof that limits an operation, in the column "limited by" of the table of measured operations
LIMITS = {True: N_("memory"), False: N_("compute")}


def measured_table(rows: list[tuple[str, RooflineState, float]], machine: Machine) -> str:
    """The table of notebook 04-hardware/01 (section 3), one line per operation measured on ``machine``, as it
    prints it. ``rows`` hold each operation's name, its `roofline_point` on ``machine`` and the operations per second
    measured; a line gives its intensity, the roofline's bound and the rate measured (G op/s), and the roof that
    limits it there (memory left of the machine's ridge point, else compute). The headings and the limit are in the
    learner's language, the columns aligned in a fixed-width font whichever language fills them."""
    cells = []
    for name, point, measured in rows:
        intensity, bound = point.intensity_on(machine), point.attainable.get(machine.name)
        if intensity is None or bound is None:
            raise ValueError(f"{name}: {machine.name} has no roof for it in {point.dtype}")
        limit = LIMITS[_memory_bound(intensity, machine, point.dtype)]
        cells.append([name, f"{intensity:.2f}", f"{bound / 1e9:.1f} GF/s", f"{measured / 1e9:.1f} GF/s", _(limit)])
    return text_table(_in_language(MEASURED_COLUMNS), cells)


# --------------------------------------------------------------------------- published accelerators' ridge points

#: Section 4's table of ridge points (headings in English, shown in the learner's language); "dtype" is code, and
#: the last column, the ridge point's unit, has no heading.
RIDGE_COLUMNS = (Column(N_("machine")), Column("dtype", 9), Column(N_("peak T op/s"), 11, True),
                 Column(N_("ridge point"), 11, True), Column(""))
# TRANSLATORS: the unit of TPU v1's ridge point, which counts only the bytes of weights (the others' is op/byte)
PER_WEIGHT_BYTE = N_("op per weight byte")


def ridge_table(rows: list[tuple[Machine, str, float]]) -> str:
    """The ridge points of notebook 04-hardware/01 (section 4), as it prints them: one line per (machine, dtype, its
    ridge point), with the machine's peak in that dtype (T op/s) and the ridge point's unit by the machine's own rule
    (op/byte, or op per weight byte for TPU v1); the machines' names and the words in the learner's language."""
    lang = language()
    cells = [[translate_text(m.name, lang), dtype, f"{m.peak[dtype] / 1e12:.3f}", f"{ridge:.1f}",
              _(PER_WEIGHT_BYTE) if m.weight_bytes_only else "op/byte"] for m, dtype, ridge in rows]
    return text_table(_in_language(RIDGE_COLUMNS), cells)


def paper_ridge_line(macs: float) -> str:
    """Section 4's line for TPU v1's ridge point in its paper's units (``macs``, multiply-accumulates per weight
    byte), in the learner's language."""
    return _("TPU v1 in the paper's units: {macs} multiply-accumulates per weight byte").format(macs=f"{macs:.0f}")


def both_rules_line(point: RooflineState, machine: Machine = TPU_V1) -> str:
    """Section 4's line for a matmul's ``point`` counted by both rules, in the learner's language: its intensity
    counting every tensor (op/byte), counting only its weights (op per weight byte), and the rate ``machine``
    attains by its own rule (T op/s)."""
    rate = point.attainable.get(machine.name)
    if point.operation != OPERATIONS[0] or point.weight_intensity is None or rate is None:
        raise ValueError(f"{point.operation} in {point.dtype}: needs a matmul with a roof on {machine.name}")
    return _("{dtype} matmul n={n}: {intensity} op/byte counting every tensor, {weight_intensity} op per weight byte; "
             "{machine} attains {rate} T op/s").format(
        dtype=point.dtype, n=point.n, intensity=f"{point.intensity:.0f}",
        weight_intensity=f"{point.weight_intensity:.0f}", machine=machine.name, rate=f"{rate / 1e12:.1f}")


# --------------------------------------------------------------------------- performance per watt

@dataclass(frozen=True)
class Efficiency:
    """Peak operations per second at a stated power: performance per watt from published figures."""

    name: str
    dtype: str
    ops_per_s: float
    watts: float
    source: str

    @property
    def ops_per_joule(self) -> float:
        return self.ops_per_s / self.watts


PUBLISHED_EFFICIENCY = [
    # Jouppi et al. 2017, Table 2: per die, TDP and measured busy power. The names are marked for the catalog:
    # `efficiency_table` prints them in the learner's language.
    Efficiency(N_("TPU v1 die, at its 75 W TDP"), "int8", 92e12, 75.0, "Jouppi et al. 2017, Table 2"),
    Efficiency(N_("TPU v1 die, at its measured 40 W busy"), "int8", 92e12, 40.0, "Jouppi et al. 2017, Table 2"),
    Efficiency(N_("Haswell E5-2699 v3 die (2015 CPU)"), "int8", 2.6e12, 145.0, "Jouppi et al. 2017, Table 2"),
    Efficiency(N_("NVIDIA K80 die (2015 GPU)"), "float32", 2.8e12, 150.0, "Jouppi et al. 2017, Table 2"),
    Efficiency(N_("NVIDIA H100 SXM, at its 700 W TDP"), "int8", 1979e12, 700.0, "NVIDIA H100 datasheet (dense)"),
    Efficiency(N_("NVIDIA H100 SXM, at its 700 W TDP"), "bfloat16", 989e12, 700.0, "NVIDIA H100 datasheet (dense)"),
]

#: Watts per core assumed for this CPU when no power meter can be read: a 2015 server core's share of its
#: chip's TDP (Haswell E5-2699 v3: 145 W over 18 cores). An assumption, and labelled so wherever it is used.
ASSUMED_WATTS_PER_CORE = 145.0 / 18


def cpu_efficiency(flops: float, threads: int, watts_per_core: float = ASSUMED_WATTS_PER_CORE) -> Efficiency:
    """This CPU's measured float32 rate over an assumed power of ``watts_per_core`` per thread in use."""
    if threads < 1 or watts_per_core <= 0:
        raise ValueError(f"need threads >= 1 and a positive power per core; got {threads} and {watts_per_core}")
    return Efficiency(N_("this CPU, {threads} thread(s), measured, at an assumed {watts:.1f} W per core").format(
                      threads=threads, watts=watts_per_core),
                      "float32", flops, threads * watts_per_core, "measured here; the power is an assumption")


#: The efficiency table's columns (headings in English, shown in the learner's language); "dtype" is code.
EFFICIENCY_COLUMNS = (Column(N_("chip")), Column("dtype", 9), Column(N_("peak T op/s"), 11, True),
                      Column(N_("watts"), 6, True), Column(N_("G op/s per W"), 13, True))


def efficiency_table(rows: list[Efficiency]) -> str:
    """The performance-per-watt table of notebook 04-hardware/01 (section 5), one line per chip, as it prints it:
    the headings and the chips' descriptions in the learner's language (the dtypes and numbers as they are), its
    columns aligned in a fixed-width font whichever language fills them."""
    lang = language()
    cells = [[translate_text(e.name, lang), e.dtype, f"{e.ops_per_s / 1e12:.3g}", f"{e.watts:.0f}",
              f"{e.ops_per_joule / 1e9:.1f}"] for e in rows]
    return text_table(_in_language(EFFICIENCY_COLUMNS), cells)
