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

from matplotlib.colors import to_rgb

#: WCAG 2.1 AA for normal-size text (success criterion 1.4.3).
MIN_CONTRAST = 4.5
#: Grey text that passes on white (4.54:1): the lightest grey a figure may write on a white background.
GREY_ON_WHITE = "#767676"


def _linear(channel: float) -> float:
    # sRGB's transfer function, inverted, as WCAG 2.1 defines relative luminance.
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def relative_luminance(colour) -> float:
    """WCAG 2.1 relative luminance of any matplotlib colour: 0 for black, 1 for white."""
    r, g, b = (_linear(c) for c in to_rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first, second) -> float:
    """WCAG 2.1 contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_colour_on(background) -> str:
    """Black or white: whichever contrasts more with ``background`` (a matplotlib colour)."""
    return "black" if contrast_ratio("black", background) >= contrast_ratio("white", background) else "white"
