"""Helpers for widget figures that are built once and redrawn in place (the chapter's three widgets).

A widget update must show its new picture within 100 ms. With matplotlib 3.11 most of a redraw is text:
each string is shaped, and each glyph rendered, in Python, at every draw. So a widget keeps one figure
for its life (its wrapper passes the bound ``draw`` of a figure object as the renderer) and:

- ``agg_figure``: gives the figure an Agg canvas of its own, so the renderer, and matplotlib's cache of
  text sizes keyed on it, lives from one redraw to the next (``savefig`` on a bare Figure makes a new one);
- ``pin_label``: puts an axis label at a fixed distance from its axes instead of measuring every tick label
  at every draw to place it;
- ``Fixed``: the texts and keys that look the same in every state (axis labels that never change, a key of
  colours) are drawn once into an image, which every later draw pastes: the same pixels, drawn again only
  when the canvas size, dpi or axes positions change (another ``savefig`` dpi, the tight crop) or for a
  vector backend.

Whatever depends on the state is set from the state at every redraw; the unit tests compare each state's
picture with one drawn on a fresh figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Affine2D, Bbox, ScaledTranslation


def agg_figure(figsize: tuple[float, float]) -> Figure:
    """A Figure with its own Agg canvas (kept across ``savefig`` calls, with its text-size cache)."""
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def _away(ax, dx_points: float, dy_points: float):
    return ScaledTranslation(dx_points / 72, dy_points / 72, ax.figure.dpi_scale_trans)


def pin_label(axis, points: float) -> None:
    """Put ``axis``'s label ``points`` outside its axes (below for x, left for y), aligned as matplotlib aligns
    it; leave room for the widest tick labels any state draws."""
    ax = axis.axes
    if axis.axis_name == "x":
        axis.set_label_coords(0.5, 0.0, transform=ax.transAxes + _away(ax, 0, -points))
    else:
        axis.set_label_coords(0.0, 0.5, transform=ax.transAxes + _away(ax, -points, 0))


class Fixed(Artist):
    """Artists that never change, drawn once into an image that every later Agg draw pastes.

    Add only artists whose look does not depend on the widget's state. They are drawn above the axes.
    """

    def __init__(self, fig: Figure) -> None:
        super().__init__()
        self.children: list[Artist] = []
        self._key = None
        self._image: np.ndarray | None = None
        self._corner = (0, 0)
        self._drawing = False
        fig.add_artist(self)
        self.set_zorder(5)

    def add(self, artist: Artist) -> Artist:
        artist.set_figure(self.get_figure(root=True))
        artist.stale_callback = self._child_changed
        self.children.append(artist)
        self._key = None
        return artist

    def _child_changed(self, _artist: Artist, stale: bool) -> None:
        # A child changed after all (its colour, its text): draw them afresh rather than paste the old image.
        if stale and not self._drawing:  # drawing a Text sets and restores its text: not a change
            self._key = None
            self.stale = True

    def get_children(self) -> list[Artist]:
        """The fixed artists (so ``findobj`` and the figure-text test find their texts)."""
        return list(self.children)

    def text(self, x: float, y: float, s: str, transform, **kwargs) -> Text:
        return self.add(Text(x, y, s, transform=transform, **kwargs))

    def xlabel(self, ax, s: str, points: float, **kwargs) -> Text:
        """An x label ``points`` below ``ax`` (what ``ax.set_xlabel`` draws, placed as ``pin_label`` places it).

        The axis's own label stays empty, and pinned: matplotlib would place even an empty one at every draw.
        """
        pin_label(ax.xaxis, points)
        return self.text(0.5, 0.0, s, ax.transAxes + _away(ax, 0, -points), ha="center", va="top", **kwargs)

    def ylabel(self, ax, s: str, points: float, **kwargs) -> Text:
        pin_label(ax.yaxis, points)
        return self.text(0.0, 0.5, s, ax.transAxes + _away(ax, -points, 0), ha="center", va="bottom",
                         rotation=90, rotation_mode="anchor", **kwargs)

    def key(self, ax, entries: Sequence[tuple[str, str]], fontsize: float = 8, outside: bool = False) -> None:
        """A key at ``ax``'s upper right corner: each (label, colour) as a label and a square of that colour;
        inside the axes (labels end at the squares), or ``outside`` to their right (labels after the squares)."""
        corner = ScaledTranslation(1, 1, ax.transAxes)
        points = Affine2D().scale(1 / 72) + ax.figure.dpi_scale_trans + corner  # points from the corner
        for i, (label, colour) in enumerate(entries):
            y = -fontsize * (1.2 + 1.4 * i) + (fontsize if outside else 0)
            square_x, label_x = (0.5 * fontsize, 2.2 * fontsize) if outside else (-1.5 * fontsize, -2.2 * fontsize)
            self.add(Rectangle((square_x, y - fontsize / 2), fontsize, fontsize, transform=points,
                               facecolor=colour, edgecolor="none"))
            self.text(label_x, y, label, points, ha="left" if outside else "right", va="center", fontsize=fontsize)

    def get_window_extent(self, renderer=None) -> Bbox:
        return Bbox.union([a.get_window_extent(renderer) for a in self.children])

    def draw(self, renderer) -> None:
        if not self.get_visible() or not self.children:
            return
        if type(renderer) is not RendererAgg:  # a vector backend, a mixed-mode renderer: draw them as they are
            for a in self.children:
                a.draw(renderer)
            return
        fig = self.get_figure(root=True)
        key = (renderer.width, renderer.height, renderer.dpi, tuple(tuple(ax.get_position().bounds) for ax in fig.axes))
        if key != self._key:
            scratch = RendererAgg(renderer.width, renderer.height, renderer.dpi)  # transparent
            self._drawing = True
            try:
                for a in self.children:
                    a.draw(scratch)
            finally:
                self._drawing = False
            rgba = np.asarray(scratch.buffer_rgba())
            rows = np.flatnonzero(rgba[..., 3].any(axis=1))
            cols = np.flatnonzero(rgba[..., 3].any(axis=0))
            # draw_image takes the rows bottom first, and the lower left corner counted from the canvas's bottom
            crop = rgba[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1] if rows.size else None
            self._image = None if crop is None else crop[::-1].copy()
            self._corner = (int(cols[0]), int(renderer.height) - int(rows[-1]) - 1) if rows.size else (0, 0)
            self._key = key
        if self._image is not None:
            gc = renderer.new_gc()
            renderer.draw_image(gc, *self._corner, self._image)
            gc.restore()
        self.stale = False
