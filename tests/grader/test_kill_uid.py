"""The end of a job kills every process of its uid from a thread of the warm worker that takes that uid for
itself (no fork of the worker): the job's processes die, the worker's own ids stay root in every thread."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from grader.inside import cleanup

UID = 1_999_999_001


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the worker kills a uid of its own")
def test_a_jobs_processes_are_killed_and_the_worker_stays_root(monkeypatch):
    # Two processes of the job's uid: one in its own session (as `setsid` from a cell would make), one orphaned.
    a = subprocess.Popen(["sleep", "120"], user=UID, group=UID, start_new_session=True)
    b = subprocess.Popen(["sh", "-c", "sleep 120 & echo $!"], user=UID, group=UID, stdout=subprocess.PIPE,
                         text=True)
    orphan = int(b.stdout.readline())
    b.wait()
    b.stdout.close()
    mine = subprocess.Popen(["sleep", "120"])  # root's, like the worker: must survive
    try:
        if cleanup.SYS_SETRESUID is not None:
            def forbidden():
                raise AssertionError("the worker forked for the kill")

            monkeypatch.setattr(os, "fork", forbidden)
        cleanup._kill_uid(UID, a.pid)
        monkeypatch.undo()
        a.wait(timeout=10)
        for _ in range(100):
            try:
                os.kill(orphan, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the orphan of the job's uid survived")
        assert mine.poll() is None, "a root process was killed"
    finally:
        mine.kill()
        mine.wait()
    ids = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/status") as f:
            ids |= {tuple(line.split()[1:]) for line in f if line.startswith("Uid:")}
    assert os.getresuid() == (0, 0, 0) and ids == {("0", "0", "0", "0")}, (os.getresuid(), ids)
    assert a.returncode == -9
    if os.uname().machine in ("x86_64", "aarch64"):
        assert cleanup.SYS_SETRESUID is not None  # the thread, not a fork of the worker
