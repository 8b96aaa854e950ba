"""Learner text where it is shown as plain text: a line of the instructor's terminal, a cell of a report's CSV.

Names in a download, exception messages and flags are chosen or caused by learners. A newline in one must not
print a line of its own (a forged "collected" line), a terminal escape must not repaint the terminal that prints
it or the one that later runs `cat reports/<chapter>.csv`, and a cell that opens with '=' must not be a formula in
the spreadsheet the CSV is opened in. The HTML report escapes the same text as HTML (`html.escape`).
"""

from __future__ import annotations

# What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection; its tab and carriage
# return are escaped by `one_line` before this is looked at).
FORMULA_START = ("=", "+", "-", "@")


def one_line(text: str) -> str:
    """`text` with every character that is not printable (newlines, escapes, other control characters) written
    as its Python escape, so that it shows as one line and changes nothing in a terminal."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def csv_cell(text: str) -> str:
    """A text cell of a report's CSV: on one line, control characters escaped, and never read as a formula."""
    text = one_line(text)
    return "'" + text if text.startswith(FORMULA_START) else text
