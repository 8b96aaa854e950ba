"""report: learner text reaches the CSV as plain text on one line, never as a terminal escape or a formula."""

from __future__ import annotations

import csv
import json

from grader.course import Course
from grader.plaintext import csv_cell, one_line
from grader.report import report

CHAPTER = "01-tensors"
# A learner's exception message quoted in a flag: a screen clear, a forged row, a spreadsheet formula.
ESCAPES = "\x1b[2J\x1b]0;owned\x07done\r\nmallory,10,10,,"
FORMULA = '=HYPERLINK("http://example.invalid","click")'


def _record(course: Course, student: str, flags: list[str]) -> None:
    rec = {"student": student, "chapter": CHAPTER, "seed": 1, "submission": "h", "submitted_at": None,
           "score": 0, "max_score": 2, "flags": flags, "runs": {}, "graded_at": "now", "exercises": [
               {"grade_id": "ex", "notebook": "nb", "max_points": 2, "score": 0, "status": "failed",
                "reason": "ValueError: x", "flags": []}]}
    (course.submitted / student / CHAPTER).mkdir(parents=True)
    folder = course.autograded / student / CHAPTER
    folder.mkdir(parents=True)
    (folder / ".torchcourse-grade.json").write_text(json.dumps(rec))


def test_control_characters_and_formulas_in_flags_reach_the_csv_escaped(tmp_path):
    course = Course(tmp_path)
    _record(course, "ann", [f"ValueError: {ESCAPES}"])
    _record(course, "bob", [FORMULA])
    _record(course, "kim", [])
    csv_path, html_path = report(course, CHAPTER)
    raw = csv_path.read_text()
    assert not any(ord(ch) < 32 and ch not in "\r\n" for ch in raw), "a control character reached the CSV raw"
    assert raw.count("\n") == 4  # the header and one line a student: no forged row
    rows = {r["student"]: r for r in csv.DictReader(open(csv_path, newline=""))}
    assert sorted(rows) == ["ann", "bob", "kim"]
    # (every student here is missing from the gradebook, which adds a flag after the learner's)
    assert rows["ann"]["flags"].startswith("ValueError: \\x1b[2J\\x1b]0;owned\\x07done\\r\\nmallory,10,10,, | ")
    assert rows["bob"]["flags"].startswith("'" + FORMULA + " | ")
    assert rows["kim"]["flags"].startswith("not in the gradebook")
    assert "=HYPERLINK(&quot;http" in html_path.read_text()  # the HTML report escapes the same text as HTML


def test_plain_text_is_one_printable_line_and_never_a_formula():
    assert one_line("a\nb\x1b[31m\tc") == "a\\nb\\x1b[31m\\tc"
    assert one_line("Zoë, 名前") == "Zoë, 名前"  # printable text is left as it is
    assert [csv_cell(t) for t in ("=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "ok = 1")] == \
        ["'=1+1", "'+1", "'-1", "'@SUM(A1)", "\\t=1", "ok = 1"]
