"""Where sandboxed jobs run: warm local workers, or a Dask cluster given by --scheduler.

Both pools take an iterable of `Job`s and yield `(job, RawResult)` as jobs finish. Judging
and the gradebook stay in the calling process; a pool only computes.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from grader.job import Cut
from grader.placement import Placement
from grader.sandbox import Limits, SandboxWorker
from grader.wire import JobKey, RawResult, RunStatus


@dataclass
class Job:
    key: JobKey
    cells: list[str]
    seed: int
    watch: list[int]
    files: dict[str, bytes] | None = None
    # The release's cells before the notebook's first answer cell, when this submission opens with exactly
    # these (grader.autograde): the worker runs them once a batch and forks the job from there.
    prefix: list[str] | None = None
    # The translated release the notebook was submitted from (grader.sanitise.submitted_language): the checks'
    # messages are written in it. None: English.
    language: str | None = None


class LocalPool:
    """`n` warm sandbox workers on this machine (torch imported once each)."""

    def __init__(self, n: int, limits: Limits, wait: bool = True, preload: tuple[str, ...] = ()) -> None:
        self.n = max(1, int(n))
        self.limits = limits
        self.idle: list[SandboxWorker] = []
        self.changed = threading.Condition()
        self.waiting: list[Job] = []
        self.placement = Placement()  # where each job goes: where its notebook's template is
        # Each worker process keeps to a CPU of its own when there are enough; its templates get every CPU back,
        # and its jobs too unless every CPU has a worker (why: grader/inside/confine.py, _keep_to_cpu).
        cpus = sorted(os.sched_getaffinity(0))
        pin = self.n <= len(cpus)
        # Started side by side; each spends seconds importing torch.
        self.all = [SandboxWorker(limits, slot, wait=False, preload=preload, cpu=cpus[slot] if pin else None,
                                  jobs_on_cpu=self.n == len(cpus)) for slot in range(self.n)]
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        for w in self.all:
            w.wait_ready()
            self._give_back(w)

    def _one(self, job: Job) -> RawResult:
        w, makes, cut = self._take(job)
        try:
            try:
                answered = w.dispatch(job.cells, job.seed, job.watch, job.files, job.prefix, job.language, cut)
            finally:
                self._give_back(w)  # the worker's next job runs while this one's results are read
            raw = w.collect(answered)
        except Exception as exc:  # the grader's own trouble (disk full, ...): this job fails, the batch goes on
            return RawResult(RunStatus.WORKER_ERROR, {}, error=f"{type(exc).__name__}: {exc}")
        with self.changed:
            self.placement.learn(job, raw, makes)
            self.changed.notify_all()  # a job that waited for its notebook's holders may now go elsewhere
        return raw

    def _take(self, job: Job) -> tuple[SandboxWorker, bool, Cut | None]:
        """An idle worker for `job` (`Placement.choose`), waiting for one if none is, whether the job makes
        its notebook's template there, and where another worker's template of it stopped short."""
        with self.changed:
            self.waiting.append(job)
            while (w := self.placement.choose(job, self.idle, self.waiting)) is None:
                self.changed.wait()
            self.waiting = [other for other in self.waiting if other is not job]  # by identity: Jobs compare by value
            self.idle.remove(w)
            makes = self.placement.taken(job, w)
            # One job fewer waits: a worker it wanted (and so kept from the others) may now suit another.
            self.changed.notify_all()
            return w, makes, self.placement.cuts.get(job.key.notebook) if job.prefix else None

    def _give_back(self, w: SandboxWorker) -> None:
        with self.changed:
            self.idle.append(w)
            self.changed.notify_all()

    def run(self, jobs: Iterable[Job], expect: dict[str, int] | None = None) -> Iterator[tuple[Job, RawResult]]:
        """`(job, result)` as jobs finish. `expect`: how many jobs of each notebook `jobs` will give, if known."""
        with self.changed:
            self.placement.expect(expect)
        it = iter(jobs)
        inflight: dict[Future, Job] = {}
        # A thread for every job in flight, four times as many as workers: while each worker's thread waits for
        # its job, others hold the next jobs, ready to send one the moment a worker is free (with one thread a
        # worker, a worker waited for its thread to read back the last job's results first, idle), and a free
        # worker finds among them a job whose template it holds (`_take`).
        ahead = 4 * self.n
        with ThreadPoolExecutor(ahead) as ex:
            while True:
                while len(inflight) < ahead:
                    job = next(it, None)
                    if job is None:
                        break
                    inflight[ex.submit(self._one, job)] = job
                if not inflight:
                    return
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                for fut in done:
                    yield inflight.pop(fut), fut.result()

    def close(self) -> None:
        for w in self.all:
            w.kill()
        for w in self.all:
            w.close()


def with_one_retry(pool: LocalPool | DaskPool, jobs: Iterable[Job],
                   expect: dict[str, int] | None = None) -> Iterator[tuple[Job, RawResult, bool]]:
    """`(job, result, final)` for every job as `pool` runs it (`expect`: how many of each notebook, if known); a
    job that failed for a grader-side reason (`RunStatus.grader_side`: the grader's trouble, not the learner's)
    runs once more, after the rest, and its failed attempt comes first with `final` False."""
    retry: list[Job] = []
    for job, raw in pool.run(jobs, expect):
        if raw.status.grader_side:
            retry.append(job)
        yield job, raw, not raw.status.grader_side
    for job, raw in pool.run(retry):
        yield job, raw, True


# --------------------------------------------------------------------------- Dask

_local = threading.local()


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away mid-batch: what finished is recorded, a plain rerun grades the rest."""


