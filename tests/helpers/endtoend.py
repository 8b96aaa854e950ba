"""A chapter graded end to end, twice: by plain nbgrader through its exchange, and by the course grader.

The parametrised tests in tests/grading run these over every real chapter; tests/grading/test_new_chapter.py
runs them over a throw-away chapter, which proves a new chapter needs no test edited to name it.
The course grader's round grades three students: the solution (full marks), the untouched release (0),
and one exercise wrong per notebook (loses exactly those points). Plain nbgrader's round, the slower one
(a fresh kernel per notebook), grades two: the solution with one exercise wrong (every other exercise
full, that one exactly its points lost) and the untouched release (0).
"""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from grader.course import COURSE_ID
from tests.helpers.course import REPO, grade_points, nbgrader, submission, write


def _points(root: Path, chapter: str) -> tuple[list[str], dict[str, float], dict[str, str]]:
    """(notebook names, grade_id -> points, notebook -> its first exercise, for each notebook that has one)."""
    names = sorted(p.stem for p in (root / "solutions" / chapter).glob("*.ipynb"))
    points, first = {}, {}
    for name in names:
        pts = grade_points(nbformat.read(str(root / "solutions" / chapter / f"{name}.ipynb"), as_version=4))
        points.update(pts)
        if pts:                                   # a notebook may teach without a graded exercise
            first[name] = next(iter(pts))
    return names, points, first


def course_grader_round(root: Path, chapter: str, workers: int = 2) -> dict:
    """The course grader on `chapter` of the released course folder `root`; returns the records."""
    from grader.autograde import autograde
    from grader.course import Course

    names, points, first = _points(root, chapter)
    for name in names:
        sol, rel = root / "solutions" / chapter / f"{name}.ipynb", root / "chapters" / chapter / f"{name}.ipynb"
        write(submission(rel, sol), root / "submitted" / "solution" / chapter / f"{name}.ipynb")
        write(nbformat.read(str(rel), as_version=4), root / "submitted" / "untouched" / chapter / f"{name}.ipynb")
        wrong = {first[name]} if name in first else set()
        write(submission(rel, sol, wrong=wrong), root / "submitted" / "onewrong" / chapter / f"{name}.ipynb")
    records = autograde(Course(root), chapter, workers=workers, progress=False)
    total = sum(points.values())
    assert records["solution"]["score"] == records["solution"]["max_score"] == total, records["solution"]
    assert records["untouched"]["score"] == 0
    lost = {e["grade_id"] for e in records["onewrong"]["exercises"] if e["score"] < e["max_points"]}
    assert lost == set(first.values()), records["onewrong"]["exercises"]
    assert records["onewrong"]["score"] == total - sum(points[g] for g in first.values())
    _every_page_written(root, chapter, names, ("solution", "untouched", "onewrong"))
    return records


def _every_page_written(root: Path, chapter: str, names: list[str], students) -> None:
    """`python -m grader feedback` writes every notebook's page for every student, and no page carries a line
    that only a hidden block has (a line of 40 characters or more that no other region of a solution has:
    a learner's own answer may well share a line with a hidden block)."""
    from grader.course import Course
    from grader.feedback import feedback
    from torchcourse.contract import cell_source, region_lines, secret_lines

    written = set(feedback(Course(root), chapter))
    public, hidden = set(), set()
    for sol in (root / "solutions" / chapter).glob("*.ipynb"):
        cells = [cell_source(c) for c in nbformat.read(str(sol), as_version=4).cells]
        inside, outside = region_lines(cells, {"hidden"})
        public |= outside | secret_lines(cells, kinds={"solution"})
        hidden |= {line for line in inside if len(line) >= 40}
    hidden -= public
    for student in students:
        for name in names:
            page = root / "feedback" / student / chapter / f"{name}.html"
            assert page in written, f"no feedback page {page.relative_to(root)}"
            text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
            assert not hidden & {line.strip() for line in text.splitlines()}, page


