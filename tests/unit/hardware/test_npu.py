"""DianNao's NFU, ShiDianNao's neighbour reuse, PuDianNao's table."""

import math

import pytest
import torch
import torch.nn.functional as F

from torchcourse.hardware import npu, numerics


@pytest.mark.parametrize("n_in,n_out", [(100, 40), (16, 16), (1, 1), (257, 33)])
def test_nfu_layer_is_close_to_float_and_counts_blocks(n_in, n_out):
    g = torch.Generator().manual_seed(n_in * 1000 + n_out)
    x = torch.rand(n_in, generator=g) * 2 - 1
    w = (torch.rand(n_out, n_in, generator=g) * 2 - 1) * 0.3
    b = torch.rand(n_out, generator=g) * 0.2
    run = npu.nfu_layer(x, w, b)
    assert run.codes.dtype == torch.int16 and run.output.shape == (n_out,)
    assert run.max_error < 0.02
    blocks = math.ceil(n_out / 16) * math.ceil(n_in / 16)
    assert run.blocks == blocks and run.cycles == blocks + 2 and run.multiplies == 256 * blocks


def test_nfu_matches_an_independent_fixed_point_computation():
    g = torch.Generator().manual_seed(5)
    x, w, b = torch.rand(20, generator=g), torch.rand(3, 20, generator=g) * 0.1, torch.zeros(3)
    run = npu.nfu_layer(x, w, b, frac_bits=10)
    acc = numerics._to_fixed(w, 10).double() @ numerics._to_fixed(x, 10).double() / 2**20
    pre = torch.round(acc * 2**10) / 2**10
    expected = numerics._pwl_sigmoid(pre.float(), npu.SIGMOID_KNOTS)
    assert float((run.output - expected).abs().max()) <= 2 * 2**-10


def test_nfu_saturates_large_sums():
    run = npu.nfu_layer(torch.full((32,), 4.0), torch.full((2, 32), 4.0), torch.zeros(2))
    assert run.saturated == 2
    assert torch.allclose(run.output, torch.sigmoid(torch.tensor(8.0)).expand(2), atol=2e-3)


@pytest.mark.parametrize("h,w,k", [(8, 8, 3), (6, 9, 2), (5, 5, 5), (7, 4, 1)])
def test_shidiannao_equals_conv2d_and_counts_reuse(h, w, k):
    g = torch.Generator().manual_seed(h * w * k)
    image, kernel = torch.randn(h, w, generator=g), torch.randn(k, k, generator=g)
    c = npu.shidiannao_conv(image, kernel)
    assert torch.allclose(c.output, F.conv2d(image[None, None], kernel[None, None])[0, 0], atol=1e-5)
    ho, wo = h - k + 1, w - k + 1
    assert c.naive_reads == ho * wo * k * k == c.buffer_reads + c.neighbour_moves
    # first step reads every PE's input; each later horizontal step one column, each vertical one row
    assert c.buffer_reads == ho * wo + k * (k - 1) * ho + (k - 1) * wo


def test_pudiannao_lists_seven_techniques():
    assert len(npu.PUDIANNAO_ALGORITHMS) == 7
    assert {"k-means", "deep neural network", "support vector machine"} <= {a[0] for a in npu.PUDIANNAO_ALGORITHMS}


@pytest.mark.parametrize("n_in,n_out,nodes", [(40, 300, None), (17, 5, 1), (64, 1000, 3), (100, 16 * 16 + 1, 1)])
def test_dadiannao_layer_equals_one_nfu_and_splits_the_work(n_in, n_out, nodes):
    g = torch.Generator().manual_seed(n_in + n_out)
    x = torch.rand(n_in, generator=g) * 2 - 1
    w = (torch.rand(n_out, n_in, generator=g) * 2 - 1) * 0.3
    b = torch.rand(n_out, generator=g) * 0.2
    run = npu.dadiannao_layer(x, w, b, nodes=nodes)
    whole = npu.nfu_layer(x, w, b)
    assert torch.equal(run.codes, whole.codes)      # splitting the neurons over tiles changes no value
    assert run.max_error < 0.02
    tiles = (nodes or 1) * 16
    blocks = math.ceil(n_out / 16)
    assert run.tiles_used == min(tiles, blocks)
    assert run.cycles == math.ceil(blocks / tiles) * math.ceil(n_in / 16) + npu.PIPELINE_STAGES - 1


def test_dadiannao_capacity_and_peak_follow_the_node_layout():
    assert npu.dadiannao_macs_per_cycle() == 4096 and npu.dadiannao_macs_per_cycle(64) == 64 * 4096
    assert npu.dadiannao_synapse_bytes_per_cycle() == 8192
    # 16 tiles x 2 MB hold 16 M 16-bit weights: exactly one node for 8192 x 2048, two for one more block
    assert npu.dadiannao_nodes_for(2048, 8192) == 1
    assert npu.dadiannao_nodes_for(2048, 8192 + 16) == 2
    assert npu.dadiannao_nodes_for(2048, 8192 + 1) == 2
    g = torch.Generator().manual_seed(3)
    x, w, b = torch.rand(2048, generator=g), torch.rand(8192, 2048, generator=g) * 0.01, torch.zeros(8192)
    run = npu.dadiannao_layer(x, w, b)
    assert run.nodes == 1 and run.largest_tile_bytes == npu.DADIANNAO_TILE_EDRAM_BYTES


def test_dadiannao_refuses_layers_its_edram_cannot_hold():
    x, w, b = torch.zeros(4096), torch.zeros(8192, 4096), torch.zeros(8192)
    with pytest.raises(ValueError, match="need 2 node"):
        npu.dadiannao_layer(x, w, b, nodes=1)
    with pytest.raises(ValueError, match="does not fit a tile"):
        npu.dadiannao_nodes_for(2**16 + 1, 16)
    with pytest.raises(ValueError, match="need w"):
        npu.dadiannao_layer(torch.zeros(3), torch.zeros(4, 5), torch.zeros(4))
    with pytest.raises(ValueError, match="at least one node"):
        npu.dadiannao_macs_per_cycle(0)
