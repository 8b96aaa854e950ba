"""The course's systolic arrays against SCALE-Sim 3.0.0 (``pip install scalesim``): GEMMs in the weight-stationary,
output-stationary and input-stationary dataflows.

SCALE-Sim cannot share the pinned environment: it pulls in numba, pandas and Cython, which the course
does not pin, and version 3.0.0 fails under the pinned NumPy 2.4 (``int()`` of a one-element array in
``scalesim/memory/read_buffer.py``, an error in NumPy 2.4; it runs under NumPy 2.2). So the test builds a
throw-away virtual environment with ``scalesim==3.0.0`` and ``numpy<2.3``, cached in pytest's cache
folder (``.pytest_cache``, ignored by git; the system's temporary folder when the cache plugin is
off), and runs SCALE-Sim there in a subprocess. It is skipped, with
the reason, only when that installation fails (no network and no cached environment).

The documented relation, per shape and dataflow (see ``torchcourse/hardware/scalesim_reference.py``):
SCALE-Sim's "compute cycles" is the index, counted from 0, of the cycle in which the last output is
written, so it equals the course simulator's cycle count minus one; it reports no stall cycles with
these buffers; its overall (DRAM-to-DRAM) count is larger, since it includes memory traffic; and its
SRAM reads of X and W equal ``dataflows.sram_reads``.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import tempfile
import textwrap
import venv
from pathlib import Path

import pytest
import torch

from torchcourse.hardware import dataflows, systolic
from torchcourse.hardware.scalesim_reference import BANDWIDTH_RUNS, DATAFLOW_DRAM, DATAFLOW_RUNS, RUNS, SCALESIM_VERSION

REQUIREMENTS = [f"scalesim=={SCALESIM_VERSION}", "numpy<2.3"]

CONFIG = """[general]
run_name = gemm

[architecture_presets]
ArrayHeight:    {rows}
ArrayWidth:     {cols}
IfmapSramSzkB:    1024
FilterSramSzkB:   1024
OfmapSramSzkB:    1024
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : 10
Dataflow : {flow}
MemoryBanks:   1
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport : false
SparseRep : ellpack_block
OptimizedMapping : false
BlockSize : 8
RandomNumberGeneratorSeed : 40

