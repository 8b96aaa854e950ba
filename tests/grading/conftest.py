"""Fixtures of the grading tests (helpers live in tests/helpers/course.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sandbox_facilities():
    from grader.sandbox import facilities

    return facilities()
