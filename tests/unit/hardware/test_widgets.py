"""Roofline explorer and fixed-point explorer: cores, renderers, wrappers, stand-ins; the measurements."""

import math
import re

import pytest
import torch
from matplotlib.figure import Figure

from torchcourse.hardware import fixedpoint, machines, roofline
from torchcourse.text_table import display_width


def test_intensity_formulas():
    assert roofline._matmul_ops_bytes(2, 2, 2, 4) == (16, 48)
    assert roofline._elementwise_ops_bytes(10, 1) == (10, 30)
    ops, moved = roofline._conv2d_ops_bytes(1, 3, 8, 5, 3, 2)
    assert ops == 2 * 8 * 25 * 3 * 9 and moved == 2 * (3 * 25 + 8 * 3 * 9 + 8 * 25)


def test_attainable_is_the_lower_roof():
    assert roofline._attainable(0.5, 100.0, 10.0) == 5.0
    assert roofline._attainable(50.0, 100.0, 10.0) == 100.0


def test_published_figures_derive_from_their_parts():
    assert machines.TPU_V1.peak["int8"] == 2 * 65_536 * 700e6
    assert math.isclose(machines.TPU_V1.peak["int8"] / 1e12, 91.75, rel_tol=1e-4)
    assert machines.H100_SXM.peak["int8"] == 2 * machines.H100_SXM.peak["bfloat16"] + 1e12
    for m in machines.PUBLISHED:
        assert m.source and m.bandwidth > 0
    # the notebook names them through roofline
    assert roofline.PUBLISHED is machines.PUBLISHED and roofline.TPU_V1 is machines.TPU_V1
    assert roofline.measure_cpu is machines.measure_cpu
    assert roofline.last_level_cache_bytes is machines.last_level_cache_bytes


def test_measurements_are_positive_and_bounded_in_time():
    import time

    t0 = time.perf_counter()
    flops = machines.measure_matmul_flops(n=128, samples=3, window=0.01)
    bw = machines.measure_bandwidth(buffer_bytes=8 * 2**20, samples=3, window=0.01)
    assert len(flops.samples) == 3 and flops.low <= flops.median <= flops.high and flops.low > 1e6
    assert bw.buffer_bytes == 8 * 2**20 and bw.rate.low > 1e6
    assert bw.with_write_allocate == pytest.approx(1.5 * bw.rate.median)
    assert time.perf_counter() - t0 < 5
    with pytest.raises(ValueError, match="at least one sample"):
        machines.measure_matmul_flops(n=8, samples=0)


def test_measurement_spread_and_trust(monkeypatch):
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    steady = machines.Measurement((10.0, 11.0, 12.0))
    assert steady.median == 11.0 and steady.spread == pytest.approx(1.2) and steady.trusted
    assert "median 11.0 x (range 10.0-12.0, 3 samples)" == steady.describe(1.0, "x")
    busy = machines.Measurement((9.6, 9.6, 177.4))
    assert not busy.trusted and busy.median == 9.6
    bw = machines.Bandwidth(busy, 64 * 2**20, 32 * 2**20)
    assert any("do not trust" in w for w in bw.warnings)
    assert not any("cache" in w for w in bw.warnings)        # 128 MiB is four 32 MiB caches
    small = machines.Bandwidth(steady, 64 * 2**20, 480 * 2**20)
    assert len(small.warnings) == 1 and "0.3 times the last-level cache" in small.warnings[0]
    assert "unknown" in machines.Bandwidth(steady, 64 * 2**20, None).warnings[0]


def test_cache_size_from_sysfs_sets_the_copy_size(tmp_path):
    for index, size in [(0, "48K"), (1, "2048K"), (2, "32M")]:
        (tmp_path / f"index{index}").mkdir()
        (tmp_path / f"index{index}" / "size").write_text(size + "\n")
    assert machines.last_level_cache_bytes(tmp_path) == 32 * 2**20
    assert machines.last_level_cache_bytes(tmp_path / "missing") is None
    assert machines.copy_buffer_bytes(32 * 2**20) == 64 * 2**20            # two buffers = four caches
    assert machines.copy_buffer_bytes(8 * 2**20) == machines.MIN_BUFFER_BYTES
    assert machines.copy_buffer_bytes(480 * 2**20) == machines.MAX_BUFFER_BYTES
    assert machines.copy_buffer_bytes(None) == machines.MAX_BUFFER_BYTES


