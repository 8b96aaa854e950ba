"""What a translation must keep from its English: the checks a reviewer would otherwise do by eye.

- code spans, math and numbers unchanged (code is identical in both editions), and a code message's
  `{placeholders}` all there;
- the Chinese terms the English already cites, e.g. "**stride** (步长)", used in the translation;
- a key term in bold that the glossary lists is translated by the glossary's Chinese term;
- a table row keeps its number of columns;
- emphasis renders as emphasis: CommonMark does not close `*...*` between a full-width punctuation mark and a
  Chinese character, so a translation can show its asterisks where the English shows italics;
- the text is translated (it has Chinese in it) unless the English has no words to translate (names only,
  e.g. a table header `| | DataParallel | DDP |`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

CODE = re.compile(r"`+[^`]+`+")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\s](?:[^$]*[^$\s])?\$")
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
CJK = re.compile(r"[\u3400-\u9fff]+")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
# A word a translator must translate: three letters or more, lower case after an optional capital ("Summary");
# CamelCase names and acronyms (DataParallel, DDP) may stay as they are.
WORD = re.compile(r"\b[A-Z]?[a-z]{2,}\b")
EMPHASIS = re.compile(r"<(em|strong)>")
PLACEHOLDER = re.compile(r"\{[a-z_]*\}")


def _emphasis(text: str) -> list[str]:
    from markdown_it import MarkdownIt

    return EMPHASIS.findall(MarkdownIt("commonmark").renderInline(text))


@lru_cache(maxsize=1)
def glossary(root: Path) -> dict[str, tuple[str, ...]]:
    """English term (lower case, its parenthesis dropped) -> the Chinese forms the glossary allows."""
    terms = yaml.safe_load((root / "book" / "glossary.yml").read_text(encoding="utf-8"))["terms"]
    found = {}
    for term in terms:
        english = re.sub(r"\s*\(.*\)", "", term["en"]).strip().lower()
        found[english] = found.get(english, ()) + tuple(z.strip() for z in str(term["zh"]).split(","))
    return found


def _kept(pattern: re.Pattern, english: str, chinese: str) -> list[str]:
    missing = []
    for piece in pattern.findall(english):
        if pattern.findall(chinese).count(piece) < pattern.findall(english).count(piece) and piece not in missing:
            missing.append(piece)
    return missing


def _outside_code(text: str) -> str:
    return MATH.sub(" ", CODE.sub(" ", text))


def problems(english: str, chinese: str, root: Path) -> list[str]:
    """What is wrong with `chinese` as the translation of `english` (empty: nothing found)."""
    found = []
    for piece in _kept(CODE, english, chinese):
        found.append(f"code span {piece} changed or missing")
    for piece in _kept(MATH, english, chinese):
        found.append(f"math {piece} changed or missing")
    for piece in _kept(NUMBER, _outside_code(english), _outside_code(chinese)):
        found.append(f"number {piece} missing")
    if sorted(set(PLACEHOLDER.findall(_outside_code(english)))) != sorted(
        set(PLACEHOLDER.findall(_outside_code(chinese)))
    ):
        found.append("the {placeholders} differ from the English's")
    for term in CJK.findall(_outside_code(english)):
        if term not in chinese:
            found.append(f"the English cites {term}; the translation does not use it")
    for bold in BOLD.findall(english):
        key = bold.strip().lower()
        forms = (
            glossary(root).get(key)
            or glossary(root).get(key.rstrip("s"))
            or glossary(root).get(key[:-2] if key.endswith("es") else key)
        )
        if forms and not any(form in chinese for form in forms):
            found.append(f"glossary term {bold!r} should be translated as {' or '.join(forms)}")
    if sorted(_emphasis(english)) != sorted(_emphasis(chinese)):
        found.append("emphasis does not render as in the English (close * or ** before full-width punctuation)")
    if english.startswith("|") and (english.count("|") != chinese.count("|") or not chinese.startswith("|")):
        found.append("table row: a different number of columns")
    if WORD.search(_outside_code(english)) and not CJK.search(chinese):
        found.append("not translated (no Chinese in it)")
    return found
