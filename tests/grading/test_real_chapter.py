"""The course grader on every real chapter: full marks for the solution, 0 for the release, and one
exercise wrong costs exactly that exercise's points, in every notebook the chapter has."""

from __future__ import annotations

import pytest

from tests.helpers.course import course_chapters, course_copy
from tests.helpers.endtoend import course_grader_round

pytestmark = pytest.mark.grading


@pytest.mark.parametrize("chapter", course_chapters())
def test_real_chapter(tmp_path, chapter):
    course_grader_round(course_copy(tmp_path / "course", chapter), chapter)
