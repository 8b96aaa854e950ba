"""sanitise: nbgrader's own preprocessors restore what a learner may not change; a pre-pass keeps one
bad cell from costing anybody else; a notebook that cannot be read costs only itself."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from grader import notebook_file as sanitise_mod
from grader.sanitise import SanitiseError, sanitise, solution_notebook, source_cells
from tests.helpers.tiny import (
    CHAPTER,
    NOTEBOOK,
    SECRET_X,
    SECRET_Y,
    answer_cell,
    answered_nb,
    by_id,
    checks_cell,
    solution_nb,
    write,
)


def _run(tmp_path, nb, db_url, name="nb.ipynb"):
    path = nb if isinstance(nb, os.PathLike) else write(nb, tmp_path / name)
    return sanitise(path, CHAPTER, NOTEBOOK, db_url)


def _checks_source(sub, gid):
    return sub.nb.cells[sub.code_cells[sub.grade_cells[gid]]].source


def test_an_honest_submission_keeps_its_answers_and_gets_the_hidden_tests_back(tmp_path, db_url):
    sub = _run(tmp_path, answered_nb(), db_url)
    assert sub.points == {"ex": 2.0, "ey": 3.0} and sub.notes == []
    assert sorted(sub.grade_cells) == ["ex", "ey"]
    assert SECRET_X in _checks_source(sub, "ex") and SECRET_Y in _checks_source(sub, "ey")
    answers = [c.source for c in sub.nb.cells if "def double" in c.source]
    assert answers == ["def double(x):\n    return x * 2\n"]


def test_edited_test_cells_are_restored_from_the_gradebook(tmp_path, db_url):
    nb = answered_nb()
    by_id(nb, "ex").source = "pass"
    by_id(nb, "ey").metadata["nbgrader"].update(grade=False, locked=False, points=100)  # unlocked and ungraded
    by_id(nb, "ey").source = "print('all good')"
    sub = _run(tmp_path, nb, db_url)
    assert SECRET_X in _checks_source(sub, "ex") and SECRET_Y in _checks_source(sub, "ey")
    assert sub.points == {"ex": 2.0, "ey": 3.0}  # points come from the gradebook, never from the learner
    assert by_id(sub.nb, "ey").metadata.nbgrader["grade"] is True


def test_deleted_and_retyped_test_cells_are_put_back(tmp_path, db_url):
    nb = answered_nb()
    nb.cells.remove(by_id(nb, "ex"))
    cell = by_id(nb, "ey")
    cell.cell_type = "markdown"
    del cell["outputs"], cell["execution_count"]
    sub = _run(tmp_path, nb, db_url)
    assert sorted(sub.grade_cells) == ["ex", "ey"]
    assert SECRET_X in _checks_source(sub, "ex")
    assert by_id(sub.nb, "ey").cell_type == "code" and SECRET_Y in _checks_source(sub, "ey")


def test_a_duplicated_test_cell_is_graded_once_and_noted(tmp_path, db_url):
    nb = answered_nb()
    real = by_id(nb, "ex")
    copy = nbformat.from_dict(json.loads(json.dumps(real)))
    copy.source = "pass  # a copy that would run instead"
    copy["id"] = "copy-of-ex"
    nb.cells.insert(nb.cells.index(real) + 1, copy)
    sub = _run(tmp_path, nb, db_url)
    claims = [i for i, c in enumerate(sub.nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "ex"]
    assert len(claims) == 1 and any("'ex' (a second copy)" in n for n in sub.notes)
    assert SECRET_X in _checks_source(sub, "ex")
    # The first copy is the graded one (restored from the gradebook); the second runs as learner code.
    assert sub.nb.cells[claims[0] + 1].source.startswith("pass")


def test_a_bogus_cell_claiming_an_unknown_grade_id_is_an_ordinary_cell(tmp_path, db_url):
    nb = answered_nb()
    nb.cells.append(checks_cell("bonus", "print('free points')", 100))
    sub = _run(tmp_path, nb, db_url)
    assert sub.points == {"ex": 2.0, "ey": 3.0} and "bonus" not in sub.grade_cells
    assert any("'bonus' (an unknown grade id)" in n for n in sub.notes)
    assert "nbgrader" not in sub.nb.cells[-1].metadata


def test_outputs_and_counts_are_cleared(tmp_path, db_url):
    nb = answered_nb()
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="forged PASS")]
            c.execution_count = 9
    sub = _run(tmp_path, nb, db_url)
    assert all(c.outputs == [] and c.execution_count is None for c in sub.nb.cells if c.cell_type == "code")


def test_a_foreign_notebook_costs_only_itself_with_a_reason(tmp_path, db_url):
    """A notebook of another course: its cells claim grade ids this chapter does not know. One line says so,
    without the file name (the caller names the file)."""
    foreign = nbformat.v4.new_notebook(cells=[
        answer_cell("other-answer", "def double(x):\n    return 0\n"),
        checks_cell("other", "assert True", 10),
    ])
    with pytest.raises(SanitiseError, match="^not this chapter's notebook") as err:
        _run(tmp_path, foreign, db_url)
    assert "nb.ipynb" not in str(err.value) and "\n" not in str(err.value)


def test_a_deleted_test_cell_goes_back_after_its_answer(tmp_path, db_url):
    nb = answered_nb()
    nb.cells.remove(by_id(nb, "ey"))
    sub = _run(tmp_path, nb, db_url)
    index = sub.code_cells[sub.grade_cells["ey"]]
    assert "def triple" in sub.nb.cells[index - 1].source and SECRET_Y in sub.nb.cells[index].source


@pytest.mark.parametrize("content, why", [
    (b"{ this is not json", "not a readable notebook"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": {}}', "no list of cells"),
    (b'{"nbformat": 99, "cells": []}', "not a readable notebook"),
])
def test_a_corrupt_notebook_raises_a_readable_reason(tmp_path, db_url, content, why):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(content)
    with pytest.raises(SanitiseError, match=why):
        _run(tmp_path, path, db_url)


@pytest.mark.parametrize("cells", [[7, "x"], [None], [[1, 2]], [{"cell_type": "code"}]])
def test_cells_that_are_not_cells_are_refused_not_crashed_on(tmp_path, db_url, cells):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    with pytest.raises(SanitiseError, match="not a readable notebook"):
        _run(tmp_path, path, db_url)


def test_an_nbformat_3_notebook_is_upgraded_and_graded(tmp_path, db_url):
    v3 = nbformat.convert(answered_nb(), 3)
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat.writes(v3, version=3))
    assert json.loads(path.read_text())["nbformat"] == 3
    sub = _run(tmp_path, path, db_url)
    assert sorted(sub.grade_cells) == ["ex", "ey"] and SECRET_X in _checks_source(sub, "ex")
    assert any("return x * 2" in c.source for c in sub.nb.cells)


def test_a_missing_a_linked_and_a_special_file_are_refused(tmp_path, db_url):
    with pytest.raises(SanitiseError, match="was not submitted"):
        _run(tmp_path, tmp_path / "absent.ipynb", db_url)
    target = write(answered_nb(), tmp_path / "real.ipynb")
    (tmp_path / "link.ipynb").symlink_to(target)
    with pytest.raises(SanitiseError, match="symbolic link"):
        _run(tmp_path, tmp_path / "link.ipynb", db_url)
    os.mkfifo(tmp_path / "fifo.ipynb")
    with pytest.raises(SanitiseError, match="not a regular file"):
        _run(tmp_path, tmp_path / "fifo.ipynb", db_url)


def test_a_notebook_over_the_size_limit_is_refused(tmp_path, db_url, monkeypatch):
    path = write(answered_nb(), tmp_path / "nb.ipynb")
    monkeypatch.setattr(sanitise_mod, "MAX_BYTES", path.stat().st_size - 1)
    with pytest.raises(SanitiseError, match="over the"):
        _run(tmp_path, path, db_url)


@pytest.mark.parametrize("version", [4, 3])
def test_a_notebook_of_more_cells_than_the_limit_is_refused_in_one_line(tmp_path, db_url, version):
    # 100 000 one-character cells (7 MiB) took sanitise 4.6 s: a notebook of 256 MiB of them, minutes
    nb = json.loads(nbformat.writes(answered_nb()))
    extra = [{"cell_type": "markdown", "metadata": {}, "source": "x"}] * (sanitise_mod.MAX_CELLS + 1 - len(nb["cells"]))
    if version == 4:
        nb["cells"] += extra
    else:
        sheets = [{"cells": extra[:1] * sanitise_mod.MAX_CELLS}, {"cells": [{}]}]
        nb = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": sheets}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    with pytest.raises(SanitiseError) as err:
        _run(tmp_path, path, db_url)
    assert str(err.value) == f"{sanitise_mod.MAX_CELLS + 1} cells, over the limit of {sanitise_mod.MAX_CELLS} " \
        "(a chapter's notebook has about 50)"


def test_a_notebook_of_more_json_values_than_the_limit_is_refused_before_it_is_read(tmp_path, db_url):
    # 1.1 million small objects in metadata (26 MiB) took 22 s and 1.6 GB to read: 256 MiB of them, minutes
    nb = answered_nb()
    nb.metadata["junk"] = [{"a": "xy"}] * (sanitise_mod.MAX_VALUES // 2)
    path = write(nb, tmp_path / "nb.ipynb")
    with pytest.raises(SanitiseError, match=r"^more than 1,000,000 JSON values \(a chapter's notebook has a few"):
        _run(tmp_path, path, db_url)


def test_source_cells_and_the_solution_come_from_the_gradebook(tmp_path, db_url):
    known, points = source_cells(db_url, CHAPTER, NOTEBOOK)
    assert points == {"ex": 2.0, "ey": 3.0}
    assert known["ex"]["grade"] is True and known["ex-answer"]["solution"] is True
    sol = solution_notebook(write(solution_nb(), tmp_path / "sol.ipynb"), CHAPTER, NOTEBOOK, db_url)
    assert sol.grade_cells == {"ex": 2, "ey": 4} and len(sol.code_cells) == 5
