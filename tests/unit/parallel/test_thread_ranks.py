"""run_ranks: several ranks of one real gloo group as threads (3.3, exercise 5)."""

import gc
import os
import subprocess
import sys
import time

import pytest
import torch
import torch.distributed as dist

from torchcourse.parallel.thread_ranks import run_ranks


def test_each_rank_sees_its_rank_and_the_group_size():
    assert run_ranks(3, lambda rank, group: (rank, group.rank(), group.size())) == [(0, 0, 3), (1, 1, 3), (2, 2, 3)]


def test_all_reduce_sums_over_the_ranks():
    def on_rank(rank, group):
        t = torch.tensor([float(rank + 1), 10.0 * rank])
        dist.all_reduce(t, group=group)
        return t.tolist()

    assert run_ranks(4, on_rank) == [[10.0, 60.0]] * 4


def test_consecutive_runs_do_not_share_a_rendezvous():
    for _ in range(3):
        assert run_ranks(2, lambda rank, group: group.size()) == [2, 2]


def test_a_rank_error_is_raised_in_the_caller():
    def on_rank(rank, group):
        if rank == 1:
            raise ValueError("rank 1 failed")
        return rank

    with pytest.raises(ValueError, match="rank 1 failed"):
        run_ranks(2, on_rank)


def test_a_collective_only_one_rank_joins_ends_with_an_error_not_a_hang():
    def on_rank(rank, group):
        if rank == 0:
            dist.all_reduce(torch.ones(1), group=group)
        return rank

    with pytest.raises((RuntimeError, TimeoutError)):
        run_ranks(2, on_rank, timeout_s=1.0)


def _gloo_threads(within: float = 0.0):
    """The names of this process's gloo threads, once none is left or after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        names = []
        for t in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{t}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                pass
        gloo = [n for n in names if "gloo" in n]
        if not gloo or time.monotonic() >= deadline:
            return gloo
        time.sleep(0.01)


def test_a_failed_run_leaves_no_gloo_thread_behind_without_a_garbage_collection():
    # The grader forks a notebook's opening only from a process with one thread: a cell that shows a failing
    # collective (3.3's AVG of an integer tensor) must not leave the groups' threads waiting for a collection.
    gc.collect()
    gc.disable()
    try:
        assert _gloo_threads() == []
        with pytest.raises(RuntimeError):
            run_ranks(2, lambda rank, group: dist.all_reduce(torch.tensor([rank]), op=dist.ReduceOp.AVG,
                                                              group=group))
        assert _gloo_threads(within=2.0) == []
        with pytest.raises(ValueError, match="rank 0 failed"):
            run_ranks(2, lambda rank, group: (_ for _ in ()).throw(ValueError(f"rank {rank} failed")))
        assert _gloo_threads(within=2.0) == []
    finally:
        gc.enable()


def test_a_run_returns_before_its_groups_have_closed_and_they_close_on_their_own():
    """The caller does not wait for gloo's teardown (a tick of its event loop per connection), which ends the
    ranks' threads just after."""
    started = time.monotonic()
    assert run_ranks(4, lambda rank, group: group.size()) == [4] * 4
    assert time.monotonic() - started < 10.0
    assert _gloo_threads(within=2.0) == []


def test_a_script_that_ends_right_after_a_run_exits_cleanly():
    """The interpreter waits for the ranks' groups to close: a daemon thread inside gloo's teardown at
    finalisation would abort the process ("terminate called without an active exception", SIGABRT)."""
    script = ("from torchcourse.parallel.thread_ranks import run_ranks\n"
              "for n in (2, 3, 4):\n    run_ranks(n, lambda rank, group: group.size())\nprint('ran')\n")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert "terminate called" not in done.stderr, done.stderr[-2000:]
        assert (done.returncode, done.stdout.strip()) == (0, "ran"), done.stderr[-2000:]


def test_ranks_that_return_at_once_never_break_a_connection_a_peer_is_still_making():
    """A rank whose own connections are made could return and close its group while a peer was still finishing
    one of them, which then failed there ("Connection closed by peer"): on a busy machine, a percent or two of
    such runs. No rank runs fn before every rank's group is made. The machine is made busy here, for real; the
    runs go in a network namespace of their own (bwrap --unshare-net), so that their thousands of loopback ports
    cannot take one that another test's kernel was just given."""
    script = ("from torchcourse.parallel.thread_ranks import run_ranks\n"
              "failed = []\n"
              "for k in range(600):\n"
              "    try:\n"
              "        run_ranks(2 + k % 3, lambda rank, group: group.size(), timeout_s=10.0)\n"
              "    except (RuntimeError, TimeoutError) as exc:\n"
              "        failed.append(str(exc)[:200])\n"
              "        if len(failed) == 3:\n"
              "            break\n"
              "print(failed)\n")
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)]
    try:
        done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--unshare-net", sys.executable, "-c", script],
                              capture_output=True, text=True, timeout=600)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), (done.stdout, done.stderr[-2000:])
