"""The machines the roofline compares: this one, measured from PyTorch, and published accelerators beside it.

Used by notebook ``04-hardware/01-roofline`` (sections 2 and 4), through ``torchcourse.hardware.roofline``, which
draws their roofs. A `Machine` is what the roofline needs of one: peak operations per second by dtype, memory
bandwidth, and where the figures come from. This CPU's come from `measure_cpu` (a matmul's rate and a copy's
bandwidth, sampled repeatedly, with their spread and the warnings that apply); TPU v1's and the H100's from their
published sources.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from torchcourse.i18n import N_, language, translate_text
from torchcourse.i18n import gettext as _

# --------------------------------------------------------------------------- measuring this machine

#: A measurement whose fastest and slowest samples differ by more than this factor is flagged.
TRUSTED_SPREAD = 1.3


@dataclass(frozen=True)
class Measurement:
    """Repeated samples of one rate (work per second): their median and range, and whether to trust them."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)

    @property
    def spread(self) -> float:
        """Fastest sample over slowest: 1.0 on a quiet machine."""
        return self.high / self.low

    @property
    def trusted(self) -> bool:
        return self.spread <= TRUSTED_SPREAD

    def describe(self, scale: float, unit: str) -> str:
        """'median 12.3 unit (range 11.0-13.1, 7 samples)' in units of ``scale``, in the learner's language."""
        return _("median {median} {unit} (range {low}-{high}, {count} samples)").format(
            median=f"{self.median / scale:.1f}", unit=unit, low=f"{self.low / scale:.1f}",
            high=f"{self.high / scale:.1f}", count=len(self.samples))


def _rates(work: float, fn, samples: int, window: float) -> Measurement:
    """``samples`` rates of ``fn``, each averaged over calls filling at least ``window`` seconds.

    A window of many calls hides the timer's resolution; several windows show how much the machine's load
    moves the result, which a single best-of figure would hide.
    """
    if samples < 1 or window <= 0:
        raise ValueError(f"need at least one sample and a positive window; got {samples} and {window}")
    fn()                                                       # warm-up: first-touch pages, pick kernels
    rates = []
    for _sample in range(samples):
        calls = 0
        t0 = time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= window:
                break
        rates.append(work * calls / elapsed)
    return Measurement(tuple(rates))


def measure_matmul_flops(n: int = 512, dtype: torch.dtype = torch.float32, samples: int = 5,
                         window: float = 0.03) -> Measurement:
    """FLOP/s of ``n x n @ n x n`` (2 n^3 floating-point operations), in ``samples`` windows."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).to(dtype)
    b = torch.randn(n, n, generator=g).to(dtype)
    out = torch.empty(n, n, dtype=dtype)
    return _rates(2.0 * n**3, lambda: torch.matmul(a, b, out=out), samples, window)


def last_level_cache_bytes(cpu_folder: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int | None:
    """The largest cache of CPU 0 as Linux reports it (``index*/size``, e.g. ``32768K``), or None if unknown."""
    sizes = []
    for entry in sorted(cpu_folder.glob("index*/size")):
        text = entry.read_text().strip()
        factor = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * factor)
    return max(sizes) if sizes else None


#: Each buffer of the copy is at least this, and at most the cap: first-touching the pages costs time on
#: some virtual machines, and the whole notebook must fit the grader's memory limit.
MIN_BUFFER_BYTES = 64 * 2**20
MAX_BUFFER_BYTES = 128 * 2**20
#: The copy's two buffers together should be this many times the last-level cache to measure DRAM.
CACHE_MULTIPLE = 4


def copy_buffer_bytes(cache: int | None) -> int:
    """Bytes of each of the copy's two buffers: together CACHE_MULTIPLE x the cache, within the bounds."""
    want = CACHE_MULTIPLE * cache // 2 if cache else MAX_BUFFER_BYTES
    return int(min(MAX_BUFFER_BYTES, max(MIN_BUFFER_BYTES, want)))


@dataclass(frozen=True)
class Bandwidth:
    """A copy's bandwidth, STREAM-counted, with the working set it used and the warnings that apply."""

    rate: Measurement               # bytes per second, counting each element read once and written once
    buffer_bytes: int               # each of source and destination
    cache_bytes: int | None         # the last-level cache the buffers were sized against

    @property
    def with_write_allocate(self) -> float:
        """Median bytes per second if every store first read its line (3 bytes moved per 2 counted)."""
        return 1.5 * self.rate.median

    @property
    def warnings(self) -> list[str]:
        """Why the figure may be wrong, each a sentence in the learner's language (none: nothing found)."""
        notes = []
        if self.cache_bytes is None:
            notes.append(_("The cache size is unknown here, so the copy may partly run in cache: "
                           "the figure may be too high."))
        elif 2 * self.buffer_bytes < CACHE_MULTIPLE * self.cache_bytes:
            notes.append(_("The copy's working set ({working} MiB) is only {times} times the last-level cache "
                           "({cache} MiB): part of it may come from the cache, so the figure may be too high.").format(
                working=f"{2 * self.buffer_bytes / 2**20:.0f}", times=f"{2 * self.buffer_bytes / self.cache_bytes:.1f}",
                cache=f"{self.cache_bytes / 2**20:.0f}"))
        if not self.rate.trusted:
            notes.append(_("The samples differ by {spread} times: other programs were using the machine, so do not "
                           "trust this figure; run the cell again when it is quieter.").format(
                spread=f"{self.rate.spread:.2f}"))
        return notes


