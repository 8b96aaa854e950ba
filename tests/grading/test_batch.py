"""Batch behaviour: a grader killed halfway resumes without loss or duplication; 1 and 2 workers
give identical scores (a Dask cluster: test_cluster.py); the command line works end to end with
nbgrader's export and formgrader's data."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from grader.course import COURSE_ID
from tests.helpers.course import CASES, CHAPTER, REPO, fixture_course, submit, submit_case

pytestmark = pytest.mark.grading
MIX = ["honest-correct", "one-wrong", "untouched-release", "os-exit", "patch-torchcourse", "correct-warns"]


def _records(root):
    out = {}
    for p in (root / "autograded").glob(f"*/{CHAPTER}/.torchcourse-grade.json"):
        r = json.loads(p.read_text())
        out[r["student"]] = r
    return out


def _grader(root, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "grader", "--root", str(root), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def test_killed_halfway_then_resumed(tmp_path):
    root = fixture_course(tmp_path)
    students = []
    for k in range(8):  # every other one waits on a 2-second cell timeout, so the kill lands mid-batch
        case = "infinite-loop" if k % 2 else "honest-correct"
        students.append(f"{case}-{k}")
        submit(root, students[-1], {"a-basics.ipynb": CASES / f"{case}.ipynb",
                                    "b-more.ipynb": CASES / "correct-b-more.ipynb"})
    cmd = [sys.executable, "-m", "grader", "--root", str(root), "autograde", CHAPTER, "--workers", "1",
           "--cell-timeout", "2"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while len(_records(root)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    below = _descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = _records(root)
    assert 2 <= len(first) < len(students), f"the kill did not land halfway: {len(first)} graded"
    assert below, "the grader had no sandbox workers to check"
    deadline = time.monotonic() + 5  # they die with their parent (bwrap --die-with-parent, PR_SET_PDEATHSIG)
    while _still_running(below) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _still_running(below), f"sandbox processes outlived the killed grader: {_still_running(below)}"
    again = _grader(root, "autograde", CHAPTER, "--workers", "1", "--cell-timeout", "2")
    assert again.returncode == 0, again.stderr
    assert f"graded {len(students) - len(first)} submissions" in again.stdout
    final = _records(root)
    assert sorted(final) == sorted(students)
    for s, r in first.items():  # finished before the kill: not graded again
        assert final[s]["graded_at"] == r["graded_at"] and final[s]["seed"] == r["seed"]
    for s, r in final.items():
        assert r["score"] == 6.0, (s, r["exercises"])
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(root / "gradebook.db")) as gb:
        subs = gb.assignment_submissions(CHAPTER)
        assert sorted(x.student.id for x in subs) == sorted(students)  # one submission each, none twice
        assert all(x.score == 6.0 for x in subs)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """A process's state, parent and start time (clock ticks since boot), or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": the name may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def _descendants(pid: int) -> dict[int, int]:
    """Every process below `pid`, each with its start time: a process is its pid *and* its start time,
    since a long test run wraps the pid counter (32768 by default) and hands a dead process's pid to
    another."""
    stats = {int(d.name): _stat(int(d.name)) for d in Path("/proc").iterdir() if d.name.isdigit()}
    stats = {p: s for p, s in stats.items() if s is not None}
    found: dict[int, int] = {}
    frontier = {pid}
    while frontier:
        frontier = {p for p, (_, parent, _) in stats.items() if parent in frontier and p not in found}
        found.update((p, stats[p][2]) for p in frontier)
    return found


def _still_running(procs: dict[int, int]) -> dict[int, str]:
    """Those of `procs` (pid: start time) still running, with their state. A zombie has died: whether it is
    reaped is up to whichever process adopted it (this machine's pid 1), not the grader."""
    now = {p: _stat(p) for p in procs}
    return {p: s[0] for p, s in now.items() if s is not None and s[2] == procs[p] and s[0] not in "ZX"}


def _grade(root, **kw):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.sandbox import Limits

    recs = autograde(Course(root), CHAPTER, limits=Limits(cell_timeout=10, budget=30), progress=False, seed=1234, **kw)
    return {s: [(e["grade_id"], e["score"], e["status"]) for e in r["exercises"]] for s, r in recs.items()}


def test_one_and_two_workers_agree(tmp_path):
    roots = []
    for k in (1, 2):
        root = fixture_course(tmp_path / f"w{k}")
        for case in MIX:
            submit_case(root, case)
        roots.append(root)
    one, two = _grade(roots[0], workers=1), _grade(roots[1], workers=2)
    assert one == two
    assert sorted(one) == sorted(MIX)


def test_command_line_end_to_end(tmp_path):
    root = fixture_course(tmp_path)
    download = tmp_path / "lms.zip"  # an LMS download: student in the file name, decorations around it
    with zipfile.ZipFile(download, "w") as zf:
        zf.write(CASES / "honest-correct.ipynb", "Smith, Jane_1234_5678_a-basics-1.ipynb")
        zf.write(CASES / "correct-b-more.ipynb", "Smith, Jane_1234_5679_b-more.ipynb")
        zf.write(CASES / "one-wrong.ipynb", "doe.john_2_3_a-basics.ipynb")
        zf.writestr("../../escape_1_1_a-basics.ipynb", "{}")
        zf.writestr("notes.txt", "not a notebook")
    done = _grader(root, "collect", CHAPTER, "--from", str(download))
    assert done.returncode == 0, done.stderr
    # The entry that climbs out of the archive ("../../") is refused, and nothing lands outside.
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["doe.john_2", "smith_jane_1234"]
    assert not list(tmp_path.parent.rglob("escape_1_1_a-basics.ipynb"))
    done = _grader(root, "autograde", CHAPTER, "--cell-timeout", "10")
    assert done.returncode == 0, done.stderr
    recs = _records(root)
    assert recs["smith_jane_1234"]["score"] == 6 and recs["doe.john_2"]["score"] == 3
    done = _grader(root, "feedback", CHAPTER)
    assert done.returncode == 0, done.stderr
    page = (root / "feedback" / "doe.john_2" / CHAPTER / "a-basics.html").read_text()
    assert "BEGIN HIDDEN" not in page and 'emit("fx-double"' not in page and "rng(&quot;fx-strides" not in page
    assert "fx-double" in page and "returned a torch.Tensor of dtype torch.float32 tensor([3., 6.])" in page
    done = _grader(root, "report", CHAPTER)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(root / "reports" / f"{CHAPTER}.csv")))
    assert {r["student"]: float(r["score"]) for r in rows} == {"smith_jane_1234": 6, "doe.john_2": 3}
    html = (root / "reports" / f"{CHAPTER}.html").read_text()
    assert html.count("data:image/png;base64,") >= 2 and "Flagged submissions" in html
    # nbgrader's own export reads the gradebook the grader wrote.
    cfg = f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\nc.CourseDirectory.source_directory = " \
          "'solutions'\nc.CourseDirectory.release_directory = 'chapters'\n"
    (root / "nbgrader_config.py").write_text(cfg)
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    done = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=root, capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    exported = {r["student_id"]: float(r["score"]) for r in csv.DictReader(open(root / "grades.csv"))}
    assert exported == {"smith_jane_1234": 6, "doe.john_2": 3}
