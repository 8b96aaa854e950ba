"""The words code shows a learner, in the learner's language, by the standard gettext mechanism.

    from torchcourse.i18n import gettext as _
    raise CheckFailed(_("{call} returned {got}; expected {want}.").format(call=..., got=..., want=...))

English is the source and the fallback. The language is, in order: ``TORCHCOURSE_LANGUAGE`` (the grader
sets it from the submitted notebook), the language of the notebook this kernel runs (a Chinese release
notebook says so in its metadata), then gettext's own variables (LANGUAGE, LC_ALL, LC_MESSAGES, LANG), as
`make lab LANG=zh_CN` sets them.

The catalog ships inside the package (``locale/<lang>/LC_MESSAGES/torchcourse.po``), so every installed copy,
the grader's sandbox included, has it. It is compiled in memory when first needed, so there is no build
step and no compiled file to fall out of step with it; a fuzzy translation is never shown.
"""

from __future__ import annotations

import gettext as _gettext
import io
import json
import os
import re
import string as _string
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

DOMAIN = "torchcourse"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
#: The languages the course is translated into (English is the source); `normalise` knows their names.
TRANSLATIONS = ("zh_CN",)


def normalise(name: str | None) -> str | None:
    """A locale name as the course knows it ('zh_CN.UTF-8', 'zh-Hans', 'zh' -> 'zh_CN'; 'en_GB', 'C' ->
    'en'), or None for an empty or unknown one."""
    if not name or not isinstance(name, str):
        return None
    base = name.split(".")[0].split("@")[0].replace("-", "_").lower()
    if base.startswith("zh"):
        return "zh_CN"
    if base.startswith("en") or base in ("c", "posix"):
        return "en"
    return None


def language_of(metadata) -> str | None:
    """The language a notebook's metadata declares (``metadata.torchcourse.language``), if any it knows."""
    course = metadata.get("torchcourse") if isinstance(metadata, dict) else None
    return normalise(course.get("language")) if isinstance(course, dict) else None


@lru_cache(maxsize=8)
def _notebook_language_cached(path: str, mtime: float) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return language_of(json.load(f).get("metadata", {}))
    except (OSError, ValueError, AttributeError):
        return None


def notebook_language() -> str | None:
    """The language of the notebook this kernel runs (JupyterLab names it in JPY_SESSION_NAME), if any."""
    path = os.environ.get("JPY_SESSION_NAME", "")
    if not path.endswith(".ipynb"):
        return None
    try:
        return _notebook_language_cached(path, os.stat(path).st_mtime)
    except OSError:
        return None


def language() -> str:
    explicit = normalise(os.environ.get("TORCHCOURSE_LANGUAGE"))
    if explicit:
        return explicit
    from_notebook = notebook_language()
    if from_notebook:
        return from_notebook
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable)
        if value:
            # gettext takes the first variable set; LANGUAGE may list several, in order of preference
            for name in value.split(":"):
                if normalise(name):
                    return normalise(name)
            return "en"
    return "en"


@lru_cache(maxsize=4)
def translations(lang: str) -> _gettext.NullTranslations:
    po = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    if lang == "en" or not po.exists():
        return _gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        catalog = read_po(f, locale=lang)
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return _gettext.GNUTranslations(compiled)


def N_(message: str) -> str:
    """Marks a message for the catalog where it is defined; `gettext` translates it where it is shown."""
    return message


# TRANSLATORS: what separates the items of a list that themselves contain commas (a full-width semicolon in Chinese).
LIST_SEPARATOR = N_("; ")
# TRANSLATORS: what separates the values of one list (the enumeration comma in Chinese).
VALUE_SEPARATOR = N_(", ")


def gettext(message: str) -> str:
    """`message` in the learner's language (itself where the catalog has no translation)."""
    return translations(language()).gettext(message) if message else message


@contextmanager
def speaking(lang: str | None):
    """Within the block, this process and the kernels it starts use `lang` (None: leave it as it is)."""
    before = os.environ.get("TORCHCOURSE_LANGUAGE")
    if lang:
        os.environ["TORCHCOURSE_LANGUAGE"] = lang
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TORCHCOURSE_LANGUAGE", None)
        else:
            os.environ["TORCHCOURSE_LANGUAGE"] = before