def measure_bandwidth(buffer_bytes: int | None = None, samples: int = 5, window: float = 0.05) -> Bandwidth:
    """Bytes per second of ``dst.copy_(src)``, each buffer sized from the cache unless given.

    The count follows STREAM: each element read once and written once. Ordinary stores also read each
    destination line before writing it (write-allocate), so DRAM may move 1.5 times the counted bytes;
    the counted figure is a lower bound on the traffic, and the same rule as the operations' byte counts.
    """
    cache = last_level_cache_bytes()
    size = copy_buffer_bytes(cache) if buffer_bytes is None else int(buffer_bytes)
    if size < 4:
        raise ValueError(f"a buffer needs at least 4 bytes; got {size}")
    n = size // 4
    src = torch.ones(n, dtype=torch.float32)
    dst = torch.zeros(n, dtype=torch.float32)                  # zeros, not empty: every page touched once
    rate = _rates(2.0 * n * 4, lambda: dst.copy_(src), samples, window)
    return Bandwidth(rate, n * 4, cache)


@dataclass(frozen=True)
class Machine:
    """Peak operations per second by dtype name, memory bandwidth in bytes per second, and a source.

    ``weight_bytes_only``: the machine's intensity counts only weight bytes (TPU v1, as its paper does).
    """

    name: str
    peak: dict[str, float]
    bandwidth: float
    source: str
    weight_bytes_only: bool = False

    def ridge(self, dtype: str) -> float:
        """Arithmetic intensity (ops per byte, by the machine's own rule) where the two roofs meet."""
        return self.peak[dtype] / self.bandwidth


@dataclass(frozen=True)
class CpuMeasurement:
    """This CPU's matmul rate and copy bandwidth, measured now, and the Machine built from their medians."""

    flops: Measurement
    bandwidth: Bandwidth
    threads: int

    @property
    def machine(self) -> Machine:
        return Machine(N_("this CPU ({threads} thread(s), measured)").format(threads=self.threads),
                       {"float32": self.flops.median},
                       self.bandwidth.rate.median, "measured in this notebook")

    @property
    def warnings(self) -> list[str]:
        """The copy's warnings and the matmul's, each a sentence in the learner's language."""
        notes = list(self.bandwidth.warnings)
        if not self.flops.trusted:
            notes.append(_("The matmul samples differ by {spread} times: do not trust the peak either; run the "
                           "cell again when the machine is quieter.").format(spread=f"{self.flops.spread:.2f}"))
        return notes

    def report(self) -> str:
        """What notebook 04-hardware/01 (section 2) prints of this measurement, in the learner's language: this CPU
        and its last-level cache, the matmul's rate (GFLOP/s) and the copy's bandwidth (GB/s), each as the median
        and range of its samples, the bytes per second write-allocate would move, then each warning."""
        cache = self.bandwidth.cache_bytes
        # TRANSLATORS: the size of the last-level cache, where Linux does not report it
        size = f"{cache / 2**20:.0f} MiB" if cache else _("unknown")
        lines = [
            _("{machine} | last-level cache: {cache}").format(machine=translate_text(self.machine.name, language()),
                                                               cache=size),
            _("matmul (512 x 512, float32): {rate}").format(rate=self.flops.describe(1e9, "GFLOP/s")),
            _("copy ({size} MiB into another): {rate} (with write-allocate: {moved} GB/s moved)").format(
                size=f"{self.bandwidth.buffer_bytes / 2**20:.0f}", rate=self.bandwidth.rate.describe(1e9, "GB/s"),
                moved=f"{self.bandwidth.with_write_allocate / 1e9:.1f}"),
        ]
        # TRANSLATORS: a warning about a measurement follows, e.g. "Caution: The samples differ by 1.52 times: ..."
        return "\n".join(lines + [_("Caution: {warning}").format(warning=w) for w in self.warnings])


def measure_cpu(samples: int = 5) -> CpuMeasurement:
    """This machine's CPU, measured now: numbers vary from run to run and machine to machine."""
    return CpuMeasurement(measure_matmul_flops(samples=samples), measure_bandwidth(samples=samples),
                          torch.get_num_threads())


# --------------------------------------------------------------------------- published accelerators

TPU_V1 = Machine(
    "TPU v1",
    {"int8": 2 * 256 * 256 * 700e6},          # 65,536 MACs x 700 MHz x 2 ops = 91.8 TOPS ("92 TOPS")
    34e9,                                     # DDR3 weight memory, 34 GB/s
    "Jouppi et al., In-Datacenter Performance Analysis of a Tensor Processing Unit, ISCA 2017 (Table 2, Figure 5)",
    weight_bytes_only=True,
)
H100_SXM = Machine(
    "NVIDIA H100 SXM",
    # dense figures; the datasheet's larger tensor-core figures assume 2:4 sparsity
    {"float32": 67e12, "bfloat16": 989e12, "int8": 1979e12},
    3.35e12,                                                    # HBM3
    "NVIDIA H100 Tensor Core GPU datasheet (SXM column; dense = half the 'with sparsity' figure)",
)
PUBLISHED = [TPU_V1, H100_SXM]
