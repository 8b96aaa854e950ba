"""Test-suite set-up. Helpers are imported from the ``tests.helpers`` package (pytest puts the repository
root on ``sys.path``: ``pythonpath`` in pyproject.toml); conftest files hold fixtures only."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Folders a learner or author owns: the suite may read them, never leave anything in them.
GUARDED = ("chapters", "solutions")


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(ROOT)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="session", autouse=True)
def nothing_left_in_course_folders():
    """Fails the session (as an error in teardown) if a test left a file, e.g. .ipynb_checkpoints."""
    before = set().union(*(_files(ROOT / name) for name in GUARDED))
    yield
    # A new chapter notebook is an author's work in progress, not a test's residue.
    left = {f for f in set().union(*(_files(ROOT / name) for name in GUARDED)) - before
            if not (f.endswith(".ipynb") and f.count("/") == 2 and ".ipynb_checkpoints" not in f)}
    assert not left, f"tests left files in {', '.join(GUARDED)}: {sorted(left)[:10]}"


# `make test` spreads the suite over two pytest-xdist workers (--dist loadgroup). Tests that share a
# costly session resource, or a machine-wide one, are kept on one worker by a group:
# - the tests that start the grader's sandbox check that no sandbox process is left running, and bind
#   fixed ports, so two of them at once would see each other's; the class-hub tests create system users;
# - each site is built once per worker that asks for it (a session fixture), so all its tests go
#   to the one worker that builds it.
_GROUP_BY_FOLDER = {"grading": "grader", "grader": "grader", "deploy": "grader"}
# The Chinese site is built into the English one's folder from its executions: same worker.
_GROUP_BY_FIXTURE = {"learner_site": "learner-site", "chinese_site": "learner-site",
                     "instructor_site": "instructor-site"}
# Plain nbgrader through a throw-away exchange: no sandbox, no fixed port, so free to run beside the grader.
_UNGROUPED = {"test_nbgrader_roundtrip.py"}


def _xdist_group(item) -> str | None:
    folder = Path(item.fspath).relative_to(ROOT / "tests").parts[0]
    if Path(item.fspath).name in _UNGROUPED:
        return None
    if folder in _GROUP_BY_FOLDER or item.get_closest_marker("grading"):  # e.g. DDP inside the sandbox
        return _GROUP_BY_FOLDER.get(folder, "grader")
    for fixture, group in _GROUP_BY_FIXTURE.items():
        if fixture in getattr(item, "fixturenames", ()):
            return group
    # The browser crawl takes the site by a parameter ("learner" or "instructor"), not a fixture.
    site = getattr(getattr(item, "callspec", None), "params", {}).get("crawl")
    return f"{site}-site" if site else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marks to group the items
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = _xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


class _GroupSuffixForPytest9:
    """xdist 3.8 groups a test by appending "@group" to its node id through `item._nodeid`, but pytest 9.2
    reads the id from `item._id` (a structured NodeId), so the suffix was lost and every group split across
    workers. After xdist's hook, carry the suffixed id over (a no-op where xdist set nothing)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        from _pytest.nodeid import NodeId

        for item in items:
            suffixed = item.__dict__.get("_nodeid")
            if suffixed and str(getattr(item, "_id", suffixed)) != suffixed:
                item._id = NodeId.parse(suffixed)


def pytest_configure(config):
    if getattr(config, "workerinput", None) is not None:  # only an xdist worker collects for the scheduler
        config.pluginmanager.register(_GroupSuffixForPytest9(), "group-suffix-for-pytest9")


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright, one per worker for the whole session: Playwright's sync API sets the
    thread's running event loop while it is open, so a second `sync_playwright()` in the same worker would fail."""
    from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, chromium_missing

    reason = chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
