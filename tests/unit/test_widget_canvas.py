"""Renderers that declare `fits_canvas` keep every artist inside the canvas, in every state tried.

`figure_png` skips the "tight" crop for such figures (a second layout pass, most of a redraw's
cost); a label, legend or title reaching past the canvas would then be clipped in the notebook
and on the site. States tried: every option of every selection control and both ends (and the
middle) of every slider, one control at a time from the widget's defaults, plus the values its
chapter's budgets declare.
"""

from __future__ import annotations

import contextlib
import importlib
import io

import ipywidgets as widgets
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from tests.helpers.notebooks import ROOT
from torchcourse.budgets import package_for
from torchcourse.contract import chapters
from torchcourse.widgets import FITS_CANVAS

CHAPTERS = chapters(ROOT / "solutions")
SLACK_IN = 0.02  # about 2 pixels at the course's 90 dpi: anti-aliasing, not clipping


def _widget_specs():
    for chapter in CHAPTERS:
        for spec in importlib.import_module(package_for(chapter)).BUDGETS.widgets:
            yield pytest.param(spec, id=f"{chapter}/{spec.cls}")


def _values(control) -> list:
    if getattr(control, "_options_values", None):
        return list(control._options_values)
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.BoundedIntText,
                            widgets.BoundedFloatText)):
        middle = (control.min + control.max) / 2
        return [control.min, type(control.value)(middle), control.max]
    return []


def _states(widget, declared: dict | None):
    defaults = widget.values()
    for name, control in widget.controls.items():
        for value in _values(control) + list((declared or {}).get(name, [])):
            yield {**defaults, name: value}


def _overflow(fig) -> str:
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    drawn = fig.get_tightbbox(renderer)
    width, height = fig.get_size_inches()
    out = {"left": -drawn.x0, "bottom": -drawn.y0, "right": drawn.x1 - width, "top": drawn.y1 - height}
    return ", ".join(f"{side} by {inches:.2f} in" for side, inches in out.items() if inches > SLACK_IN)


@pytest.mark.parametrize("spec", list(_widget_specs()))
def test_declared_canvas_holds_every_artist(spec):
    cls = getattr(importlib.import_module(spec.module), spec.cls)
    with contextlib.redirect_stdout(io.StringIO()):  # outside a kernel display() prints a repr
        widget = cls()
    if not getattr(widget.figure, FITS_CANVAS, False):
        pytest.skip(f"{spec.cls} does not declare fits_canvas: figure_png crops it")
    tried, bad = 0, []
    for values in _states(widget, spec.values):
        fig = widget._render(widget._compute(**values))
        assert getattr(fig, FITS_CANVAS, False), f"{values}: declared for some states only"
        tried += 1
        if problem := _overflow(fig):
            bad.append(f"{values}: past the canvas {problem}")
    assert tried and not bad, "\n".join(bad)
