"""The only writer of nbgrader's gradebook, so formgrader and `nbgrader export` keep working.

Only this trusted process opens gradebook.db; learner code never can (it is not in the
sandbox's filesystem). Writes are idempotent: a rerun after a crash updates the same
rows, so nothing is lost or duplicated.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from datetime import datetime
from pathlib import Path

from grader.course import Course
from grader.judge import Exercise


def _source_stamp(course: Course, chapter: str) -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in sorted((course.solutions / chapter).glob("*.ipynb"))}


def ensure_assignment(course: Course, chapter: str) -> None:
    """Make sure the gradebook knows the chapter's cells (nbgrader's SaveCells, via generate_assignment).

    The release goes to a throw-away folder: chapters/ is changed only by `release`.
    """
    from nbgrader.api import Gradebook, MissingEntry

    wanted = set(course.notebooks(chapter))
    try:
        with Gradebook(course.db_url, "torchcourse") as gb:
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
    stamp = course.db_path.with_name(".gradebook-sources.json")
    import json

    data = json.loads(stamp.read_text()) if stamp.exists() else {}
    data[chapter] = _source_stamp(course, chapter)
    stamp.write_text(json.dumps(data))


def _changed_since_saved(course: Course, chapter: str) -> bool:
    import json

    stamp = course.db_path.with_name(".gradebook-sources.json")
    if not stamp.exists():
        return True  # recorded by someone else, perhaps from older solutions: record it again
    return json.loads(stamp.read_text()).get(chapter) != _source_stamp(course, chapter)


_OPEN: dict[str, object] = {}  # db url -> nbgrader Gradebook, open for a whole batch (see close())


def _gradebook(course: Course):
    """One open nbgrader Gradebook per course for the batch: opening one (engine, schema check) costs more
    than writing a student's grades."""
    from nbgrader.api import Gradebook

    gb = _OPEN.get(course.db_url)
    if gb is None:
        gb = _OPEN[course.db_url] = Gradebook(course.db_url, "torchcourse")
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
                 exercises: list[Exercise]) -> None:
    """Record one student's autograde scores, in one transaction; manual scores an instructor gave are kept.

    A first submission gets the rows nbgrader's own `add_student` and `add_submission` would make (the
    submission, a row for every notebook, a grade for every grade and task cell, a comment for every
    solution and task cell), inserted a table at a time with the scores already set
    (tests/grader/test_gradebook_rows.py holds them against nbgrader's). nbgrader's API committed three
    times and built the rows object by object: 13.6-14.3 ms of CPU a chapter-1 student, against 3.0-4.6 ms.
    A submission already there has its scores set on its grade rows, found in one query."""
    from nbgrader.api import Grade, GradeCell, MissingEntry, Notebook, SubmittedNotebook
    from nbgrader.utils import parse_utc

    by_cell = {(e.notebook, e.grade_id): e for e in exercises}
    gb = _gradebook(course)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy's autoflush notes from inside nbgrader's own API
            try:
                sub = gb.find_submission(chapter, student)
            except MissingEntry:
                _add_submission(gb, chapter, student, parse_utc(timestamp) if timestamp else None, by_cell)
                gb.db.commit()
                return
            if timestamp is not None:
                sub.timestamp = parse_utc(timestamp)
            rows = (gb.db.query(Grade, Notebook.name, GradeCell.name, GradeCell.max_score)
                    .join(GradeCell, Grade.cell_id == GradeCell.id)
                    .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
                    .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
                    .filter(SubmittedNotebook.assignment_id == sub.id).all())
            for grade, notebook, name, max_score in rows:
                grade.auto_score, grade.needs_manual_grade = _score(by_cell.get((notebook, name)), max_score,
                                                                    grade.auto_score, grade.manual_score)
            gb.db.commit()
    except BaseException:
        gb.db.rollback()  # the open gradebook stays usable for the next student
        raise


def _score(ex: Exercise | None, max_score, auto_score, manual_score) -> tuple[float | None, bool]:
    """A grade row's (auto_score, needs_manual_grade) after autograding."""
    if ex is None:  # a manually graded answer: the instructor's to score
        return auto_score, manual_score is None and auto_score is None
    return min(max(float(ex.score), 0.0), float(max_score)), manual_score is not None


_STRUCTURE: dict[tuple[int, str], list] = {}  # (gradebook, chapter) -> its notebooks' cells, for the batch


def _structure(gb, chapter: str) -> list[tuple[str, str, list[tuple[str, str, float]], list[str], list[str]]]:
    """Each notebook of the chapter as (id, name, grade cells as (id, name, max score), solution cell ids,
    task cell ids), in nbgrader's order; read once a batch (a batch does not change the chapter)."""
    key = (id(gb), chapter)
    if key not in _STRUCTURE:
        _STRUCTURE[key] = [(nb.id, nb.name, [(c.id, c.name, c.max_score) for c in nb.grade_cells],
                            [c.id for c in nb.solution_cells], [c.id for c in nb.task_cells])
                           for nb in gb.find_assignment(chapter).notebooks]
    return _STRUCTURE[key]


def _add_submission(gb, chapter: str, student: str, timestamp: datetime | None, by_cell: dict) -> None:
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
    for nb_id, nb_name, grade_cells, solution_cells, task_cells in _structure(gb, chapter):
        sub_nb = new_uuid()
        notebooks.append({"id": sub_nb, "assignment_id": sub_id, "notebook_id": nb_id, "flagged": False})
        for cell_id, name, max_score in grade_cells:
            auto, manual = _score(by_cell.get((nb_name, name)), max_score, None, None)
            grades.append({"id": new_uuid(), "notebook_id": sub_nb, "cell_id": cell_id, "auto_score": auto,
                           "needs_manual_grade": manual})
        for cell_id in solution_cells + task_cells:
            comments.append({"id": new_uuid(), "notebook_id": sub_nb, "cell_id": cell_id})
        for cell_id in task_cells:  # a task is graded by hand, like nbgrader's own rows for it
            grades.append({"id": new_uuid(), "notebook_id": sub_nb, "cell_id": cell_id, "auto_score": None,
                           "needs_manual_grade": True})
    for model, rows in ((SubmittedNotebook, notebooks), (Grade, grades), (Comment, comments)):
        if rows:
            gb.db.execute(insert(model), rows)


def copy_timestamp(src: Path, dest: Path) -> None:
    if (src / "timestamp.txt").is_file() and not (src / "timestamp.txt").is_symlink():
        shutil.copyfile(src / "timestamp.txt", dest / "timestamp.txt")
