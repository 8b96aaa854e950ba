"""feedback: hidden blocks cut, test tracebacks reduced, emitted values dropped; a page that would still
show a hidden line is not written."""

from __future__ import annotations

import html
import json

import nbformat

from grader.course import Course
from grader.feedback import HIDDEN_NOTE, _strip, _without_hidden, feedback
from tests.helpers.tiny import SECRET_X, SECRET_Y, answered_nb, by_id, emit_output, error_output, solution_nb, write


def test_hidden_blocks_are_replaced_by_one_line():
    source = "visible()\n### BEGIN HIDDEN TESTS\nsecret_one()\nsecret_two()\n### END HIDDEN TESTS\nafter()\n"
    assert _without_hidden(source) == ("visible()\n# (graded checks with more cases ran here; they are not shown)\n"
                                       "after()\n")


def test_an_unclosed_hidden_block_is_cut_to_the_end():
    assert "secret" not in _without_hidden("a()\n### BEGIN HIDDEN TESTS\nsecret()\nmore_secret()\n")


def _graded_nb():
    """What autograde writes: the solution's checks cells restored, with the sandbox's outputs."""
    nb = answered_nb()
    sol = solution_nb()
    for gid in ("ex", "ey"):
        by_id(nb, gid).source = by_id(sol, gid).source
    by_id(nb, "ex").outputs = [nbformat.from_dict(emit_output("ex", "case0", 42)), nbformat.from_dict(
        {**error_output("CheckFailed", "double(21) returned 41"), "traceback": [f"----> 3 {SECRET_X}", "..."]})]
    return nb


def test_strip_cuts_hidden_source_tracebacks_and_emitted_values():
    nb = _strip(_graded_nb())
    text = json.dumps(nb)
    assert SECRET_X not in text and SECRET_Y not in text and "BEGIN HIDDEN" not in text
    assert "vnd.torchcourse.emit" not in text
    assert [o.get("text") for o in by_id(nb, "ex").outputs] == [HIDDEN_NOTE]  # the reason is in the scores table
    assert any(c.source == "def double(x):\n    return x * 2\n" for c in nb.cells)  # the learner's answer stays


def test_outputs_are_shown_only_before_the_first_checks_cell():
    nb = _graded_nb()
    code = [c for c in nb.cells if c.cell_type == "code"]
    first = code.index(by_id(nb, "ex"))
    for c in code:
        c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="LEAK:aGlkZGVu\n")]
    nb = _strip(nb)
    shown = [bool(c.outputs) and "LEAK" in c.outputs[0].get("text", "") for c in code]
    assert shown == [k < first for k in range(len(code))]


def _course(tmp_path, student, nb):
    root = tmp_path / "course"
    write(solution_nb(), root / "solutions" / "ch" / "nb.ipynb")
    (root / "submitted" / student / "ch").mkdir(parents=True)
    out = root / "autograded" / student / "ch"
    write(nb, out / "nb.ipynb")
    record = {"student": student, "chapter": "ch", "score": 2.0, "max_score": 5.0, "flags": [], "exercises": [
        {"grade_id": "ex", "notebook": "nb", "max_points": 2.0, "score": 0.0, "status": "failed",
         "reason": "double(21) returned 41", "flags": []},
        {"grade_id": "ey", "notebook": "nb", "max_points": 3.0, "score": 3.0, "status": "passed", "reason": "",
         "flags": []}]}
    (out / ".torchcourse-grade.json").write_text(json.dumps(record))
    return Course(root)


def test_a_feedback_page_has_scores_and_no_hidden_tests(tmp_path):
    course = _course(tmp_path, "ann", _graded_nb())
    pages = feedback(course, "ch")
    assert pages == [course.feedback / "ann" / "ch" / "nb.html"]
    page = pages[0].read_text()
    assert "ann: 2 / 5 for the chapter" in page and "double(21) returned 41" in page
    assert "triple(7)" not in page and "double(21), 42" not in page and "BEGIN HIDDEN" not in page


def test_what_the_learners_own_run_printed_is_shown_even_where_it_matches_a_hidden_line(tmp_path):
    # Hidden blocks never run in the learner's process, so its output can hold a hidden line only as the
    # learner's own text (a short common line, their own answer): the page is written, with it.
    nb = _graded_nb()
    first = next(c for c in nb.cells if c.cell_type == "code")  # before any checks cell: its outputs are shown
    first.outputs = [nbformat.v4.new_output("stream", name="stdout", text=SECRET_Y + "\n")]
    course = _course(tmp_path, "snoop", nb)
    (page,) = feedback(course, "ch")
    assert SECRET_Y in html.unescape(page.read_text(encoding="utf-8"))


def test_students_without_a_record_get_no_page(tmp_path):
    course = _course(tmp_path, "ann", _graded_nb())
    (course.autograded / "ann" / "ch" / ".torchcourse-grade.json").unlink()
    assert feedback(course, "ch") == []
