"""Grading on a Dask cluster against the local pool, one run.

    .venv/bin/python benchmarks/cluster_grading.py [--n 40] [--chapter 01-tensors]

Three throw-away copies of the course with the same N submissions (benchmarks/grading_speed.py's mix), graded
end to end by `python -m grader autograde`: on the local pool with two workers; on a TLS Dask cluster of a
scheduler and two single-threaded workers started with Dask's own command line, each in its own folder with
its own copy of the grader (tests/helpers/dask_cluster.py); and on the same kind of cluster with one worker
SIGKILLed once half the class is recorded. Prints each wall time and whether every score equals the local
pool's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.grading_speed import build, prepare, scores  # noqa: E402
from grader.cluster import make_certs  # noqa: E402
from tests.helpers.dask_cluster import Cluster  # noqa: E402


def grade(root: Path, chapter: str, *extra: str) -> float:
    cmd = [sys.executable, "-m", "grader", "--root", str(root), "autograde", chapter, *extra]
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall


def on_cluster(base: Path, certs: Path, root: Path, chapter: str, kill_at: int | None) -> tuple[float, float, bool]:
    """(cluster start-up, grading wall time, whether the kill landed) on a fresh cluster."""
    t0 = time.monotonic()
    cluster = Cluster(base, certs)
    try:
        cluster.add_worker("w1")
        cluster.add_worker("w2")
        cluster.wait_for(2)
        started = time.monotonic() - t0
        watcher = None
        if kill_at is not None:
            def watch():
                while len(list((root / "autograded").glob("*/*/.torchcourse-grade.json"))) < kill_at:
                    time.sleep(0.1)
                cluster.kill("w2")
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
        wall = grade(root, chapter, "--scheduler", cluster.address, "--certs", str(certs))
        return started, wall, "w2" not in cluster.procs
    finally:
        cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--chapter", default="01-tensors")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        roots = {}
        for name in ("local", "dask", "killed"):
            roots[name] = prepare(tmp / name, args.chapter)
            build(roots[name], args.chapter, args.n)
        certs = tmp / "certs"
        make_certs(certs)
        local = grade(roots["local"], args.chapter, "--workers", "2")
        print(f"local pool, 2 workers: {args.n} submissions in {local:.1f} s", flush=True)
        want = scores(roots["local"], args.chapter)
        (tmp / "c1").mkdir()
        up, wall, _ = on_cluster(tmp / "c1", certs, roots["dask"], args.chapter, None)
        same = scores(roots["dask"], args.chapter) == want
        print(f"Dask, scheduler + 2 single-threaded workers (TLS): {wall:.1f} s (cluster start-up {up:.1f} s "
              f"before it); scores identical to the local pool's: {same}", flush=True)
        (tmp / "c2").mkdir()
        up, wall, landed = on_cluster(tmp / "c2", certs, roots["killed"], args.chapter, args.n // 2)
        same = scores(roots["killed"], args.chapter) == want
        print(f"Dask, worker w2 SIGKILLed at {args.n // 2} recorded (landed: {landed}): {wall:.1f} s; "
              f"scores identical to the local pool's: {same}", flush=True)


if __name__ == "__main__":
    main()
