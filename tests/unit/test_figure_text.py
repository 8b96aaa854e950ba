"""Every text in every widget's figure, and in every static stand-in figure the notebooks show, is
readable on the page: WCAG 2.1 AA contrast, and large enough.

The site shows the figures as PNG pictures, which a browser's accessibility checker cannot read, so
this measures the pictures themselves: every static figure function (``static_*``) a solution notebook
imports from the course's package and calls, and for every widget of every chapter each state the site's
player has a frame for (the site's frame space: its extremes, such as the systolic array's largest
partial sums or the ring's fullest step, included), plus each control's ends from the widget's
start. For every text drawn, the figure is drawn a second time with all text transparent (a text's
own box, if it has one, stays); the pixels its glyphs covered in the first picture give the colour
behind it in the second. Its contrast there must reach ``MIN_CONTRAST`` over nearly all of them, and
its size on the page, ``MIN_TEXT_PX``. No two texts may be drawn over each other: their boxes on the
canvas may touch, but not overlap by more than ``OVERLAP_PX`` either way.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
from dataclasses import dataclass

import nbformat
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex, to_rgba
from matplotlib.text import Text
from PIL import Image

from tests.helpers.notebooks import ROOT, solution_notebooks
from torchcourse.autograd.textpaths import LABELS
from torchcourse.budgets import package_for
from torchcourse.contract import chapters
from torchcourse.figure_text import MIN_CONTRAST, luminance, luminance_contrast, relative_luminance
from torchcourse.hardware.roofline import Machine
from torchcourse.widgets import figure_png

DPI = 90  # figure_png's
#: The widest picture the site's article column shows at full size (a 1280 px window; the site review
#: measured the 810 px planner and fixed-point frames shown at 85 %). Wider ones are scaled down.
COLUMN_PX = 688
#: The smallest text a reader should have to read on the page (8 pt at 90 dpi is 10 px).
MIN_TEXT_PX = 9.0
#: The share of a text's glyph pixels that may sit on something else (a grid line, a tick) and miss
#: the contrast: text half over a dark cell and half over a light one still fails.
STRAY = 0.05

#: How far two texts' boxes may run into each other (each way) before one covers the other: a box holds
#: its font's full ascent and descent, so lines set close (a title over a tick label) touch at their edges.
OVERLAP_PX = 2.0

CHAPTERS = chapters(ROOT / "solutions")
#: What a notebook passes a static figure that it measured first: a CPU's roofline as 04-hardware 4.1
#: measures it (a 2-thread laptop's order of magnitude; its line and key entry are what matter here).
MEASURED_ARGUMENTS = {"static_roofline": (Machine("this CPU (2 thread(s), measured)", {"float32": 1.0e11}, 1.5e10,
                                                  "measured in this notebook"),)}


def _widget_specs():
    for chapter in CHAPTERS:
        for spec in importlib.import_module(package_for(chapter)).BUDGETS.widgets:
            yield pytest.param(spec, id=f"{chapter}/{spec.cls}")


def _static_figures():
    """Every ``static_*`` function a solution notebook imports from torchcourse and calls: the stand-ins
    shown in print and on the site for readers without a kernel."""
    found = {}
    for path in solution_notebooks():
        imported, called = {}, set()
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torchcourse"):
                    imported.update({a.asname or a.name: (node.module, a.name) for a in node.names
                                     if a.name.startswith("static_")})
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    called.add(node.func.id)
        for name in called & imported.keys():
            found.setdefault(imported[name], path.relative_to(ROOT / "solutions").parent.name)
    return [pytest.param(module, name, id=f"{chapter}/{name}") for (module, name), chapter in sorted(found.items())]


def _states(widget) -> list[dict]:
    axes, states = widget.frame_states()
    start = widget.values()
    tried = [{a.name: a.values[i] for a, i in zip(axes, s)} for s in states]
    for name, control in widget.controls.items():  # a slider's ends, where the site offers fewer values
        for end in ("min", "max"):
            if hasattr(control, end) and isinstance(getattr(control, end), int | float):
                tried.append({**start, name: getattr(control, end)})
    unique = []
    for values in tried:
        if values not in unique:
            unique.append(values)
    return unique


def _picture(fig) -> tuple[np.ndarray, object]:
    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    fig.draw(renderer)
    return np.asarray(canvas.buffer_rgba())[..., :3].astype(float) / 255, renderer


@dataclass
class _Label:
    """One piece of text as drawn: a Text, or one label of a patch of text outlines (autograd.textpaths)."""

    name: str
    artist: object
    colour: object
    box: object  # its extent on the canvas, in pixels
    pixels_tall: float  # its font size in pixels at the figure's dpi


def _labels(fig, renderer) -> list[_Label]:
    found, undrawn = [], set()
    for ax in fig.axes:  # a hidden axes' texts, and an axis-off axes' tick labels, keep their own visible flag
        hidden = [ax] if not ax.get_visible() else [] if ax.axison else [ax.xaxis, ax.yaxis]
        undrawn.update(id(t) for part in hidden for t in part.findobj(Text))
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and id(t) not in undrawn:
            found.append(_Label(" ".join(t.get_text().split())[:40], t, t.get_color(), t.get_window_extent(renderer),
                                t.get_fontsize() * fig.dpi / 72))
    for outlines in fig.findobj(lambda a: hasattr(a, LABELS)):
        if not outlines.get_visible():
            continue
        to_canvas = outlines.get_transform()
        for k, (path, size) in enumerate(getattr(outlines, LABELS)):
            (_, y0), (_, y1) = to_canvas.transform([(0, 0), (0, size)])
            found.append(_Label(f"outline label {k}", outlines, outlines.get_facecolor(),
                                to_canvas.transform_path(path).get_extents(), abs(y1 - y0)))
    return found


def _hide_all(labels: list[_Label]) -> list:
    """Make every label's ink transparent (a Text's own box stays); returns how to undo it."""
    undo = []
    for artist in {id(label.artist): label.artist for label in labels}.values():
        if isinstance(artist, Text):
            undo.append((artist.set_color, artist.get_color()))
            artist.set_color((0, 0, 0, 0))
        else:
            undo.append((artist.set_facecolor, artist.get_facecolor()))
            artist.set_facecolor((0, 0, 0, 0))
    return undo


def _overlaps(labels: list[_Label]) -> list[tuple[str, str]]:
    """Each pair of drawn texts whose boxes overlap by more than ``OVERLAP_PX`` both across and down."""
    found = []
    for i, first in enumerate(labels):
        for second in labels[i + 1:]:
            a, b = first.box, second.box
            across = min(a.x1, b.x1) - max(a.x0, b.x0)
            down = min(a.y1, b.y1) - max(a.y0, b.y0)
            if across > OVERLAP_PX and down > OVERLAP_PX:
                share = across * down / min(a.width * a.height, b.width * b.height)
                found.append((f"{first.name!r} over {second.name!r} overlap",
                              f"boxes overlap ({share:.0%} of the smaller)"))
    return found


def _problems(fig, scale: float) -> list[tuple[str, str]]:
    """What is unreadable in one figure, each as (the text and its colour, why)."""
    fig.set_dpi(DPI)
    drawn, renderer = _picture(fig)
    labels = _labels(fig, renderer)
    undo = _hide_all(labels)
    try:
        behind, _ = _picture(fig)
    finally:
        for setter, value in undo:
            setter(value)
    height = drawn.shape[0]
    problems, shown = [], []
    for label in labels:
        box = label.box
        x0, x1 = max(int(box.x0), 0), min(int(np.ceil(box.x1)), drawn.shape[1])
        y0, y1 = max(height - int(np.ceil(box.y1)), 0), min(height - int(box.y0), height)
        glyphs = np.abs(drawn[y0:y1, x0:x1] - behind[y0:y1, x0:x1]).max(axis=-1) > 0.02
        if not glyphs.any():
            continue  # not drawn (a tick label outside the view, text clipped away)
        shown.append(label)
        shown_px = label.pixels_tall * scale
        if shown_px < MIN_TEXT_PX - 1e-6:
            problems.append((f"{label.name!r} size",
                             f"{shown_px:.1f} px on the page ({label.pixels_tall * 72 / DPI:.3g} pt at {scale:.0%})"))
        r, g, b, alpha = to_rgba(label.colour, label.artist.get_alpha())
        bg = behind[y0:y1, x0:x1][glyphs]
        ratio = luminance_contrast(luminance(alpha * np.array([r, g, b]) + (1 - alpha) * bg), luminance(bg))
        worst = float(np.quantile(ratio, STRAY))
        if worst < MIN_CONTRAST:
            colour = label.colour if isinstance(label.colour, str) else to_hex(label.colour)
            typical = tuple(int(round(c * 255)) for c in np.median(bg, axis=0))
            problems.append((f"{label.name!r} {colour}", f"contrast {worst:.2f}:1 ({colour} on rgb{typical})"))
    return problems + _overlaps(shown)


def _shown_scale(fig) -> float:
    width = Image.open(io.BytesIO(figure_png(fig))).width
    return min(1.0, COLUMN_PX / width)


@pytest.mark.parametrize("spec", list(_widget_specs()))
def test_every_text_in_every_state_is_readable(spec):
    with contextlib.redirect_stdout(io.StringIO()):  # outside a kernel display() prints a repr
        widget = getattr(importlib.import_module(spec.module), spec.cls)()
    scale = _shown_scale(widget.figure)
    bad: dict[str, str] = {}
    tried = 0
    for values in _states(widget):
        try:
            state = widget._compute(**values)
        except (ValueError, RuntimeError):
            continue  # an error frame: the player shows the message, not a figure
        for text, problem in _problems(widget._render(state), scale):
            bad.setdefault(text, f"{text.rsplit(' ', 1)[0]}: {problem}, at {values}")
        tried += 1
    assert tried, f"{spec.cls}: no state drew a figure"
    report = sorted(bad.values(), key=lambda why: "contrast" not in why)
    assert not bad, f"{spec.cls}: {len(bad)} unreadable texts, e.g.\n" + "\n".join(report[:12])


@pytest.mark.parametrize(("module", "name"), _static_figures())
def test_every_text_in_every_static_figure_is_readable(module, name):
    fig = getattr(importlib.import_module(module), name)(*MEASURED_ARGUMENTS.get(name, ()))
    scale = _shown_scale(fig)
    bad = dict(_problems(fig, scale))
    report = sorted((f"{text.rsplit(' ', 1)[0]}: {why}" for text, why in bad.items()),
                    key=lambda why: "contrast" not in why)
    assert not bad, f"{name} (shown at {scale:.0%}): {len(bad)} unreadable texts, e.g.\n" + "\n".join(report[:12])


def test_the_static_figures_measured_are_all_the_notebooks_call():
    # The list above reads the notebooks' imports; a plain search of their code must find no other static_ call.
    called = {name for path in solution_notebooks() for cell in nbformat.read(path, as_version=4).cells
              if cell.cell_type == "code" for name in re.findall(r"\b(static_\w+)\(", cell.source)}
    assert called and called == {param.values[1] for param in _static_figures()}


def test_the_contrast_the_test_measures_is_wcags():
    # The arithmetic on pixels agrees with the one on colours, and with WCAG's: 21:1 black on white, and
    # the review's 2.85:1 for #999999 on white.
    black, white, grey = (np.array(to_rgba(c)[:3]) for c in ("black", "white", "#999999"))
    assert luminance_contrast(luminance(white), luminance(black)) == pytest.approx(21)
    assert float(luminance(grey)) == pytest.approx(relative_luminance("#999999"))
    assert (relative_luminance("white") + 0.05) / (relative_luminance(grey) + 0.05) == pytest.approx(2.85, abs=0.01)