[run_presets]
InterfaceBandwidth: USER
UseRamulatorTrace: False
"""

_LAYOUT_COLUMNS = [
    "Layer name", "IFMAP Height Intraline Factor", "IFMAP Width Intraline Factor", "Filter Height Intraline Factor",
    "Filter Width Intraline Factor", "Channel Intraline Factor", "Num Filter Intraline Factor",
    "IFMAP Height Intraline Order", "IFMAP Width Intraline Order", "Channel Intraline Order",
    "IFMAP Height Interline Order", "IFMAP Width Interline Order", "Channel Interline Order",
    "Filter Height Intraline Order", "Filter Width Intraline Order", "Filter Channel Intraline Order",
    "Num Filter Intraline Order", "Filter Height Interline Order", "Filter Width Interline Order",
    "Filter Channel Interline Order", "Num Filter Interline Order",
]
LAYOUT = ", ".join(_LAYOUT_COLUMNS) + ",\nL0, 1, 1, 1, 1, 1, 1, 0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3,\n"

RUNNER = textwrap.dedent('''
    import contextlib, io, json, os, sys
    from scalesim.scale_sim import scalesim
    config, layout, shapes, top = json.loads(sys.stdin.read())
    results = []
    for m, k, n, rows, cols, flow in shapes:
        d = os.path.join(top, f"{m}_{k}_{n}_{rows}_{cols}_{flow}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "c.cfg"), "w") as f:
            f.write(config.format(rows=rows, cols=cols, flow=flow))
        with open(os.path.join(d, "t.csv"), "w") as f:   # SCALE-Sim's GEMM topology: M, N, K
            f.write(f"Layer, M, N, K,\\nL0, {m}, {n}, {k},\\n")
        with open(os.path.join(d, "l.csv"), "w") as f:
            f.write(layout)
        sim = scalesim(save_disk_space=True, verbose=False, config=os.path.join(d, "c.cfg"),
                       topology=os.path.join(d, "t.csv"), layout=os.path.join(d, "l.csv"), input_type_gemm=True)
        with contextlib.redirect_stdout(io.StringIO()):
            sim.run_scale(top_path=d)
        layer = sim.runner.single_layer_sim_object_list[0]
        overall, compute, stalls = layer.get_compute_report_items()[:3]
        detail = layer.get_detail_report_items()       # SRAM reads of X ("ifmap") at 2, of W ("filter") at 5
        dram = [int(detail[i]) for i in (11, 14, 17)]  # DRAM reads of X and W, writes of Y ("ofmap")
        results.append([int(compute), int(overall), int(stalls), int(detail[2]), int(detail[5])] + dram)
    print("SCALESIM " + json.dumps(results))
''')


def _python_of(env: Path) -> Path:
    return env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


@pytest.fixture(scope="module")
def scalesim_python(request) -> Path:
    """A Python with SCALE-Sim installed: cached across runs, built (about 30-60 s) when missing."""
    cache = getattr(request.config, "cache", None)       # absent under -p no:cacheprovider
    if cache is not None:
        folder = Path(cache.mkdir("torchcourse-scalesim"))
    else:
        folder = Path(tempfile.gettempdir()) / "torchcourse-scalesim"
    env = folder / "venv"
    python = _python_of(env)
    marker = env / "installed.txt"
    # Each test worker (pytest-xdist) sets this module up: one builds, the others wait for it and reuse it
    # (two building at once clear each other's half-installed environment).
    with open(folder / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text() == " ".join(REQUIREMENTS) and python.exists():
            return python
        try:
            venv.EnvBuilder(clear=True, with_pip=True).create(env)
            done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                   *REQUIREMENTS], capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            pytest.skip(f"SCALE-Sim {SCALESIM_VERSION} could not be installed: {exc}")
        if done.returncode != 0:
            pytest.skip(f"SCALE-Sim {SCALESIM_VERSION} could not be installed: {done.stderr.strip()[-500:]}")
        marker.write_text(" ".join(REQUIREMENTS))
    return python


@pytest.fixture(scope="module")
def scalesim_counts(scalesim_python, tmp_path_factory) -> dict:
    shapes = [list(s) + ["ws"] for s in RUNS] + [list(s) for s in DATAFLOW_RUNS]
    top = tmp_path_factory.mktemp("scalesim")
    done = subprocess.run([str(scalesim_python), "-c", RUNNER], input=json.dumps([CONFIG, LAYOUT, shapes, str(top)]),
                          capture_output=True, text=True, timeout=300, cwd=top)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("SCALESIM "))
    return {tuple(s): tuple(r) for s, r in zip([(*s, "ws") for s in RUNS] + list(DATAFLOW_RUNS),
                                               json.loads(line.removeprefix("SCALESIM ")))}


def test_stored_reference_is_what_scalesim_reports(scalesim_counts):
    for shape, (compute, overall) in RUNS.items():
        got_compute, got_overall, stalls = scalesim_counts[(*shape, "ws")][:3]
        assert (got_compute, got_overall) == (compute, overall), shape
        assert stalls == 0, shape
    for shape, stored in DATAFLOW_RUNS.items():
        got_compute, _, stalls, x_reads, w_reads, *dram = scalesim_counts[shape]
        assert (got_compute, x_reads, w_reads) == stored, shape
        assert tuple(dram) == DATAFLOW_DRAM[shape], shape
        assert stalls == 0, shape


@pytest.mark.parametrize("shape", list(RUNS), ids=lambda s: "x".join(map(str, s)))
def test_course_simulator_counts_one_more_than_scalesims_last_cycle_index(shape):
    m, k, n, rows, cols = shape
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
    w = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
    y, cycles = systolic.systolic_matmul(x, w, rows, cols)
    assert torch.equal(y, x.to(torch.int32) @ w.to(torch.int32))
    compute, overall = RUNS[shape]
    assert cycles == compute + 1
    assert overall > cycles


@pytest.mark.parametrize("shape", list(DATAFLOW_RUNS), ids=lambda s: "x".join(map(str, s[:5])) + "-" + s[5])
def test_each_dataflow_equals_matmul_and_scalesims_counts(shape):
    m, k, n, rows, cols, flow = shape
    g = torch.Generator().manual_seed(sum(shape[:5]))
    x = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
    w = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
    y, cycles = dataflows.dataflow_matmul(x, w, rows, cols, flow)
    assert torch.equal(y, torch.matmul(x.to(torch.int32), w.to(torch.int32)))
    compute, x_reads, w_reads = DATAFLOW_RUNS[shape]
    assert cycles == compute + 1 == dataflows._dataflow_cycles(flow, m, k, n, rows, cols)
    assert dataflows.sram_reads(flow, m, k, n, rows, cols) == {"X": x_reads, "W": w_reads}
    x_dram, w_dram, y_dram = DATAFLOW_DRAM[shape]
    # the configuration's DRAM interface moves 10 words per transfer (Bandwidth : 10)
    assert dataflows.dram_traffic(flow, m, k, n, rows, cols, words_per_transfer=10) == {"X": x_dram, "W": w_dram,
                                                                                         "Y": y_dram}


def test_stored_bandwidth_runs_are_what_scalesim_reports(scalesim_python, tmp_path_factory):
    """A narrower DRAM interface (``Bandwidth`` words per cycle) with SRAMs that hold every operand."""
    for bw in sorted({key[-1] for key in BANDWIDTH_RUNS}):
        keys = [key for key in BANDWIDTH_RUNS if key[-1] == bw]
        top = tmp_path_factory.mktemp(f"scalesim-bw{bw}")
        config = CONFIG.replace("Bandwidth : 10", f"Bandwidth : {bw}")
        done = subprocess.run([str(scalesim_python), "-c", RUNNER],
                              input=json.dumps([config, LAYOUT, [list(key[:6]) for key in keys], str(top)]),
                              capture_output=True, text=True, timeout=300, cwd=top)
        assert done.returncode == 0, done.stderr[-2000:]
        line = next(ln for ln in done.stdout.splitlines() if ln.startswith("SCALESIM "))
        for key, got in zip(keys, json.loads(line.removeprefix("SCALESIM "))):
            assert tuple(got[:3]) == BANDWIDTH_RUNS[key], key
