"""One gettext catalog per notebook: made from solutions/, kept in step with it, applied to a release.

The English notebook in solutions/ is the only source. `update` extracts each markdown cell's units
(markdown_units.py) into `locale/<lang>/LC_MESSAGES/<chapter>/<notebook>.po` and merges them into the
catalog already there with Babel, the same merge `pybabel update` and sphinx-intl do: a message whose
English changed keeps its old translation marked fuzzy, with the old English beside it (`#| msgid`), so a
translator sees exactly what changed; a message that disappeared is dropped. Any `.po` editor (Poedit,
Weblate, Lokalize) edits the catalogs.

`translate_notebook` writes a release notebook in another language: only markdown text changes; code
cells, outputs, cell ids and nbgrader metadata stay byte for byte, so both editions are the same
assignment.
"""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.pofile import escape, read_po, unescape, write_po

from torchcourse.i18n import TRANSLATIONS
from torchcourse.translation.markdown_units import rebuild, units

LANGUAGES = TRANSLATIONS
PROJECT = "torchcourse"
BUGS = "CONTRIBUTING.md"
HEADER = """\
# Translations of the torchcourse notebooks' text, made from solutions/ (the English source).
# Prose is CC BY 4.0, like the English. Update with `python -m torchcourse.translation update`.
#"""


def catalog_path(root: Path, language: str, notebook: Path) -> Path:
    """Where the catalog of `<any>/<chapter>/<notebook>.ipynb` lives."""
    return root / "locale" / language / "LC_MESSAGES" / notebook.parent.name / (notebook.stem + ".po")


def _translatable(cell) -> bool:
    # A markdown answer (an nbgrader solution cell) is the learner's own text, never the course's.
    return cell.cell_type == "markdown" and not cell.metadata.get("nbgrader", {}).get("solution", False)


def template(notebook: Path) -> Catalog:
    """Every unit of the notebook's markdown, located by cell id (or index) and unit number."""
    nb = nbformat.read(notebook, as_version=4)
    cat = Catalog(project=PROJECT, fuzzy=False)
    for index, cell in enumerate(nb.cells):
        if not _translatable(cell):
            continue
        where = f"{notebook.parent.name}/{notebook.name}#{cell.get('id', index)}"
        for n, unit in enumerate(units(cell.source), 1):
            cat.add(unit.message, locations=[(where, n)])
    return cat


def read(path: Path, language: str) -> Catalog:
    with path.open("rb") as f:
        catalog = read_po(f, locale=language, abort_invalid=True)
    for message in catalog:
        # Babel reads a `#| msgid` line as a translator's comment "| msgid ..."; it is the previous id
        message.user_comments = [c for c in message.user_comments if not c.startswith("| msgid")]
    for message_id, previous in _previous_ids(path).items():
        if message_id in catalog:
            catalog[message_id].previous_id = [previous]
    return catalog


def _previous_ids(path: Path) -> dict[str, str]:
    """msgid -> the English it had before (`#| msgid`), which Babel writes but does not read back:
    without this, a second `update` would drop what a translator needs to see what changed."""
    found, previous = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith('#| msgid "'):
            previous = unescape(line[len("#| msgid ") :])
        elif line.startswith('msgid "') and previous is not None:
            found[unescape(line[len("msgid ") :])] = previous
            previous = None
        elif not line.startswith("#"):
            previous = None
    return found


def write(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    write_po(buf, catalog, width=0, ignore_obsolete=True)
    # Babel wraps a previous msgid like a comment, which no PO tool reads back: write it ourselves,
    # one `#| msgid "..."` line, as GNU msgmerge does with --previous.
    previous = {escape(m.id): m.previous_id[0] for m in catalog if m.id and m.fuzzy and m.previous_id}
    lines = []
    for line in buf.getvalue().decode("utf-8").splitlines():
        quoted = line.removeprefix("msgid ")
        if quoted != line and quoted in previous:
            lines.append(f"#| msgid {escape(previous[quoted])}")
        lines.append(line)
    new = ("\n".join(lines) + "\n").encode("utf-8")
    if not path.exists() or path.read_bytes() != new:
        path.write_bytes(new)


def update(root: Path, language: str, notebook: Path) -> Path:
    """Bring one notebook's catalog in step with its English; returns the catalog's path."""
    path = catalog_path(root, language, notebook)
    merge(path, template(notebook), language)
    return path


def merge(path: Path, fresh: Catalog, language: str, header: str = HEADER) -> None:
    """Write the catalog at `path` with exactly `fresh`'s messages, keeping every translation it had:
    unchanged messages as they were, changed ones fuzzy with their old English. `header` starts a new file."""
    if path.exists():
        catalog = read(path, language)
        fresh.creation_date = catalog.creation_date  # the file changes only when its messages do
        waiting = {m.id: m.previous_id for m in catalog if m.id and m.fuzzy and m.previous_id}
        catalog.update(fresh, no_fuzzy_matching=False, update_header_comment=False)
        for message_id, previous in waiting.items():
            # a translation still waiting for review keeps the English it was made from
            if message_id in catalog and catalog[message_id].fuzzy and not catalog[message_id].previous_id:
                catalog[message_id].previous_id = previous
    else:
        catalog = Catalog(
            locale=language,
            project=PROJECT,
            version="1",
            fuzzy=False,
            header_comment=header,
            copyright_holder="the torchcourse contributors",
            msgid_bugs_address=BUGS,
            last_translator="the torchcourse contributors",
            language_team=f"torchcourse {language} <{BUGS}>",
        )
        catalog.update(fresh)
        catalog.revision_date = catalog.creation_date
    write(path, catalog)


@dataclass(frozen=True)
class Progress:
    messages: int
    translated: int
    fuzzy: int

    @property
    def untranslated(self) -> int:
        return self.messages - self.translated - self.fuzzy


def progress(catalog: Catalog) -> Progress:
    messages = [m for m in catalog if m.id]
    fuzzy = sum(1 for m in messages if m.fuzzy)
    translated = sum(1 for m in messages if m.string and not m.fuzzy)
    return Progress(len(messages), translated, fuzzy)


def translation_of(catalog: Catalog):
    """message -> its translation, or None where there is none a reader may see (empty or fuzzy)."""

    def lookup(message: str):
        found = catalog.get(message)
        return found.string if found is not None and found.string and not found.fuzzy else None

    return lookup


def translate_notebook(notebook: Path, catalog: Catalog, language: str):
    """The notebook with its markdown in `language`; English where a message has no translation."""
    nb = nbformat.read(notebook, as_version=4)
    out = copy.deepcopy(nb)
    lookup = translation_of(catalog)
    for cell in out.cells:
        if _translatable(cell):
            cell.source = rebuild(cell.source, lookup)
    out.metadata.setdefault("torchcourse", {})["language"] = language
    return out
