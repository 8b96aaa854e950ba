"""`python -m grader`: the course's command line for learners and instructors.

  check NOTEBOOK        a learner's self-check of the visible checks, in a fresh kernel
  release [CHAPTER]     solutions/ to chapters/ via nbgrader, refusing any leak into chapters/ or the site
  collect [CHAPTER]     from nbgrader's exchange, or --from a folder or zip downloaded from an LMS
  autograde [CHAPTER]   sanitise, run in the sandbox, judge outside, write nbgrader's gradebook
  feedback [CHAPTER]    per-student HTML without hidden-test source
  report [CHAPTER]      CSV plus an HTML report with plots and flagged submissions
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from grader.course import Course
from grader.plaintext import one_line
from torchcourse.contract import CELL_TIMEOUT_S, NOTEBOOK_BUDGET_S


def _chapters(course: Course, chapter: str | None, needs_submissions: bool = False) -> list[str]:
    if chapter:
        if chapter not in course.assignments():
            raise SystemExit(f"unknown chapter {chapter!r}; chapters: {', '.join(course.assignments()) or 'none'}")
        return [chapter]
    found = course.assignments()
    return [c for c in found if course.students(c) or course.unusable(c)] if needs_submissions else found


def _check(args, course: Course) -> int:
    from grader.check import check

    return check(Path(args.notebook))


def _release(args, course: Course) -> int:
    from grader import release as release_mod

    try:
        done = release_mod.release(course, [args.chapter] if args.chapter else None)
    except release_mod.LeakError as exc:
        print(exc, file=sys.stderr)
        return 1
    print("released: " + ", ".join(done))
    return 0


def _collect(args, course: Course) -> int:
    from grader import collect

    chapters = _chapters(course, args.chapter)
    if args.source and len(chapters) != 1:
        raise SystemExit("--from needs one CHAPTER")
    for chapter in chapters:
        try:
            if args.source:
                done = collect.from_folder(course, chapter, Path(args.source))
            else:
                done = collect.from_exchange(course, chapter)
        except ValueError as exc:
            print(f"collect: {exc}", file=sys.stderr)
            return 1
        for raw, sid in sorted(done.ids.items()):
            print(f"{chapter}: {one_line(raw)} -> {sid}")
        for entry, why in done.refused:
            print(f"collect: refused {one_line(entry)}: {one_line(why)}", file=sys.stderr)
        if done.refused:
            print(f"{chapter}: {len(done.refused)} entries refused (listed above)", file=sys.stderr)
        if not args.source:
            print(f"{chapter}: {len(course.students(chapter))} submissions in {course.submitted}")
    return 0


def _autograde(args, course: Course) -> int:
    from grader.autograde import autograde
    from grader.due import due
    from grader.sandbox import Limits

    limits = Limits(cell_timeout=args.cell_timeout, budget=args.budget, mem_mb=args.mem_mb)
    worst = 0
    for chapter in _chapters(course, args.chapter, needs_submissions=True):
        try:
            records = autograde(course, chapter, workers=args.workers, scheduler=args.scheduler, certs=args.certs,
                                limits=limits, force=args.force, students=args.student or None,
                                prefix=not args.no_prefix)
        except KeyboardInterrupt:  # Ctrl-C: each record is written whole after its gradebook commit, or not at all
            waiting = due(course, chapter, args.force, args.student)
            print(f"\nautograde: interrupted; {chapter}: {len(waiting)} submission(s) NOT recorded, every record "
                  "written is kept: run autograde again to grade only those", file=sys.stderr)
            return 130
        except Exception as exc:  # the solution fails its own checks, the gradebook is locked...: nobody is graded
            why = str(exc) if isinstance(exc, (RuntimeError, ValueError)) else f"{type(exc).__name__}: {exc}"
            # one line, never a traceback (SQLAlchemy's messages go on with the SQL and a link)
            print(f"autograde: {chapter} not graded: {one_line(why.strip().splitlines()[0] if why.strip() else why)}",
                  file=sys.stderr)
            worst = 1
            try:
                waiting = due(course, chapter, args.force, args.student) + list(course.unusable(chapter))
            except Exception:
                waiting = []
            if waiting:
                print(f"{chapter}: {len(waiting)} submission(s) NOT recorded (run autograde again to retry them):",
                      file=sys.stderr)
                for student in sorted(waiting):
                    print(f"  {one_line(student)}: the chapter could not be graded (above)", file=sys.stderr)
            continue
        flagged = sum(1 for r in records.values() if r["flags"])
        print(f"{chapter}: graded {len(records)} submissions ({flagged} flagged; `python -m grader report` lists why)")
        if args.timings and records.timings:
            print(f"{chapter}: timings " + " ".join(f"{k}={v:.3f}s" for k, v in records.timings.items()))
            for notebook, t in sorted(records.templates.items()):
                if t:  # the most one worker's template of the notebook took and held
                    print(f"{chapter}: template {notebook} " + " ".join(f"{k}={v:g}" for k, v in sorted(t.items())))
        for notebook, counts in sorted(records.openings.items()):
            for how, n in sorted(counts.items()):
                if how != "forked":  # still graded, every cell run: the instructor learns why it took longer
                    print(f"{chapter}: {notebook}.ipynb: {n} submission(s) ran every cell, not forked from the "
                          f"notebook's opening ({one_line(how.removeprefix('full: '))})", file=sys.stderr)
        for notebook, why in sorted(records.shortened.items()):
            cells = int(records.templates.get(notebook, {}).get("cells", 0))
            print(f"{chapter}: {notebook}.ipynb: forked after its first {cells} opening cell(s), not all of them "
                  f"({one_line(why)}): the rest run in each submission's own process")
        for student, why in sorted(records.graded_in_part.items()):
            print(f"{chapter}: WARNING: {one_line(student)}: {one_line(why)}", file=sys.stderr)
        missing = records.not_recorded
        if missing:
            worst = 1
            print(f"{chapter}: {len(missing)} submission(s) NOT recorded (run autograde again to retry them):",
                  file=sys.stderr)
            for student, why in sorted(missing.items()):
                print(f"  {one_line(student)}: {one_line(why)}", file=sys.stderr)
    return worst


def _cluster_certs(args, course: Course) -> int:
    from grader.cluster import make_certs

    try:
        written = make_certs(Path(args.folder), days=args.days, hosts=tuple(args.host or ()))
    except (FileExistsError, OSError) as exc:
        print(f"cluster-certs: {exc}", file=sys.stderr)
        return 1
    print("\n".join(str(p) for p in written))
    print("cluster-certs: ca.key signs new certificates: keep it on this machine only; each machine gets ca.pem and "
          "its role's .pem and .key (grader/README.md, 'Grading on several machines')")
    return 0


def _cluster_check(args, course: Course) -> int:
    from grader.cluster import ClusterRefused, connect, verify_cluster

    try:
        client = connect(args.address, args.certs, timeout="20s")
    except ClusterRefused as exc:
        print(f"cluster-check: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # unreachable, or the TLS handshake refused: one line
        print(f"cluster-check: cannot reach {args.address}: {one_line(f'{type(exc).__name__}: {exc}')}",
              file=sys.stderr)
        return 1
    try:
        workers = verify_cluster(client)
    except ClusterRefused as exc:
        print(f"cluster-check: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    print(f"cluster-check: {args.address} ready: {len(workers)} workers, each running the grader's course "
          f"({', '.join(workers)})")
    return 0


def _feedback(args, course: Course) -> int:
    from grader.feedback import feedback

    for chapter in _chapters(course, args.chapter, needs_submissions=True):
        pages = feedback(course, chapter)
        print(f"{chapter}: {len(pages)} feedback pages in {course.feedback}")
    return 0


def _report(args, course: Course) -> int:
    from grader.report import report

    for chapter in _chapters(course, args.chapter, needs_submissions=True):
        csv_path, html_path = report(course, chapter)
        print(f"{chapter}: {csv_path} {html_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=None, help="the course folder (default: this repository)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("check", help="check a notebook's visible checks in a fresh kernel (for learners)")
    p.add_argument("notebook")
    p.set_defaults(func=_check)
    p = sub.add_parser("release", help="solutions/ to chapters/ via nbgrader, refusing any leak")
    p.add_argument("chapter", nargs="?", help="e.g. 01-tensors (default: every chapter)")
    p.set_defaults(func=_release)
    p = sub.add_parser("collect", help="collect submissions from the exchange or an LMS folder/zip")
    p.add_argument("chapter", nargs="?")
    p.add_argument("--from", dest="source", help="a folder or zip of notebooks downloaded from an LMS")
    p.set_defaults(func=_collect)
    p = sub.add_parser("autograde", help="grade collected submissions in the sandbox")
    p.add_argument("chapter", nargs="?")
    p.add_argument("--workers", type=int, default=None, help="parallel sandbox workers (default: the core count)")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler to run the same work on")
    p.add_argument("--certs", help="folder of the course's cluster certificates (ca.pem, client.pem, client.key; "
                   "default $TORCHCOURSE_CLUSTER_CERTS)")
    p.add_argument("--force", action="store_true", help="regrade students already graded")
    p.add_argument("--student", action="append", help="grade only this student (repeatable)")
    p.add_argument("--cell-timeout", type=float, default=float(CELL_TIMEOUT_S),
                   help=f"seconds per cell (default {CELL_TIMEOUT_S})")
    p.add_argument("--budget", type=float, default=float(NOTEBOOK_BUDGET_S),
                   help=f"seconds per notebook (default {NOTEBOOK_BUDGET_S})")
    p.add_argument("--mem-mb", type=int, default=2048, help="memory a submission may add, MiB (default 2048)")
    p.add_argument("--timings", action="store_true",
                   help="print the seconds of start-up (workers, gradebook, solutions) and of grading")
    p.add_argument("--no-prefix", action="store_true",
                   help="run every cell of every submission (by default a notebook's release cells before its first "
                        "answer cell run once per worker, and each submission that opens with them is forked "
                        "from there)")
    p.set_defaults(func=_autograde)
    p = sub.add_parser("cluster-certs", help="a CA and scheduler, worker and client certificates for a Dask cluster")
    p.add_argument("folder")
    p.add_argument("--days", type=int, default=365, help="how long they are valid (default 365)")
    p.add_argument("--host", action="append", help="a host name or IP of the scheduler or a worker (repeatable)")
    p.set_defaults(func=_cluster_certs)
    p = sub.add_parser("cluster-check", help="is a Dask cluster ready to grade: TLS, workers running this course")
    p.add_argument("address", help="tls://HOST:PORT of the scheduler")
    p.add_argument("--certs", help="the client certificates' folder (default $TORCHCOURSE_CLUSTER_CERTS)")
    p.set_defaults(func=_cluster_check)
    p = sub.add_parser("feedback", help="per-student HTML feedback without hidden tests")
    p.add_argument("chapter", nargs="?")
    p.set_defaults(func=_feedback)
    p = sub.add_parser("report", help="CSV and HTML report of a chapter's grades")
    p.add_argument("chapter", nargs="?")
    p.set_defaults(func=_report)
    args = parser.parse_args(argv)
    course = Course(Path(args.root).resolve()) if args.root else Course()
    warnings.simplefilter("default", UserWarning)
    warnings.formatwarning = lambda message, category, *rest, **kw: f"{category.__name__}: {message}\n"
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return args.func(args, course)


if __name__ == "__main__":
    sys.exit(main())