def run_on_dask_worker(cells: list[str], seed: int, watch: list[int], limits: dict,
                       files: dict[str, bytes] | None = None, preload: tuple[str, ...] = (),
                       expect: dict | None = None, prefix: list[str] | None = None,
                       language: str | None = None) -> dict:
    """A Dask task, sent by reference: the worker runs it with the grader installed there. One job in this Dask
    worker's own warm sandbox worker (never in the Dask thread), once its course is the grader's (`expect`:
    a worker that joined after the batch's check could differ)."""
    from grader.cluster import differences, installed

    if expect is not None and (diff := differences(installed(), expect)):
        return RawResult(RunStatus.WORKER_ERROR, {}, error="this Dask worker runs " + "; ".join(diff)).to_dict()
    lim = Limits(**limits)
    preload = tuple(preload)
    w = getattr(_local, "worker", None)
    if w is None or w.limits != lim or w.preload != SandboxWorker.preload_of(preload):
        if w is not None:
            w.close()
        w = _local.worker = SandboxWorker(lim, slot=threading.get_ident() % 1000, preload=preload)
        atexit.register(w.close)
    return w.run(cells, seed, watch, files, prefix, language).to_dict()


class DaskPool:
    """The same jobs on an existing Dask cluster (for classes that outgrow one machine): TLS with the course's
    certificates only, and only once every worker runs the grader's own course (`grader.cluster`)."""

    def __init__(self, address: str, limits: Limits, preload: tuple[str, ...] = (), certs: str | None = None) -> None:
        import logging

        from grader.cluster import connect, installed, verify_cluster

        self.address = address
        self.client = connect(address, certs)
        # A lost scheduler is one line of the grader's (SchedulerLost), not Dask's log as well (set once
        # distributed is imported: its logging configuration is applied then).
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        try:
            verify_cluster(self.client)
        except BaseException:
            self.client.close()
            raise
        self.expect = {k: v for k, v in installed().items() if k != "where"}
        self.wait_ready = lambda: None
        self.limits, self.preload = limits, preload

    def run(self, jobs: Iterable[Job], expect: dict[str, int] | None = None) -> Iterator[tuple[Job, RawResult]]:
        """`(job, result)` as jobs finish (`expect` is the local pool's hint; the scheduler places Dask's jobs)."""
        from distributed import as_completed
        from distributed.client import FutureCancelledError

        futures = {}
        for job in jobs:
            fut = self.client.submit(run_on_dask_worker, job.cells, job.seed, job.watch, self.limits.to_dict(),
                                     job.files, self.preload, self.expect, job.prefix, job.language, pure=False,
                                     retries=0)
            futures[fut] = job
        for fut in as_completed(list(futures)):
            job = futures.pop(fut)
            try:
                raw = RawResult.from_dict(fut.result())
            except (FutureCancelledError, OSError) as exc:
                if self.client.status in ("running", "connecting") and self._scheduler_answers():
                    raw = RawResult(RunStatus.WORKER_DIED, {}, error=f"{type(exc).__name__}: {exc}")
                else:
                    raise SchedulerLost(f"the Dask scheduler at {self.address} was lost mid-batch; every finished "
                                        "submission is recorded: run autograde again to grade the rest") from None
            except Exception as exc:  # a lost worker (KilledWorker): the job failed, the batch goes on
                raw = RawResult(RunStatus.WORKER_DIED, {}, error=f"{type(exc).__name__}: {exc}")
            del fut  # a held future is recomputed if its worker dies later
            yield job, raw

    def _scheduler_answers(self) -> bool:
        try:
            self.client.scheduler_info(n_workers=0)
            return True
        except Exception:
            return False

    def close(self) -> None:
        self.client.close()
