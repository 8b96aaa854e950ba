"""What the grader reads back is bounded before it is parsed, and feedback and report stay bounded in time and
memory, whatever a job printed. The case is of the kind that once took minutes and gigabytes to grade and to
give feedback on (one result line of a million outputs; benchmarks/README.md has the figures), made smaller so
that the test is fast: 150 000 outputs in one line."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import nbformat
import pytest

from grader import autograde as autograde_mod
from grader import gradebook, limits
from grader.autograde import autograde
from grader.course import Course
from grader.record import GradeRecord, load, load_record
from grader.sandbox import RawResult, parse_results
from tests.helpers.course import REPO
from tests.helpers.tiny import CHAPTER, answered_nb, cell, line, solution_nb, tiny_gradebook, write

FLOOD = 150_000
MEMORY = 3 * 2**30  # address space for feedback and report (Python, nbconvert and matplotlib take ~1 GiB of it)


def _memory_limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _flood_line(i: int, n: int) -> bytes:
    out = {"output_type": "stream", "name": "stdout", "text": "x"}
    return json.dumps({"i": i, "status": "ok", "execution_count": i + 1, "outputs": [out] * n}).encode()


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("results") / "results.jsonl"
    with open(path, "wb") as f:
        f.write(_flood_line(0, FLOOD) + b"\n")                              # many outputs: kept, capped
        f.write(_flood_line(1, limits.LINE_OBJECTS + 10) + b"\n")           # more objects than parsed: refused
        f.write(b'{"i": 2, "status": "ok", "outputs": [], "pad": "' + b" " * limits.RESULT_LINE_BYTES + b'"}\n')
        f.write(b"\n" * 1_000_000 + json.dumps(line(3)).encode() + b"\n")   # a million empty lines, then a cell
    return path


def test_result_lines_are_bounded_in_bytes_and_count_before_parsing(results_file):
    start = time.monotonic()
    cells = parse_results(results_file, 5)
    took = time.monotonic() - start
    assert sorted(cells) == [0, 3], sorted(cells)  # the over-long and the over-full lines are dropped
    outs = cells[0].outputs
    assert len(outs) == limits.OUTPUTS_PER_CELL
    assert outs[-1]["text"] == f"[{FLOOD - limits.OUTPUTS_PER_CELL + 1} more outputs left out by the grader]\n"
    assert took < 15, f"parsing took {took:.1f} s"


def test_the_object_bound_counts_objects_not_braces():
    """A line is parsed without counting objects only when it has too few braces to hold too many; braces in
    text (a printed dict, say) do not make an honest line count as over-full, and objects still do."""
    text = "{" * (limits.LINE_OBJECTS + 5)
    honest = json.dumps({"i": 0, "status": "ok", "outputs": [{"output_type": "stream", "name": "stdout",
                                                               "text": text}]}).encode()
    assert limits.parse_bounded(honest)[0]["outputs"][0]["text"] == text
    assert limits.parse_bounded(_flood_line(0, limits.LINE_OBJECTS + 10))[0] is None
    assert limits.parse_bounded(_flood_line(0, 10))[0]["outputs"][9]["text"] == "x"
    assert limits.parse_bounded(b'{"i": 0, "outputs": [')[0] is None  # not JSON, on either path
    assert limits.parse_bounded(b"[" * 100_000 + b"]" * 100_000)[0] is None  # too deep to parse: refused, not raised


class FloodPool:
    """Answers each job with the flooded results file, read by the sandbox's own parser."""

    path = None

    def __init__(self, n, limits, wait=True, preload=()):
        pass

    def wait_ready(self):
        pass

    def run(self, jobs, expect=None):
        for job in jobs:
            cells = {i: cell(i) for i in range(len(job.cells))}
            if job.key[0]:  # a student's job (the reference run gets plain lines)
                cells[0] = parse_results(self.path, len(job.cells))[0]
            yield job, RawResult("exited", cells, 0.1, 0, None, "", [])

    def close(self):
        pass


def test_autograde_feedback_and_report_stay_bounded(tmp_path, gradebook_template, monkeypatch, results_file):
    root = tmp_path / "course"
    write(solution_nb(), root / "solutions" / CHAPTER / "nb.ipynb")
    tiny_gradebook(root / "gradebook.db", gradebook_template)
    write(answered_nb(), root / "submitted" / "flood" / CHAPTER / "nb.ipynb")
    monkeypatch.setattr(FloodPool, "path", results_file)
    monkeypatch.setattr(autograde_mod, "LocalPool", FloodPool)
    monkeypatch.setattr(autograde_mod, "warn_missing", lambda: [])
    monkeypatch.setattr(gradebook, "ensure_assignment", lambda course, chapter: None)
    course = Course(root)
    out = autograde(course, CHAPTER, progress=False, seed=1)
    assert "flood" in out and out.not_recorded == {}
    graded = course.autograded / "flood" / CHAPTER / "nb.ipynb"
    nb = nbformat.read(str(graded), as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert len(first.outputs) == limits.OUTPUTS_PER_CELL and "left out by the grader" in first.outputs[-1].text
    # feedback and report as an instructor runs them (one interpreter), under a memory and a time limit
    both = (f"import sys; from grader.__main__ import main; r = {str(root)!r}; "
            f"sys.exit(main(['--root', r, 'feedback', {CHAPTER!r}]) or main(['--root', r, 'report', {CHAPTER!r}]))")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", both], capture_output=True, text=True, timeout=180,
                          preexec_fn=_memory_limit, cwd=REPO)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-2000:]
    assert took < 120, f"feedback and report took {took:.0f} s"
    assert (course.reports / f"{CHAPTER}.html").exists()
    page = course.feedback / "flood" / CHAPTER / "nb.html"
    assert 0 < page.stat().st_size < 2 * 2**20
    rec = load_record(course, "flood", CHAPTER)
    assert isinstance(rec, GradeRecord) and rec.score == out["flood"]["score"] and rec.exercises[0].grade_id == "ex"


