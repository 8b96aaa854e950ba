"""The course grader on the real chapter 1: full marks for the solution, 0 for the release, and one
exercise wrong costs exactly that exercise's points, in every notebook the chapter has."""

from __future__ import annotations

import pytest

from tests.grading.realcourse import REPO, course_copy, grade_points, submission, write

pytestmark = pytest.mark.grading
CHAPTER = "01-tensors"


@pytest.mark.skipif(not any((REPO / "solutions" / CHAPTER).glob("*.ipynb")), reason="chapter 1 has no notebooks yet")
def test_real_chapter(tmp_path):
    import nbformat

    from grader.autograde import autograde
    from grader.course import Course

    root = course_copy(tmp_path / "course", CHAPTER)
    names = sorted(p.stem for p in (root / "solutions" / CHAPTER).glob("*.ipynb"))
    points, first = {}, {}
    for name in names:
        sol, rel = root / "solutions" / CHAPTER / f"{name}.ipynb", root / "chapters" / CHAPTER / f"{name}.ipynb"
        pts = grade_points(nbformat.read(str(sol), as_version=4))
        points.update(pts)
        first[name] = next(iter(pts))
        write(submission(rel, sol), root / "submitted" / "solution" / CHAPTER / f"{name}.ipynb")
        write(nbformat.read(str(rel), as_version=4), root / "submitted" / "untouched" / CHAPTER / f"{name}.ipynb")
        write(submission(rel, sol, wrong={first[name]}), root / "submitted" / "onewrong" / CHAPTER / f"{name}.ipynb")
    records = autograde(Course(root), CHAPTER, workers=2, progress=False)
    total = sum(points.values())
    assert records["solution"]["score"] == records["solution"]["max_score"] == total, records["solution"]
    assert records["untouched"]["score"] == 0
    lost = {e["grade_id"] for e in records["onewrong"]["exercises"] if e["score"] < e["max_points"]}
    assert lost == set(first.values()), records["onewrong"]["exercises"]
    assert records["onewrong"]["score"] == total - sum(points[g] for g in first.values())
