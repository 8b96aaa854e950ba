"""The only writer of nbgrader's gradebook, so formgrader and `nbgrader export` keep working.

Only this trusted process opens gradebook.db; learner code never can (it is not in the
sandbox's filesystem). Writes are idempotent: a rerun after a crash updates the same
rows, so nothing is lost or duplicated.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Collection
from datetime import datetime

from grader.course import COURSE_ID, Course
from grader.record import Exercise


def _source_stamp(course: Course, chapter: str) -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in sorted((course.solutions / chapter).glob("*.ipynb"))}


def ensure_assignment(course: Course, chapter: str) -> None:
    """Make sure the gradebook knows the chapter's cells (nbgrader's SaveCells, via generate_assignment).

    The release goes to a throw-away folder: chapters/ is changed only by `release`.
    """
    from nbgrader.api import Gradebook, MissingEntry

    wanted = set(course.notebooks(chapter))
    try:
        with Gradebook(course.db_url, COURSE_ID) as gb:
            have = {nb.name for nb in gb.find_assignment(chapter).notebooks}
            if have == wanted and not _changed_since_saved(course, chapter):
                return
    except MissingEntry:
        pass
    from nbgrader.apps import NbGraderAPI

    with tempfile.TemporaryDirectory(prefix="torchcourse-release-") as tmp:
        cfg = course.config()
        cfg.CourseDirectory.release_directory = tmp
        cfg.Application.log_level = 40
        api = NbGraderAPI(config=cfg)
        api.log.setLevel("ERROR")
        done = api.generate_assignment(chapter, force=True, create=True)
        if not done.get("success"):
            raise RuntimeError(f"nbgrader could not record {chapter} in the gradebook:\n{done.get('log', '')}"
                               f"{done.get('error', '')}")
    import json

    stamp = course.sources_stamp
    data = _saved_stamps(course)
    data[chapter] = _source_stamp(course, chapter)
    tmp = stamp.with_name(stamp.name + ".tmp")  # whole or not at all: see _saved_stamps
    tmp.write_text(json.dumps(data))
    os.replace(tmp, stamp)


def _saved_stamps(course: Course) -> dict:
    """What ensure_assignment saved: chapter -> its solutions' times. A file that is missing or cannot be read
    (torn by a kill or a full disk while it was written) counts as empty: each chapter is recorded again, rather
    than every later autograde of the course stopping on a JSON error."""
    import json

    try:
        data = json.loads(course.sources_stamp.read_text())
    except (OSError, ValueError):
        return {}
    return data if type(data) is dict else {}


def _changed_since_saved(course: Course, chapter: str) -> bool:
    # not saved: recorded by someone else, perhaps from older solutions; record it again
    return _saved_stamps(course).get(chapter) != _source_stamp(course, chapter)


def students_with_submission(course: Course, chapter: str) -> set[str] | None:
    """The students whose submission of `chapter` the gradebook holds (a record without one would leave
    `nbgrader export` and formgrader without the score); None when the gradebook cannot be read now, which
    grading then reports."""
    if not course.db_path.exists():
        return set()
    from nbgrader.api import Assignment, Gradebook, SubmittedAssignment

    try:
        with Gradebook(course.db_url, COURSE_ID) as gb:
            return {sid for (sid,) in gb.db.query(SubmittedAssignment.student_id).join(Assignment)
                    .filter(Assignment.name == chapter)}
    except Exception:
        return None


_OPEN: dict[str, object] = {}  # db url -> nbgrader Gradebook, open for a whole batch (see close())


def _gradebook(course: Course):
    """One open nbgrader Gradebook per course for the batch: opening one (engine, schema check) costs more
    than writing a student's grades."""
    from nbgrader.api import Gradebook

    gb = _OPEN.get(course.db_url)
    if gb is None:
        gb = _OPEN[course.db_url] = Gradebook(course.db_url, COURSE_ID)
    return gb


