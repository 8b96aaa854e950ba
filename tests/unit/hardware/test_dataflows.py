"""Output- and input-stationary arrays, im2col convolution, and TPU v1's memory model (SCALE-Sim's own
counts for the dataflows are checked in test_scalesim.py)."""

import pytest
import torch
import torch.nn.functional as F

from torchcourse.hardware import dataflows, tpu_memory


def _operands(seed, m, k, n):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8),
            torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8))


@pytest.mark.parametrize("dataflow", list(dataflows.DATAFLOWS))
def test_every_dataflow_equals_matmul_on_random_shapes_and_counts_its_formula(dataflow):
    g = torch.Generator().manual_seed(7)
    for trial in range(25):
        m, k, n, rows, cols = (int(v) for v in torch.randint(1, 11, (5,), generator=g))
        x, w = _operands(trial, m, k, n)
        y, cycles = dataflows.dataflow_matmul(x, w, rows, cols, dataflow)
        assert torch.equal(y, torch.matmul(x.to(torch.int32), w.to(torch.int32))), (m, k, n, rows, cols)
        assert cycles == dataflows._dataflow_cycles(dataflow, m, k, n, rows, cols)
    x, w = _operands(0, 3, 5, 2)
    x[:] = -128
    w[:] = -128
    assert int(dataflows.dataflow_matmul(x, w, 2, 2, dataflow)[0][0, 0]) == 5 * 128 * 128   # no int8 wrap


def test_bad_inputs_give_clear_errors():
    x, w = _operands(0, 2, 2, 2)
    with pytest.raises(ValueError, match="dataflow must be one of"):
        dataflows.dataflow_matmul(x, w, 2, 2, "rs")
    with pytest.raises(ValueError, match="at least one row"):
        dataflows.dataflow_matmul(x, w, 0, 2, "os")
    with pytest.raises(TypeError, match="int8"):
        dataflows.dataflow_matmul(x.float(), w, 2, 2, "os")
    with pytest.raises(ValueError, match="at least 1"):
        dataflows.compare_dataflows(0, 2, 2, 2, 2)


def test_the_streamed_dimension_decides_which_dataflow_is_fastest():
    for shape, best in [((4096, 128, 128), "ws"), ((128, 8192, 128), "os"), ((128, 128, 4096), "is")]:
        shares = dataflows.compare_dataflows(*shape, 128, 128)
        assert max(shares, key=lambda flow: shares[flow]["utilisation"]) == best
        assert min(dataflows.DATAFLOWS, key=lambda flow: dataflows._dataflow_cycles(flow, *shape, 128, 128)) == best
    assert set(shares["ws"]) == {"tiles", "utilisation"}          # no cycle count: exercise 2 of 4.2 asks for it


def test_sram_reads_read_the_stationary_operand_once():
    assert dataflows.sram_reads("ws", 10, 3, 5, 4, 4) == {"X": 30 * 2, "W": 15}
    assert dataflows.sram_reads("is", 10, 3, 5, 4, 4) == {"X": 30, "W": 15 * 3}
    assert dataflows.sram_reads("os", 10, 3, 5, 4, 4) == {"X": 30 * 2, "W": 15 * 3}


def test_im2col_convolution_on_the_array_equals_conv2d():
    g = torch.Generator().manual_seed(3)
    image = torch.randint(-128, 128, (3, 7, 6), generator=g, dtype=torch.int8)
    kernel = torch.randint(-128, 128, (4, 3, 3, 2), generator=g, dtype=torch.int8)
    want = F.conv2d(image[None].double(), kernel.double())[0]
    for flow in dataflows.DATAFLOWS:
        y, cycles, (m, k, n) = dataflows.conv2d_on_array(image, kernel, 4, 4, flow)
        assert y.dtype == torch.int32 and torch.equal(y.double(), want)
        assert (m, k, n) == (5 * 5, 3 * 3 * 2, 4)
        assert cycles == dataflows._dataflow_cycles(flow, m, k, n, 4, 4)
    cols = dataflows.im2col(image, 3, 2)
    assert cols.shape == (25, 18) and torch.equal(cols[0], image[:, :3, :2].reshape(-1))
    with pytest.raises(ValueError, match="does not fit"):
        dataflows.im2col(image, 8, 2)
    with pytest.raises(ValueError, match="kernel must be"):
        dataflows.conv2d_on_array(image, kernel[:, :2], 4, 4)


def test_tpu_v1_weight_stalls_end_at_its_ridge():
    assert tpu_memory.weight_fetch_cycles() == pytest.approx(65536 / (34e9 / 700e6))   # 1349 cycles
    assert tpu_memory.tile_timing(200).active == pytest.approx(200 / tpu_memory.weight_fetch_cycles())
    assert tpu_memory.tile_timing(2000).active == 1.0 and tpu_memory.tile_timing(2000).stall == 0
    # MLP0 at its batch of 200: the model's 15 % against the 12.7 % the paper's counters measured
    assert abs(tpu_memory.tile_timing(200).active - tpu_memory.MLP0_ACTIVE_MEASURED) < 0.03
    with pytest.raises(ValueError):
        tpu_memory.tile_timing(0)
    one, two = (tpu_memory.fc_network_seconds(tpu_memory.MLP0_WEIGHTS, b) for b in (100, 200))
    assert one == two                                     # below the ridge, a larger batch is free
    assert [row[1] for row in tpu_memory.TABLE_4] == [16, 64, 16, 64, 200, 250]


def test_later_generations_derive_their_ridge():
    v5e = next(g for g in tpu_memory.GENERATIONS if g.name == "v5e")
    assert v5e.ridge == pytest.approx(197e12 / 819e9)
    assert all(g.mxu in (128, 256) and g.source for g in tpu_memory.GENERATIONS)


def test_dram_traffic_pads_split_dimensions_to_whole_tiles():
    # 10 x 3 x 5 on 4 x 4: OS splits M (10 -> 12) and N (5 -> 8); WS splits K (3 -> 4) and N
    assert dataflows.dram_traffic("os", 10, 3, 5, 4, 4) == {"X": 12 * 3, "W": 3 * 8, "Y": 50}
    assert dataflows.dram_traffic("ws", 10, 3, 5, 4, 4) == {"X": 10 * 4, "W": 3 * 8, "Y": 50}
    assert dataflows.dram_traffic("is", 10, 9, 5, 4, 4)["Y"] == 50 * 3          # partial sums per tile of K
    assert dataflows.dram_traffic("os", 10, 3, 5, 4, 4, words_per_transfer=10)["X"] == 40
    with pytest.raises(ValueError, match="dataflow must be one of"):
        dataflows.dram_traffic("rs", 1, 1, 1, 1, 1)


def test_a_narrower_dram_interface_lengthens_scalesims_span_by_the_write_back_only():
    from torchcourse.hardware.scalesim_reference import BANDWIDTH_RUNS, DATAFLOW_RUNS
    spans: dict[tuple, set[int]] = {}
    for (m, k, n, rows, cols, flow, bw), (compute, overall, stalls) in BANDWIDTH_RUNS.items():
        assert stalls == 0 and compute == DATAFLOW_RUNS[(m, k, n, rows, cols, flow)][0]
        rest = overall - dataflows.write_back_cycles(flow, m, k, n, rows, cols, bw)
        spans.setdefault((m, k, n, rows, cols, flow), set()).add(rest)
    assert len(spans) == 12 and all(len(rest) == 1 for rest in spans.values())   # the same at 10, 4 and 1 words
    with pytest.raises(ValueError, match="one word per cycle"):
        dataflows.write_back_cycles("ws", 4, 4, 4, 2, 2, 0)
