"""Where one notebook's time goes in the course grader, and the limit measured the same way.

    .venv/bin/python benchmarks/grading_breakdown.py [--chapter 01-tensors] [--students 4] [--repeat 3]

The limit: each solution notebook's cells run in an already-warm, single-threaded process (the sandbox's
own warm worker code, `grader/inside/`: torch imported once, the shell made, one forked child per
notebook), once with the static figures rendered to PNG as the grader renders them and once with no PNG
formatter at all. Nothing else runs in that child: no guard, no pipes, no sandbox.

The grader, per notebook, for a few throw-away submissions of the chapter:
* in the grader's process: sanitise, the sandbox job as the pool sees it (send, wait, read back), the judge,
  the autograded notebook (built, validated, written), the gradebook (a student's write over their notebooks);
* the sandbox job as the warm worker reports it (bubblewrap, own uid, the real thing);
* the same job run again by the warm worker's code outside bubblewrap, instrumented: fork, the child's
  set-up, cells (of which figure rendering, output capture and the guard's checks), the time between cells
  (messages, result lines, the worker's channel checks), and the end (killing the job's processes, reaping);
* a job's own cost in the real sandbox, apart from any lesson: jobs of 0, 1 and 21 trivial cells, with the
  CPU and the minor page faults of the worker and of the job's processes (`job_costs`).

Times are wall seconds on a shared machine unless marked CPU; compare shares and ratios within one run.
Also importable: `limit(chapter)` is what benchmarks/grading_speed.py divides by.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INSIDE = REPO / "grader" / "inside"

# --------------------------------------------------------------------------- inside the warm process
# Everything from here to the outer part runs in `python -I grading_breakdown.py --inner ...`: a process like
# the sandbox's warm worker (only what grader/inside/ imports), so the limit is measured where jobs run.


def _load_worker():
    """The worker's package, loaded as the sandbox loads it (grader/inside/__main__.py), its modules imported."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("inside", INSIDE / "__init__.py",
                                                  submodule_search_locations=[str(INSIDE)])
    sys.modules["inside"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["inside"])
    import inside.base
    import inside.child
    import inside.guard
    import inside.parent
    import inside.shell

    return inside


