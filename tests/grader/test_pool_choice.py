"""Which idle worker a local pool's job goes to (grader.pools.worker_for): where its notebook's template is,
so that a batch makes each template on as few workers as keep them all busy, and never a job left waiting
while a worker is idle that no waiting job's template is on."""

from __future__ import annotations

from grader.pools import Job, worker_for
from grader.wire import JobKey


def _job(student: str, notebook: str, prefix: bool = True) -> Job:
    return Job(JobKey(student, notebook), ["a = 1", "b = a"], 0, [], None, ["a = 1"] if prefix else None)


def test_a_job_goes_to_an_idle_worker_that_holds_its_notebooks_template():
    a, b = _job("s1", "nb-a"), _job("s1", "nb-b")
    holders = {"nb-a": {"w0"}, "nb-b": {"w1"}}
    assert worker_for(a, ["w1", "w0"], [a, b], holders) == "w0"
    assert worker_for(b, ["w1", "w0"], [a, b], holders) == "w1"


def test_a_job_waits_rather_than_take_the_worker_another_waiting_job_has_its_template_on():
    a, b = _job("s1", "nb-a"), _job("s1", "nb-b")
    holders = {"nb-a": {"w0"}, "nb-b": {"w1"}}
    assert worker_for(a, ["w1"], [a, b], holders) is None  # w0 is busy: a waits for it, b takes w1
    assert worker_for(b, ["w1"], [a, b], holders) == "w1"


def test_a_job_takes_any_idle_worker_no_waiting_job_wants():
    a = _job("s1", "nb-a")
    assert worker_for(a, ["w1"], [a], {"nb-a": {"w0"}}) == "w1"  # nobody else waits: a makes a second template
    assert worker_for(a, ["w1", "w2"], [a], {}) == "w1"  # the first job of a notebook
    full = _job("s2", "nb-a", prefix=False)  # runs every cell: no template to go to, and none to wait for
    assert worker_for(full, ["w0"], [full, _job("s3", "nb-b")], {"nb-a": {"w0"}, "nb-b": {"w1"}}) == "w0"
    assert worker_for(a, [], [a], {"nb-a": {"w0"}}) is None
