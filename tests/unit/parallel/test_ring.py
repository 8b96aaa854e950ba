"""Ring all-reduce: its schedule and bytes, and the animator's frames against a simulation of the ring."""

from __future__ import annotations

import pytest
import torch

from torchcourse.parallel.ring import bytes_sent_per_rank, chunk_bounds, schedule
from torchcourse.parallel.ringanim import RingAnimator, draw_ring, ring_frame, static_ring


def _simulate(tensors):
    """The ring by value over simulated ranks (the library has no simulator: it is the notebook's exercise);
    a snapshot of every rank's buffer after each step."""
    n = len(tensors)
    bufs = [t.clone() for t in tensors]
    bounds = chunk_bounds(bufs[0].numel(), n)
    snapshots = [[b.clone() for b in bufs]]
    for phase in ("reduce-scatter", "all-gather"):
        for step in range(n - 1):
            sends = [m for m in schedule(n) if m[0] == phase and m[1] == step]
            payloads = [bufs[src][bounds[c][0]:bounds[c][1]].clone() for _, _, src, _, c in sends]
            for (_, _, _, dst, c), data in zip(sends, payloads):
                lo, hi = bounds[c]
                if phase == "reduce-scatter":
                    bufs[dst][lo:hi] += data
                else:
                    bufs[dst][lo:hi] = data
            snapshots.append([b.clone() for b in bufs])
    return snapshots


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("length", [1, 3, 8, 13])
def test_the_schedule_sums(n, length):
    g = torch.Generator().manual_seed(n * 100 + length)
    inputs = [torch.randint(-9, 9, (length,), generator=g).double() for _ in range(n)]
    snapshots = _simulate(inputs)
    total = torch.stack(inputs).sum(0)
    assert all(torch.equal(r, total) for r in snapshots[-1])
    assert len(schedule(n)) == 2 * (n - 1) * n
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
    assert bytes_sent_per_rank(8 * n, n, 4) == [2 * (n - 1) * 8 * n * 4 // n] * n
    assert sum(bytes_sent_per_rank(7, 3, 8)) == 2 * 2 * 7 * 8  # unequal chunks: every chunk goes round twice


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
    snapshots = _simulate(inputs)
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
