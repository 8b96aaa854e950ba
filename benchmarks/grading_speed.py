"""Grading speed: the course grader against its limit and against serial `nbgrader autograde`, one run.

    .venv/bin/python benchmarks/grading_speed.py [--n 40] [--dask] [--chapter 01-tensors] [--workers N]
    .venv/bin/python benchmarks/grading_speed.py --n 400 [--dask]

Builds throw-away copies of the course with N honest submissions of the chapter (every notebook
it has): a quarter fully correct, the rest with one or two plausible wrong answers
(tests/notebooks/wrong_answers) or an unanswered exercise. In this one run it measures:

* the limit: the chapter's solution notebooks' cells in a warm single-threaded process, with and
  without the static figures rendered to PNG (benchmarks/grading_breakdown.py); N x that / cores is
  the least any grader could take if the cores were independent;
* the limit with the cores busy together (`grading_breakdown.parallel_limit`: as many warm processes
  as cores, started at once, just before and just after the grader): where the cores slow each other
  down (shared caches, hyperthreads, a busy host: on the 2-core machines here two processes gave
  1.2-2.0 x one process's throughput) this is the least any grader can take;
* serial `nbgrader autograde CHAPTER` on the first `--nbgrader-n` submissions (all of them by default
  up to 40; nbgrader takes about 3 s a notebook, so 400 would take hours);
* `python -m grader autograde CHAPTER` on all N, end to end as a command, with its start-up
  (workers warm, gradebook ready) and grading time (the solutions' run included);
* the same run's overhead measured beside its own cells: the grader's timings hold the submissions' cells as
  the sandboxed child timed them, every job as its worker timed it and the grader process's CPU, so the
  overhead per notebook beyond its cells, and where it goes, do not move with the host's speed;
* with --dask, the same on a TLS Dask scheduler and two single-threaded `dask worker` processes
  (tests/helpers/dask_cluster.py; benchmarks/cluster_grading.py compares them with the local pool);
* the limit of grading from templates (grader/inside/template.py): each notebook's cells before its first answer
  cell (its opening) once, plus N x the rest, over the cores (the limit's own runs, split cell by cell at each
  notebook's first answer cell); the grader against it and against the all-cells limit, which notebooks ran
  every cell and why, and what each notebook's template held in memory (its RSS and PSS, and what it holds
  that the worker does not share: its private pages and temp space). `--no-prefix` grades every cell instead.

Both courses have the chapter recorded in their gradebook before timing (nbgrader's
generate_assignment; the grader's first autograde of a chapter does the same once).
It prints the time, memory and throughput of each run, and whether every score matched.
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


def prepare(dest: Path, chapter: str) -> Path:
    """A course copy with the chapter released and recorded in the gradebook, as before any autograde."""
    root = course_copy(dest, chapter)
    nbgrader(root, "generate_assignment", chapter, "--force")
    return root


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


def opening_counts(chapter: str) -> dict[str, int]:
    """notebook -> how many of its solution's code cells come before its first answer cell (what a template
    runs), as the grader counts them."""
    from grader.autograde import opening
    from grader.sanitise import Sanitised

    counts = {}
    for path in sorted((REPO / "solutions" / chapter).glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        points = grade_points(nb)
        grades = {g: code.index(i) for i, c in enumerate(nb.cells) if c.cell_type == "code"
                  for g in [c.metadata.get("nbgrader", {}).get("grade_id")] if g in points}
        counts[path.stem] = len(opening(Sanitised(nb, code, grades, points, [])))
    return counts


def split_at_openings(lim: dict[str, dict], counts: dict[str, int]) -> tuple[float, float]:
    """(the openings' seconds, the rest's) of one `grading_breakdown.limit` run, cell by cell: both from the
    same runs of the same cells, so the rest is never the difference of two measurements."""
    heads = sum(sum(row["png_cells"][:counts[nb]]) for nb, row in lim.items() if nb != "*")
    rest = sum(sum(row["png_cells"][counts[nb]:]) for nb, row in lim.items() if nb != "*")
    return heads, rest


def _grader(root: Path, chapter: str, workers: int | None, scheduler: str | None = None, certs: Path | None = None,
            prefix: bool = True) -> dict:
    cmd = [sys.executable, "-m", "grader", "--root", str(root), "autograde", chapter, "--timings"]
    if not prefix:
        cmd.append("--no-prefix")
    if workers:
        cmd += ["--workers", str(workers)]
    if scheduler:
        cmd += ["--scheduler", scheduler, "--certs", str(certs)]
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    line = next(x for x in done.stdout.splitlines() if " timings " in x)
    timings = dict(kv.split("=") for kv in line.split(" timings ", 1)[1].split())
    t = {k: float(v.rstrip("s")) for k, v in timings.items()}
    templates = {x.split(" template ", 1)[1].split()[0]: dict(kv.split("=") for kv in x.split()[3:])
                 for x in done.stdout.splitlines() if " template " in x}
    full = [x for x in done.stderr.splitlines() if "ran every cell" in x]
    shortened = [x for x in done.stdout.splitlines() if "forked after its first" in x]
    return {**t, "wall": wall, "start_up": wall - t["grading"], "process": wall - t["grading"] - t["start_up"],
            "workers": t["start_up"], "templates": templates, "full": full, "shortened": shortened}


def in_run(g: dict, cores: int, notebooks: int) -> None:
    """The overhead measured beside the cells themselves, in the same run: the grader's timings hold the
    submissions' cells as the sandboxed child timed each one, so a host that is slower or faster while the grader
    runs than while the limit is measured (tens of percent here, over minutes) moves both alike. The child's
    clock for a cell includes the guard's audit hook and its checks around a checks cell: those are grader
    costs this view counts as the cell's."""
    ms = 1000 / notebooks
    over = (g["grading"] * cores - g["cells"]) * ms
    sandbox = (g["jobs"] - g["cells"] - g["solution_cells"]) * ms
    sols, cpu = g["solution_cells"] * ms, g["cpu"] * ms
    rest = over - sandbox - sols - cpu
    print(f"  in this run, per notebook: its cells {g['cells'] * ms:.1f} ms as the sandbox timed them, and beyond them "
          f"{over:.1f} ms of the {cores} cores (target < 30): the sandbox's own work per job (fork, set-up, messages "
          f"between cells, exit) {sandbox:.1f} ms, the solutions' cells {sols:.1f} ms, this process's CPU (sanitise, "
          f"judge, autograded notebook, gradebook, pool threads) {cpu:.1f} ms, "
          + (f"a core waiting (between jobs, on the last notebooks) {rest:.1f} ms" if rest >= 0 else
             f"and these overlap by {-rest:.1f} ms (this process runs on the cores the jobs run on, so it also "
             "lengthens the jobs' and the cells' clocks)"))
    print(f"  the same less the solutions' cells (run once a batch, whatever N: {g['solution_cells'] * ms:.1f} ms a "
          f"notebook at {notebooks} notebooks, a tenth of that at ten times as many): {over - sols:.1f} ms a notebook "
          "(what each further notebook costs beyond its cells)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--nbgrader-n", type=int, default=40, help="submissions serial nbgrader grades (<= n)")
    ap.add_argument("--chapter", default="01-tensors")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--dask", action="store_true", help="also grade on a Dask LocalCluster of 2 processes")
    ap.add_argument("--no-prefix", action="store_true", help="grade every cell of every submission (no templates)")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "benchmarks"))
    from grading_breakdown import limit, parallel_limit

    from grader import gradebook
    from grader.course import Course

    cores = args.workers or os.cpu_count() or 1
    k = min(args.n, args.nbgrader_n)
    tmp = Path(tempfile.mkdtemp(prefix="torchcourse-bench-"))
    try:
        b = prepare(tmp / "grader-course", args.chapter)
        build(b, args.chapter, args.n)
        gradebook.ensure_assignment(Course(b), args.chapter)  # once per chapter, as nbgrader's generate_assignment
        gradebook.close()
        a = tmp / "nbgrader-course"
        shutil.copytree(b, a, ignore=shutil.ignore_patterns("submitted"))
        for s in sorted((b / "submitted").iterdir())[:k]:
            shutil.copytree(s, a / "submitted" / s.name)
        if args.dask:
            shutil.copytree(b, tmp / "dask-course")
        notebooks = len(list((b / "solutions" / args.chapter).glob("*.ipynb")))
        print(f"{args.n} submissions of {args.chapter} ({notebooks} notebooks each), {cores} cores, "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)

        t0 = time.monotonic()
        nbgrader(a, "autograde", args.chapter)
        t_nb = time.monotonic() - t0
        print(f"serial nbgrader autograde, {k} submissions:   {t_nb:8.1f} s ({t_nb / k:.2f} s each)", flush=True)

        # Both limits just before the grader runs and again just after it (the host's speed drifts by tens of
        # percent over minutes here): the grader is held against their means.
        runs = [limit(args.chapter)]
        together = [parallel_limit(args.chapter, cores)]
        g = _grader(b, args.chapter, args.workers, prefix=not args.no_prefix)
        together.append(parallel_limit(args.chapter, cores))
        runs.append(limit(args.chapter))
        lims = [run["*"] for run in runs]
        counts = opening_counts(args.chapter)
        head, rest = (sum(x) / len(runs) for x in zip(*(split_at_openings(run, counts) for run in runs)))
        lim = {k: sum(x[k] for x in lims) / len(lims) for k in lims[0]}
        floor = args.n * lim["png"] / cores
        per_sub = sum(together) / len(together)
        floor_together = args.n * per_sub / cores
        # each cores-together run against the single-process limit measured beside it
        scaling = " and ".join(f"{cores * one['png'] / t:.2f}" for one, t in zip(lims, together))
        print(f"limit, one submission's cells in a warm process: {lim['png']:.3f} s with PNG figures, "
              f"{lim['nopng']:.3f} s without (before the grader {lims[0]['png']:.3f} s, after {lims[1]['png']:.3f} s)")
        print(f"limit for {args.n} on {cores} cores (N x with PNG / cores): {floor:8.1f} s "
              f"(without PNG {args.n * lim['nopng'] / cores:.1f} s)")
        print(f"limit with the {cores} cores busy together ({cores} warm processes at once, before and after): "
              f"{per_sub:.3f} s a submission per process, so {floor_together:.1f} s for {args.n}; the cores together "
              f"gave {scaling} x one process's throughput, not {cores} x",
              flush=True)
        ratio = g["grading"] / floor
        workers = args.workers or cores
        floor_prefix = (head + args.n * rest) / cores
        print(f"the openings (cells before each notebook's first answer cell): {head:.3f} s of the "
              f"{head + rest:.3f} s ({100 * head / (head + rest):.0f} %, cell by cell in the same runs); limit from "
              f"templates, the openings once + N x the rest ({rest:.3f} s), over the cores: {floor_prefix:.1f} s "
              f"(were each opening run on every one of the {workers} workers: "
              f"{(workers * head + args.n * rest) / cores:.1f} s)")
        if not args.no_prefix:
            print(f"  grading / limit from templates:    {g['grading'] / floor_prefix:8.2f} x   (target <= 1.25)")
            print(f"  grading / all-cells limit:         {ratio:8.2f} x   (target < 0.35)")
            for line in g["full"]:
                print("  ran every cell: " + line.split(": ", 1)[1])
            for line in g["shortened"]:
                print("  " + line.split(": ", 1)[1])
            for nb, t in sorted(g["templates"].items()):
                print(f"  template {nb}: opening {float(t.get('template_seconds', 0)):.2f} s "
                      f"(CPU {float(t.get('template_cpu_seconds', 0)):.2f} s, its processes included), RSS "
                      f"{float(t.get('rss_kb', 0)) / 1024:.0f} MB, PSS {float(t.get('pss_kb', 0)) / 1024:.0f} MB, "
                      f"its own (private pages and temp space) {float(t.get('private_kb', 0)) / 1024:.0f} MB")
        over = (g["grading"] * cores - args.n * lim["png"]) / (args.n * notebooks) * 1000
        over_together = (g["grading"] - floor_together) * cores / (args.n * notebooks) * 1000
        print(f"python -m grader autograde, {args.n} submissions: {g['wall']:8.1f} s = start-up {g['start_up']:.1f} s "
              f"+ grading {g['grading']:.1f} s")
        print(f"  grading / limit:                   {ratio:8.2f} x   (target <= 1.25; without PNG "
              f"{g['grading'] / (args.n * lim['nopng'] / cores):.2f} x; against the cores-together limit "
              f"{g['grading'] / floor_together:.2f} x)")
        print(f"  start-up:                          {g['start_up']:8.2f} s   (target < 5): the command's own start "
              f"{g['process']:.2f} s, workers warm and gradebook ready {g['workers']:.2f} s (the solutions run "
              "within grading: one submission's cells more than the limit counts)")
        print(f"  overhead per notebook beyond its cells: {over:5.1f} ms (target < 30): grading x cores, less "
              f"N x the limit, over the notebooks; against the cores-together limit {over_together:.1f} ms")
        in_run(g, cores, args.n * notebooks)
        speed = (t_nb / k) / (g["wall"] / args.n)
        print(f"  speed-up over serial nbgrader:     {speed:8.1f} x   (target >= 50 from templates, 13 without; per "
              "submission, whole commands)")
        sa, sb = scores(a, args.chapter), scores(b, args.chapter)
        diff = {s: (sa.get(s), sb.get(s)) for s in sorted(sa) if sa.get(s) != sb.get(s)}
        print(f"  every score matched nbgrader's:    {'yes' if not diff else 'NO'} ({len(sa)} students compared)")
        for s, (x, y) in diff.items():
            print(f"    {s}: nbgrader {x}, grader {y}")
        worst = 0 if not diff else 2
        if args.dask:
            from grader.cluster import make_certs
            from tests.helpers.dask_cluster import Cluster

            make_certs(tmp / "certs")
            (tmp / "cluster").mkdir()
            cl = Cluster(tmp / "cluster", tmp / "certs")  # TLS, as --scheduler requires; Dask's own command line
            try:
                cl.add_worker("w1")
                cl.add_worker("w2")
                cl.wait_for(2)
                d = _grader(tmp / "dask-course", args.chapter, None, cl.address, tmp / "certs")
            finally:
                cl.close()
            sd = scores(tmp / "dask-course", args.chapter)
            same = sd == sb
            print(f"on a Dask cluster (scheduler + 2 single-threaded workers, TLS): {d['wall']:8.1f} s = start-up "
                  f"{d['start_up']:.1f} s "
                  f"+ grading {d['grading']:.1f} s ({d['grading'] / floor:.2f} x the limit); scores "
                  f"{'identical to the local run' if same else 'DIFFER from the local run'}")
            worst = worst or (0 if same else 3)
        print(f"score range: {min(sb.values()):g} .. {max(sb.values()):g}; load average now {os.getloadavg()[0]:.2f}")
        return worst
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