def exchange_round(tmp: Path, root: Path, chapter: str) -> None:
    """Plain nbgrader in the unreleased course folder `root`: generate, release, two students fetch, answer
    and submit through a throw-away exchange, then collect (nbgrader's and the course grader's), autograde,
    generate_feedback and export; then the course grader autogrades what its collect took from the same
    exchange, and its gradebook rows must be nbgrader's."""
    exchange = tmp / "exchange"
    exchange.mkdir(mode=0o777)
    env = {"TORCHCOURSE_EXCHANGE": str(exchange)}
    nbgrader(root, "generate_assignment", chapter, "--force", env=env)
    nbgrader(root, "release_assignment", chapter, env=env)
    names, points, first = _points(root, chapter)
    graded = [name for name in names if name in first]
    wrong_slug = first[graded[0]]
    plans = {"alice": "onewrong", "bob": "untouched"}
    for student, plan in plans.items():
        home = tmp / "home" / student
        home.mkdir(parents=True)
        senv = {**env, "USER": student, "LOGNAME": student, "JUPYTERHUB_USER": student}
        nbgrader(home, "fetch_assignment", chapter, "--course", COURSE_ID, f"--Exchange.root={exchange}", env=senv)
        for name in names:
            fetched = home / chapter / f"{name}.ipynb"
            assert fetched.exists(), f"fetch_assignment did not deliver {fetched}"
            sol = root / "solutions" / chapter / f"{name}.ipynb"
            if plan == "onewrong":
                write(submission(fetched, sol, wrong={wrong_slug} if name == graded[0] else set()), fetched)
        nbgrader(home, "submit", chapter, "--course", COURSE_ID, f"--student={student}",
                 f"--Exchange.root={exchange}", env=senv)

    # The course grader's collect reads the same exchange (into a copy of the course, to leave this one plain).
    mine = tmp / "grader-course"
    shutil.copytree(root, mine)
    done = subprocess.run([sys.executable, "-m", "grader", "--root", str(mine), "collect", chapter], cwd=REPO,
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (mine / "submitted").iterdir()) == sorted(plans)
    nbgrader(root, "collect", chapter, env=env)
    assert sorted(p.name for p in (root / "submitted").iterdir()) == sorted(plans)
    nbgrader(root, "autograde", chapter, env=env)
    nbgrader(root, "generate_feedback", chapter, env=env)
    for student in plans:
        pages = list((root / "feedback" / student / chapter).glob("*.html"))
        assert len(pages) == len(names), f"feedback for {student}: {pages}"
    nbgrader(root, "export", env=env)
    with open(root / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == chapter}
    total = sum(points.values())
    assert float(rows["alice"]["max_score"]) == total
    assert float(rows["alice"]["score"]) == total - points[wrong_slug], rows["alice"]
    assert float(rows["bob"]["score"]) == 0, rows["bob"]
    from nbgrader.api import Gradebook

    from grader.course import Course

    with Gradebook(Course(root).db_url) as gb:  # every exercise but the wrong one full, that one 0
        got = {g.name: g.score for nb in gb.find_submission(chapter, "alice").notebooks for g in nb.grades
               if g.name in points}
    assert got == {slug: 0.0 if slug == wrong_slug else pts for slug, pts in points.items()}, got
    # The course grader, on the same submissions collected from the same exchange, writes nbgrader's rows:
    # every grade and every comment ("No response." on bob's untouched answers) as nbgrader's autograde did.
    from grader.autograde import autograde
    from tests.helpers.gradebook_rows import gradebook_rows

    records = autograde(Course(mine), chapter, workers=2, progress=False)
    assert sorted(records) == sorted(plans) and not records.not_recorded
    ours, theirs = gradebook_rows(Course(mine).db_path), gradebook_rows(Course(root).db_path)
    assert ("bob", names[0]) in {(r[0], r[1]) for r in theirs["comment"] if r[4] == "No response."}
    assert ours["grade"] == theirs["grade"]
    assert ours["comment"] == theirs["comment"]
