"""Which idle worker a local pool's job goes to (grader.pools.worker_for): where its notebook's template is, so
that a batch makes each template on as few workers as finish it soonest (another template of a notebook only
when its jobs left would outlast making it: worth_another), and never a job left waiting while a worker is idle
that no waiting job's template is on and that may make the job's."""

from __future__ import annotations

from grader.pools import Job, worker_for, worth_another
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


def test_a_job_waits_for_its_notebooks_holders_when_another_template_is_not_worth_making():
    a, b = _job("s1", "nb-a"), _job("s1", "nb-b")
    holders = {"nb-a": {"w0"}, "nb-b": {"w0"}}
    assert worker_for(a, ["w1"], [a], holders, another=lambda: False) is None
    assert worker_for(a, ["w1"], [a], holders, another=lambda: True) == "w1"
    # the first template of a notebook is made wherever a worker is free, worth it or not
    assert worker_for(a, ["w1"], [a], {}, another=lambda: False) == "w1"
    # and a worker that holds another waiting job's template stays for that job, however worth it
    assert worker_for(a, ["w0"], [a, b], {"nb-a": {"w1"}, "nb-b": {"w0"}}, another=lambda: True) is None


def test_another_template_is_made_only_when_the_jobs_left_would_outlast_making_it():
    # 35 jobs of 0.44 s on one holder (15.4 s) outlast a 5 s opening: make another
    assert worth_another(35, 0.44, 1, 5.0)
    # on three holders, 5.1 s each: still worth it; on four, 3.9 s: not
    assert worth_another(35, 0.44, 3, 5.0) and not worth_another(35, 0.44, 4, 5.0)
    # 40 jobs of 25 ms (1 s) do not pay for a 3 s opening (processes launched): wait for the holder
    assert not worth_another(40, 0.025, 1, 3.0)
    assert not worth_another(0, 0.44, 1, 0.01)  # nothing left
    assert not worth_another(35, None, 1, 5.0) and not worth_another(35, 0.44, 1, None)  # not known yet
