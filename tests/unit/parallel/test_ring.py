"""Ring all-reduce: the simulation against the sum, its schedule and bytes, and the animator's frames."""

from __future__ import annotations

import pytest
import torch

from torchcourse.parallel.ring import bytes_sent_per_rank, chunk_bounds, schedule, simulate_ring_allreduce
from torchcourse.parallel.ringanim import RingAnimator, draw_ring, ring_frame, static_ring


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("length", [1, 3, 8, 13])
def test_simulation_sums_and_leaves_inputs_alone(n, length):
    g = torch.Generator().manual_seed(n * 100 + length)
    inputs = [torch.randint(-9, 9, (length,), generator=g).double() for _ in range(n)]
    originals = [t.clone() for t in inputs]
    results, messages, snapshots = simulate_ring_allreduce(inputs)
    total = torch.stack(originals).sum(0)
    assert all(torch.equal(r, total) for r in results)
    assert all(torch.equal(a, b) for a, b in zip(inputs, originals))
    assert len(messages) == 2 * (n - 1) * n
    assert len(snapshots) == 2 * (n - 1) + 1


def test_chunk_bounds_match_tensor_split():
    for numel in range(0, 12):
        for n in range(1, 6):
            sizes = [len(c) for c in torch.tensor_split(torch.arange(numel), n)]
            assert [hi - lo for lo, hi in chunk_bounds(numel, n)] == sizes


def test_schedule_is_the_documented_one():
    assert schedule(2) == [("reduce-scatter", 0, 0, 1, 0), ("reduce-scatter", 0, 1, 0, 1),
                           ("all-gather", 0, 0, 1, 1), ("all-gather", 0, 1, 0, 0)]
    for n in range(2, 7):
        for phase, step, src, dst, chunk in schedule(n):
            assert dst == (src + 1) % n
            assert chunk == (src - step + (phase == "all-gather")) % n


@pytest.mark.parametrize("n", [2, 4, 8])
def test_each_rank_sends_two_n_minus_one_over_n(n):
    data = [torch.zeros(8 * n) for _ in range(n)]
    _, messages, _ = simulate_ring_allreduce(data)
    assert bytes_sent_per_rank(messages, n) == [2 * (n - 1) * 8 * n * 4 // n] * n


def test_reduce_scatter_leaves_each_rank_one_finished_chunk():
    n = 4
    frame = ring_frame(n, n - 1)
    for r in range(n):
        assert frame.counts[r][(r + 1) % n] == n
    assert ring_frame(n, 2 * (n - 1)).counts == ((n,) * n,) * n
    assert ring_frame(n, 0).counts == ((1,) * n,) * n
    assert ring_frame(n, 99).step == 2 * (n - 1)


def test_animator_frames_agree_with_the_simulation():
    n = 3
    inputs = [torch.full((6,), 10.0 ** r) for r in range(n)]  # digits tell which ranks were summed
    _, _, snapshots = simulate_ring_allreduce(inputs)
    for step, snap in enumerate(snapshots):
        frame = ring_frame(n, step, numel=6)
        for r in range(n):
            for c, (lo, _) in enumerate(chunk_bounds(6, n)):
                digits = f"{int(snap[r][lo].item()):d}".count("1")
                assert digits == frame.counts[r][c]


def test_one_rank_has_a_sentence():
    assert "nothing to send" in ring_frame(1, 0).message


def test_renderer_and_wrapper():
    frame = ring_frame(4, 2)
    fig = draw_ring(frame)
    ax = fig.axes[0]
    assert "reduce-scatter" in ax.get_title()
    assert len(ax.texts) == 16  # a label per cell
    assert len(ax.collections) == 2  # who sends, who receives
    widget = RingAnimator(ranks=3, step=0)
    widget.controls["step"].value = 4
    assert widget.state.phase == "all-gather" and widget.state.counts == ((3,) * 3,) * 3
    assert widget.figure is not None
    assert len(static_ring().axes) == 5
