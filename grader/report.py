"""report: a CSV of scores and an HTML report with plots and the flagged submissions.

Plots are embedded as PNG data, so the report opens offline. Records are read through the typed,
bounded schema (grader.record), and each plot and list has a fixed number of entries, so the report's
time and memory grow only with the number of students.
"""

from __future__ import annotations

import base64
import csv
import html
import sys
from collections import Counter
from pathlib import Path

from grader.course import COURSE_ID, Course
from grader.plaintext import csv_cell
from grader.record import GradeRecord, load_record, unusable

MAX_BARS = 60    # exercises in the pass-rate plot and the CSV (a chapter has far fewer)
MAX_FLAGS = 50   # flags of one student in the CSV

# The threat model in one line (grader/README.md, "Threat model", says it in full).
INTEGRITY = ("Scores come from values judged outside the learner's process; tampering the sandbox detects "
             "(frame, gc, ctypes or trace introspection, patched libraries, forged results) scores 0 and is "
             "listed here; a determined learner can still make a hidden check's own observations lie unseen.")


def _png(fig) -> str:
    from torchcourse.widgets import figure_png  # the course's one way of turning a figure into PNG

    return "<img alt='plot' src='data:image/png;base64," + base64.b64encode(figure_png(fig)).decode() + "'>"


def report(course: Course, chapter: str) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    # Plot labels quote reasons, which quote a learner's error text: never read "$...$" in it as mathtext (a
    # malformed one raised when the figure was drawn and stopped the report for the whole class).
    with matplotlib.rc_context({"text.parse_math": False}):
        return _report(course, chapter)


def gradebook_scores(course: Course, chapter: str) -> dict[str, tuple[float, dict[str, float]]]:
    """Each student's score in the gradebook, total and per graded cell ("notebook/grade_id"): what `nbgrader
    export` sends to the LMS, with formgrader's manual scores in place of the automatic ones."""
    if not (course.root / "gradebook.db").is_file():
        return {}
    from nbgrader.api import Gradebook, MissingEntry

    found: dict[str, tuple[float, dict[str, float]]] = {}
    with Gradebook(course.db_url, COURSE_ID) as gb:
        try:
            submissions = gb.find_assignment(chapter).submissions
        except MissingEntry:
            return {}
        for sub in submissions:
            cells = {f"{g.notebook.name}/{g.name}": float(g.score) for nb in sub.notebooks for g in nb.grades}
            found[sub.student.id] = (float(sub.score), cells)
    return found


def _report(course: Course, chapter: str) -> tuple[Path, Path]:
    import dataclasses

    from matplotlib.figure import Figure

    records: list[GradeRecord] = []
    for s in course.students(chapter):
        if (r := load_record(course, s, chapter)) is not None:
            records.append(r)
        elif why := unusable(course, s, chapter):
            print(f"report: {why}", file=sys.stderr)
    # One source of truth for what a student scored: the gradebook (formgrader's manual grades included), as
    # nbgrader export reads it. The record gives the why (status, reasons, flags).
    book = gradebook_scores(course, chapter)
    for i, r in enumerate(records):
        if r.student not in book:
            records[i] = dataclasses.replace(r, flags=[*r.flags, "not in the gradebook: nbgrader export has no "
                                                                 "score for this student; rerun autograde"])
            continue
        total, cells = book[r.student]
        exercises = [dataclasses.replace(e, score=cells.get(f"{e.notebook}/{e.grade_id}", e.score))
                     for e in r.exercises]
        flags = list(r.flags)
        if abs(total - r.score) > 1e-9:
            flags.append(f"graded by hand: {total:g} in the gradebook, {r.score:g} from autograde")
        records[i] = dataclasses.replace(r, score=total, exercises=exercises, flags=flags)
    exercises = list(dict.fromkeys(f"{e.notebook}/{e.grade_id}" for r in records for e in r.exercises))[:MAX_BARS]
    course.reports.mkdir(parents=True, exist_ok=True)
    csv_path = course.reports / f"{chapter}.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "score", "max_score", *map(csv_cell, exercises), "flags"])
        for r in records:
            by = {f"{e.notebook}/{e.grade_id}": e.score for e in r.exercises}
            w.writerow([csv_cell(r.student), r.score, r.max_score, *[by.get(x, "") for x in exercises],
                        csv_cell(" | ".join(r.flags[:MAX_FLAGS]))])
    parts = [f"<h1>{html.escape(chapter)}: {len(records)} submissions</h1>"]
    if records:
        fig = Figure(figsize=(6, 3))
        ax = fig.add_subplot()
        ax.hist([r.score for r in records], bins=min(20, max(5, len(records))), color="#3b6ea8")
        ax.set(title="Score distribution", xlabel=f"score (max {records[0].max_score:g})", ylabel="students")
        parts.append(_png(fig))
        rate = []
        for x in exercises:
            got = [e for r in records for e in r.exercises if f"{e.notebook}/{e.grade_id}" == x]
            rate.append(sum(e.status == "passed" for e in got) / max(1, len(got)))
        fig = Figure(figsize=(6, 0.4 * len(exercises) + 1))
        ax = fig.add_subplot()
        ax.barh(exercises, rate, color="#4a8f4a")
        ax.set(title="Pass rate per exercise", xlim=(0, 1))
        parts.append(_png(fig))
        failed = Counter(f"{e.grade_id}: {e.reason.splitlines()[0][:90] if e.reason.strip() else e.status}"
                         for r in records for e in r.exercises if e.status != "passed")
        top = failed.most_common(10)
        if top:
            fig = Figure(figsize=(7, 0.4 * len(top) + 1))
            ax = fig.add_subplot()
            ax.barh([t[0][:70] for t in top][::-1], [t[1] for t in top][::-1], color="#b3261e")
            ax.set(title="Most-failed checks", xlabel="submissions")
            parts.append(_png(fig))
            parts.append("<h2>Most-failed checks</h2><ol>" + "".join(
                f"<li>{html.escape(k)} ({v})</li>" for k, v in top) + "</ol>")
    flagged = [r for r in records if r.flags]
    parts.append(f"<h2>Flagged submissions ({len(flagged)})</h2><p>{INTEGRITY}</p><table><tr><th>student</th>"
                 "<th>score</th><th>reasons</th></tr>")
    for r in flagged:
        reasons = "<br>".join(html.escape(f) for f in r.flags[:20])
        parts.append(f"<tr><td>{html.escape(r.student)}</td><td>{r.score:g}</td><td>{reasons}</td></tr>")
    parts.append("</table>")
    html_path = course.reports / f"{chapter}.html"
    html_path.write_text("<!doctype html><html><head><meta charset='utf-8'><title>report</title><style>"
                         "body{font-family:system-ui,sans-serif;margin:2rem}td,th{border:1px solid #ccc;"
                         "padding:.3rem;vertical-align:top}table{border-collapse:collapse}</style></head><body>"
                         + "".join(parts) + "</body></html>", encoding="utf-8")
    return csv_path, html_path
