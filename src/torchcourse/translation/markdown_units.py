"""A markdown cell as translatable units, and the same cell rebuilt from their translations.

A unit is one heading, one paragraph (also a paragraph inside a list item or a quote) or one table row:
the granularity a translator sees in a `.po` editor. Code fences, math blocks and everything else
stay exactly as written, so code is identical in both editions.

A paragraph's message is its text with the author's line wrapping folded into single spaces: re-wrapping
the English changes no message, and a Chinese translation is written as one line (a soft line break
between two Chinese characters would show as a space on the page).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin


@dataclass(frozen=True)
class Unit:
    message: str  # what the translator translates
    first_line: int  # the unit's lines in the cell: [first_line, end_line)
    end_line: int
    prefix: str  # what stays before the text on its first line: "## ", "- ", "1. ", "> ", indentation


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # CommonMark with tables and $...$ / $$...$$ math, as myst-nb renders the course's cells.
    return MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)


def fold(text: str) -> str:
    """One line: the author's soft line breaks become single spaces."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def units(source: str) -> list[Unit]:
    """The translatable units of one markdown cell, in order."""
    lines = source.splitlines()
    tokens = _parser().parse(source)
    found: list[Unit] = []
    for i, token in enumerate(tokens):
        if token.type in ("heading_open", "paragraph_open") and token.map and not _in_table(tokens, i):
            inline = tokens[i + 1]
            first, end = token.map
            head = inline.content.splitlines()[0] if inline.content else ""
            at = lines[first].find(head) if head else len(lines[first])
            prefix = lines[first][:at] if at >= 0 else ""
            found.append(Unit(fold(inline.content), first, end, prefix))
        elif token.type == "tr_open" and token.map and not _is_header_rule(lines[token.map[0]]):
            first, end = token.map
            row = lines[first]
            found.append(Unit(row.strip(), first, end, row[: len(row) - len(row.lstrip())]))
    return [u for u in found if u.message]


def _in_table(tokens, i: int) -> bool:
    depth = 0
    for token in tokens[:i]:
        depth += token.nesting if token.type in ("table_open", "table_close") else 0
    return depth > 0


def _is_header_rule(line: str) -> bool:
    return set(line.strip()) <= set("|-: ")


def rebuild(source: str, translate) -> str:
    """The cell with each unit's text replaced by `translate(message)` (a str, or None to keep it).

    A translation of several lines keeps its line breaks, each continuation indented under the first."""
    lines = source.splitlines()
    for unit in reversed(units(source)):
        text = translate(unit.message)
        if text is None:
            continue
        indent = unit.prefix if unit.prefix.lstrip().startswith(">") else " " * len(unit.prefix)
        new = [unit.prefix + text.splitlines()[0]] + [indent + more for more in text.splitlines()[1:]]
        lines[unit.first_line : unit.end_line] = new
    rebuilt = "\n".join(lines)
    return rebuilt + "\n" if source.endswith("\n") else rebuilt
