"""Write the errata table of docs/syllabus.md from book/errata.yml, the one place an erratum is written.

Two pages show the errata: the site's errata page (book/errata.md, whose ``course-errata``
directive in book/_ext/course_site.py renders book/errata.yml while the site builds) and the
authors' syllabus (docs/syllabus.md). Nobody types the syllabus's table: it sits between two
marker comments and this script rewrites it. tests/docs/test_docs.py fails when the committed
table differs from a fresh generation, so the two pages cannot disagree.

    python book/errata_table.py           # rewrite the table in docs/syllabus.md
    python book/errata_table.py --check   # only say whether it is up to date (exit 1 if not)
    python book/errata_table.py --quotes FOLDER
        # is every row's quote in the published text? FOLDER: a copy of its chapter (source["url"]),
        # one <section>.md per section

Each row quotes, beside the correction, the note's own words as the published text it follows has them
(the file's ``source``): verbatim fragments of one section. The published text is not part of the course,
so the fragments are checked against a copy of it when they are written or changed, not by the tests.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from torchcourse.contract import chapter_number, chapters

ROOT = Path(__file__).resolve().parent.parent
ERRATA = ROOT / "book" / "errata.yml"
SYLLABUS = ROOT / "docs" / "syllabus.md"

BEGIN = "<!-- errata-table: generated from book/errata.yml by book/errata_table.py; do not edit by hand -->"
END = "<!-- end of errata-table -->"

#: An erratum's id: E, then a number from 1 (no leading zero).
ERRATUM_ID = re.compile(r"^E[1-9][0-9]*$")
#: The chapters an erratum may belong to: those with a folder in solutions/.
CHAPTERS = tuple(n for n in map(chapter_number, chapters(ROOT / "solutions")) if n is not None)


def load(path: Path = ERRATA) -> list[dict[str, Any]]:
    """The rows of book/errata.yml, in the file's order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(data["errata"])


def source(path: Path = ERRATA) -> dict[str, Any]:
    """What the rows quote: the published text the note follows (title, url, commit, license, sections)."""
    return dict(yaml.safe_load(path.read_text(encoding="utf-8"))["source"])


def problems(rows: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the rows, one sentence each: ids ``E<n>`` and unique, a chapter of the course, both
    texts."""
    found: list[str] = []
    seen: set[str] = set()
    sections = source()["sections"]
    for i, row in enumerate(rows):
        rid = row.get("id")
        where = f"row {i + 1} ({rid!r})"
        if type(rid) is not str or not ERRATUM_ID.match(rid):
            found.append(f"{where}: the id must be E<n>, e.g. E22")
        elif rid in seen:
            found.append(f"{where}: the id is used twice")
        seen.add(str(rid))
        if type(row.get("chapter")) is not int or row["chapter"] not in CHAPTERS:
            found.append(f"{where}: chapter must be one of {', '.join(map(str, CHAPTERS))}, not {row.get('chapter')!r}")
        for key in ("note", "truth"):
            if type(row.get(key)) is not str or not row[key].strip():
                found.append(f"{where}: '{key}' must be a non-empty string")
        quote = row.get("quote", [])  # none yet: shown as not quoted
        if type(quote) is not list or not all(type(q) is str and q.strip() for q in quote):
            found.append(f"{where}: 'quote' must be a list of the note's words (empty: not in the published text)")
        elif quote and row.get("section") not in sections:
            found.append(f"{where}: 'section' must name the quoted section, one of {', '.join(sections)}")
    return found


def _plain(text: str) -> str:
    # The published text's own compatibility ideographs (U+F900-) are the same characters; its markdown emphasis
    # and line breaks are not words.
    return " ".join(unicodedata.normalize("NFC", text).replace("**", "").split())


def missing_quotes(rows: list[dict[str, Any]], folder: Path) -> list[str]:
    """Each fragment of a row's quote that its section's file in `folder` does not contain, as a sentence."""
    texts: dict[str, str] = {}
    found = []
    for row in rows:
        for fragment in row.get("quote") or []:
            section = str(row.get("section"))
            if section not in texts:
                path = folder / f"{section}.md"
                texts[section] = _plain(path.read_text(encoding="utf-8")) if path.exists() else ""
            if _plain(fragment) not in texts[section]:
                found.append(f"{row['id']}: not in {section}.md: {fragment}")
    return found


def _cell(text: Any) -> str:
    # One line per row, and a '|' in the text must not end the cell (the site page does the same).
    return " ".join(str(text).split()).replace("|", "\\|")


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table: id, chapter, what the note says, what is true; rows in the file's order."""
    lines = ["| id | chapter | the note says | what is true |", "|---|---|---|---|"]
    lines += [f"| {row['id']} | {row['chapter']} | {_cell(row['note'])} | {_cell(row['truth'])} |" for row in rows]
    return "\n".join(lines)


def render(document: str, rows: list[dict[str, Any]]) -> str:
    """``document`` with the text between the two markers replaced by a fresh table."""
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the document has no errata markers ({BEGIN!r} ... {END!r})")
    return document[: start + len(BEGIN)] + "\n" + table(rows) + "\n" + document[end:]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    rows = load()
    wrong = problems(rows)
    if wrong:
        print("book/errata.yml:\n  " + "\n  ".join(wrong), file=sys.stderr)
        return 1
    if len(args) == 2 and args[0] == "--quotes":
        absent = missing_quotes(rows, Path(args[1]))
        fragments = sum(len(r.get("quote", [])) for r in rows)
        print("\n".join(absent) or f"every quote is in {args[1]} ({fragments} fragments)")
        return 1 if absent else 0
    current = SYLLABUS.read_text(encoding="utf-8")
    fresh = render(current, rows)
    if args == ["--check"]:
        if fresh != current:
            print("docs/syllabus.md: the errata table is out of date; run python book/errata_table.py",
                  file=sys.stderr)
            return 1
        return 0
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    if fresh != current:
        SYLLABUS.write_text(fresh, encoding="utf-8")
        print(f"docs/syllabus.md: errata table written ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
