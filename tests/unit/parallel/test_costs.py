"""Cost models: link figures, CUDA_VISIBLE_DEVICES renumbering, the planner's ring bytes."""

from __future__ import annotations

import pytest

from torchcourse.parallel.costs import LINKS, visible_devices
from torchcourse.parallel.planner import _ring_bytes


def test_links_have_sources():
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
    assert _ring_bytes(1000, n) == pytest.approx(2 * (n - 1) * 1000 / n)
