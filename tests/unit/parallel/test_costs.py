"""Cost models: transfer time, CUDA_VISIBLE_DEVICES renumbering, ring bytes, ZeRO memory."""

from __future__ import annotations

import pytest

from torchcourse.parallel.costs import (
    LINKS,
    allreduce_seconds,
    ring_allreduce_bytes,
    transfer_seconds,
    visible_devices,
    zero_bytes_per_rank,
)


def test_transfer_seconds():
    assert transfer_seconds(0, 31.5, 10.0) == pytest.approx(1e-5)
    assert transfer_seconds(31.5e9, 31.5, 0.0) == pytest.approx(1.0)
    assert all(link.source for link in LINKS)


def test_visible_devices_follows_the_cuda_rule():
    assert visible_devices(None, 4) == [0, 1, 2, 3]
    assert visible_devices("", 4) == []
    assert visible_devices("2,0", 4) == [2, 0]
    assert visible_devices("1,7,2", 4) == [1]          # an invalid index hides the rest
    assert visible_devices("0,x,1", 4) == [0]
    with pytest.raises(ValueError):
        visible_devices("1,1", 4)


@pytest.mark.parametrize("n", [1, 2, 4, 64])
def test_ring_bytes(n):
    assert ring_allreduce_bytes(1000, n) == pytest.approx(2 * (n - 1) * 1000 / n)
    assert allreduce_seconds(1000, n, 1.0, 0.0) == pytest.approx(ring_allreduce_bytes(1000, n) / 1e9)


def test_zero_matches_the_papers_example():
    # Rajbhandari et al. 2020, figure 1: 7.5B parameters, 64 GPUs -> 120, 31.4, 16.6, 1.9 GB
    got = [zero_bytes_per_rank(7_500_000_000, 64, s) / 1e9 for s in range(4)]
    assert got == pytest.approx([120.0, 31.4, 16.6, 1.875], abs=0.05)
    with pytest.raises(ValueError):
        zero_bytes_per_rank(10, 2, 4)
