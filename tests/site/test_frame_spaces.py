"""Every widget's declared frame space, without building the site: within the cap, every control movable.

(The frames themselves, on built pages and in Chromium: tests/site/test_site.py and
tests/browser/test_site_browser.py.)
"""

from __future__ import annotations

import importlib
from pathlib import Path

import ipywidgets as widgets
import pytest

from torchcourse.budgets import package_for
from torchcourse.widgets import FRAME_CAP, SITE_FRAMES_ENV, Explorer

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p.name for p in (ROOT / "chapters").iterdir() if p.is_dir() and p.name[:2].isdigit())
DECLARED = [(w.module, w.cls) for ch in CHAPTERS for w in importlib.import_module(package_for(ch)).BUDGETS.widgets]


@pytest.mark.parametrize(("module", "cls"), DECLARED, ids=[c for _, c in DECLARED])
def test_frame_space_is_capped_and_moves_every_control(module, cls):
    widget = getattr(importlib.import_module(module), cls)()
    axes, states = widget.frame_states()
    assert 2 <= len(states) <= FRAME_CAP
    assert tuple(a.start for a in axes) in states, "the widget's starting state has no frame"
    for k, axis in enumerate(axes):
        assert len(axis.values) >= 2, f"{cls}: control {axis.name} has one value on the site"
        assert len({s[k] for s in states}) == len(axis.values), f"{cls}: a value of {axis.name} has no frame"
        if isinstance(widget.controls[axis.name], widgets.Text | widgets.FloatText):
            assert axis.note, f"{cls}: free-text control {axis.name} must say the notebook accepts anything"


def _single_moves(states: list[tuple[int, ...]]) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
    """Each state's neighbours: the states one control away (what a reader reaches in one move on the site)."""
    return {s: [t for t in states if sum(a != b for a, b in zip(s, t)) == 1] for s in states}


@pytest.mark.parametrize(("module", "cls"), DECLARED, ids=[c for _, c in DECLARED])
def test_every_frame_is_reached_from_the_start_one_control_per_move(module, cls):
    # The player offers a control only the values that have a frame beside the other controls as they stand
    # (book/js/frame-player.js): a state no chain of such moves reaches is a frame no reader can see.
    widget = getattr(importlib.import_module(module), cls)()
    axes, states = widget.frame_states()
    neighbours = _single_moves(states)
    start = tuple(a.start for a in axes)
    seen, todo = {start}, [start]
    while todo:
        for t in neighbours[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    unreached = [{a.name: a.labels[i] for a, i in zip(axes, s)} for s in states if s not in seen]
    assert not unreached, f"{cls}: {len(unreached)} of {len(states)} frames unreachable, e.g. {unreached[:3]}"


@pytest.mark.parametrize(("module", "cls"), DECLARED, ids=[c for _, c in DECLARED])
def test_every_control_offers_its_values_in_its_own_order(module, cls):
    widget = getattr(importlib.import_module(module), cls)()
    axes, _ = widget.frame_states()
    for axis in axes:
        control = widget.controls[axis.name]
        if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
            assert axis.values == [False, True], f"{cls}: {axis.name}"
        elif hasattr(control, "options") and not isinstance(control, widgets.Combobox):
            order = [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in control.options]
            positions = [order.index(v) for v in axis.values]
            assert positions == sorted(positions), f"{cls}: {axis.name} runs {axis.labels}, the control {order}"
        elif isinstance(control, widgets.IntSlider | widgets.FloatSlider):
            assert axis.values == sorted(axis.values), f"{cls}: {axis.name} runs {axis.labels}"


@pytest.mark.parametrize(("module", "cls"), DECLARED, ids=[c for _, c in DECLARED])
def test_every_player_says_which_states_it_has(module, cls):
    widget = getattr(importlib.import_module(module), cls)()
    axes, _ = widget.frame_states()
    said = " ".join(widget.frame_space_description())
    for axis in axes:
        assert axis.description in said, f"{cls}: the player never says which values of {axis.name} it has"


def test_a_selection_slider_keeps_its_options_order():
    w = _Square()
    w.controls["size"] = widgets.SelectionSlider(options=[0.1, 1.0, 7.0, 70.0], value=7.0)
    w.frame_space = lambda: [{"n": [2, 3]}, {"size": [0.1, 1.0, 7.0, 70.0], "big": [True]}]
    w._compute = lambda n, big, size: n
    axes, _ = w.frame_states()
    assert axes[2].values == [0.1, 1.0, 7.0, 70.0]
    assert w.frame_space_description() == ["n (2, 3)", "size (all 4), with big True"]


class _Square(Explorer):
    def __init__(self, n: int = 2, big: bool = False) -> None:
        controls = {"n": widgets.IntSlider(value=n, min=0, max=9), "big": widgets.Checkbox(value=big)}
        super().__init__(controls, lambda n, big: n * n * (10 if big else 1), self._draw, title="square")

    @staticmethod
    def _draw(value):
        from torchcourse.widgets import figure_and_axes

        fig, ax = figure_and_axes(figsize=(1, 1))
        ax.set_title(str(value))
        return fig


def test_default_space_is_every_value_and_the_cap_is_enforced(monkeypatch):
    w = _Square()
    axes, states = w.frame_states()
    assert [a.values for a in axes] == [list(range(10)), [False, True]] and len(states) == 20
    data = w.frames()
    n_axes = len(axes)
    assert data["frames"][data["start"]][:n_axes] == [2, 0]
    assert len(data["images"]) == 19  # n=0 draws 0 whether big or not: that picture is stored once
    monkeypatch.setattr("torchcourse.widgets.FRAME_CAP", 19)
    with pytest.raises(ValueError, match="frame_space"):
        w.frame_states()


def test_a_union_of_products_and_the_site_bundle(monkeypatch):
    w = _Square(n=3)
    w.frame_space = lambda: [{"n": [0, 1]}, {"n": [9], "big": [True]}]
    axes, states = w.frame_states()
    assert axes[0].values == [0, 1, 3, 9] and sorted(states) == [(0, 0), (1, 0), (2, 0), (3, 1)]
    assert "application/vnd.jupyter.widget-view+json" in w._repr_mimebundle_()
    monkeypatch.setenv(SITE_FRAMES_ENV, "1")
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert bundle["text/html"].startswith('<div class="tc-player"') and "tc-player-data" in bundle["text/html"]
