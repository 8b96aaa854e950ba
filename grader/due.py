"""Who `autograde` grades: the students whose submission has no usable record of the grading it has now.

A record (`grader.record.GradeRecord`) holds the hash of the notebooks it graded and their time; a changed
hash or time, a grader-side failure it carries, or a gradebook that lost the submission makes it stale.
"""

from __future__ import annotations

from grader import gradebook
from grader.course import Course
from grader.record import load_record
from grader.submission import submission_hash, time_as_recorded


def due(course: Course, chapter: str, force: bool = False, students: list[str] | None = None) -> list[str]:
    """The students `autograde` grades: those with no usable record, a record a grader-side failure spoilt
    (regraded by a plain rerun), a submission changed since their record, or none in the gradebook."""
    everyone = course.students(chapter)
    if students:
        everyone = [s for s in everyone if s in set(students)]
    todo, held = [], ...
    for s in everyone:
        rec = load_record(course, s, chapter)
        folder = course.submitted / s / chapter
        if (force or rec is None or rec.grader_errors or rec.submission != submission_hash(folder)
                or rec.submitted_at != time_as_recorded(folder)):
            # a record a grader-side failure spoilt is regraded by a plain rerun; so are the same notebooks
            # submitted again at another time: the gradebook's time (lateness) changes
            todo.append(s)
            continue
        if held is ...:
            held = gradebook.students_with_submission(course, chapter)
        if held is not None and s not in held:
            todo.append(s)  # recorded, but the gradebook lost it (replaced, reset, the submission removed)
    return todo
