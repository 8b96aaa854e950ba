"""Fixtures of the grader's unit tests (helpers live in tests/helpers/tiny.py)."""

from __future__ import annotations

import pytest

from tests.helpers.tiny import tiny_gradebook


@pytest.fixture(scope="session")
def gradebook_template(tmp_path_factory):
    """The tiny chapter recorded once per session (creating a gradebook runs nbgrader's `alembic`)."""
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    tiny_gradebook(path)
    return path


@pytest.fixture
def db_url(tmp_path, gradebook_template):
    """A fresh copy of the tiny chapter's gradebook, for one test."""
    return tiny_gradebook(tmp_path / "gradebook.db", gradebook_template)


@pytest.fixture
def cli(monkeypatch):
    """`python -m grader`'s main(), in this process; the warning display it sets up is undone afterwards."""
    import warnings

    from grader.__main__ import main

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    with warnings.catch_warnings():
        yield main
