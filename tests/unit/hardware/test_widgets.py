"""Roofline explorer and fixed-point explorer: cores, renderers, wrappers, stand-ins; the measurements."""

import math

import pytest
import torch
from matplotlib.figure import Figure

from torchcourse.hardware import fixedpoint, roofline


def test_intensity_formulas():
    assert roofline._matmul_ops_bytes(2, 2, 2, 4) == (16, 48)
    assert roofline._elementwise_ops_bytes(10, 1) == (10, 30)
    ops, moved = roofline._conv2d_ops_bytes(1, 3, 8, 5, 3, 2)
    assert ops == 2 * 8 * 25 * 3 * 9 and moved == 2 * (3 * 25 + 8 * 3 * 9 + 8 * 25)


def test_attainable_is_the_lower_roof():
    assert roofline._attainable(0.5, 100.0, 10.0) == 5.0
    assert roofline._attainable(50.0, 100.0, 10.0) == 100.0


def test_published_figures_derive_from_their_parts():
    assert roofline.TPU_V1.peak["int8"] == 2 * 65_536 * 700e6
    assert math.isclose(roofline.TPU_V1.peak["int8"] / 1e12, 91.75, rel_tol=1e-4)
    assert roofline.H100_SXM.peak["int8"] == 2 * roofline.H100_SXM.peak["bfloat16"] + 1e12
    for m in roofline.PUBLISHED:
        assert m.source and m.bandwidth > 0


def test_measurements_are_positive_and_bounded_in_time():
    import time

    t0 = time.perf_counter()
    flops = roofline.measure_matmul_flops(n=128, seconds=0.05)
    bw = roofline.measure_bandwidth(mib=8, seconds=0.05)
    assert flops > 1e6 and bw > 1e6
    assert time.perf_counter() - t0 < 5


def _fake_cpu():
    return roofline.Machine("test CPU", {"float32": 1e11}, 1e10, "made up for a test")


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
