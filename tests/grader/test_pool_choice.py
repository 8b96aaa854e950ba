"""Which idle worker a local pool's job goes to (grader.placement): where its notebook's template is, so
that a batch makes each template on as few workers as finish it soonest (another template of a notebook only
when its jobs left would outlast making it: worth_another), and never a job left waiting while a worker is idle
that no waiting job's template is on and that may make the job's."""

from __future__ import annotations

from grader.job import Cut
from grader.placement import Placement, worker_for, worth_another
from grader.pools import Job
from grader.wire import JobKey, RawResult, RunStatus


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


def test_another_template_is_made_only_when_the_jobs_left_would_outlast_making_it_twice():
    # 35 jobs of 0.44 s on one holder (15.4 s) outlast a 5 s opening twice: make another
    assert worth_another(35, 0.44, 1, 5.0)
    # on two holders, 7.7 s each: not (the new one would take a fifth of the jobs)
    assert not worth_another(35, 0.44, 2, 5.0)
    assert worth_another(40, 0.03, 1, 0.3) and not worth_another(40, 0.03, 3, 0.3)  # chapter 1's cheap openings
    # 40 jobs of 25 ms (1 s) do not pay for a 3 s opening (processes launched): wait for the holder
    assert not worth_another(40, 0.025, 1, 3.0)
    assert not worth_another(0, 0.44, 1, 0.01)  # nothing left
    assert not worth_another(35, None, 1, 5.0) and not worth_another(35, 0.44, 1, None)  # not known yet


def _ran(how: str, seconds: float, template_seconds: float = 5.0, template_cpu: float = 4.0) -> RawResult:
    prefix = {"how": how, "template_seconds": template_seconds, "template_cpu_seconds": template_cpu}
    if how == "full":
        prefix["why"] = "opening cell 3 left a thread running"
    return RawResult(RunStatus.EXITED, {}, seconds=seconds, prefix=prefix)


def test_a_notebook_gets_a_second_template_once_its_costs_are_known_and_say_so():
    p = Placement()
    p.expect({"nb-a": 41})
    jobs = [_job(f"s{i}", "nb-a") for i in range(4)]
    assert p.choose(jobs[0], ["w0", "w1"], jobs) == "w0"
    assert p.taken(jobs[0], "w0") is True  # it makes the template there
    assert p.choose(jobs[1], ["w1"], jobs[1:]) is None  # costs unknown: wait for w0
    p.learn(jobs[0], _ran("forked", 5.6), makes=True)
    assert p.choose(jobs[1], ["w1"], jobs[1:]) is None  # the template's cost is known, the jobs' not yet
    assert p.choose(jobs[1], ["w0", "w1"], jobs[1:]) == "w0" and p.taken(jobs[1], "w0") is False
    p.learn(jobs[1], _ran("forked", 0.44), makes=False)
    # 39 jobs left of 0.44 s on one holder (17 s) outlast the 5 s template twice: w1 makes another
    assert p.choose(jobs[2], ["w1"], jobs[2:]) == "w1" and p.taken(jobs[2], "w1") is True


def test_jobs_that_are_cheap_beside_their_template_wait_for_its_holder():
    p = Placement()
    p.expect({"nb-a": 41})
    first, second = _job("s1", "nb-a"), _job("s2", "nb-a")
    p.taken(first, "w0")
    p.learn(first, _ran("forked", 3.2, template_seconds=3.1), makes=True)
    p.learn(first, _ran("forked", 0.02, template_seconds=3.1), makes=False)
    assert p.choose(second, ["w1"], [second]) is None


def test_a_notebook_whose_template_cannot_be_forked_has_no_holder_to_wait_for():
    p = Placement()
    first, later = _job("s1", "nb-a"), _job("s2", "nb-a")
    p.taken(first, "w0")
    assert p.choose(later, ["w1"], [later]) is None
    p.learn(first, _ran("full", 4.0), makes=True)  # run in full: its opening left a thread
    assert p.choose(later, ["w1"], [later]) == "w1"
    assert p.taken(later, "w1") is False and "nb-a" not in p.holders


def test_a_template_costs_its_cpu_where_its_launched_processes_spent_more_than_its_wall_time():
    p = Placement()
    p.expect({"nb-a": 41})
    first, second = _job("s1", "nb-a"), _job("s2", "nb-a")
    p.taken(first, "w0")
    # 5 s of wall, but 10 s of CPU: the processes its opening launched kept the other cores busy
    p.learn(first, _ran("forked", 5.6, template_seconds=5.0, template_cpu=10.0), makes=True)
    p.learn(first, _ran("forked", 0.44, template_seconds=5.0, template_cpu=10.0), makes=False)
    assert p.choose(second, ["w1"], [second]) is None  # 39 x 0.44 s = 17 s: more than twice 5 s, not twice 10 s


def test_where_one_workers_template_stopped_short_is_passed_to_the_next_that_makes_one():
    p = Placement()
    first, second = _job("s1", "nb-a"), _job("s1", "nb-b")
    p.taken(first, "w0")
    p.learn(first, _ran("forked", 0.5), makes=True)
    assert p.cuts == {}  # its template held the whole opening
    short = _ran("forked", 1.5)
    short.prefix.update(cells=8.0, shortened="opening cell 8 left a thread running")
    p.taken(second, "w0")
    p.learn(second, short, makes=True)
    assert p.cuts == {"nb-b": Cut(8, "opening cell 8 left a thread running")}
