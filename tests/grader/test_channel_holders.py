"""Before each cell the warm worker reads, from /proc, who holds the grader's two pipes: the job's child with
exactly the descriptors it was given and no other process of the job. Each way of holding them otherwise is
reported, and an honest child is not."""

from __future__ import annotations

import json

from tests.helpers.warm_worker import run_with_worker

SCRIPT = r"""
import json, os, signal, time

def job(misbehave):
    cmd, res = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
    ready = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(cmd[1]); os.close(res[0]); os.close(ready[0])
        misbehave(cmd[0], res[1])
        os.write(ready[1], b"x")
        time.sleep(60)
        os._exit(0)
    os.close(cmd[0]); os.close(res[1]); os.close(ready[1])
    os.read(ready[0], 1)
    time.sleep(0.2)  # a grandchild's exec (below) is done by now
    ours = {cmd[1]: os.readlink(f"/proc/self/fd/{cmd[1]}"), res[0]: os.readlink(f"/proc/self/fd/{res[0]}")}
    found = w._channel_holders(pid, set(ours.values()), {cmd[0]: ours[cmd[1]], res[1]: ours[res[0]]})
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

out = {}
for case in (honest, dup, replaced, closed, grandchild):
    found, fds = job(case)
    out[case.__name__] = {"found": found, "cmd": fds[0], "res": fds[1]}
print(json.dumps(out))
"""


def test_every_other_hold_on_the_grader_channel_is_reported_and_an_honest_child_is_not(tmp_path):
    done = run_with_worker(SCRIPT, tmp_path, timeout=120, preload="")
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["honest"]["found"] == []
    dup = out["dup"]["found"]
    assert len(dup) == 1 and dup[0].startswith("process CHILD holds the grader's channel as descriptor "), dup
    assert out["replaced"]["found"] == [f"descriptor {out['replaced']['res']} of the grader's channel was replaced"]
    assert out["closed"]["found"] == [f"descriptor {out['closed']['cmd']} of the grader's channel was closed"]
    grand = out["grandchild"]["found"]
    assert len(grand) == 1 and "holds the grader's channel as descriptor" in grand[0] \
        and not grand[0].startswith("process CHILD "), grand
