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


def write_grades(course: Course, chapter: str, student: str, timestamp: datetime | None,
                 exercises: list[Exercise]) -> None:
    """Record one student's autograde scores; manual scores an instructor gave are kept."""
    from nbgrader.api import Gradebook

    by_cell = {(e.notebook, e.grade_id): e for e in exercises}
    with warnings.catch_warnings(), Gradebook(course.db_url, "torchcourse") as gb:
        warnings.simplefilter("ignore")  # SQLAlchemy's autoflush notes from inside nbgrader's own API
        gb.update_or_create_student(student)
        if timestamp is not None:
            gb.update_or_create_submission(chapter, student, timestamp=timestamp)
        else:
            gb.update_or_create_submission(chapter, student)
        sub = gb.find_submission(chapter, student)
        for nb in sub.notebooks:
            for grade in nb.grades:
                ex = by_cell.get((nb.name, grade.name))
                if ex is None:  # a manually graded answer: the instructor's to score
                    grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
                    continue
                grade.auto_score = min(max(float(ex.score), 0.0), float(grade.max_score))
                grade.needs_manual_grade = grade.manual_score is not None
        gb.db.commit()


def copy_timestamp(src: Path, dest: Path) -> None:
    if (src / "timestamp.txt").is_file() and not (src / "timestamp.txt").is_symlink():
        shutil.copyfile(src / "timestamp.txt", dest / "timestamp.txt")
