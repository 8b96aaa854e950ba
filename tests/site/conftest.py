"""Fixtures of the site tests: the learner and instructor sites, built once per session."""

import pytest

from tests.helpers import site as sitebuild


@pytest.fixture(scope="session")
def learner_site() -> "sitebuild.Site":
    return sitebuild.learner_site()


@pytest.fixture(scope="session")
def instructor_site() -> "sitebuild.Site":
    return sitebuild.instructor_site()


@pytest.fixture(scope="session")
def chinese_site() -> "sitebuild.Site":
    return sitebuild.chinese_site()
