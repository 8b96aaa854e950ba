"""The site's own pages in Chinese: one gettext catalog per page, as the notebooks have.

    .venv/bin/python book/book_catalogs.py update    # catalogs in step with the English pages
    .venv/bin/python book/book_catalogs.py status

``locale/zh_CN/LC_MESSAGES/book/<page>.po`` holds each unit (heading, paragraph, list item, table row;
torchcourse.translation.markdown_units) of ``book/<page>.md``, and also the text of the table the page
generates: the glossary's definitions (book/glossary.yml) in glossary.po, the errata's two columns
(book/errata.yml) in errata.po. Catalogs rather than a Chinese field beside the English in the yml files:
a changed English definition then marks its translation fuzzy, exactly as a changed notebook sentence does, and
the Chinese page shows the English until a translator has looked (a yml field would go on showing the old
Chinese beside the new English).

Text inside a MyST directive (```{admonition} ... ```) is markdown too: its units are messages, and so is an
admonition's title. Code fences, the directive's options and directives that generate their content stay as
written.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import yaml
from babel.messages.catalog import Catalog

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
LANGUAGE = "zh_CN"
PAGES = ("intro", "run-it-yourself", "glossary", "errata")
#: Directives whose argument is a title a reader sees.
TITLED = {"admonition"}


def catalog_path(page: str) -> Path:
    return ROOT / "locale" / LANGUAGE / "LC_MESSAGES" / "book" / f"{page}.po"


def _directives(text: str) -> list[tuple[int, int, int, str]]:
    """Each MyST directive fence of the page: (fence line, first body line, closing line, directive name)."""
    from torchcourse.translation.markdown_units import _parser

    lines = text.splitlines()
    found = []
    for token in _parser().parse(text):
        if token.type != "fence" or not token.info.startswith("{") or not token.map:
            continue
        first, end = token.map
        body = first + 1
        while body < end - 1 and (lines[body].startswith(":") or not lines[body].strip()):
            body += 1  # the directive's options (:class: tip) and the blank line after them
        found.append((first, body, end - 1, token.info[1:].split("}")[0]))
    return found


def units(text: str) -> list[str]:
    """Every message of a page: its own units, then those of each directive's body (and title), in order."""
    from torchcourse.translation.markdown_units import units as markdown_units

    lines = text.splitlines()
    found = [u.message for u in markdown_units(text)]
    for first, body, close, name in _directives(text):
        title = lines[first].split("}", 1)[1].strip()
        if name in TITLED and title:
            found.append(title)
        found += [u.message for u in markdown_units("\n".join(lines[body:close]))]
    return found


def rebuild(text: str, translate: Callable[[str], str | None]) -> str:
    """The page with each message replaced by its translation (None keeps the English)."""
    from torchcourse.translation.markdown_units import rebuild as rebuild_markdown

    lines = text.splitlines()
    for first, body, close, name in reversed(_directives(text)):  # from the bottom: earlier lines keep their place
        lines[body:close] = rebuild_markdown("\n".join(lines[body:close]), translate).splitlines()
        head, _, title = lines[first].partition("}")
        if name in TITLED and title.strip() and translate(title.strip()):
            lines[first] = f"{head}}} {translate(title.strip())}"
    # The directives' bodies are fence content to markdown-it: the page's own units are untouched by the above.
    rebuilt = rebuild_markdown("\n".join(lines), translate)
    return rebuilt + ("\n" if text.endswith("\n") and not rebuilt.endswith("\n") else "")


def table_messages(page: str) -> list[tuple[str, str]]:
    """(message, where) of the table a page generates from its yml."""
    if page == "glossary":
        terms = yaml.safe_load((BOOK / "glossary.yml").read_text(encoding="utf-8"))["terms"]
        return [(" ".join(t["definition"].split()), f"book/glossary.yml#{t['en']}") for t in terms]
    if page == "errata":
        rows = yaml.safe_load((BOOK / "errata.yml").read_text(encoding="utf-8"))["errata"]
        return [(" ".join(str(r[k]).split()), f"book/errata.yml#{r['id']}.{k}")
                for r in rows for k in ("note", "truth")]
    return []


def template(page: str) -> Catalog:
    cat = Catalog(project="torchcourse", fuzzy=False)
    text = (BOOK / f"{page}.md").read_text(encoding="utf-8")
    for n, message in enumerate(units(text), 1):
        cat.add(message, locations=[(f"book/{page}.md", n)])
    for message, where in table_messages(page):
        cat.add(message, locations=[(where, 1)])
    return cat


def update(page: str) -> Path:
    """The page's catalog in step with its English: new messages empty, changed ones fuzzy (Babel's merge, as
    torchcourse.translation.catalogs.update does for a notebook)."""
    from torchcourse.translation import catalogs

    path = catalog_path(page)
    header = catalogs.HEADER.replace("notebooks'", "site pages'").replace(
        "python -m torchcourse.translation update", "python book/book_catalogs.py update")
    catalogs.merge(path, template(page), LANGUAGE, header)
    return path


def lookup(page: str) -> Callable[[str], str | None]:
    """message -> its Chinese, or None where there is none a reader may see (none, empty or fuzzy)."""
    from torchcourse.translation import catalogs

    path = catalog_path(page)
    if not path.exists():
        return lambda message: None
    translate = catalogs.translation_of(catalogs.read(path, LANGUAGE))
    return lambda message: translate(" ".join(message.split()))


def translated_page(page: str) -> str:
    return rebuild((BOOK / f"{page}.md").read_text(encoding="utf-8"), lookup(page))


def main(argv: list[str]) -> int:
    from torchcourse.translation import catalogs

    if argv[:1] == ["update"]:
        for page in PAGES:
            print(update(page).relative_to(ROOT))
        return 0
    if argv[:1] == ["status"]:
        for page in PAGES:
            p = catalogs.progress(catalogs.read(catalog_path(page), LANGUAGE))
            print(f"{page:<18}{p.messages:>5} messages {p.translated:>5} translated {p.fuzzy:>3} fuzzy")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
