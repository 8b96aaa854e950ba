"""Splits over simulated devices equal the unsplit model; DataParallel's steps done by hand on CPU."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from torchcourse.parallel.split import (
    data_parallel_grads,
    dataparallel_forward,
    dataparallel_memory,
    pipeline_parallel,
    stage_bounds,
    tensor_parallel_mlp,
)


@pytest.fixture
def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 10), nn.ReLU(), nn.Linear(10, 6), nn.ReLU(), nn.Linear(6, 3)).double()


@pytest.fixture
def x():
    return torch.randn(7, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


@pytest.mark.parametrize("stages", [1, 2, 3, 5])
def test_pipeline_equals_unsplit(model, x, stages):
    result = pipeline_parallel(model, x, stages)
    assert torch.equal(result.output, model(x))
    assert len(result.log) == stages - 1


def test_stage_bounds_cover_every_layer():
    assert stage_bounds(5, 3) == [(0, 2), (2, 4), (4, 5)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 11])
def test_tensor_parallel_equals_unsplit(model, x, n):
    with torch.no_grad():
        result = tensor_parallel_mlp(x, model[0], model[2], n)
        want = model[2](torch.relu(model[0](x)))
    assert torch.allclose(result.output, want, rtol=1e-12, atol=1e-12)
    assert len(result.extra["partials"]) == n
    assert result.comm_bytes == (2 * (n - 1) * want.numel() * 8 // n if n > 1 else 0)


def test_data_parallel_equals_full_batch_for_equal_slices(model):
    xs = torch.randn(6, 8, dtype=torch.float64)
    ys = torch.randn(6, 3, dtype=torch.float64)
    split = data_parallel_grads(model, nn.functional.mse_loss, xs, ys, 3)
    model.zero_grad()
    nn.functional.mse_loss(model(xs), ys).backward()
    whole = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    assert torch.allclose(split.output, whole, atol=1e-14)
    uneven = data_parallel_grads(model, nn.functional.mse_loss, xs, ys, 4)
    assert not torch.allclose(uneven.output, whole)


@pytest.mark.parametrize("batch,n,chunks", [(6, 4, [2, 2, 2]), (10, 4, [3, 3, 3, 1]), (2, 4, [1, 1]), (5, 1, [5])])
def test_dataparallel_walk(model, batch, n, chunks):
    xs = torch.randn(batch, 8, dtype=torch.float64)
    with torch.no_grad():
        result = dataparallel_forward(model, xs, n)
        assert torch.allclose(result.output, model(xs), atol=1e-14)
    assert result.extra["chunks"] == chunks


def test_dataparallel_memory_device_zero_carries_most():
    mem = dataparallel_memory(1000, 100, 10, batch=10, n_devices=4)
    assert mem[0] == max(mem) and mem[1] == mem[2] and mem[3] < mem[1]
    assert dataparallel_memory(1000, 100, 10, batch=2, n_devices=4)[2:] == [0, 0]