def close() -> None:
    """Close the gradebooks `write_grades` opened (autograde calls this at the end of a batch)."""
    _STRUCTURE.clear()
    while _OPEN:
        _, gb = _OPEN.popitem()
        try:
            gb.close()
        except Exception:
            pass


def write_grades(course: Course, chapter: str, student: str, timestamp: datetime | None,
                 exercises: list[Exercise], unanswered: Collection[tuple[str, str]] = ()) -> None:
    """Record one student's autograde scores, in one transaction, as nbgrader's autograde records them
    (its SaveAutoGrades): each test's score; an answer left as released (`unanswered`: (notebook, grade id)
    pairs) commented "No response.", and scored 0 when it is graded by hand; any other hand-graded answer
    left to the instructor, whose manual scores are kept (a row with one is marked for review).

    A first submission gets the rows nbgrader's own `add_student` and `add_submission` would make (the
    submission, a row for every notebook, a grade for every grade and task cell, a comment for every
    solution and task cell), inserted a table at a time with the scores already set
    (tests/grader/test_gradebook_rows.py holds them against nbgrader's). nbgrader's API committed three
    times and built the rows object by object, several times the CPU of this.
    A submission already there has its rows updated, found in one query each."""
    from nbgrader.api import BaseCell, Comment, Grade, MissingEntry, Notebook, SubmittedNotebook
    from nbgrader.utils import parse_utc

    by_cell = {(e.notebook, e.grade_id): e for e in exercises}
    unanswered = set(unanswered)
    gb = _gradebook(course)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy's autoflush notes from inside nbgrader's own API
            try:
                sub = gb.find_submission(chapter, student)
            except MissingEntry:
                _add_submission(gb, chapter, student, parse_utc(timestamp) if timestamp else None, by_cell,
                                unanswered)
                gb.db.commit()
                return
            if timestamp is not None:
                sub.timestamp = parse_utc(timestamp)
            kinds = _kinds(gb, chapter)
            for model in (Grade, Comment):
                rows = (gb.db.query(model, Notebook.name, BaseCell.name)
                        .join(BaseCell, model.cell_id == BaseCell.id)
                        .join(SubmittedNotebook, model.notebook_id == SubmittedNotebook.id)
                        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
                        .filter(SubmittedNotebook.assignment_id == sub.id).all())
                for row, nb_name, name in rows:
                    key = (nb_name, name)
                    kind, max_score = kinds.get(key, ("task", None))
                    if model is Comment:
                        row.auto_comment = _comment(kind, key in unanswered)
                    elif kind in ("test", "hand"):
                        row.auto_score, row.needs_manual_grade = _score(kind, by_cell.get(key), key in unanswered,
                                                                        max_score, row.manual_score)
            gb.db.commit()
    except BaseException:
        gb.db.rollback()  # the open gradebook stays usable for the next student
        raise


NO_RESPONSE = "No response."  # nbgrader's auto comment on an answer left as released


def _comment(kind: str, unanswered: bool) -> str | None:
    return NO_RESPONSE if kind in ("answer", "hand") and unanswered else None


def _score(kind: str, ex: Exercise | None, unanswered: bool, max_score: float,
           manual_score: float | None) -> tuple[float | None, bool]:
    """A grade row's (auto_score, needs_manual_grade), by nbgrader's rules: a test's score; a hand-graded
    answer left as released 0, any other none (the instructor's to give); a row needs a person when it has
    no score, or has a manual one that this run may contradict."""
    if kind == "test" and ex is not None:
        auto = min(max(float(ex.score), 0.0), float(max_score))
    elif kind == "hand" and unanswered:
        auto = 0.0
    else:  # an answer for a person to grade (or a test this run could not judge: never given points unseen)
        auto = None
    return auto, manual_score is not None or auto is None


_STRUCTURE: dict[tuple[int, str], tuple] = {}  # (gradebook, chapter) -> its cells, read once a batch


