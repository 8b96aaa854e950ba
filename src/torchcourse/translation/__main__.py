"""python -m torchcourse.translation update|status|build [--language zh_CN] [CHAPTER ...]

update  every notebook's catalog in step with solutions/ (new messages empty, changed ones fuzzy), and
        the catalog of what the code shows a learner (src/torchcourse/locale/, see code_strings.py)
status  messages per chapter, and how many are translated, fuzzy or untranslated
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
            total = [0, 0, 0]
            for nb in _notebooks(root, "solutions", [chapter]):
                path = catalogs.catalog_path(root, language, nb)
                p = catalogs.progress(catalogs.read(path, language)) if path.exists() else None
                messages = p.messages if p else len(catalogs.template(nb))
                total = [total[0] + messages, total[1] + (p.translated if p else 0), total[2] + (p.fuzzy if p else 0)]
            share = 100 * total[1] / total[0] if total[0] else 100
            untranslated = total[0] - total[1] - total[2]
            print(f"{chapter:<16}{total[0]:>9}{total[1]:>7} {share:3.0f}%{total[2]:>7}{untranslated:>14}")
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
