"""A Chinese submission is the same assignment as an English one: the same answers, submitted in each
language, get the same scores from the course grader and from plain nbgrader, in one gradebook; the course
grader's and plain nbgrader's autograded notebooks, and the course grader's feedback page, stay in the language
submitted.

The Chinese release is made here the way `make release` makes it (grader.release: nbgrader, then
`python -m torchcourse.translation build` for the chapters locale/zh_CN/released-chapters.txt lists, then the
leak and same-assignment checks), from the notebook's real catalog; a message the translators have not
translated yet gets a marked stand-in, so the test never waits for them.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from grader.course import Course
from tests.helpers.course import REPO, grade_points, install_config, nbgrader, submission, write
from torchcourse.translation import catalogs

pytestmark = pytest.mark.grading
CHAPTER, NOTEBOOK = "02-autograd", "01-graph-and-backward"
LANGUAGE = "zh_CN"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _stand_in(message: str) -> str:
    """A marked Chinese stand-in for a message not translated yet (a table row stays a row)."""
    return "| （译）" + message[1:].lstrip() if message.startswith("|") else "（译）" + message


def chinese_course(root: Path) -> Path:
    """One chapter-2 notebook, its catalog filled, the chapter listed as released in Chinese, and the course
    released by the course's release."""
    from grader.release import release

    sol = root / "solutions" / CHAPTER / f"{NOTEBOOK}.ipynb"
    sol.parent.mkdir(parents=True)
    shutil.copy(REPO / "solutions" / CHAPTER / sol.name, sol)
    install_config(root)
    po = catalogs.catalog_path(root, LANGUAGE, sol)
    po.parent.mkdir(parents=True)
    shutil.copy(catalogs.catalog_path(REPO, LANGUAGE, sol), po)
    catalogs.update(root, LANGUAGE, sol)  # in step with the English, whatever the translators have done
    cat = catalogs.read(po, LANGUAGE)
    for m in cat:
        if m.id and (not m.string or m.fuzzy):
            m.string, m.flags = _stand_in(m.id), m.flags - {"fuzzy"}
    catalogs.write(po, cat)
    (root / "locale" / LANGUAGE / "released-chapters.txt").write_text(CHAPTER + "\n", encoding="utf-8")
    release(Course(root), [CHAPTER])
    return root


def _locked_markdown(nb) -> dict[str, str]:
    return {c.metadata.nbgrader.grade_id: c.source for c in nb.cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("locked")}


def _plain_nbgrader_scores(root: Path, students: dict[str, Path]) -> dict[str, dict[str, float]]:
    """Plain nbgrader's autograde of the same files in a copy of the course: student -> grade id -> score."""
    from nbgrader.api import Gradebook

    nbgrader(root, "generate_assignment", CHAPTER, "--force")
    for student, path in students.items():
        dest = root / "submitted" / student / CHAPTER / f"{NOTEBOOK}.ipynb"
        dest.parent.mkdir(parents=True)
        shutil.copy(path, dest)
    nbgrader(root, "autograde", CHAPTER)
    with Gradebook(Course(root).db_url) as gb:
        return {s: {g.name: g.score for nb in gb.find_submission(CHAPTER, s).notebooks for g in nb.grades}
                for s in students}


