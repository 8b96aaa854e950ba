"""The gradebook rows the course grader writes are the rows nbgrader's autograde writes: nbgrader's
`add_student` and `add_submission`, then its own `SaveAutoGrades` over the executed notebooks (a test's
score from its outputs, "No response." on an answer left as released, 0 for a hand-graded one). Every table,
every column but the generated ids, for a chapter with autograded tests, a hand-graded answer and a task:
for first submissions, for a rerun after an instructor's manual score, and for a student already on the
roster. A student's write is one transaction: when it fails, nothing of it is left."""

from __future__ import annotations

import sqlite3
import warnings
from datetime import datetime

import nbformat
import pytest

from grader import gradebook
from grader.course import COURSE_ID, Course
from grader.record import Exercise
from grader.sanitise import sanitise
from tests.helpers.gradebook_rows import gradebook_rows
from tests.helpers.tiny import answer_cell, checks_cell, meta, record_in_gradebook, solution_nb, write

CHAPTER = "ch"
STAMP = datetime(2026, 11, 30, 12, 0, 0)
POINTS = {"ex": 2, "ey": 3, "ez": 1}
NOTEBOOK_OF = {"ex": "nb", "ey": "nb", "ez": "nb2"}
ANSWERS = {"ex-answer": "def double(x):\n    return x + x\n", "ey-answer": "def triple(x):\n    return 3 * x\n",
           "ez-answer": "def half(x):\n    return x / 2\n", "essay": "Strides say how far to step in memory."}


def _second_nb() -> nbformat.NotebookNode:
    """A notebook with one autograded exercise, a hand-graded answer and a task."""
    essay = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE", metadata=meta("essay", grade=True, solution=True,
                                                                            locked=False, points=4))
    task = nbformat.v4.new_markdown_cell("Plot it.", metadata=meta("plot", grade=False, solution=False,
                                                                   locked=True, points=1))
    task.metadata["nbgrader"]["task"] = True
    return nbformat.v4.new_notebook(cells=[
        answer_cell("ez-answer", "def half(x):\n    ### BEGIN SOLUTION\n    return x / 2\n    ### END SOLUTION\n"),
        checks_cell("ez", "assert half(4) == 2", 1), essay, task])


SOLUTIONS = {"nb": solution_nb(), "nb2": _second_nb()}


def _released(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What nbgrader releases (answers cleared, checksums in the metadata), as generate_assignment makes it."""
    from nbgrader.preprocessors import ClearSolutions, ComputeChecksums

    nb, res = nbformat.from_dict(nb), {"language": "python"}
    for step in (ClearSolutions(), ComputeChecksums()):
        nb, res = step.preprocess(nb, res)
    return nb


def _submission(name: str, answered: set[str]) -> nbformat.NotebookNode:
    nb = _released(SOLUTIONS[name])
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answered:
            cell.source = ANSWERS[gid]
    return nb


def _executed(nb: nbformat.NotebookNode, scores: dict[str, float]) -> nbformat.NotebookNode:
    """The notebook as nbgrader's autograde hands it to SaveAutoGrades: each test's outputs say its score
    (an error: none; a number: that much; nothing: full marks)."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in scores and scores[gid] == 0:
            cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="", traceback=[])]
        elif gid in scores and scores[gid] < POINTS[gid]:
            cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": str(scores[gid])},
                                                   execution_count=1)]
    return nb


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "gradebook.db"
    record_in_gradebook("sqlite:///" + str(path), CHAPTER, SOLUTIONS)
    return path.read_bytes()


def _course(tmp_path, template, name: str) -> Course:
    root = tmp_path / name
    root.mkdir()
    (root / "gradebook.db").write_bytes(template)
    return Course(root)


def _by_nbgrader(course: Course, student: str, answered: set[str], scores: dict[str, float]) -> None:
    """nbgrader's autograde, as far as the gradebook goes."""
    from nbgrader.api import Gradebook, MissingEntry
    from nbgrader.preprocessors import SaveAutoGrades

    with Gradebook(course.db_url, COURSE_ID) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's autoflush notes from inside nbgrader's own API
        try:
            gb.find_student(student)
        except MissingEntry:
            gb.add_student(student)
        try:
            gb.find_submission(CHAPTER, student)
        except MissingEntry:
            gb.add_submission(CHAPTER, student, timestamp=STAMP)
    for name in SOLUTIONS:
        res = {"nbgrader": {"db_url": course.db_url, "assignment": CHAPTER, "notebook": name, "student": student}}
        SaveAutoGrades().preprocess(_executed(_submission(name, answered), scores), res)