def test_tpu_v1_counts_weight_bytes_as_its_paper_does():
    # Jouppi et al. 2017, Figure 5: ridge 1350 multiply-accumulates per weight byte (65,536 x 700 MHz / 34 GB/s)
    assert round(machines.TPU_V1.ridge("int8") / 2) == 1349
    s = roofline.roofline_point(roofline.OPERATIONS[0], 512, "int8")
    assert s.intensity == pytest.approx(2 * 512**3 / (3 * 512**2))      # 341 op/byte, every tensor once
    assert s.weight_intensity == pytest.approx(1024.0)                   # 2 M ops per int8 weight byte
    assert s.attainable["TPU v1"] == pytest.approx(1024 * 34e9)          # 34.8 T op/s, not 11.6
    assert s.attainable["NVIDIA H100 SXM"] == pytest.approx(s.intensity * 3.35e12)
    conv = roofline.roofline_point(roofline.OPERATIONS[2], 56, "int8")
    assert conv.weight_intensity == pytest.approx(2 * 56 * 56)
    add = roofline.roofline_point(roofline.OPERATIONS[1], 512, "int8")
    assert add.weight_intensity is None and add.attainable["TPU v1"] is None and "no weights" in add.message


def test_performance_per_watt():
    tpu = roofline.PUBLISHED_EFFICIENCY[0]
    haswell = roofline.PUBLISHED_EFFICIENCY[2]
    assert tpu.ops_per_joule / haswell.ops_per_joule == pytest.approx(68.4, rel=1e-2)
    cpu = roofline.cpu_efficiency(1e11, 2)
    assert cpu.watts == pytest.approx(2 * 145 / 18) and "assumed" in cpu.name
    with pytest.raises(ValueError):
        roofline.cpu_efficiency(1e11, 0)


def test_the_efficiency_table_prints_in_the_learners_language(monkeypatch):
    """Notebook 04-hardware/01 prints the table through efficiency_table: the same cell in both editions, its
    headings and chips' descriptions from the code catalog, its numbers and dtypes as they are, its columns aligned
    (a CJK character is two columns wide)."""
    from torchcourse.i18n import translations

    zh = translations("zh_CN").gettext
    rows = roofline.PUBLISHED_EFFICIENCY + [roofline.cpu_efficiency(3.2e11, 4)]
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    english = roofline.efficiency_table(rows).splitlines()
    assert english[0].split() == ["chip", "dtype", "peak", "T", "op/s", "watts", "G", "op/s", "per", "W"]
    assert english[1].startswith("TPU v1 die, at its 75 W TDP ") and english[1].split()[-4:] == ["int8", "92", "75",
                                                                                                 "1226.7"]
    assert english[-1].startswith("this CPU, 4 thread(s), measured, at an assumed 8.1 W per core")
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    chinese = roofline.efficiency_table(rows).splitlines()
    assert len(chinese) == len(english) == len(rows) + 1
    for heading in ("chip", "peak T op/s", "watts", "G op/s per W"):
        assert zh(heading) != heading and zh(heading) in chinese[0]
    assert "dtype" in chinese[0] and "chip" not in chinese[0] and "watts" not in chinese[0]
    assert chinese[1].startswith(zh("TPU v1 die, at its 75 W TDP")) and "裸片" in chinese[1]
    assert chinese[-1].startswith(zh("this CPU, {threads} thread(s), measured, at an assumed {watts:.1f} W per core")
                                  .format(threads=4, watts=145 / 18))
    for en_line, zh_line in zip(english[1:], chinese[1:]):
        assert en_line.split()[-4:] == zh_line.split()[-4:]  # dtype and numbers
    ends = {display_width(line) for line in chinese[1:]}  # every number column ends where its heading does
    assert len(ends) == 1 and display_width(chinese[0]) == ends.pop()


def _fake_cpu():
    return machines.Machine("test CPU", {"float32": 1e11}, 1e10, "made up for a test")


def test_roofline_core_classifies_operations():
    s = roofline.roofline_point(roofline.OPERATIONS[1], 512, "float32", _fake_cpu())
    assert s.intensity == pytest.approx(1 / 12)
    assert s.attainable["test CPU"] == pytest.approx(1e10 / 12)
    assert s.attainable["TPU v1"] is None
    assert "memory-bound" in s.message and "no float32 figure" in s.message
    big = roofline.roofline_point(roofline.OPERATIONS[0], 4096, "int8", None)
    assert big.attainable["TPU v1"] == roofline.TPU_V1.peak["int8"]
    assert "compute-bound" in big.message
    assert "Choose" in roofline.roofline_point("nonsense", 4, "float32").message


