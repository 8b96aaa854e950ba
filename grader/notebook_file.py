"""Reading a submitted notebook file that nobody trusts: links, special files, huge files, too many cells or
values and JSON nbformat cannot read are refused in one line; a damaged cell costs that cell, not the notebook.

A notebook that cannot be read raises `SanitiseError` with a one-line message for a person (without the file
name: the caller names the file); the caller records it and goes on.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from nbformat import NotebookNode

from grader.nbgrader_compat import nbformat_json, notebook_from_json

CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # nbformat 4.5's schema
MAX_BYTES = 256 * 2**20   # the largest notebook read or collected (outputs are cleared anyway)
# A chapter's notebooks have at most 53 cells. Every cell costs time in nbformat and in nbgrader's steps, so a
# notebook of MAX_BYTES of small cells would take minutes and gigabytes (benchmarks/README.md has the figures).
MAX_CELLS = 5_000
# nbformat makes an object of every JSON value, so a notebook of MAX_BYTES of small values in its metadata would
# take minutes and more memory than the host has. Commas and opening brackets bound the values from above (more,
# when strings hold them); a chapter's notebook has a few thousand, with its outputs.
MAX_VALUES = 1_000_000


class SanitiseError(ValueError):
    """A submitted notebook that cannot be graded, with the reason in plain words."""


def _repair_cells(d: object, notes: list[str]) -> object:
    """A notebook-4 dict with each damaged cell made readable, said in one line each, so that one damaged cell
    costs that cell and not the notebook (nbformat refuses the whole notebook for one of them): a cell that is not
    a code, markdown or raw cell becomes an empty raw cell (the cells keep their numbers); metadata or attachments
    that are not JSON objects of the kinds nbformat reads are dropped; a source that is not text is emptied.
    A code cell's outputs are dropped (they are cleared before grading anyway)."""
    if type(d) is not dict or type(d.get("cells")) is not list or d.get("nbformat") != 4:
        return d
    replaced = 0
    for i, cell in enumerate(d["cells"]):
        if type(cell) is not dict or cell.get("cell_type") not in ("code", "markdown", "raw"):
            kind = repr(cell.get("cell_type"))[:40] if type(cell) is dict else type(cell).__name__
            notes.append(f"cell {i + 1} is not a notebook cell (cell type {kind}); left empty")
            d["cells"][i] = {"cell_type": "raw", "metadata": {}, "source": ""}
            replaced += 1
            continue
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        if type(cell.get("metadata", {})) is not dict:
            notes.append(f"cell {i + 1}: its metadata is not a JSON object; dropped")
            cell["metadata"] = {}
        att = cell.get("attachments")
        if att is not None and not (type(att) is dict and all(
                type(a) is dict and all(type(v) is str or (type(v) is list and all(type(x) is str for x in v))
                                        for v in a.values()) for a in att.values())):
            notes.append(f"cell {i + 1}: its attachments are not ones nbformat reads; dropped")
            del cell["attachments"]
        src = cell.get("source", "")
        if not (type(src) is str or (type(src) is list and all(type(x) is str for x in src))):
            notes.append(f"cell {i + 1}: its source is not text; emptied")
            cell["source"] = ""
        if "id" in cell and not (type(cell["id"]) is str and CELL_ID.fullmatch(cell["id"])):
            del cell["id"]  # a new one is given; one nbformat's schema refuses cost the notebook's outputs
    if d["cells"] and replaced == len(d["cells"]):
        raise SanitiseError("not a readable notebook (none of its cells is a notebook cell)")
    return d


def _cell_count(d: object) -> int:
    """The cells of a notebook's JSON, as nbformat 4 (`cells`) or 3 (`worksheets`) holds them; 0 for others."""
    if type(d) is not dict:
        return 0
    if type(d.get("cells")) is list:
        return len(d["cells"])
    sheets = d.get("worksheets")
    return sum(len(w["cells"]) for w in sheets if type(w) is dict and type(w.get("cells")) is list) \
        if type(sheets) is list else 0


def read_notebook(path: Path, notes: list[str] | None = None) -> NotebookNode:
    """Read a submitted notebook: refuse links, special files, huge files and unreadable JSON. A damaged cell is
    made readable (`_repair_cells`), with a line in `notes`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise SanitiseError("the notebook was not submitted") from None
    if stat.S_ISLNK(st.st_mode):
        raise SanitiseError("a symbolic link, not a notebook; refused")
    if not stat.S_ISREG(st.st_mode):
        raise SanitiseError("not a regular file; refused")
    if st.st_size > MAX_BYTES:
        raise SanitiseError(f"{st.st_size / 2**20:.0f} MiB, over the {MAX_BYTES // 2**20} MiB limit")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if data.count(b",") + data.count(b"{") + data.count(b"[") > MAX_VALUES:
        raise SanitiseError(f"more than {MAX_VALUES:,} JSON values (a chapter's notebook has a few thousand, with "
                            "its outputs): not read; clear its outputs and submit it again")
    try:
        text = data.decode("utf-8")
        # nbformat.reads without its schema check, which only logs what it finds (and gives missing cell ids,
        # which the check of the autograded notebook gives as well): that notebook is checked once it is made
        # (executed._valid_beside_outputs). The check was a large part of reading a notebook.
        d = nbformat_json(text)
        cells = _cell_count(d)
        if cells > MAX_CELLS:
            raise SanitiseError(f"{cells} cells, over the limit of {MAX_CELLS} (a chapter's notebook has about 50)")
        d = _repair_cells(d, [] if notes is None else notes)
        if type(d) is not dict:
            kind = {list: "a list", str: "a string", type(None): "null", bool: "true or false"}.get(type(d), "a number")
            raise SanitiseError(f"not a notebook (its JSON is {kind}, not an object)")
        nb = notebook_from_json(d)
    except UnicodeDecodeError:
        raise SanitiseError("not UTF-8 text, so not a notebook") from None
    except SanitiseError:
        raise
    except Exception as exc:  # nbformat raises several types for bad JSON or an unknown version
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise SanitiseError(f"not a readable notebook ({why})") from None
    if not isinstance(nb.get("cells"), list):
        raise SanitiseError("not a readable notebook (it has no list of cells)")
    return nb
