"""Every chapter through PLAIN nbgrader and its local exchange, as a class would use it (see
tests/helpers/endtoend.py): the solution scores full marks, the untouched release 0, and one wrong
exercise costs exactly its points; the course grader's collect reads the same exchange."""

from __future__ import annotations

import pytest

from tests.helpers.course import course_chapters, course_copy
from tests.helpers.endtoend import exchange_round

pytestmark = pytest.mark.grading


@pytest.mark.parametrize("chapter", course_chapters())
def test_roundtrip_through_exchange(tmp_path, chapter):
    exchange_round(tmp_path, course_copy(tmp_path / "course", chapter, release=False), chapter)
