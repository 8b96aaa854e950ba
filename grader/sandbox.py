"""Run one submission's cells under limits and return what the cells claimed, nothing else.

A `SandboxWorker` owns one warm worker process (`grader/inside/`, torch imported once)
started inside bubblewrap when it is available: its own PID, network, IPC and UTS
namespaces, and a filesystem of the entries `grader/inside/policy.py` lists (/usr, a few files
of /etc, an empty /tmp, the virtual environment, the course library, the worker and the jobs'
folder), so the gradebook, solutions/, references and other submissions are simply absent.
Each job is a fresh forked child of the worker that drops to a uid of its own with no
capabilities, under memory, CPU-time, process-count and file-size limits and per-cell and
per-notebook wall budgets (`policy.Limits`), in IPC, mount and network namespaces of its own:
its folder and /dev/shm are one tmpfs of `Limits.tmp_mb`, gone with the job like its shared
memory, message queues and semaphores.

Missing facilities are detected, reported by `facilities()` and warned about; the sandbox
is never weakened silently.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

from grader import hostlimits
from grader.course import LIBRARY_MODULE
from grader.facilities import SandboxWarning, facilities, warn_missing
from grader.inside.channel import descendants
from grader.inside.policy import Limits
from grader.job import Answered, Cut, parse_results, split_cells, write_job
from grader.wire import RawResult, RunStatus
from grader.worker_start import Cgroups, remove_stale_jobs, start_worker

# Imported from here by other modules and tests: the sandbox's public face.
__all__ = ["Limits", "RawResult", "SandboxWarning", "SandboxWorker", "facilities", "parse_results", "preload_errors",
           "split_cells", "warn_missing"]


def _json_object(line: bytes | None) -> dict:
    try:
        obj = json.loads(line) if line else {}
    except ValueError:
        return {}
    return obj if type(obj) is dict else {}


def preload_errors(ready: dict) -> list[str]:
    """``module: error`` for each module the worker's ready line says it could not import."""
    errors = ready.get("preload_errors")
    if type(errors) is not dict:
        return []
    return [f"{str(name)[:200]}: {str(why)[:500]}" for name, why in sorted(errors.items())]


