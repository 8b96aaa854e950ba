"""Every released notebook runs top to bottom on CPU in a live kernel, widgets live as in JupyterLab, and
fails only in its unanswered checks. (Every solution notebook is executed whole by the instructor site's
build, and tests/site/test_site.py checks that nothing in it raised.)"""

import pytest

from tests.helpers.notebooks import (
    ROOT,
    errors,
    execute,
    grade_id,
    is_checks_cell,
    released_notebooks,
)

pytestmark = pytest.mark.notebooks


@pytest.mark.parametrize("path", released_notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_released_notebook_fails_only_in_its_unanswered_checks(path, tmp_path):
    """What a learner sees before answering: lessons run, each check says 'not implemented'."""
    nb = execute(path, tmp_path, allow_errors=True)
    failures = errors(nb)
    checks = sum(1 for c in nb.cells if is_checks_cell(c))
    assert failures or not checks, "an unanswered release should fail its checks"
    for index, ename, _ in failures:
        cell = nb.cells[index]
        assert is_checks_cell(cell), f"cell {index} (not a check) raised {ename}"
        assert ename == "NotImplementedError", f"check {grade_id(cell)} raised {ename}"
        assert "raises-exception" in cell.metadata.get("tags", []), "the site build relies on this tag"
    assert len(failures) == checks                # a notebook without exercises runs without an error
    assert str(ROOT) not in path.read_text(), "no machine paths in released notebooks"