def _by_grader(course: Course, student: str, answered: set[str], scores: dict[str, float], tmp_path) -> None:
    """The course grader: its sanitise decides what was left as released, the judge's scores are given."""
    unanswered = set()
    for name in SOLUTIONS:
        path = write(_submission(name, answered), tmp_path / "sub" / student / f"{name}.ipynb")
        unanswered |= {(name, gid) for gid in sanitise(path, CHAPTER, name, course.db_url).unanswered}
    exercises = [Exercise(gid, NOTEBOOK_OF[gid], POINTS[gid], score, "passed" if score else "failed")
                 for gid, score in scores.items()]
    gradebook.write_grades(course, CHAPTER, student, STAMP, exercises, unanswered)
    gradebook.close()


CLASS = {  # student: (answers changed, each test's score)
    "ann": (set(ANSWERS), {"ex": 2, "ey": 1.5, "ez": 1}),
    "bob": (set(), {"ex": 0, "ey": 0, "ez": 0}),                       # the release, untouched
    "cat": ({"ex-answer", "essay"}, {"ex": 2, "ey": 0, "ez": 0}),      # on the roster before (see below)
}


def test_the_rows_are_nbgraders_for_a_class(tmp_path, template):
    from nbgrader.api import Gradebook

    ours, theirs = _course(tmp_path, template, "ours"), _course(tmp_path, template, "theirs")
    for course in (ours, theirs):  # `nbgrader db student add`: a name and an email already there
        with Gradebook(course.db_url, COURSE_ID) as gb:
            gb.add_student("cat", first_name="Cat", last_name="Lee", email="cat@example.org")
    for student, (answered, scores) in CLASS.items():
        _by_grader(ours, student, answered, scores, tmp_path)
        _by_nbgrader(theirs, student, answered, scores)
    mine, reference = gradebook_rows(ours.db_path), gradebook_rows(theirs.db_path)
    assert len(reference["grade"]) == 3 * 5 and len(reference["comment"]) == 3 * 5  # the chapter is all there
    assert ("bob", "nb", "ex-answer", "SolutionCell", "No response.", None) in reference["comment"]
    assert ("bob", "nb2", "essay", "GradeCell", 0.0, None, None, 0) in reference["grade"]
    assert ("ann", "nb2", "essay", "GradeCell", None, None, None, 1) in reference["grade"]
    assert ("cat", "Cat", "Lee", "cat@example.org", None) in mine["student"]
    assert mine == reference
    with Gradebook(ours.db_url, COURSE_ID) as gb:  # and nbgrader reads the scores back through its model
        assert gb.find_submission(CHAPTER, "ann").score == 4.5
        assert gb.find_submission(CHAPTER, "bob").score == 0


def test_a_rerun_after_manual_scores_matches_nbgraders(tmp_path, template):
    ours, theirs = _course(tmp_path, template, "ours"), _course(tmp_path, template, "theirs")
    _by_grader(ours, "ann", set(ANSWERS), CLASS["ann"][1], tmp_path)
    _by_nbgrader(theirs, "ann", set(ANSWERS), CLASS["ann"][1])
    for course in (ours, theirs):  # the instructor grades the essay and overrides a test by hand
        con = sqlite3.connect(course.db_path)
        con.execute("update grade set manual_score = 3 where cell_id in "
                    "(select id from base_cell where name in ('essay', 'ex'))")
        con.commit()
        con.close()
    answered, scores = set(ANSWERS) - {"ey-answer"}, {"ex": 0, "ey": 0, "ez": 1}  # resubmitted, worse
    _by_grader(ours, "ann", answered, scores, tmp_path)
    _by_nbgrader(theirs, "ann", answered, scores)
    assert gradebook_rows(ours.db_path) == gradebook_rows(theirs.db_path)
    grades = {r[2]: r[4:] for r in gradebook_rows(ours.db_path)["grade"]}
    assert grades["ex"] == (0.0, 3.0, None, 1)  # the manual score is kept, and marked for a second look


def test_a_score_over_the_maximum_is_cut_to_it(tmp_path, template):
    course = _course(tmp_path, template, "c")
    gradebook.write_grades(course, CHAPTER, "ann", STAMP, [Exercise("ex", "nb", 2, 7, "passed")])
    gradebook.close()
    assert {r[2]: r[4] for r in gradebook_rows(course.db_path)["grade"]}["ex"] == 2.0


def test_a_failed_write_leaves_nothing_of_the_student(tmp_path, template):
    course = _course(tmp_path, template, "c")
    with pytest.raises(ValueError):
        gradebook.write_grades(course, CHAPTER, "ann", STAMP, [Exercise("ex", "nb", 2, "not a number", "passed")])
    rows = gradebook_rows(course.db_path)
    assert rows["student"] == [] and rows["submitted_assignment"] == [] and rows["grade"] == []
    gradebook.write_grades(course, CHAPTER, "ann", STAMP, [Exercise("ex", "nb", 2, 2, "passed")])
    gradebook.close()  # the open gradebook still works
    assert len(gradebook_rows(course.db_path)["grade"]) == 5
