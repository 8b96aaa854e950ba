"""A table printed as text, its columns aligned in a fixed-width font whichever language fills them.

A lesson's table printed from f-strings pads by characters, so a Chinese heading or cell (each character two
columns wide) pushes its line out of line. `text_table` pads by display width. The caller gives finished texts:
headings and cells already in the learner's language, numbers already formatted (e.g. notebook
``04-hardware/01-roofline``'s tables, `torchcourse.hardware.roofline.efficiency_table`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import NamedTuple


class Column(NamedTuple):
    """A column: its heading (finished text), the least width it takes, and whether its cells are right-aligned."""

    heading: str
    least: int = 0
    right: bool = False


def display_width(text: str) -> int:
    """How many columns a text takes in a fixed-width font (a CJK character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def padded(text: str, width: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` columns: on the left when ``right``, else on the right."""
    space = " " * max(0, width - display_width(text))
    return space + text if right else text + space


def text_table(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> str:
    """The headings' line, then one line per row: each column as wide as its widest text (and at least its
    ``least``), one space between columns, no space at a line's end."""
    widths = [max([column.least, display_width(column.heading)] + [display_width(row[i]) for row in rows])
              for i, column in enumerate(columns)]
    lines = [[column.heading for column in columns], *rows]
    return "\n".join(" ".join(padded(cell, width, column.right) for cell, width, column in zip(line, widths, columns))
                     .rstrip() for line in lines)
