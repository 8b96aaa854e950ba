"""The gradebook rows `write_grades` makes for a first submission are the rows nbgrader's own API makes
(`add_student`, `add_submission`) with the same scores set: every table, every column but the generated
ids, for a chapter with autograded, manually graded and task cells. A rescore keeps an instructor's manual
scores, and a student's write is one transaction: when it fails, nothing of it is left."""

from __future__ import annotations

import sqlite3
import warnings
from datetime import datetime

import nbformat
import pytest

from grader import gradebook
from grader.course import Course
from grader.judge import Exercise
from tests.helpers.tiny import answer_cell, checks_cell, meta, record_in_gradebook, solution_nb

CHAPTER = "ch"
STAMP = datetime(2026, 11, 30, 12, 0, 0)


def _second_nb() -> nbformat.NotebookNode:
    """A notebook with one autograded exercise, a manually graded answer and a task."""
    essay = nbformat.v4.new_markdown_cell("Explain strides.", metadata=meta("essay", grade=True, solution=True,
                                                                            locked=False, points=4))
    task = nbformat.v4.new_markdown_cell("Plot it.", metadata=meta("plot", grade=False, solution=False,
                                                                   locked=True, points=1))
    task.metadata["nbgrader"]["task"] = True
    return nbformat.v4.new_notebook(cells=[
        answer_cell("ez-answer", "def half(x):\n    ### BEGIN SOLUTION\n    return x / 2\n    ### END SOLUTION\n"),
        checks_cell("ez", "assert half(4) == 2", 1), essay, task])


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "gradebook.db"
    record_in_gradebook("sqlite:///" + str(path), CHAPTER, {"nb": solution_nb(), "nb2": _second_nb()})
    return path.read_bytes()


def _course(tmp_path, template, name: str) -> Course:
    root = tmp_path / name
    root.mkdir()
    (root / "gradebook.db").write_bytes(template)
    return Course(root)


def _exercises(x: float, y: float, z: float) -> list[Exercise]:
    return [Exercise("ex", "nb", 2, x, "passed"), Exercise("ey", "nb", 3, y, "failed"),
            Exercise("ez", "nb2", 1, z, "passed")]


def _by_nbgrader(course: Course, student: str, exercises: list[Exercise]) -> None:
    """What nbgrader's API makes for a new submission, then the scores as autograde sets them."""
    from nbgrader.api import Gradebook

    by_cell = {(e.notebook, e.grade_id): e for e in exercises}
    with Gradebook(course.db_url, "torchcourse") as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's autoflush notes from inside nbgrader's own API
        if student != "cat":
            gb.add_student(student)
        sub = gb.add_submission(CHAPTER, student, timestamp=STAMP)
        for nb in sub.notebooks:
            for grade in nb.grades:
                ex = by_cell.get((nb.name, grade.name))
                if ex is not None:
                    grade.auto_score = min(max(float(ex.score), 0.0), float(grade.max_score))
                    grade.needs_manual_grade = False
        gb.db.commit()


def _rows(course: Course) -> dict[str, list[tuple]]:
    """Every row the grade tables hold, with the generated ids replaced by what they stand for."""
    con = sqlite3.connect(course.db_path)
    try:
        q = lambda sql: sorted(tuple(r) for r in con.execute(sql))  # noqa: E731
        return {
            "student": q("select * from student"),
            "submitted_assignment": q("select a.name, s.student_id, s.timestamp, s.extension "
                                      "from submitted_assignment s join assignment a on a.id = s.assignment_id"),
            "submitted_notebook": q("select s.student_id, n.name, sn.late_submission_penalty, sn.flagged "
                                    "from submitted_notebook sn join notebook n on n.id = sn.notebook_id "
                                    "join submitted_assignment s on s.id = sn.assignment_id"),
            "grade": q("select s.student_id, n.name, c.name, c.type, g.auto_score, g.manual_score, g.extra_credit, "
                       "g.needs_manual_grade from grade g join base_cell c on c.id = g.cell_id "
                       "join submitted_notebook sn on sn.id = g.notebook_id join notebook n on n.id = sn.notebook_id "
                       "join submitted_assignment s on s.id = sn.assignment_id"),
            "comment": q("select s.student_id, n.name, c.name, c.type, m.auto_comment, m.manual_comment "
                         "from comment m join base_cell c on c.id = m.cell_id "
                         "join submitted_notebook sn on sn.id = m.notebook_id "
                         "join notebook n on n.id = sn.notebook_id "
                         "join submitted_assignment s on s.id = sn.assignment_id"),
        }
    finally:
        con.close()


def test_a_first_submission_gets_the_rows_nbgraders_api_makes(tmp_path, template):
    from nbgrader.api import Gradebook

    ours, theirs = _course(tmp_path, template, "ours"), _course(tmp_path, template, "theirs")
    for course in (ours, theirs):  # cat is on the roster already (`nbgrader db student add`), with a name
        with Gradebook(course.db_url, "torchcourse") as gb:
            gb.add_student("cat", first_name="Cat", last_name="Lee", email="cat@example.org")
    for student, scores in (("ann", (2, 1.5, 1)), ("bob", (0, 3, 7)), ("cat", (1, 0, 0))):  # 7: over the max
        gradebook.write_grades(ours, CHAPTER, student, STAMP, _exercises(*scores))
        _by_nbgrader(theirs, student, _exercises(*scores))
    gradebook.close()
    mine, reference = _rows(ours), _rows(theirs)
    assert len(reference["grade"]) == 3 * 5 and len(reference["comment"]) == 3 * 5  # the chapter is all there
    assert ("cat", "Cat", "Lee", "cat@example.org", None) in mine["student"]
    assert mine == reference
    # and nbgrader reads the scores back through its own model
    with Gradebook(ours.db_url, "torchcourse") as gb:
        assert gb.find_submission(CHAPTER, "ann").score == 4.5
        assert gb.find_submission(CHAPTER, "bob").score == 4
        assert gb.find_submission(CHAPTER, "bob").needs_manual_grade  # the essay and the task wait for a person


def test_a_rescore_keeps_manual_scores_and_sets_the_new_ones(tmp_path, template):
    course = _course(tmp_path, template, "c")
    gradebook.write_grades(course, CHAPTER, "ann", STAMP, _exercises(2, 3, 1))
    gradebook.close()
    con = sqlite3.connect(course.db_path)
    con.execute("update grade set manual_score = 3 where cell_id in (select id from base_cell where name = 'essay')")
    con.commit()
    con.close()
    gradebook.write_grades(course, CHAPTER, "ann", None, _exercises(0, 3, 1))
    gradebook.close()
    grades = {r[2]: r[4:] for r in _rows(course)["grade"]}
    assert grades["ex"] == (0.0, None, None, 0) and grades["ey"] == (3.0, None, None, 0)
    assert grades["essay"] == (None, 3.0, None, 0)  # scored by hand: kept, and no longer waiting
    assert grades["plot"] == (None, None, None, 1)


def test_a_failed_write_leaves_nothing_of_the_student(tmp_path, template):
    course = _course(tmp_path, template, "c")
    with pytest.raises(ValueError):
        gradebook.write_grades(course, CHAPTER, "ann", STAMP, [Exercise("ex", "nb", 2, "not a number", "passed")])
    rows = _rows(course)
    assert rows["student"] == [] and rows["submitted_assignment"] == [] and rows["grade"] == []
    gradebook.write_grades(course, CHAPTER, "ann", STAMP, _exercises(2, 3, 1))  # the open gradebook still works
    gradebook.close()
    assert len(_rows(course)["grade"]) == 5
