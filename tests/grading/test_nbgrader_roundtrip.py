"""Issue 2: chapter 1 through PLAIN nbgrader and its local exchange, as a class would use it.

In a throw-away copy of the course with a throw-away exchange: generate_assignment,
release_assignment, then three students fetch, answer and submit (each named by `--student`,
and USER in the environment), then collect, autograde, generate_feedback and export.
The solution scores full marks, the untouched release 0, and one wrong exercise costs
exactly its points.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from tests.helpers.course import REPO, course_copy, grade_points, nbgrader, submission, write

pytestmark = pytest.mark.grading
CHAPTER = "01-tensors"


@pytest.mark.skipif(not any((REPO / "solutions" / CHAPTER).glob("*.ipynb")), reason="chapter 1 has no notebooks yet")
def test_roundtrip_through_exchange(tmp_path):
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    env = {"TORCHCOURSE_EXCHANGE": str(exchange)}
    root = course_copy(tmp_path / "course", CHAPTER, release=False)
    nbgrader(root, "generate_assignment", CHAPTER, "--force", env=env)
    nbgrader(root, "release_assignment", CHAPTER, env=env)

    names = sorted(p.stem for p in (root / "solutions" / CHAPTER).glob("*.ipynb"))
    points = {}
    for name in names:
        points.update(grade_points(nbformat.read(str(root / "solutions" / CHAPTER / f"{name}.ipynb"), as_version=4)))
    wrong_slug = next(iter(grade_points(nbformat.read(str(root / "solutions" / CHAPTER / f"{names[0]}.ipynb"),
                                                      as_version=4))))
    plans = {"alice": "solution", "bob": "untouched", "carol": "onewrong"}
    for student, plan in plans.items():
        home = tmp_path / "home" / student
        home.mkdir(parents=True)
        senv = {**env, "USER": student, "LOGNAME": student, "JUPYTERHUB_USER": student}
        nbgrader(home, "fetch_assignment", CHAPTER, "--course", "torchcourse", f"--Exchange.root={exchange}", env=senv)
        for name in names:
            fetched = home / CHAPTER / f"{name}.ipynb"
            assert fetched.exists(), f"fetch_assignment did not deliver {fetched}"
            sol = root / "solutions" / CHAPTER / f"{name}.ipynb"
            if plan == "solution":
                write(submission(fetched, sol), fetched)
            elif plan == "onewrong":
                write(submission(fetched, sol, wrong={wrong_slug} if name == names[0] else set()), fetched)
        nbgrader(home, "submit", CHAPTER, "--course", "torchcourse", f"--student={student}",
                 f"--Exchange.root={exchange}", env=senv)

    # The course grader's collect reads the same exchange (into a copy of the course, to leave this one plain).
    mine = tmp_path / "grader-course"
    shutil.copytree(root, mine)
    done = subprocess.run([sys.executable, "-m", "grader", "--root", str(mine), "collect", CHAPTER], cwd=REPO,
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (mine / "submitted").iterdir()) == sorted(plans)
    nbgrader(root, "collect", CHAPTER, env=env)
    assert sorted(p.name for p in (root / "submitted").iterdir()) == sorted(plans)
    nbgrader(root, "autograde", CHAPTER, env=env)
    nbgrader(root, "generate_feedback", CHAPTER, env=env)
    for student in plans:
        pages = list((root / "feedback" / student / CHAPTER).glob("*.html"))
        assert len(pages) == len(names), f"feedback for {student}: {pages}"
    nbgrader(root, "export", env=env)
    with open(root / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == CHAPTER}
    total = sum(points.values())
    assert float(rows["alice"]["max_score"]) == total
    assert float(rows["alice"]["score"]) == total, rows["alice"]
    assert float(rows["bob"]["score"]) == 0, rows["bob"]
    assert float(rows["carol"]["score"]) == total - points[wrong_slug], rows["carol"]
