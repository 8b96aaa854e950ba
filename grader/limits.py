"""Bounds on everything the grader reads back from a sandboxed job, and on what it writes from it.

Learner code decides how much a job prints, so nothing read back is parsed, kept or rendered without a
bound in bytes *and* in count: one result line of tens of MB holding a million outputs once made `autograde`
and `feedback` take minutes and gigabytes (benchmarks/README.md). With these bounds a line is
refused before parsing when it is too long, parsing stops after a fixed number of objects, and a cell
keeps at most `OUTPUTS_PER_CELL` outputs (the rest is counted in one line that says so).
"""

from __future__ import annotations

import json

RESULTS_BYTES = 96 * 2**20       # bytes of a job's results read back in all
RESULT_LINE_BYTES = 24 * 2**20   # bytes of one cell's line (above what the worker keeps: policy.CELL_CAP)
LINE_OBJECTS = 200_000           # JSON objects parsed from one line (an output is one to three)
OUTPUTS_PER_CELL = 500           # outputs of one cell kept (the rest counted, not kept)
NOTEBOOK_OUTPUT_BYTES = 16 * 2**20  # serialised outputs of one autograded notebook (the rest left out)
RECORD_BYTES = 8 * 2**20         # a grade record file read back by feedback and report
RECORD_ITEMS = 5_000             # exercises, flags or runs in one grade record
TEXT_CHARS = 4_000               # characters of one reason, detail or flag kept in a record
# bleach's HTML parser (html5lib) takes time quadratic in the nesting and the siblings of what it parses, so a
# megabyte of nested tags would take many minutes to clean. What autograde and feedback give it is bounded.
HTML_CHARS = 32 * 1024           # one HTML or Markdown text of a notebook cleaned; a longer one is shown cut, as text
HTML_BUDGET = 128 * 1024         # characters of HTML and Markdown cleaned in one notebook (the rest shown cut)
FEEDBACK_CELLS = 500             # cells of one notebook on a feedback page (a chapter's have about 50)
FEEDBACK_CHARS = 128 * 1024      # characters of cell sources and output text on one feedback page (about 36 KB)


class TooMany(ValueError):
    """A line holds more JSON objects than `LINE_OBJECTS`."""


def parse_bounded(raw: bytes) -> tuple[object | None, bool]:
    """One line of results as JSON (None when it is too long, too many objects, or not JSON at all), and whether
    the line was within the bounds (so that a None with True means "not JSON"). The length is checked before
    parsing; the object count while parsing, so neither time nor
    memory grows past the bounds whatever the line holds."""
    if len(raw) > RESULT_LINE_BYTES:
        return None, False
    count = 0

    def hook(obj: dict) -> dict:
        nonlocal count
        count += 1
        if count > LINE_OBJECTS:
            raise TooMany
        return obj

    # Every object opens with a brace: a line with no more braces than the bound cannot hold too many, so it is
    # parsed without the counting hook (a Python call per object).
    try:
        return json.loads(raw, object_hook=hook if raw.count(b"{") > LINE_OBJECTS else None), True
    except TooMany:
        return None, False
    except (ValueError, RecursionError):
        return None, True


def cap_outputs(outputs: list) -> list:
    """At most `OUTPUTS_PER_CELL` outputs; when there were more, the last one says how many were left out."""
    if len(outputs) <= OUTPUTS_PER_CELL:
        return outputs
    left = len(outputs) - (OUTPUTS_PER_CELL - 1)
    return outputs[: OUTPUTS_PER_CELL - 1] + [{"output_type": "stream", "name": "stderr",
                                               "text": f"[{left} more outputs left out by the grader]\n"}]


def cap_text(text: object, limit: int = TEXT_CHARS) -> str:
    text = text if isinstance(text, str) else "" if text is None else str(text)
    cut = " [... cut by the grader]"
    return text if len(text) <= limit else text[: limit - len(cut)] + cut


RESULT_LINES = 100_000           # lines of one job's results looked at (a cell writes one or a few)


def result_lines(data: bytes):
    """The lines of a job's results, one at a time (never a list of them all: 96 MB of newlines would be
    96 million objects), at most `RESULT_LINES`."""
    start, given = 0, 0
    while given < RESULT_LINES:  # empty lines cost a scan of bytes already bounded, and are not counted
        end = data.find(b"\n", start)
        if end < 0:
            end = len(data)
        if end > start:
            given += 1
            yield data[start:end]
        if end >= len(data):
            return
        start = end + 1
