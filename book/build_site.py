"""Build the learner site in English and Chinese from one source: ``make book``.

    .venv/bin/python book/build_site.py [--out _build] [--language en|zh ...] [--zh-chapters CH ... --fallback]

Writes ``<out>/html/en/`` (chapters/ and book/, as always), ``<out>/html/zh/`` (the same pages in Chinese) and
``<out>/html/index.html`` (a page that lets the reader choose). Both languages share one execution cache,
``<out>/.jupyter_cache``: the English build executes the notebooks, and the Chinese build finds every one of them
there, because jupyter-cache matches a notebook by its code cells, which are the same in both editions.

The Chinese site's sources are generated into ``<out>/zh-src/`` (never edited by hand):
- ``book/*.md``: the site's own pages with the catalogs ``locale/zh_CN/LC_MESSAGES/book/<page>.po`` applied
  (book_catalogs.py; English where a message has no translation yet);
- ``chapters/<chapter>/*.ipynb``: the Chinese release (``zh_CN/chapters/``, written by
  ``python -m torchcourse.translation build``) of each chapter listed in ``locale/zh_CN/released-chapters.txt``;
- ``chapters/<chapter>/index.md`` for every other chapter: a page saying that its Chinese edition is not out
  yet, linking to the English pages;
- ``_toc.yml``: the English toc with the Chinese half of each part caption.

``--zh-chapters CH --fallback`` puts chapter CH in the Chinese site even if it is not released (its notebooks made
from the catalogs, each message without a translation in English): only for tests and benchmarks/site_build.py;
the committed site never has such pages.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book"))

import book_catalogs  # noqa: E402  (book/, beside this file)

#: Site folder, Sphinx language, <html lang>, and the language's own name (on the switch and the chooser).
LANGUAGES = {
    "en": {"sphinx": "en", "html": "en", "name": "English"},
    "zh": {"sphinx": "zh_CN", "html": "zh-CN", "name": "中文"},
}
#: The Chinese site's parts without a chapter: the English caption and its Chinese.
CAPTIONS_ZH = {"Start here": "从这里开始"}
_CJK = re.compile(r"[\u3400-\u9fff]")
_CHAPTER_CAPTION = re.compile(r"^Chapter (\d+): ")

#: What the Chinese source tree takes from the English one as it is (links, so an edit shows at once).
SHARED = ["book/_ext", "book/_templates", "book/_vendor", "book/static", "book/glossary.yml", "book/errata.yml"]


def released(root: Path = ROOT) -> list[str]:
    from torchcourse.translation.__main__ import released_chapters

    return released_chapters(root, "zh_CN")


def chinese_caption(caption: str) -> str:
    """"Chapter 1: Tensors 张量" -> "第 1 章：张量" (the toc's captions carry both languages)."""
    if caption in CAPTIONS_ZH:
        return CAPTIONS_ZH[caption]
    words = caption.split()
    chinese = " ".join(w for w in words if _CJK.search(w))
    m = _CHAPTER_CAPTION.match(caption)
    if not chinese:
        raise SystemExit(f"_toc.yml: the part caption {caption!r} has no Chinese; add it (or to CAPTIONS_ZH)")
    return f"第 {m.group(1)} 章：{chinese}" if m else chinese


def _chapter_of(entry: dict) -> str | None:
    parts = entry.get("file", "").split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "chapters" else None


def zh_pages(chapters: list[str], root: Path = ROOT) -> list[str]:
    """Every page (docname) of the Chinese site, given the chapters it carries."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"], "index", "search", "genindex"]
    for part in toc["parts"]:
        for entry in part["chapters"]:
            chapter = _chapter_of(entry)
            if chapter is None:
                pages.append(entry["file"])
            elif chapter in chapters:
                pages.append(entry["file"])
            elif f"chapters/{chapter}/index" not in pages:
                pages.append(f"chapters/{chapter}/index")
    return pages


def en_pages(root: Path = ROOT) -> list[str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], "index", "search", "genindex"] + [e["file"] for p in toc["parts"] for e in p["chapters"]]


def _write(path: Path, text: str) -> None:
    """Write only a change: an unchanged source keeps its time, so Sphinx does not read it again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def unreleased_page(chapter: str, caption: str, files: list[str]) -> str:
    lines = [f"# {chinese_caption(caption)}", "",
             "本章的中文版尚未发布：译文完成并通过审校后才会出现在这里。在此之前，请阅读英文版：", ""]
    # Raw HTML: these pages are another site's, which MyST would look for among this site's documents.
    lines += ["<ul>"] + [f'<li><a href="../../../en/{f}.html" hreflang="en" lang="en">{Path(f).name}</a></li>'
                         for f in files] + ["</ul>", ""]
    lines += [f'<p lang="en"><em>Chapter {chapter}: the Chinese edition is not out yet; the links above open the '
              "English pages.</em></p>", ""]
    return "\n".join(lines)


def prepare_chinese_sources(src: Path, chapters: list[str], fallback: bool) -> None:
    """The Chinese site's source tree in ``src`` (see the module's docstring)."""
    from torchcourse.translation import catalogs

    for shared in SHARED:
        link = src / shared
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            if link.exists():
                shutil.rmtree(link) if link.is_dir() else link.unlink()
            link.symlink_to(ROOT / shared)
    for page in book_catalogs.PAGES:
        _write(src / "book" / f"{page}.md", book_catalogs.translated_page(page))

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc["parts"]:
        files = [e["file"] for e in part["chapters"]]
        part["caption"], caption = chinese_caption(part["caption"]), part["caption"]
        chapter = _chapter_of(part["chapters"][0])
        if chapter is None:
            continue
        if chapter in chapters:
            for f in files:
                nb = ROOT / f"{f}.ipynb"
                release = ROOT / "zh_CN" / f"{f}.ipynb"
                if release.exists():
                    text = release.read_text(encoding="utf-8")
                else:
                    if not fallback:
                        raise SystemExit(f"{release.relative_to(ROOT)} missing: run "
                                         f"`python -m torchcourse.translation build {chapter}`")
                    import nbformat

                    po = catalogs.catalog_path(ROOT, "zh_CN", ROOT / "solutions" / chapter / nb.name)
                    cat = catalogs.read(po, "zh_CN") if po.exists() else catalogs.template(nb)
                    text = nbformat.writes(catalogs.translate_notebook(nb, cat, "zh_CN")) + "\n"
                _write(src / f"{f}.ipynb", text)
        else:
            _write(src / "chapters" / chapter / "index.md", unreleased_page(chapter.split("-")[0].lstrip("0"),
                                                                           caption, files))
            part["chapters"] = [{"file": f"chapters/{chapter}/index"}]
    # A chapter that left the release leaves the source tree (no stale Chinese page).
    for nb in (src / "chapters").glob("*/*"):
        wanted = nb.parent.name in chapters and nb.suffix == ".ipynb" or (
            nb.parent.name not in chapters and nb.name == "index.md")
        if not wanted:
            nb.unlink()
    _write(src / "_toc.yml", "# Generated by book/build_site.py from _toc.yml: do not edit.\n"
           + yaml.safe_dump(toc, allow_unicode=True, sort_keys=False))


def build_one(language: str, out: Path, chapters: list[str], fallback: bool) -> int:
    """One language's Sphinx build (jupyter-book's own entry point, as `jupyter-book build` calls it)."""
    from jupyter_book.sphinx import build_sphinx

    if language == "zh":
        src = out / "zh-src"
        prepare_chinese_sources(src, chapters, fallback)
    else:
        src = ROOT
    other = "zh" if language == "en" else "en"
    overrides = {
        "external_toc_path": str(src / "_toc.yml"),
        "latex_individualpages": False,
        "language": LANGUAGES[language]["sphinx"],
        "nb_execution_cache_path": str(out / ".jupyter_cache"),
        "course_language": language,
        "course_other_language": {**LANGUAGES[other], "code": other},
        "course_other_pages": zh_pages(chapters) if language == "en" else en_pages(),
        "course_output_folder": str(out / "jupyter_execute" / language),
    }
    if language == "zh":
        overrides["html_title"] = "torchcourse：从零开始学 PyTorch"
    result = build_sphinx(src, out / "html" / language, noconfig=True, path_config=str(ROOT / "_config.yml"),
                          confoverrides=overrides, doctreedir=str(out / ".doctrees" / language),
                          warningiserror=True, keep_going=True)
    return 0 if result == 0 else 1


CHOOSER = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>torchcourse: choose a language · 选择语言</title>
<style>body{{font:1.1rem/1.6 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}}
a{{display:block;margin:.6rem 0;font-size:1.3rem}}</style>
</head>
<body>
<main>
<h1>torchcourse</h1>
<p>PyTorch from the ground up. <span lang="zh-CN">从零开始学 PyTorch。</span></p>
<ul>
{links}
</ul>
</main>
</body>
</html>
"""


def write_chooser(out: Path) -> None:
    links = "\n".join(f'<li><a href="{code}/index.html" hreflang="{lang["html"]}" lang="{lang["html"]}">'
                      f'{html.escape(lang["name"])}</a></li>' for code, lang in LANGUAGES.items())
    _write(out / "html" / "index.html", CHOOSER.format(links=links))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build")
    parser.add_argument("--language", action="append", choices=list(LANGUAGES),
                        help="build only this language (repeatable; default: both)")
    parser.add_argument("--zh-chapters", help="chapters of the Chinese site, comma-separated (default: the released)")
    parser.add_argument("--fallback", action="store_true", help="tests only: English where a message is untranslated")
    parser.add_argument("--one", choices=list(LANGUAGES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = args.out.resolve()
    chapters = [c for c in args.zh_chapters.split(",") if c] if args.zh_chapters is not None else released()
    if args.one:
        return build_one(args.one, out, chapters, args.fallback)
    # Each language in a process of its own: Sphinx and myst-nb keep global state that one build leaves behind.
    for language in args.language or list(LANGUAGES):
        command = [sys.executable, str(Path(__file__).resolve()), "--out", str(out), "--one", language,
                   f"--zh-chapters={','.join(chapters)}"] + (["--fallback"] if args.fallback else [])
        start = time.perf_counter()
        if subprocess.run(command, cwd=ROOT).returncode != 0:
            print(f"book/build_site.py: the {LANGUAGES[language]['name']} build failed", file=sys.stderr)
            return 1
        print(f"book/build_site.py: {language} site built in {time.perf_counter() - start:.1f} s", flush=True)
    write_chooser(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
