"""Grading speed: the course grader against one serial `nbgrader autograde`, same 40 submissions.

    .venv/bin/python benchmarks/grading_speed.py [--n 40] [--chapter 01-tensors] [--workers N]

Builds two identical throw-away copies of the course with N honest submissions of the
chapter (every notebook it has): a quarter fully correct, the rest with one or two
plausible wrong answers (tests/notebooks/wrong_answers) or an unanswered exercise. Grades
one copy with `nbgrader autograde CHAPTER` (one serial run, as nbgrader does it) and the
other with `python -m grader autograde CHAPTER`, both as commands, end to end, in this
one run; prints both times, the ratio and whether every student's score matched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from tests.helpers.course import course_copy, grade_points, nbgrader, submission, write  # noqa: E402


def build(root: Path, chapter: str, n: int) -> None:
    names = sorted(p.stem for p in (root / "solutions" / chapter).glob("*.ipynb"))
    slugs = {nm: list(grade_points(nbformat.read(str(root / "solutions" / chapter / f"{nm}.ipynb"), as_version=4)))
             for nm in names}
    every = [(nm, s) for nm in names for s in slugs[nm]]
    for k in range(n):
        student = f"s{k + 1:03d}"
        wrong = set()
        if k % 4 == 1:
            wrong = {every[k % len(every)][1]}
        elif k % 4 == 2:
            wrong = {every[k % len(every)][1], every[(k + 3) % len(every)][1]}
        elif k % 4 == 3:
            wrong = {every[(k * 7) % len(every)][1]}
        for nm in names:
            sol = root / "solutions" / chapter / f"{nm}.ipynb"
            rel = root / "chapters" / chapter / f"{nm}.ipynb"
            write(submission(rel, sol, wrong=wrong & set(slugs[nm]), k=k // 4),
                  root / "submitted" / student / chapter / f"{nm}.ipynb")


def scores(root: Path, chapter: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(root / "gradebook.db")) as gb:
        return {s.student.id: float(s.score) for s in gb.assignment_submissions(chapter)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--chapter", default="01-tensors")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="torchcourse-bench-"))
    try:
        a = course_copy(tmp / "nbgrader-course", args.chapter)
        nbgrader(a, "generate_assignment", args.chapter, "--force")
        build(a, args.chapter, args.n)
        b = tmp / "grader-course"
        shutil.copytree(a, b)
        notebooks = len(list((a / "solutions" / args.chapter).glob("*.ipynb")))
        print(f"{args.n} submissions of {args.chapter} ({notebooks} notebooks each), {os.cpu_count()} cores")

        t0 = time.monotonic()
        nbgrader(a, "autograde", args.chapter)
        t_nbgrader = time.monotonic() - t0
        print(f"serial nbgrader autograde:     {t_nbgrader:8.1f} s", flush=True)

        cmd = [sys.executable, "-m", "grader", "--root", str(b), "autograde", args.chapter]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
        t0 = time.monotonic()
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        t_grader = time.monotonic() - t0
        if done.returncode != 0:
            print(done.stdout, done.stderr)
            return 1
        print(f"python -m grader autograde:    {t_grader:8.1f} s")
        print(f"ratio (nbgrader / grader):     {t_nbgrader / t_grader:8.1f} x")
        sa, sb = scores(a, args.chapter), scores(b, args.chapter)
        diff = {s: (sa.get(s), sb.get(s)) for s in sorted(set(sa) | set(sb)) if sa.get(s) != sb.get(s)}
        print(f"every score matched:           {'yes' if not diff else 'NO'} ({len(sa)} vs {len(sb)} students)")
        for s, (x, y) in diff.items():
            print(f"  {s}: nbgrader {x}, grader {y}")
        print(f"score range: {min(sb.values()):g} .. {max(sb.values()):g}")
        return 0 if not diff else 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
