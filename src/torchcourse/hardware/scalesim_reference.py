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

#: The same runs' DRAM traffic, in words, from SCALE-Sim's detailed report: (X reads, W reads, Y writes).
#: With 1024 kB SRAMs every operand fits, so each crosses from DRAM once (see ``dataflows.dram_traffic``).
DATAFLOW_DRAM: dict[tuple[int, int, int, int, int, str], tuple[int, int, int]] = {
    (8, 4, 4, 4, 4, 'ws'): (40, 20, 32),
    (8, 4, 4, 4, 4, 'os'): (40, 20, 32),
    (8, 4, 4, 4, 4, 'is'): (40, 20, 32),
    (10, 3, 5, 4, 4, 'ws'): (40, 30, 50),
    (10, 3, 5, 4, 4, 'os'): (40, 30, 50),
    (10, 3, 5, 4, 4, 'is'): (40, 20, 50),
    (7, 5, 9, 4, 6, 'ws'): (60, 60, 126),
    (7, 5, 9, 4, 6, 'os'): (40, 60, 63),
    (7, 5, 9, 4, 6, 'is'): (60, 80, 126),
    (20, 33, 17, 8, 8, 'ws'): (800, 800, 1700),
    (20, 33, 17, 8, 8, 'os'): (800, 800, 340),
    (20, 33, 17, 8, 8, 'is'): (800, 680, 1700),
    (1, 64, 64, 8, 8, 'ws'): (70, 4100, 512),
    (1, 64, 64, 8, 8, 'os'): (520, 4100, 64),
    (1, 64, 64, 8, 8, 'is'): (520, 4100, 512),
    (256, 8, 8, 8, 8, 'ws'): (2050, 70, 2048),
    (256, 8, 8, 8, 8, 'os'): (2050, 70, 2048),
    (256, 8, 8, 8, 8, 'is'): (2050, 70, 2048),
    (40, 70, 50, 16, 16, 'ws'): (3200, 4480, 10000),
    (40, 70, 50, 16, 16, 'os'): (3360, 4480, 2000),
    (40, 70, 50, 16, 16, 'is'): (3360, 4000, 10000),
}

#: The same configuration with the DRAM interface narrowed to ``bandwidth`` words per cycle (the 1024 kB
#: SRAMs still hold every operand). Each key is ``(M, K, N, rows, cols, dataflow, bandwidth)``; each value
#: is ``(compute, overall, stalls)``. SCALE-Sim reports no stall at any of these bandwidths: the operands are
#: read before the array starts, and the narrower interface shows only in the overall span, which grows by
#: the cycles to write the outputs back (``dataflows.write_back_cycles``). It reports stalls only when the
#: SRAMs are too small to hold the operands and must be refilled while the array runs.
BANDWIDTH_RUNS: dict[tuple[int, int, int, int, int, str, int], tuple[int, int, int]] = {
    (8, 4, 4, 4, 4, 'ws', 10): (17, 24, 0),
    (8, 4, 4, 4, 4, 'os', 10): (19, 26, 0),
    (8, 4, 4, 4, 4, 'is', 10): (27, 34, 0),
    (40, 70, 50, 16, 16, 'ws', 10): (1719, 3166, 0),
    (40, 70, 50, 16, 16, 'os', 10): (1199, 1846, 0),
    (40, 70, 50, 16, 16, 'is', 10): (1439, 2838, 0),
    (1, 64, 64, 8, 8, 'ws', 10): (1471, 1932, 0),
    (1, 64, 64, 8, 8, 'os', 10): (623, 1039, 0),
    (1, 64, 64, 8, 8, 'is', 10): (687, 1148, 0),
    (256, 8, 8, 8, 8, 'ws', 10): (277, 686, 0),
    (256, 8, 8, 8, 8, 'os', 10): (703, 1112, 0),
    (256, 8, 8, 8, 8, 'is', 10): (959, 1368, 0),
    (8, 4, 4, 4, 4, 'ws', 4): (17, 28, 0),
    (8, 4, 4, 4, 4, 'os', 4): (19, 30, 0),
    (8, 4, 4, 4, 4, 'is', 4): (27, 38, 0),
    (40, 70, 50, 16, 16, 'ws', 4): (1719, 4666, 0),
    (40, 70, 50, 16, 16, 'os', 4): (1199, 2146, 0),
    (40, 70, 50, 16, 16, 'is', 4): (1439, 4338, 0),
    (1, 64, 64, 8, 8, 'ws', 4): (1471, 2008, 0),
    (1, 64, 64, 8, 8, 'os', 4): (623, 1048, 0),
    (1, 64, 64, 8, 8, 'is', 4): (687, 1224, 0),
    (256, 8, 8, 8, 8, 'ws', 4): (277, 993, 0),
    (256, 8, 8, 8, 8, 'os', 4): (703, 1419, 0),
    (256, 8, 8, 8, 8, 'is', 4): (959, 1675, 0),
    (8, 4, 4, 4, 4, 'ws', 1): (17, 52, 0),
    (8, 4, 4, 4, 4, 'os', 1): (19, 54, 0),
    (8, 4, 4, 4, 4, 'is', 1): (27, 62, 0),
    (40, 70, 50, 16, 16, 'ws', 1): (1719, 12166, 0),
    (40, 70, 50, 16, 16, 'os', 1): (1199, 3646, 0),
    (40, 70, 50, 16, 16, 'is', 1): (1439, 11838, 0),
    (1, 64, 64, 8, 8, 'ws', 1): (1471, 2392, 0),
    (1, 64, 64, 8, 8, 'os', 1): (623, 1096, 0),
    (1, 64, 64, 8, 8, 'is', 1): (687, 1608, 0),
    (256, 8, 8, 8, 8, 'ws', 1): (277, 2529, 0),
    (256, 8, 8, 8, 8, 'os', 1): (703, 2955, 0),
    (256, 8, 8, 8, 8, 'is', 1): (959, 3211, 0),
}
