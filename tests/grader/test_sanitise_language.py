"""sanitise and a translated release: a notebook that says it is Chinese (metadata.torchcourse.language) gets its
locked cells back from the course's Chinese release, not from the gradebook's English; anything else is English."""

from __future__ import annotations

import nbformat
import pytest

from grader.sanitise import sanitise
from tests.helpers.tiny import CHAPTER, NOTEBOOK, answered_nb, by_id, meta, record_in_gradebook, solution_nb, write

ENGLISH = "## Exercise: double (2 points)\n\nWrite `double(x)`: twice `x`."
CHINESE = "## 练习：double（2 分）\n\n编写 `double(x)`：返回 `x` 的两倍。"


def _with_prompt(nb: nbformat.NotebookNode, text: str) -> nbformat.NotebookNode:
    at = nb.cells.index(by_id(nb, "ex-answer"))
    nb.cells.insert(at, nbformat.v4.new_markdown_cell(text, metadata=meta("ex-task", grade=False, solution=False,
                                                                           locked=True)))
    return nb


@pytest.fixture
def course(tmp_path):
    """A course folder: the gradebook (English source, with a locked prompt) and the Chinese release."""
    db_url = "sqlite:///" + str(tmp_path / "gradebook.db")
    record_in_gradebook(db_url, CHAPTER, {NOTEBOOK: _with_prompt(solution_nb(), ENGLISH)})
    release = _with_prompt(answered_nb(), CHINESE)
    release.metadata["torchcourse"] = {"language": "zh_CN"}
    write(release, tmp_path / "zh_CN" / "chapters" / CHAPTER / f"{NOTEBOOK}.ipynb")
    return tmp_path, db_url


def _submit(root, db_url, text: str, language: str | None):
    nb = _with_prompt(answered_nb(), text)
    if language:
        nb.metadata["torchcourse"] = {"language": language}
    return sanitise(write(nb, root / "submitted.ipynb"), CHAPTER, NOTEBOOK, db_url)


def _prompt(sub) -> str:
    return by_id(sub.nb, "ex-task").source


def test_a_chinese_submission_keeps_the_chinese_release_s_locked_cells(course):
    sub = _submit(*course, CHINESE, "zh_CN")
    assert sub.notes == [] and _prompt(sub) == CHINESE
    assert sub.nb.metadata["torchcourse"]["language"] == "zh_CN" and CHINESE in sub.course_markdown


def test_an_edited_chinese_locked_cell_is_restored_from_the_chinese_release(course):
    sub = _submit(*course, "## 练习：免费满分", "zh_CN")
    assert _prompt(sub) == CHINESE
    assert sub.notes == ["cell 3 ('ex-task'): its locked source edited; restored from the source"]


@pytest.mark.parametrize("language", [None, "fr", "zh-Hant", ["zh_CN"]])
def test_any_other_language_is_english(course, language):
    sub = _submit(*course, ENGLISH, language)
    assert _prompt(sub) == ENGLISH and sub.notes == [] and "torchcourse" not in sub.nb.metadata
    assert sub.course_markdown == frozenset()


def test_a_chinese_notebook_without_a_chinese_release_is_graded_in_english(course):
    root, db_url = course
    (root / "zh_CN" / "chapters" / CHAPTER / f"{NOTEBOOK}.ipynb").unlink()
    sub = _submit(root, db_url, CHINESE, "zh_CN")
    assert _prompt(sub) == ENGLISH and "torchcourse" not in sub.nb.metadata
    assert sub.notes == ["cell 3 ('ex-task'): its locked source edited; restored from the source"]
