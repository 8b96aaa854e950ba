"""Fixtures of the site tests: the learner and instructor sites, built once per session."""

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sitebuild = importlib.import_module("sitebuild")


@pytest.fixture(scope="session")
def learner_site() -> "sitebuild.Site":
    return sitebuild.learner_site()


@pytest.fixture(scope="session")
def instructor_site() -> "sitebuild.Site":
    return sitebuild.instructor_site()
