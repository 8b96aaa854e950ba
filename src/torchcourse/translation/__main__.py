"""python -m torchcourse.translation update|status|build [--language zh_CN] [CHAPTER ...]

update  every notebook's catalog in step with solutions/ (new messages empty, changed ones fuzzy), and
        the catalog of what the code shows a learner (src/torchcourse/locale/, see code_strings.py)
status  messages per chapter, and how many are translated, fuzzy or untranslated; with no chapter named,
        a last row for the code's catalog (torchcourse.po)
build   the release in that language: chapters/ with each catalog applied, into <language>/chapters/,
        for the chapters named, or (none named) exactly those in locale/<language>/released-chapters.txt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from torchcourse.translation import catalogs, code_strings

ROOT = Path(__file__).resolve().parents[3]


def released_chapters(root: Path, language: str) -> list[str]:
    listed = root / "locale" / language / "released-chapters.txt"
    if not listed.exists():
        return []
    lines = (line.split("#")[0].strip() for line in listed.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def _notebooks(root: Path, folder: str, chapters: list[str]) -> list[Path]:
    found = sorted((root / folder).glob("*/*.ipynb"))
    return [nb for nb in found if not chapters or nb.parent.name in chapters]


#: The status row of the code's catalog (src/torchcourse/locale/<language>/LC_MESSAGES/torchcourse.po).
CODE_ROW = "torchcourse.po"


def _progress(path: Path, language: str, template) -> catalogs.Progress:
    """A catalog's progress; where it does not exist yet, its template's messages, none translated."""
    if path.exists():
        return catalogs.progress(catalogs.read(path, language))
    return catalogs.Progress(len(template()), 0, 0)


def _status_row(name: str, parts: list[catalogs.Progress]) -> str:
    """One line of `status`: the catalogs' messages together, how many translated (and the share), fuzzy,
    untranslated."""
    messages, translated, fuzzy = (sum(getattr(p, key) for p in parts) for key in ("messages", "translated", "fuzzy"))
    share = 100 * translated / messages if messages else 100
    return f"{name:<16}{messages:>9}{translated:>7} {share:3.0f}%{fuzzy:>7}{messages - translated - fuzzy:>14}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchcourse.translation", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("update", "status", "build"))
    parser.add_argument("chapters", nargs="*", help="chapter folders (default: all)")
    parser.add_argument("--language", default="zh_CN", choices=catalogs.LANGUAGES)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    root, language = args.root, args.language

    if args.command == "update":
        for nb in _notebooks(root, "solutions", args.chapters):
            catalogs.update(root, language, nb)
        if not args.chapters:
            code_strings.update(root, language)
        return 0

    if args.command == "status":
        print(f"{'chapter':<16}{'messages':>9}{'translated':>12}{'fuzzy':>7}{'untranslated':>14}")
        chapters = sorted({nb.parent.name for nb in _notebooks(root, "solutions", args.chapters)})
        for chapter in chapters:
            print(_status_row(chapter, [_progress(catalogs.catalog_path(root, language, nb), language,
                                                  lambda nb=nb: catalogs.template(nb))
                                        for nb in _notebooks(root, "solutions", [chapter])]))
        if not args.chapters:  # the catalog of what the code shows, as `update` keeps it
            print(_status_row(CODE_ROW, [_progress(code_strings.catalog_path(root, language), language,
                                                   lambda: code_strings.template(root))]))
        return 0

    chapters = args.chapters or released_chapters(root, language)
    if not args.chapters:  # the whole release: a chapter no longer listed leaves it
        for stale in sorted((root / language / "chapters").glob("*/*.ipynb")):
            if stale.parent.name not in chapters:
                stale.unlink()
    for nb in _notebooks(root, "chapters", chapters) if chapters else []:
        source = root / "solutions" / nb.parent.name / nb.name
        path = catalogs.catalog_path(root, language, source)
        if not path.exists():
            print(
                f"no catalog for {nb.relative_to(root)}: run `python -m torchcourse.translation update`",
                file=sys.stderr,
            )
            return 1
        out = root / language / "chapters" / nb.parent.name / nb.name
        out.parent.mkdir(parents=True, exist_ok=True)
        translated = catalogs.translate_notebook(nb, catalogs.read(path, language), language)
        text = nbformat.writes(translated) + "\n"
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