def test_a_chinese_submission_scores_as_the_english_one_and_keeps_its_language(tmp_path):
    from grader.autograde import autograde
    from grader.feedback import feedback

    root = chinese_course(tmp_path / "course")
    sol = root / "solutions" / CHAPTER / f"{NOTEBOOK}.ipynb"
    english_release = root / "chapters" / CHAPTER / f"{NOTEBOOK}.ipynb"
    chinese_release = root / LANGUAGE / "chapters" / CHAPTER / f"{NOTEBOOK}.ipynb"
    zh_locked = _locked_markdown(nbformat.read(str(chinese_release), as_version=4))
    en_locked = _locked_markdown(nbformat.read(str(english_release), as_version=4))
    assert zh_locked.keys() == en_locked.keys() and all(CJK.search(s) for s in zh_locked.values())
    assert all(zh_locked[g] != en_locked[g] for g in en_locked)

    # The same answers in each language: every exercise right but the first (a partial score shows more).
    points = grade_points(nbformat.read(str(sol), as_version=4))
    wrong = next(iter(points))
    files = {}
    for student, release in (("en", english_release), ("zh", chinese_release)):
        files[student] = tmp_path / f"{student}.ipynb"
        write(submission(release, sol, wrong={wrong}), files[student])
    assert nbformat.read(str(files["zh"]), as_version=4).metadata["torchcourse"]["language"] == LANGUAGE
    expected = {g: 0.0 if g == wrong else p for g, p in points.items()}

    plain = tmp_path / "plain"
    shutil.copytree(root, plain)
    theirs = _plain_nbgrader_scores(plain, files)
    assert {s: {g: theirs[s][g] for g in points} for s in theirs} == {"en": expected, "zh": expected}, theirs
    # plain nbgrader keeps each language too (grader/nbgrader_config.py's KeepTranslation after OverwriteCells)
    for student, locked in (("zh", zh_locked), ("en", en_locked)):
        nb = nbformat.read(str(plain / "autograded" / student / CHAPTER / f"{NOTEBOOK}.ipynb"), as_version=4)
        assert _locked_markdown(nb) == locked, student

    for student, path in files.items():
        dest = root / "submitted" / student / CHAPTER / f"{NOTEBOOK}.ipynb"
        dest.parent.mkdir(parents=True)
        shutil.copy(path, dest)
    records = autograde(Course(root), CHAPTER, workers=2, progress=False)
    ours = {s: {e["grade_id"]: e["score"] for e in records[s]["exercises"]} for s in files}
    assert ours == {"en": expected, "zh": expected}, records
    assert records["zh"]["score"] == records["en"]["score"] == sum(expected.values())
    assert records["zh"]["flags"] == records["en"]["flags"] == [], records  # nothing taken for tampering

    # The autograded notebooks: each keeps the text of the release it was submitted from.
    graded = {s: nbformat.read(str(root / "autograded" / s / CHAPTER / f"{NOTEBOOK}.ipynb"), as_version=4)
              for s in files}
    # (as every autograded notebook's markdown, bleach-cleaned: its <, > and & escaped)
    assert {g: html.unescape(s) for g, s in _locked_markdown(graded["zh"]).items()} == zh_locked
    assert {g: html.unescape(s) for g, s in _locked_markdown(graded["en"]).items()} == en_locked

    # The checks ran in the sandbox in the language submitted: the wrong exercise's message says why in it.
    failed = {s: [o["evalue"] for c in graded[s].cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error" and o.get("ename") == "CheckFailed"] for s in graded}
    assert failed["zh"] and all(re.search(r"[\u4e00-\u9fff]", m) for m in failed["zh"]), failed["zh"]
    assert failed["en"] and not any(re.search(r"[\u4e00-\u9fff]", m) for m in failed["en"]), failed["en"]

    pages = {p.parent.parent.name: p for p in feedback(Course(root), CHAPTER)}
    zh_page, en_page = (pages[s].read_text(encoding="utf-8") for s in ("zh", "en"))
    assert "<html lang='zh-CN'>" in zh_page and "<html lang='en'>" in en_page
    text = {s: html.unescape(re.sub(r"<[^>]+>", "", page)) for s, page in (("zh", zh_page), ("en", en_page))}
    # The longest run of Chinese in the exercise prompts: on the Chinese page, not on the English one.
    run = max((m for s in zh_locked.values() for m in re.findall(r"[\u4e00-\u9fff（）]+", s)), key=len)
    assert run in text["zh"] and run not in text["en"], run
    # The page's own words too, from the code's catalog: the same page, each in the language submitted.
    assert "你的得分" in text["zh"] and "Your scores" not in text["zh"], text["zh"][:300]
    assert "Your scores" in text["en"] and "你的得分" not in text["en"]
    print(f"scores: course grader en {records['en']['score']:g}, zh {records['zh']['score']:g}; plain nbgrader "
          f"en {sum(theirs['en'][g] for g in points):g}, zh {sum(theirs['zh'][g] for g in points):g} "
          f"of {sum(points.values()):g}")
