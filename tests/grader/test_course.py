"""Course: where each stage reads and writes; only safe student ids are graded."""

from __future__ import annotations

from grader.course import Course


def test_students_are_safe_ids_with_a_folder_for_the_chapter(tmp_path):
    for name in ("ann", "bob.b-2", "-rf", ".hidden", "x" * 65):
        (tmp_path / "submitted" / name / "ch").mkdir(parents=True)
    (tmp_path / "submitted" / "carl").mkdir()  # nothing for this chapter
    assert Course(tmp_path).students("ch") == ["ann", "bob.b-2"]
    assert Course(tmp_path / "nowhere").students("ch") == []


def test_assignments_are_the_course_chapters_first(tmp_path):
    for ch in ("zz-extra", "02-autograd", "01-tensors", "empty"):
        (tmp_path / "solutions" / ch).mkdir(parents=True)
        if ch != "empty":
            (tmp_path / "solutions" / ch / "a.ipynb").write_text("{}")
    course = Course(tmp_path)
    assert course.assignments() == ["01-tensors", "02-autograd", "zz-extra"]
    assert course.notebooks("01-tensors") == ["a"]
    assert course.db_url == f"sqlite:///{tmp_path}/gradebook.db"
