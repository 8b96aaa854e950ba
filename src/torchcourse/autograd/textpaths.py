"""Text drawn as one outline patch: a few artists instead of one per label keeps widget updates fast.

Used by the graph and Jacobian explorers (notebooks 2.1 and 2.2). Positions and sizes are in data
units, so the axes must have an equal aspect ratio.
"""

from __future__ import annotations

import functools

from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.text import TextPath
from matplotlib.transforms import Affine2D


@functools.lru_cache(maxsize=4096)
def text_path(text: str, size: float, ha: str = "center") -> Path:
    """The outline of one line of text, ``size`` units tall, anchored at (0, 0) by ``ha``; cached."""
    path = TextPath((0, 0), text, size=size)
    box = path.get_extents()
    dx = {"center": -(box.x0 + box.x1) / 2, "left": -box.x0, "right": -box.x1}[ha]
    return path.transformed(Affine2D().translate(dx, -size * 0.35))


def place(text: str, x: float, y: float, size: float, ha: str = "center") -> Path:
    return text_path(text, size, ha).transformed(Affine2D().translate(x, y))


#: The attribute a patch of outlines keeps its labels in, ``[(outline, size)]``: the figure-text test
#: (tests/unit/test_figure_text.py) measures each label's contrast and size as it does a Text's.
LABELS = "_torchcourse_text_labels"


def patch(paths: list[Path], colour: str = "black", *, size: float, **kwargs) -> PathPatch:
    """All the given outlines, each ``size`` units tall, as one patch (add it with ``ax.add_artist``:
    fitting limits to glyphs is slow)."""
    outlines = PathPatch(Path.make_compound_path(*paths), fc=colour, lw=0, **kwargs)
    setattr(outlines, LABELS, [(path, size) for path in paths])
    return outlines
