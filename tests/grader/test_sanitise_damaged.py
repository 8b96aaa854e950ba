"""sanitise on damaged notebooks: only what is damaged is lost. Fed the tiny chapter with
each kind of damage, and nbgrader's own test notebooks as foreign submissions."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import nbgrader
import pytest

from grader.sanitise import SanitiseError, sanitise
from tests.helpers.tiny import (
    CHAPTER,
    NOTEBOOK,
    SECRET_X,
    SECRET_Y,
    answer_cell,
    answered_nb,
    by_id,
    checks_cell,
    write,
)

NBGRADER_FILES = Path(nbgrader.__file__).parent / "tests" / "preprocessors" / "files"


def _run(tmp_path, nb, db_url):
    return sanitise(write(nb, tmp_path / "nb.ipynb"), CHAPTER, NOTEBOOK, db_url)


def _graded(sub, gid):
    """(index in the notebook, source) of the cell graded as `gid`."""
    index = sub.code_cells[sub.grade_cells[gid]]
    return index, sub.nb.cells[index].source


def test_a_deleted_exercise_is_put_back_alone_after_the_cells_before_it(tmp_path, db_url):
    nb = answered_nb()
    nb.cells.remove(by_id(nb, "ex"))
    nb.cells.remove(by_id(nb, "ex-answer"))
    sub = _run(tmp_path, nb, db_url)
    (ix, src_x), (iy, src_y) = _graded(sub, "ex"), _graded(sub, "ey")
    assert SECRET_X in src_x and SECRET_Y in src_y
    assert "expect_equal" in sub.nb.cells[ix - 1].source and ix < iy  # after the setup cell, before ey's answer
    assert sub.notes == ["test cell 'ex' was missing; put back from the source before 'ey-answer'"]


def test_stripped_metadata_is_recognised_by_the_test_source(tmp_path, db_url):
    nb = answered_nb()
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    sub = _run(tmp_path, nb, db_url)
    (ix, src_x), (iy, src_y) = _graded(sub, "ex"), _graded(sub, "ey")
    assert SECRET_X in src_x and SECRET_Y in src_y
    assert "def double" in sub.nb.cells[ix - 1].source and "def triple" in sub.nb.cells[iy - 1].source
    assert any("cell 4 had lost its nbgrader metadata; recognised by its source as 'ex'" == n for n in sub.notes)


def test_a_copy_of_a_test_cell_above_its_answer_is_not_the_graded_one(tmp_path, db_url):
    nb = answered_nb()
    copy = nbformat.from_dict(json.loads(json.dumps(by_id(nb, "ex"))))
    copy["id"] = "copy-above"
    nb.cells.insert(nb.cells.index(by_id(nb, "ex-answer")), copy)  # cell 3, above the answer (cell 4)
    sub = _run(tmp_path, nb, db_url)
    ix, src = _graded(sub, "ex")
    assert "def double" in sub.nb.cells[ix - 1].source and SECRET_X in src
    assert sub.notes == ["cell 3 claiming 'ex' (a second copy) treated as an ordinary cell; cell 5 is the graded one"]


@pytest.mark.parametrize("change, said", [
    ({"bogus": 1}, "unexpected key 'bogus'"),
    ({"points": "lots"}, "invalid points ('lots' is not of type 'number')"),
    ({"grade": "yes"}, "invalid grade"),
])
def test_an_extra_or_invalid_metadata_key_is_one_line_not_a_zero(tmp_path, db_url, capfd, change, said):
    nb = answered_nb()
    by_id(nb, "ex").metadata["nbgrader"].update(change)
    sub = _run(tmp_path, nb, db_url)
    assert sorted(sub.grade_cells) == ["ex", "ey"] and SECRET_X in _graded(sub, "ex")[1]
    assert len(sub.notes) == 1 and sub.notes[0].startswith("cell 4 ('ex'): nbgrader metadata with " + said)
    out, err = capfd.readouterr()
    assert "Traceback" not in err + out and "jsonschema" not in err + out and "Failed validating" not in err + out


@pytest.mark.parametrize("name", sorted(p.name for p in NBGRADER_FILES.glob("*.ipynb")))
def test_nbgraders_own_test_notebooks_are_refused_in_one_line_or_graded(tmp_path, db_url, capfd, name):
    """Submitted in place of the chapter's notebook, each of nbgrader's test notebooks is either 'not this
    chapter's notebook' or unreadable, in one line without the file name; never a crash."""
    path = tmp_path / "nb.ipynb"
    path.write_bytes((NBGRADER_FILES / name).read_bytes())
    with pytest.raises(SanitiseError) as err:
        sanitise(path, CHAPTER, NOTEBOOK, db_url)
    msg = str(err.value)
    assert msg.startswith(("not this chapter's notebook", "not a readable notebook")), msg
    assert "\n" not in msg and "nb.ipynb" not in msg
    assert "Traceback" not in "".join(capfd.readouterr())


def test_a_chapter_notebook_with_a_foreign_bonus_cell_keeps_its_own_cells(tmp_path, db_url):
    nb = answered_nb()
    nb.cells.insert(0, answer_cell("their-answer", "x = 1"))
    nb.cells.append(checks_cell("theirs", "assert True", 10))
    sub = _run(tmp_path, nb, db_url)
    assert sorted(sub.grade_cells) == ["ex", "ey"] and len(sub.notes) == 2


def _damage(nb, damage):
    """`nb` as JSON with one cell damaged in a way nbformat cannot read (cells: the tiny chapter's, see tiny.py)."""
    d = json.loads(nbformat.writes(nb))
    where, key, value = damage
    if key is None:
        d["cells"][where] = value
    else:
        d["cells"][where][key] = value
    return json.dumps(d)


@pytest.mark.parametrize("damage, said", [
    ((3, "metadata", []), "cell 4: its metadata is not a JSON object; dropped"),      # ex's own metadata
    ((2, "source", [1, 2]), "cell 3: its source is not text; emptied"),               # ex-answer's code
    ((0, "attachments", "x"), "cell 1: its attachments are not ones nbformat reads; dropped"),
    ((0, None, "a string"), "cell 1 is not a notebook cell (cell type str); left empty"),
    ((1, "cell_type", "heading"), "cell 2 is not a notebook cell (cell type 'heading'); left empty"),
])
def test_one_unreadable_cell_costs_that_cell_not_the_notebook(tmp_path, db_url, damage, said):
    # nbformat refuses a whole notebook for one such cell: it was "not a readable notebook", 0 for everything
    path = tmp_path / "nb.ipynb"
    path.write_text(_damage(answered_nb(), damage))
    sub = sanitise(path, CHAPTER, NOTEBOOK, db_url)
    (_, src_x), (_, src_y) = _graded(sub, "ex"), _graded(sub, "ey")
    assert SECRET_X in src_x and SECRET_Y in src_y
    assert said in sub.notes


@pytest.mark.parametrize("text, said", [("[]", "its JSON is a list"), ("null", "its JSON is null")])
def test_json_that_is_not_an_object_is_refused_in_one_line(tmp_path, db_url, text, said):
    path = tmp_path / "nb.ipynb"
    path.write_text(text)
    with pytest.raises(SanitiseError, match=said):
        sanitise(path, CHAPTER, NOTEBOOK, db_url)


def test_a_cell_id_the_schema_refuses_is_replaced_not_the_outputs_lost(tmp_path, db_url):
    # nbformat's schema refuses the autograded notebook for one such id, and its outputs were all left out
    from grader.executed import _valid_beside_outputs

    path = tmp_path / "nb.ipynb"
    path.write_text(_damage(answered_nb(), (0, "id", "not an id!")))
    sub = sanitise(path, CHAPTER, NOTEBOOK, db_url)
    assert sub.nb.cells[0].get("id") != "not an id!" and _valid_beside_outputs(sub.nb, sub.code_cells)


def _retype(cell):
    cell.cell_type = "markdown"
    for key in ("outputs", "execution_count"):
        cell.pop(key, None)


@pytest.mark.parametrize("cell, change, said", [
    ("ex", lambda c: c.metadata.nbgrader.update(points=100), "points 100 (the source's: 2)"),
    ("ex", lambda c: c.metadata.nbgrader.update(grade=False), "grade False (the source's: True)"),
    ("ex", lambda c: c.metadata.nbgrader.update(locked=False), "locked False (the source's: True)"),
    ("ex-answer", lambda c: c.metadata.nbgrader.update(grade=True, points=5), "grade True (the source's: False)"),
    ("ex", _retype, "a markdown cell (the source's: code)"),
    ("ex", lambda c: setattr(c, "source", "pass"), "its locked source edited"),
])
def test_what_the_source_restores_is_said_in_one_line(tmp_path, db_url, cell, change, said):
    # nbgrader restores each of these with a warning in its log only: the instructor was not told
    nb = answered_nb()
    change(by_id(nb, cell))
    sub = _run(tmp_path, nb, db_url)
    (_, src_x), (_, src_y) = _graded(sub, "ex"), _graded(sub, "ey")
    assert SECRET_X in src_x and SECRET_Y in src_y and sub.points == {"ex": 2.0, "ey": 3.0}
    index = next(i for i, c in enumerate(answered_nb().cells) if c.metadata.get("nbgrader", {}).get("grade_id") == cell)
    assert len(sub.notes) == 1 and sub.notes[0].startswith(f"cell {index + 1} ({cell!r}): ") and said in sub.notes[0]
    assert sub.notes[0].endswith("; restored from the source")


def test_an_honest_notebook_gets_no_note(tmp_path, db_url):
    assert _run(tmp_path, answered_nb(), db_url).notes == []