def test_a_record_is_read_through_its_schema_with_bounds(tmp_path):
    path = tmp_path / "rec.json"
    base = {"student": "s", "chapter": "c", "seed": 1, "submission": "h", "submitted_at": None, "score": 1,
            "max_score": 2, "flags": ["f" * 100_000] * 10, "runs": {}, "graded_at": "now", "future_key": 1,
            "exercises": [{"grade_id": "ex", "notebook": "nb", "max_points": 2, "score": 1, "status": "failed",
                           "reason": "r", "flags": [], "detail": "d", "newer": True}] * (limits.RECORD_ITEMS + 5)}
    path.write_text(json.dumps(base))
    rec = load(path)
    assert len(rec.exercises) == limits.RECORD_ITEMS and all(len(f) <= limits.TEXT_CHARS for f in rec.flags)
    assert rec.to_dict()["exercises"][0]["detail"] == "d"
    path.write_text(json.dumps({**base, "score": "lots"}))
    assert load(path) is None  # not a record: no record
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere.json")
    assert load(path) is None
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (limits.RECORD_BYTES + 1))
    assert load(big) is None


def test_html_cleaning_and_feedback_stay_bounded_on_what_bleach_parses_slowly(tmp_path):
    # bleach's parser is quadratic in nesting and siblings: 100 KB of "<div>" took 10 s to clean and 1 MB would take
    # 15 minutes, in autograde (the autograded notebook) and again in feedback (the page); 20 000 markdown cells
    # made a page take half a minute. A markdown cell or an HTML output costs the learner's own notebook nothing.
    from grader.feedback import feedback
    from grader.htmlsafe import safe_notebook
    from tests.grader.test_feedback import _course, _graded_nb

    deep = "<div>" * 20_000 + "x"
    outputs = [nbformat.v4.new_output("display_data", data={"text/html": deep + str(i), "text/plain": "t"})
               for i in range(3)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(deep + "md"),
                                         nbformat.v4.new_markdown_cell("**kept**"),
                                         nbformat.v4.new_code_cell("x", outputs=outputs)])
    start = time.monotonic()
    safe_notebook(nb)
    assert time.monotonic() - start < 3
    assert "kept" in nb.cells[1].source and "more characters not shown by the grader" in nb.cells[0].source
    graded = _graded_nb()
    graded.cells += [nbformat.v4.new_markdown_cell(f"note {i}") for i in range(20_000)]
    course = _course(tmp_path, "ann", graded)
    start = time.monotonic()
    [page] = feedback(course, "ch")
    assert time.monotonic() - start < 10
    text = page.read_text()
    assert "2 / 5 for the chapter" in text and "note 1" in text and "are not shown" in text


@pytest.mark.parametrize("evalue", ["$\\frac{$", "$x^{" + "{" * 40 + "$"])
def test_a_learners_error_text_in_a_reason_does_not_stop_the_report(tmp_path, evalue):
    # A reason quotes a visible check's error (the learner's own text); matplotlib read "$...$" in a plot label as
    # mathtext, and a malformed one (ParseException, RecursionError) stopped the report for the whole class.
    from grader.report import report

    course = Course(tmp_path)
    for student in ("ann", "bob"):
        (course.submitted / student / CHAPTER).mkdir(parents=True)
        rec = {"student": student, "chapter": CHAPTER, "seed": 1, "submission": "h", "submitted_at": None,
               "score": 0, "max_score": 2, "flags": [], "runs": {}, "graded_at": "now", "exercises": [
                   {"grade_id": "ex", "notebook": "nb", "max_points": 2, "score": 0, "status": "failed",
                    "reason": f"ValueError: {evalue}", "flags": []}]}
        folder = course.autograded / student / CHAPTER
        folder.mkdir(parents=True)
        (folder / ".torchcourse-grade.json").write_text(json.dumps(rec))
    csv_path, html_path = report(course, CHAPTER)
    assert "ValueError" in html_path.read_text() and csv_path.read_text().count("\n") == 3
