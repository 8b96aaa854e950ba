"""Readable text in the course's figures: WCAG 2.1 contrast, and the text colour for a coloured cell.

The widgets' figures are PNG pictures on the site, so a browser's accessibility checker cannot see
their text; the course holds them to WCAG 2.1 AA itself (tests/unit/test_figure_text.py): every
label at least 4.5:1 against what is drawn behind it, and at least 9 px as the page shows it (8 pt at
the figures' 90 dpi; more in a figure wider than the site's column, which the page scales down).

A renderer that writes on a coloured cell (a heat map, a systolic PE, a ring chunk) asks
``text_colour_on(cell)`` for black or white, whichever contrasts more. One of the two always
reaches at least about 4.58:1, on any background.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

#: WCAG 2.1 AA for normal-size text (success criterion 1.4.3).
MIN_CONTRAST = 4.5
#: Grey text that passes on white (4.54:1): the lightest grey a figure may write on a white background.
GREY_ON_WHITE = "#767676"
#: The smallest text of a figure 9 in wide (the planner's, the fixed-point explorer's): the site's column
#: shows it at about 85 %, so 9 pt at 90 dpi (11 px) is 9.6 px as shown.
WIDE_FIGURE_PT = 9


def luminance(rgb):
    """WCAG 2.1 relative luminance of sRGB values in [0, 1] (the last axis R, G, B: one colour or an
    image's pixels): 0 for black, 1 for white."""
    rgb = np.asarray(rgb, dtype=float)
    # sRGB's transfer function, inverted, as WCAG 2.1 defines relative luminance.
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def luminance_contrast(first, second):
    """WCAG 2.1 contrast ratio of two luminances (or arrays of them), from 1 (the same) to 21."""
    return (np.maximum(first, second) + 0.05) / (np.minimum(first, second) + 0.05)


def relative_luminance(colour) -> float:
    """WCAG 2.1 relative luminance of any matplotlib colour: 0 for black, 1 for white."""
    return float(luminance(to_rgb(colour)))


def contrast_ratio(first, second) -> float:
    """WCAG 2.1 contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    return float(luminance_contrast(relative_luminance(first), relative_luminance(second)))


def text_colour_on(background) -> str:
    """Black or white: whichever contrasts more with ``background`` (a matplotlib colour)."""
    return "black" if contrast_ratio("black", background) >= contrast_ratio("white", background) else "white"
