"""TPU v1's memory system as a small model, its latency against batch size, and the TPUs that followed.

Used by notebook ``04-hardware/02-tpu-systolic-arrays`` (section 6).

The model: weights come from the off-chip weight memory (34 GB/s) through the weight FIFO, one
256 x 256 tile (64 KiB of int8) at a time, while activations come from the on-chip unified buffer.
The matrix unit holds a second tile for double buffering, so fetching the next tile overlaps using
this one; a tile is used for ``batch`` cycles (one row of activations per cycle). When the fetch
takes longer than the use, the unit waits: a **weight stall**. All figures are from Jouppi et al.,
*In-Datacenter Performance Analysis of a Tensor Processing Unit* (ISCA 2017), and Google Cloud's
TPU documentation for the later generations.
"""

from __future__ import annotations

from dataclasses import dataclass

CLOCK_HZ = 700e6
WEIGHT_MEMORY_BYTES_PER_S = 34e9
ARRAY = 256
TILE_BYTES = ARRAY * ARRAY                  # one int8 weight per PE
SHIFT_CYCLES = ARRAY                        # shifting a tile into the array, one row per cycle


def weight_fetch_cycles(bytes_per_s: float = WEIGHT_MEMORY_BYTES_PER_S, clock_hz: float = CLOCK_HZ) -> float:
    """Cycles to bring one 64 KiB weight tile from the weight memory: 65,536 / (34e9 / 700e6) = 1349."""
    return TILE_BYTES / (bytes_per_s / clock_hz)


@dataclass(frozen=True)
class TileTiming:
    batch: int
    busy: float          # cycles the array multiplies per tile: one row of activations per cycle
    per_tile: float      # cycles per tile in the steady state (next fetch and shift overlap this use)
    stall: float         # cycles per tile spent waiting for weights

    @property
    def active(self) -> float:
        """Fraction of cycles the matrix unit computes."""
        return self.busy / self.per_tile


def tile_timing(batch: int, bytes_per_s: float = WEIGHT_MEMORY_BYTES_PER_S) -> TileTiming:
    """Steady-state time of one weight tile used by ``batch`` rows of activations."""
    if batch < 1 or bytes_per_s <= 0:
        raise ValueError(f"need batch >= 1 and a positive bandwidth; got {batch} and {bytes_per_s}")
    per_tile = max(float(batch), weight_fetch_cycles(bytes_per_s), float(SHIFT_CYCLES))
    return TileTiming(batch, float(batch), per_tile, per_tile - batch)


def fc_network_seconds(weights: int, batch: int, bytes_per_s: float = WEIGHT_MEMORY_BYTES_PER_S) -> float:
    """The matrix unit's time for one batch through fully connected layers holding ``weights`` int8 weights.

    Host time, PCIe transfers and the other units are left out: a lower bound on the TPU's part of the latency.
    """
    tiles = weights / TILE_BYTES
    return tiles * tile_timing(batch, bytes_per_s).per_tile / CLOCK_HZ


#: Jouppi et al. 2017, Table 4: MLP0's 99th-percentile response time and inferences per second per die,
#: by batch size, under a 7 ms limit: (processor, batch, milliseconds, inferences per second, % of max).
TABLE_4 = [
    ("CPU", 16, 7.2, 5_482, 42),
    ("CPU", 64, 21.3, 13_194, 100),
    ("GPU", 16, 6.7, 13_461, 37),
    ("GPU", 64, 8.3, 36_465, 100),
    ("TPU", 200, 7.0, 225_000, 80),
    ("TPU", 250, 10.0, 280_000, 100),
]
#: Table 1: MLP0 has 20 M weights in 5 fully connected layers and ran at batch 200.
MLP0_WEIGHTS = 20_000_000
#: Table 3, MLP0: measured fraction of cycles the matrix unit was active.
MLP0_ACTIVE_MEASURED = 0.127


@dataclass(frozen=True)
class Generation:
    name: str
    year: int
    tensorcores: int
    mxus_per_core: int
    mxu: int                      # each MXU is mxu x mxu multiply-accumulators
    bf16_tflops: float
    hbm_gb: float
    hbm_gb_per_s: float
    topology: str
    pod_chips: int
    source: str

    @property
    def ridge(self) -> float:
        """bf16 FLOPs per byte of HBM at which the chip's two roofs meet."""
        return self.bf16_tflops * 1e12 / (self.hbm_gb_per_s * 1e9)


_DOCS = "Google Cloud TPU documentation, "
#: Later TPUs, per chip, as Google Cloud's documentation lists them. From v2 on every MXU multiplies
#: bfloat16 and accumulates in float32 ("System architecture" page). v2's figures are in Norrie et al.,
#: "A Domain-Specific Supercomputer for Training Deep Neural Networks" (CACM 2020), not repeated here.
GENERATIONS = [
    Generation("v3", 2018, 2, 2, 128, 123, 32, 900, "2D torus", 1024, _DOCS + "TPU v3"),
    Generation("v4", 2021, 2, 4, 128, 275, 32, 1200, "3D mesh/torus", 4096, _DOCS + "TPU v4"),
    Generation("v5e", 2023, 1, 4, 128, 197, 16, 819, "2D torus", 256, _DOCS + "TPU v5e"),
    Generation("v5p", 2023, 2, 4, 128, 459, 95, 2765, "3D torus", 8960, _DOCS + "TPU v5p"),
    Generation("v6e", 2024, 1, 2, 256, 918, 32, 1638, "2D torus", 256, _DOCS + "TPU v6e"),
]
