"""The autograded notebook: the sanitised submission with the sandbox's outputs, built from untrusted claims.

This is what formgrader shows an instructor and what `feedback` renders, so every output in it is rebuilt in
the shape nbformat's schema requires (a claim that is not one is dropped), bounded in total, and its HTML made
inert; nothing a learner's code printed can run in an instructor's browser.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import nbformat

from grader.htmlsafe import safe_notebook
from grader.inside.policy import STREAM_CAP, TRACEBACK_LINES
from grader.judge import cell_states
from grader.limits import NOTEBOOK_OUTPUT_BYTES, cap_outputs
from grader.sanitise import Sanitised
from grader.wire import RawResult

KEEP_MIME_TEXT = ("text/", "image/png", "image/jpeg", "image/svg+xml")
JSON_MIME = re.compile(r"^application/(.*\+)?json$")  # nbformat's schema: only these keys may hold JSON
JSON_DEPTH = 100  # levels of containers a JSON output may nest: the notebook is written by json.dumps, which recurses


def _shallow(value: object, depth: int = JSON_DEPTH) -> bool:
    """Whether `value` (parsed JSON) nests at most `depth` containers deep; read level by level, no recursion."""
    level = [value]
    for _ in range(depth + 1):
        below: list = []
        for v in level:
            if type(v) is dict:
                below += v.values()
            elif type(v) is list:
                below += v
        if not below:
            return True
        level = below
    return False


def _clean_output(out: dict) -> dict | None:
    """An nbformat output built from an untrusted claim, or None when it is not a valid one. Built in the
    shape nbformat's schema requires, so nothing checks it again (see `_valid_beside_outputs`):
    `nbformat.v4.new_output` validates each output on its own, which cost more than the judge."""
    kind = out.get("output_type") if type(out) is dict else None
    node = nbformat.NotebookNode
    try:
        if kind == "stream" and out.get("name") in ("stdout", "stderr") and type(out.get("text")) is str:
            return node(output_type="stream", name=out["name"], text=out["text"])
        if kind in ("display_data", "execute_result") and type(out.get("data")) is dict:
            data = node()
            for k, v in out["data"].items():
                if type(k) is not str:
                    continue
                if JSON_MIME.match(k):
                    if not _shallow(v):
                        return None
                    # As parsed from this job's results, which nothing else changes: the notebook is written and
                    # dropped. Not made NotebookNodes (what `data[k] =` would do): from_dict's copy of every
                    # container was a sixth of the autograded notebook's cost (the emitted values' outputs).
                    dict.__setitem__(data, k, v)
                elif type(v) is str and k.startswith(KEEP_MIME_TEXT):
                    data[k] = v
            if kind == "execute_result":
                count = out.get("execution_count")
                return node(output_type=kind, data=data, metadata=node(),
                            execution_count=count if type(count) is int and count >= 0 else None)
            return node(output_type=kind, data=data, metadata=node())
        if kind == "error":
            tb = out.get("traceback")
            return node(output_type="error", ename=str(out.get("ename", ""))[:200],
                        evalue=str(out.get("evalue", ""))[:STREAM_CAP],
                        traceback=[str(t) for t in tb][:TRACEBACK_LINES] if type(tb) is list else [])
    except (TypeError, ValueError, RecursionError):
        return None
    return None


def _copy_for_output(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of `nb` as deep as what is changed below and by safe_notebook and nbformat.validate: the
    notebook's metadata, each cell (its source, outputs, count, id are replaced, never edited in place) and
    its attachments; the rest is shared with the sanitised notebook, which nothing changes. A whole copy
    through JSON cost more than the rest of the autograded notebook's making."""
    node = nbformat.NotebookNode
    out = node(nb)
    out.metadata = node(nb.get("metadata", {}))
    cells = []
    for cell in nb.cells:
        cell = node(cell)
        if cell.get("attachments"):
            cell.attachments = nbformat.from_dict(json.loads(json.dumps(cell.attachments)))
        cells.append(cell)
    out.cells = cells
    return out


def executed_notebook(sub: Sanitised, raw: RawResult, own_markdown: frozenset[str] = frozenset()
                      ) -> nbformat.NotebookNode:
    """The sanitised notebook with the sandbox's outputs, HTML made inert: what formgrader shows an instructor.
    `own_markdown`: the chapter's own markdown cells (`chapter_markdown`), which hold no learner's text."""
    nb = _copy_for_output(sub.nb)
    states = cell_states(raw, len(sub.code_cells))
    room = NOTEBOOK_OUTPUT_BYTES  # what formgrader and feedback render stays bounded however much came back
    for pos, index in enumerate(sub.code_cells):
        cell = nb.cells[index]
        line = raw.cells.get(pos)
        outs = []
        for o in (_clean_output(x) for x in cap_outputs(list(line.outputs if line is not None else []))):
            size = len(json.dumps(o)) if o is not None else 0
            if o is not None and size <= room:
                room -= size
                outs.append(o)
            elif o is not None:
                outs.append(nbformat.v4.new_output("stream", name="stderr",
                                                   text="[outputs left out: the notebook's outputs are over "
                                                        f"{NOTEBOOK_OUTPUT_BYTES // 2**20} MiB]\n"))
                room = 0
                break
        count = line.execution_count if line is not None else None
        cell.execution_count = count if type(count) is int and count > 0 else None
        if line is None and states[pos] != "not_run":
            outs.append(nbformat.v4.new_output("error", ename=f"Grader{states[pos].title()}",
                                               evalue=f"this cell did not finish ({states[pos]})", traceback=[]))
        cell.outputs = outs
    # formgrader renders this notebook in an instructor's browser: no learner script
    safe_notebook(nb, own_markdown | sub.course_markdown)
    if not _valid_beside_outputs(nb, sub.code_cells):
        for index in sub.code_cells:
            nb.cells[index].outputs = []
    return nb


def _valid_beside_outputs(nb: nbformat.NotebookNode, code_cells: list[int]) -> bool:
    """nbformat's schema over `nb` with its code cells' outputs left out. Those outputs are the grader's own:
    `_clean_output` builds each in the schema's shape and SanitizeHTML only replaces strings with strings
    (tests/grader/test_autograde.py holds every kind of forged claim against the whole schema). Checking them
    again was most of the check; the rest of the notebook is the learner's
    and is checked as before."""
    outputs = {i: nb.cells[i].outputs for i in code_cells}
    try:
        for i in code_cells:
            nb.cells[i].outputs = []
        with warnings.catch_warnings():  # notebooks converted from nbformat 3 have no cell ids; fine here
            warnings.simplefilter("ignore")
            nbformat.validate(nb)
        return True
    except nbformat.ValidationError:
        return False
    finally:
        for i, outs in outputs.items():
            nb.cells[i].outputs = outs


def write_executed(path: Path, nb: nbformat.NotebookNode) -> None:
    """Write an autograded notebook. executed_notebook validated it already; nbformat.write would validate it
    again, deep-copy it and indent it with json's pure-Python encoder (the largest part of writing one);
    the same JSON on one line is as good for formgrader. Non-ASCII text is written as JSON escapes: json's
    encoder is up to three times slower with ensure_ascii=False (chapter 1's notebooks with figures), and a
    reader sees the same text."""
    path.write_text(json.dumps(nb) + "\n", encoding="utf-8")


def chapter_markdown(sols: dict[str, Sanitised]) -> frozenset[str]:
    """The text of every markdown cell of the chapter's solution notebooks: the course's own, not a learner's."""
    return frozenset(c.source for sol in sols.values() for c in sol.nb.cells if c.get("cell_type") == "markdown")

