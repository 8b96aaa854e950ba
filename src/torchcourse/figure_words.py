"""A figure's words in another language: the same drawing, each text it shows put through the code catalog.

The renderers draw in English, the words marked for the catalog with ``N_`` (``N_("step {step} of {n}")
.format(...)``), so the drawing itself never depends on the language. ``in_language`` translates the finished
texts of a drawn figure (``torchcourse.i18n.translate_text``: the exact message, or the message with
placeholders that formats to it; one with too little text of its own to identify it, such as "result {shape}", only
where what it captured is a value, not words) for as long as the picture is saved, then puts the English back.

Chinese needs a font with CJK glyphs. matplotlib's own fonts have none, and its font list is made once and
cached, so a font installed later (Debian's fonts-wqy-microhei, which tests/setup-system.sh and `make book`
install) is added here by its file; a translated text takes it as a fallback behind its own family, so Latin
letters and digits keep the English figure's font. Where no CJK font is installed the figures stay English,
with one warning saying what to install: never a box for each character.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
import warnings
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from matplotlib import font_manager
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter

from torchcourse.i18n import translate_text, translations

#: Fonts with CJK glyphs, the course's own first; any one installed will do.
CJK_FAMILIES = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Droid Sans Fallback")
#: Where Debian puts them, for a system without fontconfig's fc-list.
CJK_FILES = ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
             "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")
#: The languages whose script matplotlib's own fonts lack.
NEEDS_CJK = ("zh_CN",)
NO_FONT = ("torchcourse: no CJK font is installed, so figures stay in English (Debian: apt-get install "
           "fonts-wqy-microhei, then restart the kernel)")


def _font_files() -> list[str]:
    found = []
    if shutil.which("fc-list"):
        try:
            listed = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=20).stdout
            found = [line.split(":")[0].strip() for line in listed.splitlines() if line.strip()]
        except (OSError, subprocess.SubprocessError):
            pass
    return found + [f for f in CJK_FILES if Path(f).is_file()]


@lru_cache(maxsize=1)
def cjk_family() -> str | None:
    """The family name of an installed CJK font, added to matplotlib's font list if it was not there; None if
    there is none."""
    known = {f.name for f in font_manager.fontManager.ttflist}
    for family in CJK_FAMILIES:
        if family in known:
            return family
    for path in _font_files():
        try:
            font_manager.fontManager.addfont(path)
            return font_manager.FontProperties(fname=path).get_name()
        except (OSError, RuntimeError, ValueError):
            continue
    return None


_warned: set[str] = set()


def can_draw(lang: str) -> bool:
    """Whether a figure can show ``lang``'s words (warning once, where it cannot, that figures stay English)."""
    if lang == "en":
        return True
    if lang not in NEEDS_CJK or cjk_family():
        return True
    if lang not in _warned:
        _warned.add(lang)
        warnings.warn(NO_FONT, stacklevel=3)
    return False


def _texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(lambda a: isinstance(a, Text)) if t.get_text()]


def _fixed_tick_labels(fig: Figure) -> list[FixedFormatter]:
    # Words on ticks (set_xticks(..., labels=...)) are redrawn from the formatter at every draw, not kept in a Text.
    axes = [axis for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)]
    return [f for axis in axes for f in (axis.get_major_formatter(), axis.get_minor_formatter())
            if isinstance(f, FixedFormatter)]


#: A word: two letters or more (a line such as "(N, F) = (4,)" has none to translate).
_WORD = re.compile(r"[^\W\d_]{2,}")


def _translated(text: str, lang: str) -> str:
    """A figure's text in ``lang``: as a whole; else, where each line with words is a message of its own (a title
    stacked on a caption, a label over a shape), line by line; else as one sentence wrapped into lines
    (textwrap.wrap), wrapped again as wide (a CJK character is about two Latin letters wide); else line by line as
    far as the catalog goes; else as a message with placeholders that formats to all of it.

    A placeholder matches any text, line breaks included: tried on the whole text first, "rank {rank}: {name}"
    would take a two-line label whole and leave all after "rank 0: " in English."""
    if "\n" not in text:
        return translate_text(text, lang)
    exact = translations(lang).gettext(text) if lang != "en" else text
    if exact != text:
        return exact
    lines = text.split("\n")
    by_line = [translate_text(line, lang) for line in lines]
    if all(words != line or not _WORD.search(line) for words, line in zip(by_line, lines)):
        return "\n".join(by_line)
    sentence = translate_text(" ".join(lines), lang)
    if sentence != " ".join(lines):
        width = max(len(line) for line in lines)
        return "\n".join(textwrap.wrap(sentence, width // 2 if lang in NEEDS_CJK else width))
    if by_line != lines:
        return "\n".join(by_line)
    return translate_text(text, lang)


@contextmanager
def in_language(fig: Figure, lang: str):
    """Within the block, ``fig``'s texts are in ``lang`` where the catalog has them (call `can_draw` first)."""
    family = cjk_family() if lang in NEEDS_CJK else None
    changed: list[tuple[Text, str, list]] = []
    formatters: list[tuple[FixedFormatter, list]] = []
    try:
        for text in _texts(fig):
            english = text.get_text()
            words = _translated(english, lang)
            if words != english:
                changed.append((text, english, list(text.get_fontfamily())))
                text.set_text(words)
                if family:
                    text.set_fontfamily(list(text.get_fontfamily()) + [family])
        for formatter in _fixed_tick_labels(fig):
            formatters.append((formatter, list(formatter.seq)))
            formatter.seq = [_translated(str(s), lang) for s in formatter.seq]
        if family and formatters:
            for ax in fig.axes:
                for label in ax.get_xticklabels() + ax.get_yticklabels():
                    changed.append((label, label.get_text(), list(label.get_fontfamily())))
                    label.set_fontfamily(list(label.get_fontfamily()) + [family])
        yield bool(changed or formatters)
    finally:
        for text, english, fonts in reversed(changed):
            text.set_text(english)
            text.set_fontfamily(fonts)
        for formatter, seq in formatters:
            formatter.seq = seq
