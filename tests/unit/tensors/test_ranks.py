"""Rank gallery: core geometry and facts, renderer, wrapper and static stand-in."""

import math

import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from torchcourse.tensors import ranks


@pytest.mark.parametrize("rank", range(ranks.MAX_RANK + 1))
def test_core_matches_pytorch_for_every_rank(rank):
    ex = ranks.rank_example(rank)
    t = torch.zeros(ex.shape)
    assert ex.rank == t.ndim == len(ex.dims)
    assert ex.numel == t.numel() == len(ex.cells)
    # one box per slice at every level above the elements
    assert len(ex.boxes) == sum(math.prod(ex.shape[:k]) for k in range(1, rank))


def test_core_names_pytorch_layouts():
    assert ranks.rank_example(4).layout == "(N, C, H, W) = (2, 3, 2, 3)"
    assert ranks.rank_example(5).dims == ("N", "T", "C", "H", "W")
    assert "image" in ranks.rank_example(4).typical


def test_boxes_nest_inside_the_unit_square_and_cells_do_not_overlap():
    ex = ranks.rank_example(3)
    for b in ex.boxes + ex.cells:
        assert 0 <= b.x and b.x + b.w <= 1 + 1e-9 and 0 <= b.y and b.y + b.h <= 1 + 1e-9
    eps = 1e-9
    cells = ex.cells
    for i, a in enumerate(cells):
        for b in cells[i + 1:]:
            apart_x = a.x + a.w <= b.x + eps or b.x + b.w <= a.x + eps
            apart_y = a.y + a.h <= b.y + eps or b.y + b.h <= a.y + eps
            assert apart_x or apart_y


def test_core_rejects_ranks_outside_the_gallery():
    with pytest.raises(ValueError, match="between 0 and 5"):
        ranks.rank_example(6)


def test_renderer_draws_one_square_per_element_and_a_box_per_slice():
    ex = ranks.rank_example(2)
    fig = ranks.draw_rank(ex)
    assert isinstance(fig, Figure)
    patches = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(patches) == len(ex.boxes) + ex.numel
    assert "rank 2: matrix" in fig.axes[0].get_title()


def test_wrapper_updates_state_and_figure_when_the_slider_moves():
    gallery = ranks.RankGallery(rank=1)
    assert gallery.state.example.shape == (4,)
    first = gallery.figure
    gallery.controls["rank"].value = 4
    assert gallery.state.example.dims == ("N", "C", "H", "W")
    assert "rank 4" in gallery.message.value
    assert gallery.figure is not first and "rank 4" in gallery.figure.axes[0].get_title()


def test_static_stand_in_shows_all_ranks():
    fig = ranks.static_rank_gallery()
    titles = [ax.get_title() for ax in fig.axes]
    assert [t.split(":")[0] for t in titles] == [f"rank {r}" for r in range(6)]