def _structure(gb, chapter: str) -> list[tuple[str, str, list[tuple[str, str, str, float | None]]]]:
    """Each notebook of the chapter as (id, name, cells): a row (cell id, grade id, kind, max score) for
    each of nbgrader's cell rows, its grade cells with kind "test" (autograded) or "hand" (also an answer:
    graded by hand), its solution cells with kind "answer", its task cells with kind "task". A hand-graded
    answer has two rows, a grade cell and a solution cell, as in nbgrader's tables."""
    return _read_structure(gb, chapter)[0]


def _kinds(gb, chapter: str) -> dict[tuple[str, str], tuple[str, float | None]]:
    """(notebook, grade id) -> (kind, max score) of its grade row ("test", "hand") or else its only row."""
    return _read_structure(gb, chapter)[1]


def _read_structure(gb, chapter: str) -> tuple[list, dict]:
    """`_structure` and `_kinds`, read once a batch (a batch does not change the chapter)."""
    key = (id(gb), chapter)
    if key not in _STRUCTURE:
        notebooks, kinds = [], {}
        for nb in gb.find_assignment(chapter).notebooks:
            answers = {c.name for c in nb.solution_cells}
            cells = [(c.id, c.name, "hand" if c.name in answers else "test", c.max_score) for c in nb.grade_cells]
            cells += [(c.id, c.name, "answer", None) for c in nb.solution_cells]
            cells += [(c.id, c.name, "task", c.max_score) for c in nb.task_cells]
            notebooks.append((nb.id, nb.name, cells))
            for _, name, kind, max_score in cells:
                if (nb.name, name) not in kinds or kind in ("test", "hand"):
                    kinds[(nb.name, name)] = (kind, max_score)
        _STRUCTURE[key] = (notebooks, kinds)
    return _STRUCTURE[key]


def _add_submission(gb, chapter: str, student: str, timestamp: datetime | None, by_cell: dict,
                    unanswered: set) -> None:
    """nbgrader's add_student (when the student is new) and add_submission, with the scores, uncommitted."""
    from nbgrader.api import Comment, Grade, MissingEntry, Student, SubmittedAssignment, SubmittedNotebook, new_uuid
    from sqlalchemy import insert

    try:
        gb.find_student(student)
    except MissingEntry:
        gb.db.add(Student(id=student))
        gb.db.flush()
    sub_id = new_uuid()
    gb.db.execute(insert(SubmittedAssignment), [{"id": sub_id, "student_id": student, "timestamp": timestamp,
                                                 "assignment_id": gb.find_assignment(chapter).id}])
    notebooks, grades, comments = [], [], []
    for nb_id, nb_name, cells in _structure(gb, chapter):
        sub_nb = new_uuid()
        notebooks.append({"id": sub_nb, "assignment_id": sub_id, "notebook_id": nb_id, "flagged": False})
        for cell_id, name, kind, max_score in cells:
            key = (nb_name, name)
            if kind in ("test", "hand"):
                auto, manual = _score(kind, by_cell.get(key), key in unanswered, max_score, None)
                grades.append({"id": new_uuid(), "notebook_id": sub_nb, "cell_id": cell_id, "auto_score": auto,
                               "needs_manual_grade": manual})
            else:  # nbgrader comments on every answer (a hand-graded one's solution row) and every task
                comments.append({"id": new_uuid(), "notebook_id": sub_nb, "cell_id": cell_id,
                                 "auto_comment": _comment(kind, key in unanswered)})
            if kind == "task":  # graded by hand; nbgrader's autograde leaves its row as add_submission made it
                grades.append({"id": new_uuid(), "notebook_id": sub_nb, "cell_id": cell_id, "auto_score": None,
                               "needs_manual_grade": True})
    for model, rows in ((SubmittedNotebook, notebooks), (Grade, grades), (Comment, comments)):
        if rows:
            gb.db.execute(insert(model), rows)