def _fork(fn) -> dict:
    """Run fn() in a forked child; its JSON-able result."""
    r, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = fn()
        except BaseException as exc:  # the benchmark's own bug: say so
            out = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(wfd, json.dumps(out).encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def _inner_limit(w, shell, folder: Path, cells: list[str], png: bool) -> dict:
    """One solution notebook's cells in a forked child of the warm process: seconds (wall and CPU)."""
    import matplotlib_inline.backend_inline as inline

    def child() -> dict:
        os.chdir(folder)
        sys.stdout, sys.stderr = w.shell._Sink("stdout", 1), w.shell._Sink("stderr", 2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        if not png:
            inline.set_matplotlib_formats()  # no PNG formatter: a figure shows as its text only
        w.child._seed_everything(1234)
        wall = cpu = 0.0
        failed = 0
        walls = []
        for source in cells:
            w.shell.COLLECT.reset()
            t, c = time.perf_counter(), time.process_time()
            failed += not shell.run_cell(source, store_history=True).success
            walls.append(time.perf_counter() - t)
            wall += walls[-1]
            cpu += time.process_time() - c
        return {"wall": wall, "cpu": cpu, "failed": failed, "walls": walls}

    return _fork(child)


def _instrument(w, shell, log_path: str) -> None:
    """Wrap the warm worker's steps with timers; the child writes its totals to `log_path` after each cell."""
    import matplotlib.backend_bases as bb

    acc: dict[str, float] = {}
    clock = time.perf_counter

    def timer(totals: dict[str, float]):
        """`timed(name, fn)`: fn, adding the seconds of each call to totals[name]."""
        def timed(name, fn):
            def wrapper(*a, **k):
                t = clock()
                try:
                    return fn(*a, **k)
                finally:
                    totals[name] = totals.get(name, 0.0) + clock() - t
            return wrapper
        return timed

    timed = timer(acc)  # the child's totals, written to log_path

    def flush() -> None:
        with open(log_path, "w") as f:
            json.dump(acc, f)

    orig_child, orig_serve, orig_guard = w.parent.run_child, w.child._serve_cells, w.child.make_guard

    def run_child(*a, **k):
        acc.clear()
        acc["t_child"] = clock()
        return orig_child(*a, **k)

    def serve(*a, **k):
        acc["t_serve"] = clock()
        flush()
        return orig_serve(*a, **k)

    def guard(*a, **k):
        hook, check, state = orig_guard(*a, **k)
        return timed("guard_hook", hook), timed("guard_checks", check), state

    real_run_cell, real_hidden = shell.run_cell, w.child.LearnerEnd.serve  # serving the checker's requests

    def cell_step(name, fn):
        """fn timed as `name`; after it, the moment it ended and the totals so far go to log_path."""
        fn = timed(name, fn)

        def wrapper(*a, **k):
            try:
                return fn(*a, **k)
            finally:
                acc["t_last"] = clock()
                flush()
        return wrapper

    run_cell, hidden = cell_step("cells", real_run_cell), cell_step("hidden", real_hidden)

    # each replaced where it is looked up: the parent forks run_child, run_child calls the others
    w.parent.run_child = run_child
    w.child._serve_cells, w.child.make_guard, w.child.LearnerEnd.serve = serve, guard, hidden
    shell.run_cell = run_cell
    bb.FigureCanvasBase.print_figure = timed("figures", bb.FigureCanvasBase.print_figure)
    for name in ("stream", "display", "error"):
        setattr(w.shell._Collector, name, timed("capture", getattr(w.shell._Collector, name)))
    parent: dict[str, float] = {}
    ptimed = timer(parent)  # the warm worker's side of the job, read back after run_job
    w.parent._channel_holders = ptimed("channel_checks", w.parent._channel_holders)
    w.parent._kill_uid = ptimed("kill", w.parent._kill_uid)
    w.parent._sweep = ptimed("sweep", w.parent._sweep)
    w._PARENT_TIMES = parent


def _inner(args) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    w = _load_worker()
    shell = w.shell.make_shell()
    snap = w.guard._snapshot()
    w.child.settle()  # as the worker does before its first job
    task = json.loads(Path(args.inner).read_text())
    out: dict = {"limit": {}, "jobs": []}
    if task.get("together"):  # one of several processes started at once: see parallel_limit()
        out["together"] = _inner_together(w, shell, task)
        Path(args.inner_out).write_text(json.dumps(out))
        return
    for _ in range(task["repeat"]):
        for nb in task["limit"]:
            for png in (True, False):
                r = _inner_limit(w, shell, Path(task["folder"]), nb["cells"], png)
                out["limit"].setdefault(nb["name"], {}).setdefault("png" if png else "nopng", []).append(r)
    if task["jobs"]:
        log = tempfile.mktemp(prefix="torchcourse-breakdown-", dir="/var/tmp")
        _instrument(w, shell, log)
        for job in task["jobs"]:
            folder = Path(tempfile.mkdtemp(prefix="torchcourse-breakdown-job-"))
            (folder / "job.json").write_text(json.dumps({"cells": job["cells"], "seed": job["seed"]}))
            for name in task.get("files", []):
                shutil.copy(Path(task["folder"]) / name, folder / name)
            spec = {"id": "b", "dir": str(folder), "results": str(folder) + ".results", "uid": None, "gid": None,
                    "netns": False, **task["limits"]}
            w._PARENT_TIMES.clear()
            t0 = time.perf_counter()
            c0 = os.times()
            reply = w.parent.run_job(shell, spec, snap)
            t1 = time.perf_counter()
            c1 = os.times()
            child = json.loads(Path(log).read_text())
            out["jobs"].append({"name": job["name"], "reply": reply, "t0": t0, "t1": t1, "child": child,
                                "parent": dict(w._PARENT_TIMES),
                                "child_cpu": (c1.children_user + c1.children_system)
                                - (c0.children_user + c0.children_system)})
            shutil.rmtree(folder, ignore_errors=True)
            Path(str(folder) + ".results").unlink(missing_ok=True)
        Path(log).unlink(missing_ok=True)
    Path(args.inner_out).write_text(json.dumps(out))


def _inner_together(w, shell, task: dict) -> dict:
    """Say ready, wait for the go file, then run the chapter's notebooks `rounds` times (PNG figures, each
    notebook in a forked child as in the limit); the monotonic clock (one for the machine) at go and at the end."""
    folder, sync = Path(task["folder"]), Path(task["together"])
    (sync / f"ready-{os.getpid()}").touch()
    while not (sync / "go").exists():
        time.sleep(0.005)
    start, failed = time.monotonic(), 0
    for _ in range(task["rounds"]):
        for nb in task["limit"]:
            failed += _inner_limit(w, shell, folder, nb["cells"], True).get("failed", 1)
    return {"start": start, "end": time.monotonic(), "failed": failed}


def _inner_command(task: dict, tmp: str, name: str = "inner") -> tuple[list[str], dict, Path]:
    """The command line and environment of one warm process (as the sandbox gives the worker), and its output
    file; `name` tells apart the files of processes that share `tmp`."""
    src, dst = Path(tmp) / f"{name}-task.json", Path(tmp) / f"{name}-out.json"
    src.write_text(json.dumps(task))
    sys.path.insert(0, str(REPO))
    from grader.course import Course
    from grader.worker_start import _worker_env

    folder = Path(task["folder"])  # solutions/<chapter>: the worker preloads what the grader's would
    preload = Course(folder.parents[1]).library_modules(folder.name)
    env = {**_worker_env(preload), "HOME": tmp, "MPLCONFIGDIR": f"{tmp}/mpl", "IPYTHONDIR": f"{tmp}/ipy"}
    python = str(Path(sys.prefix) / "bin" / "python")
    return [python, "-I", str(Path(__file__).resolve()), "--inner", str(src), "--inner-out", str(dst)], env, dst


def _run_inner(task: dict) -> dict:
    """Run the warm-process part in a fresh `python -I` process, environment as the sandbox gives the worker."""
    with tempfile.TemporaryDirectory(prefix="torchcourse-breakdown-") as tmp:
        cmd, env, dst = _inner_command(task, tmp)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0 or not dst.exists():
            raise RuntimeError(f"the warm process failed:\n{done.stderr[-3000:]}")
        return json.loads(dst.read_text())


# --------------------------------------------------------------------------- the limit

def _code_cells(path: Path) -> list[str]:
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def limit(chapter: str, repeat: int = 3, solutions: Path = REPO / "solutions") -> dict[str, dict]:
    """notebook -> {"png", "nopng", "png_cpu", "nopng_cpu"}: seconds of its solution's cells in a warm
    single-threaded process (median of `repeat`), and "*" for the chapter (their sum); each notebook's
    "png_cells" and "nopng_cells" are its code cells' seconds, each the median of its `repeat` runs."""
    folder = solutions / chapter
    task = {"folder": str(folder), "repeat": repeat, "jobs": [],
            "limit": [{"name": p.stem, "cells": _code_cells(p)} for p in sorted(folder.glob("*.ipynb"))]}
    raw = _run_inner(task)["limit"]
    out = {}
    for name, modes in raw.items():
        row = {}
        for mode, runs in modes.items():
            if any(r.get("error") or r.get("failed") for r in runs):
                raise RuntimeError(f"{name}: the solution's cells did not all run: {runs}")
            row[mode] = statistics.median(r["wall"] for r in runs)
            row[mode + "_cpu"] = statistics.median(r["cpu"] for r in runs)
            row[mode + "_cells"] = [statistics.median(cell) for cell in zip(*(r["walls"] for r in runs))]
        out[name] = row
    out["*"] = {k: sum(r[k] for r in out.values()) for k, v in next(iter(out.values())).items() if type(v) is float}
    return out


def parallel_limit(chapter: str, processes: int, rounds: int = 4, solutions: Path = REPO / "solutions") -> float:
    """The limit on this machine's cores together: `processes` warm single-threaded processes started at once,
    each running the chapter's solution notebooks `rounds` times as `limit` does (PNG figures). Seconds per
    submission per process: N submissions cannot take less than N / processes times it. On a machine whose
    cores slow each other down (shared caches, hyperthreads, a busy host) this is above `limit`'s figure,
    and processes x limit / this is how many times one process's throughput the cores together give."""
    folder = solutions / chapter
    cells = [{"name": p.stem, "cells": _code_cells(p)} for p in sorted(folder.glob("*.ipynb"))]
    with tempfile.TemporaryDirectory(prefix="torchcourse-together-") as tmp:
        sync = Path(tmp) / "sync"
        sync.mkdir()
        task = {"folder": str(folder), "limit": cells, "rounds": rounds, "together": str(sync)}
        procs = []
        for k in range(processes):
            cmd, env, dst = _inner_command(task, tmp, f"process-{k}")
            procs.append((subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           text=True), dst))
        deadline = time.monotonic() + 300
        while len(list(sync.glob("ready-*"))) < processes:
            if time.monotonic() > deadline or any(p.poll() is not None for p, _ in procs):
                for p, _ in procs:
                    p.kill()
                raise RuntimeError("a warm process did not start: " + "".join(p.stderr.read()[-2000:]
                                                                               for p, _ in procs if p.poll()))
            time.sleep(0.02)
        (sync / "go").touch()
        runs = []
        for p, dst in procs:
            _, err = p.communicate(timeout=1800)
            if p.returncode != 0 or not dst.exists():
                raise RuntimeError(f"a warm process failed:\n{err[-3000:]}")
            runs.append(json.loads(dst.read_text())["together"])
    if any(r["failed"] for r in runs):
        raise RuntimeError(f"{chapter}: the solution's cells did not all run: {runs}")
    return (max(r["end"] for r in runs) - min(r["start"] for r in runs)) / rounds


# --------------------------------------------------------------------------- a job's own cost, in the real sandbox

def _counters(pid: int) -> dict[str, float]:
    """A process's own CPU seconds and minor page faults, and those of its children it has reaped."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    minflt, cminflt, utime, stime, cutime, cstime = (int(fields[i]) for i in (7, 8, 11, 12, 13, 14))
    return {"cpu": (utime + stime) / tick, "faults": minflt, "job_cpu": (cutime + cstime) / tick,
            "job_faults": cminflt}


def job_costs(chapter: str, runs: int = 40) -> list[tuple[int, dict[str, float]]]:
    """What a job costs beyond its cells in the grader's real sandbox (bubblewrap, a uid of its own, per-job
    namespaces where the host has them), as the pool runs one: jobs of 0, 1 and 21 trivial cells (`x = 1`) in
    a warm worker kept to one CPU. Per job, in milliseconds: wall, CPU of the worker (its side of the job:
    fork, messages, channel checks, reaping) and of the job's processes, and minor page faults of each (after
    a fork every page either process writes is copied first: that copying, the fork and the exit are most of
    the fixed cost). CPU is read from /proc in clock ticks, so it is a mean over `runs` jobs."""
    sys.path.insert(0, str(REPO))
    from grader.course import Course
    from grader.sandbox import SandboxWorker, descendants

    preload = Course(REPO).library_modules(chapter)
    cpu = min(os.sched_getaffinity(0))
    out = []
    with SandboxWorker(preload=preload, cpu=cpu) as worker:
        # the worker itself, not bubblewrap around it: the process whose program is python
        python = [p for p in descendants(worker.proc.pid)
                  if Path(Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0].decode()).name.startswith("python")]
        pid = python[0] if python else worker.proc.pid
        for n in (0, 1, 21):
            cells = ["x = 1"] * n
            for _ in range(3):
                worker.run(cells, 1)
            before, t = _counters(pid), time.perf_counter()
            for _ in range(runs):
                worker.run(cells, 1)
            wall, after = time.perf_counter() - t, _counters(pid)
            row = {k: (after[k] - before[k]) / runs for k in after}
            row = {k: v * 1000 if "cpu" in k else v for k, v in row.items()}
            out.append((n, {"wall": wall / runs * 1000, **row}))
    return out


# --------------------------------------------------------------------------- the grader, per notebook

def _course(tmp: Path, chapter: str, n: int) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    sys.path.insert(0, str(REPO))
    from grading_speed import build, prepare

    root = prepare(tmp / "course", chapter)
    build(root, chapter, n)
    return root


def breakdown(chapter: str, students: int, repeat: int) -> tuple[list[tuple[str, float, str]], dict]:
    """Rows (stage, milliseconds per notebook, note) and the limit."""
    import dataclasses

    sys.path.insert(0, str(REPO))
    from grader import gradebook
    from grader.autograde import _cells
    from grader.course import Course
    from grader.executed import chapter_markdown, executed_notebook, write_executed
    from grader.judge import judge, reference_values
    from grader.sandbox import Limits, SandboxWorker, split_cells
    from grader.sanitise import SourceBook, sanitise, solution_notebook
    from grader.submission import chapter_files

    lim = limit(chapter, repeat)
    ms: dict[str, list[float]] = {}

    def add(key, seconds):
        ms.setdefault(key, []).append(seconds * 1000)

    with tempfile.TemporaryDirectory(prefix="torchcourse-breakdown-") as tmp:
        course = Course(_course(Path(tmp), chapter, students))
        nbs = course.notebooks(chapter)
        info = {nb: SourceBook(course.db_url, chapter, nb) for nb in nbs}
        files = chapter_files(course, chapter)
        limits = Limits()
        seed = 20261201
        jobs, subs = [], {}
        with SandboxWorker(limits) as worker:
            refs, sols = {}, {}
            for nb in nbs:
                sol = sols[nb] = solution_notebook(course.solutions / chapter / f"{nb}.ipynb", chapter, nb,
                                                   course.db_url)
                refs[nb] = reference_values(sol, worker.run(_cells(sol), seed, list(sol.grade_cells.values()),
                                                            files))
            own_markdown = chapter_markdown(sols)
            for s in course.students(chapter):
                exercises = []
                for nb in nbs:
                    t = time.perf_counter()
                    sub = sanitise(course.submitted / s / chapter / f"{nb}.ipynb", chapter, nb, course.db_url,
                                   info[nb])
                    add("sanitise", time.perf_counter() - t)
                    watch = list(sub.grade_cells.values())
                    t = time.perf_counter()
                    raw = worker.run(_cells(sub), seed, watch, files)
                    add("job as the pool sees it", time.perf_counter() - t)
                    add("job as the warm worker reports it", raw.seconds)
                    t = time.perf_counter()
                    exercises += judge(nb, sub, raw, refs[nb])
                    add("judge", time.perf_counter() - t)
                    t = time.perf_counter()
                    out = course.autograded / s / chapter
                    out.mkdir(parents=True, exist_ok=True)
                    write_executed(out / f"{nb}.ipynb", executed_notebook(sub, raw, own_markdown))
                    add("autograded notebook", time.perf_counter() - t)
                    jobs.append({"name": nb, "cells": split_cells(_cells(sub), watch), "seed": seed})
                    subs.setdefault(nb, []).append(sum(c.seconds for c in raw.cells.values()))
                t = time.perf_counter()
                gradebook.write_grades(course, chapter, s, None, exercises)
                for _ in nbs:
                    add("gradebook", (time.perf_counter() - t) / len(nbs))
            gradebook.close()
        inner = _run_inner({"folder": str(course.solutions / chapter), "repeat": 0, "limit": [], "jobs": jobs,
                            "files": sorted(files), "limits": dataclasses.asdict(limits)})
    for job in inner["jobs"]:
        c, p = job["child"], job["parent"]
        cells = c.get("cells", 0) + c.get("hidden", 0)
        add("  fork (until the child runs)", c["t_child"] - job["t0"])
        add("  child set-up (session, limits, seed, guard)", c["t_serve"] - c["t_child"])
        add("  cells (run_cell and hidden blocks)", cells)
        add("    of which figure rendering", c.get("figures", 0))
        add("    of which output capture", c.get("capture", 0))
        add("    of which the guard's audit hook", c.get("guard_hook", 0))
        add("  guard checks around checks cells", c.get("guard_checks", 0))
        add("  between cells (messages, result lines, channel checks)",
            c["t_last"] - c["t_serve"] - cells - c.get("guard_checks", 0))
        add("    of which the worker's channel checks", p.get("channel_checks", 0))
        add("  end (kill the job's processes, reap, sweep)", job["t1"] - c["t_last"])
        add("  job total (instrumented, outside bubblewrap)", job["t1"] - job["t0"])
        add("  job child CPU", job["child_cpu"])
    rows = [(k, statistics.mean(v), f"n={len(v)}") for k, v in ms.items()]
    return rows, lim


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chapter", default="01-tensors")
    ap.add_argument("--students", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3, help="runs of the limit (the median is kept)")
    ap.add_argument("--runs", type=int, default=40, help="trivial jobs per row of a job's own cost")
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    ap.add_argument("--inner-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inner:
        _inner(args)
        return 0
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    rows, lim = breakdown(args.chapter, args.students, args.repeat)
    n = len(lim) - 1
    print(f"\nThe limit: {args.chapter}'s {n} solution notebooks, cells only, in a warm single-threaded process")
    print(f"{'notebook':32s} {'PNG':>8s} {'no PNG':>8s} {'PNG CPU':>8s}   (seconds, median of {args.repeat})")
    for name, r in lim.items():
        print(f"{name if name != '*' else 'all, one submission':32s} {r['png']:8.3f} {r['nopng']:8.3f} "
              f"{r['png_cpu']:8.3f}")
    print(f"\nOne notebook in the course grader ({args.students} submissions x {n} notebooks; ms per notebook, mean)")
    for stage, value, note in rows:
        print(f"{stage:58s} {value:8.1f}  {note}")
    per_nb = lim["*"]["png"] / n * 1000
    print(f"{'limit: its cells in a warm process, with PNG (mean)':58s} {per_nb:8.1f}")
    cpu_nb = lim["*"]["png_cpu"] / n * 1000
    child = dict((k, v) for k, v, _ in rows)["  job child CPU"]
    print(f"{'limit, CPU (mean)':58s} {cpu_nb:8.1f}")
    print(f"{'job child CPU beyond the limit CPU (steadier under load)':58s} {child - cpu_nb:8.1f}")
    print(f"\nA job's own cost in the real sandbox: trivial cells (x = 1), a warm worker kept to one CPU, "
          f"means of {args.runs} jobs")
    print(f"{'cells':>5s} {'wall ms':>8s} {'worker CPU':>11s} {'job CPU':>8s} {'worker faults':>14s} "
          f"{'job faults':>11s}")
    for n, r in job_costs(args.chapter, args.runs):
        print(f"{n:5d} {r['wall']:8.1f} {r['cpu']:11.1f} {r['job_cpu']:8.1f} {r['faults']:14.0f} "
              f"{r['job_faults']:11.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
