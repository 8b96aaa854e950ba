"""Cycle counts from SCALE-Sim 3.0.0 (weight-stationary GEMM), for notebook ``04-hardware/02-tpu-systolic-arrays``
(section 3), which prints them beside the course simulator's counts.

Written by running SCALE-Sim; ``tests/unit/hardware/test_scalesim.py`` runs SCALE-Sim again on the same
shapes and fails if any number here differs from what it reports. Configuration: dataflow ``ws``,
1024 kB for each SRAM, user bandwidth 10 words per cycle (see the test).

Each key is ``(M, K, N, rows, cols)``; each value is ``(compute, overall)``:
``compute`` is SCALE-Sim's "Compute cycles" (the index, counted from 0, of the cycle in which the
last output is written) and ``overall`` its DRAM-to-DRAM span, which adds the time to bring the first
operands in from DRAM and write the results back.
"""

SCALESIM_VERSION = "3.0.0"

RUNS: dict[tuple[int, int, int, int, int], tuple[int, int]] = {
    (8, 4, 4, 4, 4): (17, 24),
    (10, 3, 5, 4, 4): (39, 47),
    (7, 5, 9, 4, 6): (75, 93),
    (16, 8, 8, 4, 4): (103, 141),
    (32, 16, 16, 8, 8): (215, 369),
    (20, 33, 17, 8, 8): (629, 878),
    (64, 32, 32, 16, 16): (439, 1053),
}
