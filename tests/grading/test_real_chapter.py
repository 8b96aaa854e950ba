"""The course grader on every real chapter: full marks for the solution, 0 for the release, and one
exercise wrong costs exactly that exercise's points, in every notebook the chapter has."""

from __future__ import annotations

import pytest

from tests.helpers.course import REPO, course_copy, grade_points, submission, write

pytestmark = pytest.mark.grading
CHAPTERS = sorted(p.name for p in (REPO / "solutions").iterdir() if any(p.glob("*.ipynb")))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_real_chapter(tmp_path, chapter):
    import nbformat

    from grader.autograde import autograde
    from grader.course import Course

    root = course_copy(tmp_path / "course", chapter)
    names = sorted(p.stem for p in (root / "solutions" / chapter).glob("*.ipynb"))
    points, first = {}, {}
    for name in names:
        sol, rel = root / "solutions" / chapter / f"{name}.ipynb", root / "chapters" / chapter / f"{name}.ipynb"
        pts = grade_points(nbformat.read(str(sol), as_version=4))
        points.update(pts)
        first[name] = next(iter(pts))
        write(submission(rel, sol), root / "submitted" / "solution" / chapter / f"{name}.ipynb")
        write(nbformat.read(str(rel), as_version=4), root / "submitted" / "untouched" / chapter / f"{name}.ipynb")
        write(submission(rel, sol, wrong={first[name]}), root / "submitted" / "onewrong" / chapter / f"{name}.ipynb")
    records = autograde(Course(root), chapter, workers=2, progress=False)
    total = sum(points.values())
    assert records["solution"]["score"] == records["solution"]["max_score"] == total, records["solution"]
    assert records["untouched"]["score"] == 0
    lost = {e["grade_id"] for e in records["onewrong"]["exercises"] if e["score"] < e["max_points"]}
    assert lost == set(first.values()), records["onewrong"]["exercises"]
    assert records["onewrong"]["score"] == total - sum(points[g] for g in first.values())