def test_the_measured_operations_table_prints_in_the_learners_language(monkeypatch):
    """Notebook 04-hardware/01 section 3 prints its measurements through measured_table: the same cell in both
    editions, its headings and each operation's limit from the code catalog, the limit by the machine's ridge point
    (10 FLOPs per byte here), the numbers as they are, the columns aligned."""
    from torchcourse.i18n import translations

    zh = translations("zh_CN").gettext
    cpu = _fake_cpu()
    points = [("matmul 512", roofline.roofline_point(roofline.OPERATIONS[0], 512, "float32", cpu), 4.2e10),
              ("add 4M", roofline.roofline_point(roofline.OPERATIONS[1], 2048, "float32", cpu), 6.5e8)]
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    english = roofline.measured_table(points, cpu).splitlines()
    assert english[0].split() == ["operation", "intensity", "roofline", "bound", "measured", "limited", "by"]
    assert english[1].split() == ["matmul", "512", "85.33", "100.0", "GF/s", "42.0", "GF/s", "compute"]
    assert english[2].split() == ["add", "4M", "0.08", "0.8", "GF/s", "0.7", "GF/s", "memory"]
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    chinese = roofline.measured_table(points, cpu).splitlines()
    for heading in ("operation", "intensity", "roofline bound", "measured", "limited by"):
        assert zh(heading) != heading and zh(heading) in chinese[0]
    assert chinese[1].split()[-1] == zh("compute") != "compute" and chinese[2].split()[-1] == zh("memory") != "memory"
    for en_line, zh_line in zip(english[1:], chinese[1:]):
        assert en_line.split()[:-1] == zh_line.split()[:-1]  # names and numbers
    measured_ends = {display_width(line[:line.rindex("GF/s") + 4]) for line in english[1:] + chinese[1:]}
    assert len(measured_ends) == 1  # the rate column ends in the same place in both languages
    with pytest.raises(ValueError, match="no roof"):
        roofline.measured_table([("int8", roofline.roofline_point(roofline.OPERATIONS[0], 8, "int8", cpu), 1.0)], cpu)


def _numbers(text):
    return re.findall(r"\d+(?:\.\d+)?", text)


def test_the_measurement_report_prints_in_the_learners_language(monkeypatch):
    """Notebook 04-hardware/01 section 2 prints measure_cpu()'s result through its report(): the same cell in both
    editions, its labels, each rate's description and each caution from the code catalog, the numbers as they are."""
    copy, busy_copy = machines.Measurement((5e9, 5.1e9, 5.2e9)), machines.Measurement((5e9, 5.1e9, 9.2e9))
    busy = machines.CpuMeasurement(machines.Measurement((10e9, 11e9, 30e9)),
                                   machines.Bandwidth(copy, 64 * 2**20, 480 * 2**20), 2)
    unknown = machines.CpuMeasurement(machines.Measurement((10e9, 11e9, 12e9)),
                                      machines.Bandwidth(busy_copy, 64 * 2**20, None), 1)
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    english = busy.report().splitlines()
    assert english[:3] == [
        "this CPU (2 thread(s), measured) | last-level cache: 480 MiB",
        "matmul (512 x 512, float32): median 11.0 GFLOP/s (range 10.0-30.0, 3 samples)",
        "copy (64 MiB into another): median 5.1 GB/s (range 5.0-5.2, 3 samples) (with write-allocate: 7.7 GB/s moved)"]
    assert [line.split(":")[0] for line in english[3:]] == ["Caution", "Caution"]
    assert "0.3 times the last-level cache" in english[3] and "differ by 3.00 times" in english[4]
    english_unknown = unknown.report().splitlines()
    assert english_unknown[0].endswith("last-level cache: unknown") and len(english_unknown) == 5
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    for en, zh in [(english, busy.report().splitlines()), (english_unknown, unknown.report().splitlines())]:
        assert len(zh) == len(en)
        for en_line, zh_line in zip(en, zh):
            assert sorted(_numbers(zh_line)) == sorted(_numbers(en_line)) and re.search("[\u4e00-\u9fff]", zh_line)
            assert not re.search(r"\b(median|range|samples|Caution|cache|copy|unknown|trust)\b", zh_line), zh_line
    assert busy.report().startswith("本机 CPU（2 个线程，实测）")


def test_the_first_cells_thread_count_is_in_the_learners_language(monkeypatch):
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    assert roofline.threads_line(12) == "CPU threads PyTorch uses: 12"
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    assert roofline.threads_line(12) == "PyTorch 使用的 CPU 线程数：12"


