"""Cycle counts and SRAM reads from SCALE-Sim 3.0.0 (GEMMs), for notebook ``04-hardware/02-tpu-systolic-arrays``
(sections 3 and 5), which prints them beside the course simulators' counts.

Written by running SCALE-Sim; ``tests/unit/hardware/test_scalesim.py`` runs SCALE-Sim again on the same
shapes and fails if any number here differs from what it reports. Configuration: dataflow ``ws`` (``RUNS``),
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


#: Other dataflows, from the same configuration with ``Dataflow`` set to ``ws``, ``os`` or ``is``.
#: Each key is ``(M, K, N, rows, cols, dataflow)``; each value is ``(compute, ifmap_sram_reads,
#: filter_sram_reads)``: SCALE-Sim's "Compute cycles" and its detailed report's SRAM reads of X (its
#: "ifmap") and of W (its "filter"), in words.
DATAFLOW_RUNS: dict[tuple[int, int, int, int, int, str], tuple[int, int, int]] = {
    (8, 4, 4, 4, 4, 'ws'): (17, 32, 16),
    (8, 4, 4, 4, 4, 'os'): (19, 32, 32),
    (8, 4, 4, 4, 4, 'is'): (27, 32, 32),
    (10, 3, 5, 4, 4, 'ws'): (39, 60, 15),
    (10, 3, 5, 4, 4, 'os'): (53, 60, 45),
    (10, 3, 5, 4, 4, 'is'): (44, 30, 45),
    (7, 5, 9, 4, 6, 'ws'): (75, 70, 45),
    (7, 5, 9, 4, 6, 'os'): (51, 70, 90),
    (7, 5, 9, 4, 6, 'is'): (83, 35, 90),
    (20, 33, 17, 8, 8, 'ws'): (629, 1980, 561),
    (20, 33, 17, 8, 8, 'os'): (422, 1980, 1683),
    (20, 33, 17, 8, 8, 'is'): (584, 660, 1683),
    (1, 64, 64, 8, 8, 'ws'): (1471, 512, 4096),
    (1, 64, 64, 8, 8, 'os'): (623, 512, 4096),
    (1, 64, 64, 8, 8, 'is'): (687, 64, 4096),
    (256, 8, 8, 8, 8, 'ws'): (277, 2048, 64),
    (256, 8, 8, 8, 8, 'os'): (703, 2048, 2048),
    (256, 8, 8, 8, 8, 'is'): (959, 2048, 2048),
    (40, 70, 50, 16, 16, 'ws'): (1719, 11200, 3500),
    (40, 70, 50, 16, 16, 'os'): (1199, 11200, 10500),
    (40, 70, 50, 16, 16, 'is'): (1439, 2800, 10500),
}
