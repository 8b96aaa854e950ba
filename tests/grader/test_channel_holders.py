"""Before each cell the warm worker reads, from /proc, who holds the grader's two pipes: the job's child with
exactly the descriptors it was given and no other process of the job. Each way of holding them otherwise is
reported, and an honest child is not."""

from __future__ import annotations

import os
import signal
import time

from grader.inside.channel import _channel_holders


def job(misbehave) -> tuple[list[str], tuple[int, int]]:
    """What `_channel_holders` finds of a child that did `misbehave(cmd, res)` to the pipes it was given (its
    pid written CHILD), and the child's descriptor numbers for them."""
    cmd, res = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
    ready = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(cmd[1])
            os.close(res[0])
            os.close(ready[0])
            misbehave(cmd[0], res[1])
            os.write(ready[1], b"x")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(cmd[0])
    os.close(res[1])
    os.close(ready[1])
    os.read(ready[0], 1)
    time.sleep(0.2)  # a grandchild's exec (below) is done by now
    ours = {cmd[1]: os.readlink(f"/proc/self/fd/{cmd[1]}"), res[0]: os.readlink(f"/proc/self/fd/{res[0]}")}
    found = _channel_holders(pid, set(ours.values()), {cmd[0]: ours[cmd[1]], res[1]: ours[res[0]]})
    os.killpg(pid, signal.SIGKILL) if misbehave is grandchild else os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    for fd in (cmd[1], res[0], ready[0]):
        os.close(fd)
    return [f.replace(str(pid), "CHILD") for f in found], (cmd[0], res[1])


def honest(c, r):
    pass


def dup(c, r):
    os.dup(r)


def replaced(c, r):
    other = os.pipe()
    os.dup2(other[1], r)


def closed(c, r):
    os.close(c)


def grandchild(c, r):
    os.setpgid(0, 0)
    os.set_inheritable(c, True)
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "60"])


def test_every_other_hold_on_the_grader_channel_is_reported_and_an_honest_child_is_not():
    assert job(honest)[0] == []
    found, _ = job(dup)
    assert len(found) == 1 and found[0].startswith("process CHILD holds the grader's channel as descriptor "), found
    found, (_, res) = job(replaced)
    assert found == [f"descriptor {res} of the grader's channel was replaced"]
    found, (cmd, _) = job(closed)
    assert found == [f"descriptor {cmd} of the grader's channel was closed"]
    found, _ = job(grandchild)
    assert len(found) == 1 and "holds the grader's channel as descriptor" in found[0] \
        and not found[0].startswith("process CHILD "), found