# --------------------------------------------------------------------- finished text

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:![rsa])?(?::[^{}]*)?\}")
#: What str.format replaces in a translation: a field, or a doubled brace that stands for one brace.
_FORMATTED = re.compile(r"\{\{|\}\}|" + _FIELD.pattern)


#: A message with placeholders whose literal text has fewer letters than this ("result {shape}", "dim {dim}",
#: "{expression}: VIEW") is too short to tell its English from other text that happens to start or end the same way
#: ("result in memory"): it translates a text only where every value it captured is a value, not words (`_a_value`).
IDENTIFYING_LETTERS = 10
#: Two words in a row: prose, not a value a message formats in.
_PROSE = re.compile(r"[^\W\d_]{2,}\s+[^\W\d_]{2,}")
#: One word alone (letters only).
_BARE_WORD = re.compile(r"[^\W\d_]{2,}")


def _a_value(text: str, catalog: dict) -> bool:
    """Whether a captured text is what messages format in: a number, a shape, a dtype or other code, a name with
    digits, or a message of the catalog itself ("vector"); not words ("in memory", "lights")."""
    return text in catalog or not (_PROSE.search(text) or _BARE_WORD.fullmatch(text.strip()))


@lru_cache(maxsize=4)
def _templates(lang: str) -> list[tuple[re.Pattern, str, bool]]:
    """The catalog's translated messages that have {placeholders}, each as (a pattern that matches the English it
    formats to, its translation, whether its literal text identifies it), the most specific (most literal text)
    first. Compiled once per catalog.

    A placeholder is a non-greedy group; one named twice must capture the same text twice. A message whose
    literal text has no letter ("{a}: {b}") is left out: it would match almost any text. One whose literal text
    has fewer than `IDENTIFYING_LETTERS` letters is marked: `translate_text` trusts its match only where the values
    it captured are values."""
    catalog = getattr(translations(lang), "_catalog", {})
    found = []
    for msgid, msgstr in catalog.items():
        if not isinstance(msgid, str) or "{" not in msgid or not msgstr or msgid == msgstr:
            continue
        try:
            parts = list(_string.Formatter().parse(msgid))
        except ValueError:
            continue
        pattern, literal, names = [], "", set()
        for text, field, _spec, _conversion in parts:
            pattern.append(re.escape(text))
            literal += text
            if field is None:
                continue
            if not _FIELD.fullmatch("{" + field + "}"):  # {0}, {x.y}, {x[0]}: not a name this can carry
                break
            pattern.append(f"(?P={field})" if field in names else f"(?P<{field}>.*?)")
            names.add(field)
        else:
            if names and re.search(r"[^\W\d_]", literal):
                identifying = len(re.findall(r"[^\W\d_]", literal)) >= IDENTIFYING_LETTERS
                found.append((len(literal), re.compile(r"\A" + "".join(pattern) + r"\Z", re.S), msgstr, identifying))
    found.sort(key=lambda item: -item[0])
    return [(pattern, msgstr, identifying) for _length, pattern, msgstr, identifying in found]


def translate_text(text: str, lang: str = "zh_CN") -> str:
    """A finished English text (a message already formatted, numbers and all) in ``lang``; itself where the
    catalog has no message it can come from.

    The exact message first; else the message with {placeholders} that formats to it (its placeholders matched
    as any text, the most specific message first; a message with little literal text only where what it captured
    are values, not words: "result (3, 4)" is "result {shape}", "result in memory" is not), its translation filled
    with the values it captured, as they
    stand in the English (a value formatted with ``{x:.2f}`` keeps its two decimals), a value that is itself a
    message of the catalog in its translation ("rank 1: vector" -> "1 阶：向量")."""
    if not text or lang == "en":
        return text
    catalog = getattr(translations(lang), "_catalog", {})
    exact = catalog.get(text)
    if exact:
        return exact
    for pattern, msgstr, identifying in _templates(lang):
        m = pattern.match(text)
        if m and (identifying or all(_a_value(value, catalog) for value in m.groupdict().values())):
            values = {name: catalog.get(value) or value for name, value in m.groupdict().items()}
            return _FORMATTED.sub(lambda f, v=values: v.get(f.group(1), f.group(0)) if f.group(1) else f.group(0)[0],
                                  msgstr)
    return text
