"""Several ranks of a real ``gloo`` process group as threads of one process (3.3, exercise 5).

``torch.distributed``'s default group is one per process, so running N ranks from a notebook
cell normally means launching N processes (section 2 does, with ``torchrun``). For an exercise
that a checks cell runs many times, this builds one ``ProcessGroupGloo`` per rank over a shared
in-memory store and drives each from its own thread: the collectives are gloo's own, sent over
loopback TCP, and nothing is mocked. Code written for it takes the group as an argument
(``dist.all_reduce(t, group=group)``, ``group.size()``), as code for ``torchrun`` would take
``dist.group.WORLD``.
"""

from __future__ import annotations

import atexit
import threading
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch.distributed as dist

_runs = 0  # each run gets its own key prefix, so no rank ever reads an earlier run's rendezvous keys
_lock = threading.Lock()
_closing: set[threading.Thread] = set()  # ranks that returned, closing their groups


@atexit.register
def _let_groups_close() -> None:
    # A daemon thread still inside gloo's teardown when the interpreter finalises aborts the process
    # ("terminate called without an active exception"): a script that ends right after run_ranks waits for
    # its ranks' groups to close. A rank stuck in a collective is not waited for: it is not in _closing.
    for t in list(_closing):
        t.join(5.0)


def run_ranks(world_size: int, fn: Callable[[int, Any], Any], *, timeout_s: float = 10.0) -> list:
    """``[fn(rank, group) for each rank]``, the ranks running at once in threads of one gloo group.

    Returns when every rank has returned; their groups close in their threads just after. A rank that
    raises re-raises here (the lowest rank's error). A rank still waiting after
    ``timeout_s`` (a collective another rank never joined) becomes a ``TimeoutError``: gloo's
    own timeout, the same number, ends the waiting thread.
    """
    global _runs
    with _lock:
        _runs += 1
        prefix = f"run{_runs}"
    store = dist.PrefixStore(prefix, dist.HashStore())
    results: list = [None] * world_size
    errors: dict[int, BaseException] = {}
    returned = [threading.Event() for _ in range(world_size)]
    made = threading.Barrier(world_size)
    unmade: list[int] = []

    def rank_main(rank: int) -> None:
        group = None
        try:
            try:
                group = dist.ProcessGroupGloo(store, rank, world_size, timedelta(seconds=timeout_s))
            except BaseException:
                unmade.append(rank)
                raise
            finally:
                # No rank uses or closes its group before every rank has made its own. gloo connects a group
                # without a barrier: a rank whose connections were all made could return and close them (a run
                # that calls no collective, or one that fails at once) while a peer was still finishing the
                # same connection, which then failed there ("Connection closed by peer").
                made.wait(timeout_s + 5.0)
            if unmade:  # the group is not whole: its error is the caller's, and fn does not run
                return
            results[rank] = fn(rank, group)
        except BaseException as exc:  # reported by the caller's thread, which the learner sees
            # A traceback keeps its frames' variables, the group among them (fn's argument), and so gloo's
            # threads, alive until a garbage collection: cleared, the group ends with this thread, as it does
            # after a rank that returns. The traceback's lines stay.
            traceback.clear_frames(exc.__traceback__)
            errors[rank] = exc
        finally:
            # The caller goes on from here. The group's teardown ends this thread a moment later: gloo waits a
            # tick of its event loop (10 ms) for each connection it closes, one after another, without the GIL.
            returned[rank].set()
            group = None

    threads = [threading.Thread(target=rank_main, args=(r,), daemon=True, name=f"rank {r}")
               for r in range(world_size)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout_s + 5.0
    for done in returned:
        done.wait(max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t, done in zip(threads, returned) if not done.is_set()]
    with _lock:
        _closing.difference_update([t for t in _closing if not t.is_alive()])
        _closing.update(t for t, done in zip(threads, returned) if done.is_set())
    if stuck:
        raise TimeoutError(f"{', '.join(stuck)} still running after {timeout_s:.0f} s: "
                           "does every rank call the same collectives in the same order?")
    if errors:
        raise errors[min(errors)]
    return results
