"""Where a local pool's jobs go: to the worker that holds their notebook's template.

A worker makes a notebook's template on its first job of it (grader/inside/templates.py), which costs that
notebook's opening run, seconds where the opening launches processes. So a job goes to an idle worker that
holds its notebook's template; a worker that holds none of the waiting jobs' templates takes a job whose
notebook has no template yet, or makes another template of a notebook only when that notebook's jobs still to
come would keep its holders busy for more than twice what the template cost (`worth_another`). A notebook whose
template cannot be forked (its jobs come back run in full) has no holders: its jobs go to any free worker.
Where a worker's template stopped short of the opening (a cell there left a thread), the next workers to make
one are told (`cuts`): they stop there at once, without running that cell and waiting for its thread to end.
"""

from __future__ import annotations

from collections.abc import Callable

from grader.job import Cut
from grader.wire import RawResult


class Placement:
    """What a local pool knows of its workers' templates: who holds each notebook's, what one cost to make,
    what the notebook's jobs take, and how many of them are still to come. Not thread-safe: the pool calls it
    under its lock."""

    def __init__(self) -> None:
        self.holders: dict[str, set] = {}  # the workers that have run a job from each notebook's opening
        self.made: dict[str, float] = {}  # what a template of the notebook cost: seconds, wall or CPU
        self.spent: dict[str, tuple[int, float]] = {}  # its forked jobs (count, seconds), template making aside
        self.left: dict[str, int] = {}  # its jobs not taken yet, as the batch announced them
        self.in_full: set[str] = set()  # notebooks whose template could not be forked
        self.cuts: dict[str, Cut] = {}  # where a notebook's template stopped short of its opening, once one did

    def expect(self, counts: dict[str, int] | None) -> None:
        """How many jobs of each notebook the next run will give (None: not known; the waiting ones count)."""
        self.left = dict(counts or {})

    def choose(self, job, idle: list, waiting: list) -> object | None:
        """Which of the `idle` workers takes `job` now (None: wait)."""

        def another() -> bool:  # asked only for a job whose notebook has holders
            nb = job.key.notebook
            n, total = self.spent.get(nb, (0, 0.0))
            now = sum(1 for other in waiting if other.prefix and other.key.notebook == nb)
            return worth_another(max(self.left.get(nb, 0), now), total / n if n else None,
                                 len(self.holders.get(nb, ())), self.made.get(nb))

        return worker_for(job, idle, waiting, self.holders, another)

    def taken(self, job, worker) -> bool:
        """`worker` takes `job`: whether the job makes its notebook's template there."""
        if not job.prefix:
            return False
        nb = job.key.notebook
        self.left[nb] = self.left.get(nb, 1) - 1
        if nb in self.in_full:
            return False
        makes = worker not in self.holders.get(nb, ())
        self.holders.setdefault(nb, set()).add(worker)
        return makes

    def learn(self, job, raw: RawResult, makes: bool) -> None:
        """What `job`'s run says of its notebook's template: its cost and its jobs', or that it cannot be used."""
        if not job.prefix:
            return
        nb = job.key.notebook
        if raw.prefix.get("how") == "full":  # no fork from its opening here: nothing for a job to wait for
            self.in_full.add(nb)
            self.holders.pop(nb, None)
            return
        made = [v for v in (raw.prefix.get("template_seconds"), raw.prefix.get("template_cpu_seconds"))
                if type(v) in (int, float)]
        if raw.prefix.get("how") != "forked" or not made:
            return
        if raw.prefix.get("shortened") and type(raw.prefix.get("cells")) is float:
            self.cuts[nb] = Cut(int(raw.prefix["cells"]), raw.prefix["shortened"])
        # Its wall time, or its CPU where that was more (an opening's launched processes kept other cores busy,
        # from the other workers' jobs)
        self.made[nb] = max(self.made.get(nb, 0.0), *made)
        if not makes:  # the job that made the template ran its opening too
            n, total = self.spent.get(nb, (0, 0.0))
            self.spent[nb] = (n + 1, total + raw.seconds)


def worker_for(job, idle: list, waiting: list, holders: dict[str, set],
               another: Callable[[], bool] = lambda: True) -> object | None:
    """Which of the `idle` workers takes `job` (None: wait for another): one that holds the template of its
    notebook (`holders`); else, if no worker holds one or making another is worth it (`another()`), one that
    holds none of the other `waiting` jobs' templates (they would wait for it); else none."""
    mine = holders.get(job.key.notebook, set()) if job.prefix else set()
    for w in idle:
        if w in mine:
            return w
    if mine and not another():
        return None
    for w in idle:
        if not any(other.prefix and w in holders.get(other.key.notebook, ()) for other in waiting if other is not job):
            return w
    return None


def worth_another(left: int, job_seconds: float | None, holders: int, template_seconds: float | None) -> bool:
    """Whether one more worker should make a notebook's template, held by `holders` workers now: only when its
    `left` jobs still to come, `job_seconds` each, would keep the holders busy for more than twice what the
    template costs to make (`template_seconds`: its wall time, or its CPU where its launched processes spent
    more). A new template takes only the jobs still left once it is made, and while it is made its opening
    takes CPU the holders' jobs would have had: at twice its cost, the notebook's jobs end a quarter sooner.
    Otherwise an idle worker waits for a job of its own templates, or the batch's end. Not known yet (its first
    template still being made, or its first jobs running): no."""
    if job_seconds is None or template_seconds is None:
        return False
    return left * job_seconds / max(1, holders) > 2 * template_seconds