def test_the_lines_of_sections_1_and_4_print_in_the_learners_language(monkeypatch):
    """Sections 1, 2 (its ridge point) and 4 print through add_timing, ridge_line, ridge_table, paper_ridge_line and
    both_rules_line: in English as the cells printed them, in Chinese with the same numbers, the table aligned."""
    cpu = _fake_cpu()
    rows = [(m, dtype, m.ridge(dtype)) for m in [cpu] + roofline.PUBLISHED for dtype in m.peak]
    point = roofline.roofline_point(roofline.OPERATIONS[0], 512, "int8")

    def lines():
        return ([roofline.add_timing(1000, 3e-6, 3e-9), roofline.ridge_line(cpu.ridge("float32"))]
                + roofline.ridge_table(rows).splitlines()
                + [roofline.paper_ridge_line(roofline.TPU_V1.ridge("int8") / 2), roofline.both_rules_line(point)])

    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    english = lines()
    assert english[:2] == ["     1000 elements:      3.00 us per add,     3.0000 ns per element",
                           "ridge point: 10.0 FLOPs per byte"]
    assert english[2].split() == ["machine", "dtype", "peak", "T", "op/s", "ridge", "point"]
    assert english[3].split() == ["test", "CPU", "float32", "0.100", "10.0", "op/byte"]
    assert english[4].split() == ["TPU", "v1", "int8", "91.750", "2698.5", "op", "per", "weight", "byte"]
    assert english[-2] == "TPU v1 in the paper's units: 1349 multiply-accumulates per weight byte"
    assert english[-1] == ("int8 matmul n=512: 341 op/byte counting every tensor, 1024 op per weight byte; "
                           "TPU v1 attains 34.8 T op/s")
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    chinese = lines()
    assert len(chinese) == len(english)
    for en_line, zh_line in zip(english, chinese):
        assert _numbers(zh_line) == _numbers(en_line)
        if en_line not in english[3:-2]:  # the table's rows: names, dtypes and numbers, only TPU v1's unit in words
            assert re.search("[\u4e00-\u9fff]", zh_line), zh_line
    assert "屋脊点" in chinese[1] and "屋脊点" in chinese[2] and "op per weight byte" not in chinese[4]
    ends = {display_width(line[:line.index(" op")]) for line in english[3:-2] + chinese[3:-2]}
    assert len(ends) == 1  # the ridge points end in the same column in both languages
    with pytest.raises(ValueError, match="needs a matmul"):
        roofline.both_rules_line(roofline.roofline_point(roofline.OPERATIONS[1], 512, "int8"))


def test_roofline_renderer_wrapper_and_standin():
    fig = roofline.draw_roofline(roofline.roofline_point(roofline.OPERATIONS[0], 512, "float32", _fake_cpu()))
    ax = fig.axes[0]
    assert {line.get_label() for line in ax.get_lines()} >= {"test CPU", "NVIDIA H100 SXM"}
    w = roofline.RooflineExplorer(cpu=_fake_cpu())
    w.controls["dtype"].value = "int8"
    assert w.state.dtype == "int8" and w.state.attainable["test CPU"] is None
    w.controls["operation"].value = roofline.OPERATIONS[2]
    assert w.state.operation == roofline.OPERATIONS[2] and isinstance(w.figure, Figure)
    assert len(roofline.static_roofline(_fake_cpu()).axes) == 2


def test_fixed_point_core_bits_error_and_saturation():
    v = fixedpoint.fixed_point_view(5, 3.14159)
    assert (v.int_bits, v.frac_bits, v.code, v.bits) == (5, 10, 3217, "0000110010010001")
    assert abs(v.error) <= v.step / 2 and not v.overflow
    s = fixedpoint.fixed_point_view(5, 40.0)
    assert s.overflow and s.code == 32767 and s.wrapped == -24.0 and "saturated" in s.message
    n = fixedpoint.fixed_point_view(5, -40.0)
    assert n.code == -32768 and n.represented == -32.0
    narrow = fixedpoint.fixed_point_view(2, 1.0)
    assert torch.isnan(torch.as_tensor(narrow.sigmoid_pwl)).all()
    wide = fixedpoint.fixed_point_view(5, 1.0)
    true = 1 / (1 + torch.exp(-torch.as_tensor(wide.sigmoid_x)))
    assert float((torch.as_tensor(wide.sigmoid_pwl) - true).abs().max()) < 0.015


def test_fixed_point_renderer_wrapper_and_standin():
    fig = fixedpoint.draw_fixed(fixedpoint.fixed_point_view(5, 1.5))
    assert len(fig.axes) == 1 and len(fig.artists) == 16 and any("|" in t.get_text() for t in fig.texts)
    w = fixedpoint.FixedPointExplorer()
    w.controls["value"].value = 40.0
    assert w.state.overflow and "saturated" in w.message.value
    w.controls["int_bits"].value = 8
    assert w.state.frac_bits == 7
    stand_in = fixedpoint.static_fixed_point()
    assert len(stand_in.axes) == 3 and len(stand_in.artists) == 3 * 16