class SandboxWorker:
    """One warm worker process; `run` grades one notebook's cells at a time."""

    def __init__(self, limits: Limits | None = None, slot: int = 0, wait: bool = True,
                 preload: tuple[str, ...] = (), cpu: int | None = None, jobs_on_cpu: bool = False) -> None:
        self.limits = limits or Limits()
        self.cpu = cpu  # the one CPU the worker process itself runs on (its templates use all): see LocalPool
        self.jobs_on_cpu = jobs_on_cpu  # and its jobs' processes too
        # The course library's modules the worker imports before any job (all of them when empty).
        self.preload = self.preload_of(preload)
        self.fac = facilities()
        remove_stale_jobs()
        self.jobs_root = Path(tempfile.mkdtemp(prefix=f"torchcourse-jobs-{os.getpid()}-"))
        os.chmod(self.jobs_root, 0o711)
        # A uid of our own per worker: RLIMIT_NPROC counts per uid, and cleanup kills every process of it.
        self.uid = random.randrange(200_000, 2_000_000_000) + slot if self.fac.drop_uid else None
        self.counter = 0
        self.preload_errors: list[str] = []   # what the worker could not import, from its ready line
        self.isolate = False                  # per-job namespaces (grader/inside/confine.py _fresh_job_space)
        self.proc: subprocess.Popen | None = None
        self.cgroups: Cgroups | None = None
        self.log = open(self.jobs_root.with_suffix(".log"), "w+b")
        self.spawn()
        if wait:
            self.wait_ready()

    @staticmethod
    def preload_of(modules) -> tuple[str, ...]:
        """What of `modules` the worker may be asked to import: names of the course library's modules only."""
        return tuple(m for m in modules if LIBRARY_MODULE.fullmatch(m))

    # ----------------------------------------------------------------- process
    def start(self) -> None:
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the worker process (`worker_start.start_worker`); `wait_ready` waits for its ready line."""
        self.proc = start_worker(self.fac.bwrap, self.jobs_root, self.preload, self.cpu, self.log, self.jobs_on_cpu)
        self.pending = b""  # what was read of the worker's stdout beyond the last whole line

    def wait_ready(self) -> None:
        line = self._readline(timeout=180)
        ready = _json_object(line)
        if not ready.get("ready"):
            tail = self.log_tail()  # before close(), which closes the log
            self.close()
            raise RuntimeError("the sandbox worker did not start:\n" + tail)
        self.preload_errors = preload_errors(ready)
        # Per-job namespaces only where the grader's probe and the worker's own (inside the sandbox) agree.
        why = ready.get("job_ns")
        self.isolate = self.fac.job_ns and why == ""
        if self.fac.job_ns and not self.isolate:
            warnings.warn(f"sandbox: the worker cannot give each job IPC, mount and network namespaces of its own "
                          f"({str(why)[:300] if type(why) is str else 'it did not say'}): a job's shared memory, "
                          "queues and temp files are removed after it by uid, and its temp space is limited per "
                          "file, not in total", SandboxWarning, stacklevel=2)
        if self.fac.cgroups and self.proc is not None:
            self.cgroups = Cgroups(f"torchcourse-{os.getpid()}-{self.jobs_root.name}", self.proc.pid, self.limits)
        if self.fac.root and self.proc is not None:  # set from outside: inside bubblewrap the worker may not
            hostlimits.protect_from_oom(descendants(self.proc.pid))

    def log_tail(self, n: int = 4000) -> str:
        self.log.flush()
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - n))
        return self.log.read().decode("utf-8", "replace")

    def _readline(self, timeout: float) -> bytes | None:
        """The worker's next line on stdout (its ready line, then one reply per job), or None at a timeout
        or end of file. Read in chunks: a byte at a time cost a system call, and a wait for the GIL while the
        main thread judged, per byte."""
        assert self.proc and self.proc.stdout
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line + b"\n"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        self.close_process_only()
        shutil.rmtree(self.jobs_root, ignore_errors=True)
        for extra in (".mpl", ".ipython"):
            shutil.rmtree(str(self.jobs_root) + extra, ignore_errors=True)
        try:
            self.log.close()
            os.unlink(self.jobs_root.with_suffix(".log"))
        except OSError:
            pass

    def __enter__(self) -> SandboxWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------- jobs
    def run(self, cells: list[str], seed: int, watch: list[int] = (), files: dict[str, bytes] | None = None,
            prefix: list[str] | None = None, language: str | None = None) -> RawResult:
        """Run `cells` in a fresh sandboxed child; never raises for anything the learner did.

        `files` (name -> bytes) are the chapter's own data files, released to learners too, put
        beside the cells as nbgrader puts them beside an autograded notebook. `prefix`: the release's cells
        before the notebook's first answer cell, given only when `cells` open with exactly these; the worker
        runs them once in a template and forks the job's child from there (grader/inside/template.py).
        `language`: the translated release the notebook came from; the checks' messages are written in it."""
        return self.collect(self.dispatch(cells, seed, watch, files, prefix, language))

    def dispatch(self, cells: list[str], seed: int, watch: list[int] = (), files: dict[str, bytes] | None = None,
                 prefix: list[str] | None = None, language: str | None = None, cut: Cut | None = None) -> Answered:
        """`run`'s first half: the job runs and the worker answers. The worker is free for the next job when
        this returns; `collect` reads and removes what this job left (a pool does that while the next runs,
        so the worker does not wait for it). `cut`: where another worker's template of this opening stopped."""
        answered = self._dispatch(cells, seed, watch, files, prefix, language, cut)
        said = answered.reply.get("prefix")
        if prefix and type(said) is dict and said.get("how") == "again":
            # The worker could not run the job from its template (the opening was not the template's, or the
            # forked child failed before any learner code ran): it runs again, in full.
            answered.remove()
            answered = self._dispatch(cells, seed, watch, files, None, language)
            if answered.died is None:
                answered.reply["prefix"] = {"how": "full", "why": str(said.get("why", ""))[:300]}
        return answered

    def _dispatch(self, cells: list[str], seed: int, watch, files: dict[str, bytes] | None,
                  prefix: list[str] | None, language: str | None = None, cut: Cut | None = None) -> Answered:
        if not self.alive():
            self.start()
        self.counter += 1
        name = f"j{self.counter}"
        outside = self.jobs_root / name
        outside.mkdir(mode=0o700)
        results = self.jobs_root / f"{name}.results.jsonl"  # the worker's (root's), outside the job's folder
        answered = Answered(outside, results, len(cells), list(self.preload_errors))
        try:
            opening = prefix if self.prefix_ok(cells, watch, prefix) else None
            write_job(outside, cells, seed, watch, files, self.uid, opening, language, cut)
            inside = f"/jobs/{name}" if self.fac.bwrap else str(outside)
            spec = {"id": name, "dir": inside, "results": f"/jobs/{results.name}" if self.fac.bwrap else str(results),
                    "uid": self.uid, "gid": self.uid,
                    "netns": (not self.fac.bwrap) and self.fac.root, "isolate": self.isolate,
                    **self.limits.to_dict()}
            assert self.proc and self.proc.stdin
            try:
                self.proc.stdin.write((json.dumps(spec) + "\n").encode())
            except (BrokenPipeError, OSError):
                answered.died = self._died(name)
                return answered
            line = self._readline(timeout=self.limits.budget + 30)
            if line is None:
                answered.died = self._died(name)
                return answered
            answered.reply = json.loads(line)
            return answered
        except BaseException:
            answered.remove()
            raise

    def prefix_ok(self, cells: list[str], watch, prefix: list[str] | None) -> bool:
        """Whether the job may be forked from a template of `prefix`: the sandbox gives each job a uid and
        namespaces of its own, and `cells` open with `prefix` byte for byte, with no checks cell in it."""
        return bool(prefix) and self.isolate and self.uid is not None and len(prefix) <= len(cells) \
            and cells[:len(prefix)] == list(prefix) and all(i >= len(prefix) for i in watch)

    def collect(self, answered: Answered) -> RawResult:
        """`run`'s second half: what the job reported, read from its results file; its files removed."""
        try:
            return answered.died if answered.died is not None else answered.result()
        finally:
            answered.remove()

    def _died(self, name: str) -> RawResult:
        cells = parse_results(self.jobs_root / f"{name}.results.jsonl", 10**6)
        tail = self.log_tail()
        self.close_process_only()
        return RawResult(RunStatus.WORKER_DIED, cells, error="the sandbox worker stopped: " + tail[-500:],
                         preload_errors=list(self.preload_errors))

    def kill(self) -> None:
        """Start the worker's end (close waits for it): a pool kills all its workers first, so that their
        exits, hundreds of MB each to free, overlap."""
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass

    def close_process_only(self) -> None:
        if self.proc is not None:
            self.kill()
            try:
                self.proc.wait(timeout=10)
            except Exception:
                pass
            self.proc = None
        if self.cgroups is not None:
            self.cgroups.remove()
            self.cgroups = None
