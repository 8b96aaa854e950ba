"""int8 quantisation, 16-bit fixed point and the piecewise-linear sigmoid."""

import pytest
import torch

from torchcourse.hardware import numerics


def test_quantize_rounds_adds_zero_point_and_saturates():
    x = torch.tensor([0.0, 0.26, -0.26, 1.0, 1000.0, -1000.0])
    q = numerics._quantize_int8(x, 0.1, 3)
    assert q.dtype == torch.int8
    assert q.tolist() == [3, 6, 0, 13, 127, -128]


@pytest.mark.parametrize("seed", range(5))
def test_quantisation_error_is_at_most_half_a_step_inside_the_range(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(1000, generator=g) * 7 - 1
    scale, zp = numerics.qparams(float(x.min()), float(x.max()))
    back = numerics.dequantize_int8(numerics._quantize_int8(x, scale, zp), scale, zp)
    assert float((back - x).abs().max()) <= scale / 2 + 1e-6
    assert numerics.dequantize_int8(torch.tensor([zp], dtype=torch.int8), scale, zp).item() == 0.0


def test_fixed_point_rounds_saturates_and_round_trips():
    codes = numerics._to_fixed(torch.tensor([3.14159, -0.3, 40.0, -40.0]), 10)
    assert codes.dtype == torch.int16 and codes.tolist() == [3217, -307, 32767, -32768]
    back = numerics._from_fixed(codes, 10)
    assert back.dtype == torch.float32 and back[0].item() == 3217 / 1024
    all_codes = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    for frac in (0, 7, 10, 15):
        assert torch.equal(numerics._to_fixed(numerics._from_fixed(all_codes, frac), frac), all_codes)


def test_q_range_and_bit_pattern():
    assert numerics.q_range(10) == (-32.0, 32767 / 1024, 2**-10)
    assert numerics.bit_pattern(-1) == "1" * 16
    assert numerics.bit_pattern(3217) == "0000110010010001"


def test_pwl_sigmoid_matches_numpy_interp_and_its_error_bound():
    import numpy as np

    knots = torch.linspace(-8, 8, 17)
    x = torch.linspace(-12, 12, 2001)
    got = numerics._pwl_sigmoid(x, knots)
    want = np.interp(x.numpy(), knots.numpy(), torch.sigmoid(knots).numpy())
    assert got.dtype == torch.float32
    assert np.abs(got.numpy() - want).max() < 1e-6
    assert float((got - torch.sigmoid(x)).abs().max()) < 0.012


def test_pwl_table_reproduces_the_interpolation():
    knots = torch.tensor([-2.0, 0.0, 1.0, 3.0])
    slope, intercept = numerics.pwl_table(knots)
    x = torch.tensor([-1.0, 0.5, 2.0])
    seg = torch.tensor([0, 1, 2])
    via_table = (slope[seg] * x.double() + intercept[seg]).float()
    assert torch.allclose(via_table, numerics._pwl_sigmoid(x, knots), atol=1e-6)


def test_symmetric_int8_uses_the_whole_range_with_zero_point_0():
    x = torch.tensor([-2.54, 0.0, 1.0, 0.01])
    codes, scale = numerics.symmetric_int8(x)
    assert scale == pytest.approx(2.54 / 127) and codes.dtype == torch.int8
    assert codes.tolist() == [-127, 0, 50, 0]
    assert numerics.symmetric_int8(torch.zeros(3))[1] == 1.0


def test_pwl_error_of_nfu3s_knots():
    err = numerics.pwl_error(torch.linspace(-10, 10, 2001), torch.linspace(-8, 8, 17))
    assert type(err) is float and 0.011 < err < 0.012
    assert numerics.pwl_error(torch.tensor([-1.0, 0.0]), torch.tensor([-1.0, 0.0])) < 1e-7


def test_the_exercises_answers_are_not_exported():
    """Chapter 4's exercises ask for these functions; the library keeps its own versions private."""
    from torchcourse.hardware import fixedpoint, npu, roofline, systolic

    answers = {"quantize_int8", "to_fixed", "from_fixed", "pwl_sigmoid", "pe_step", "systolic_cycles",
               "tile_cycles", "peak_ops", "matmul_intensity", "add_intensity", "roofline_bound",
               "matmul_ops_bytes", "elementwise_ops_bytes", "conv2d_ops_bytes", "attainable"}
    for module in (numerics, systolic, roofline, npu, fixedpoint):
        public = {name for name in vars(module) if not name.startswith("_")}
        assert not public & answers, f"{module.__name__} exports {sorted(public & answers)}"
