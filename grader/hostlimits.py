"""Limits the host kernel enforces on a sandbox worker as a whole: cgroup v2 memory and process caps, and an
OOM score that makes the kernel kill a job rather than the worker.

cgroup v2 (the unified hierarchy, on every current distribution) is used through a *delegated subtree*: the
cgroup this process is in must let it create children with the memory and pids controllers (systemd's
`Delegate=yes`, a container runtime's own cgroup, or the root of the hierarchy; the grader moves itself into a
leaf of a delegated cgroup, which may hand controllers down only while it holds no process). A process that is
not in such a cgroup, or shares it with other processes, gets no v2 caps, and `grader.facilities.facilities()`
says so, as for every missing facility. Hosts on the older v1 hierarchy keep the v1 cgroups in grader.worker_start.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

CONTROLLERS = ("memory", "pids")


def _mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts)."""
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split(" ", 1)[0] == "cgroup2":
                return Path(left.split(" ")[4])
    except (OSError, IndexError):
        pass
    return None


def own_cgroup() -> Path | None:
    """This process's cgroup v2 directory, or None without a v2 hierarchy."""
    mount = _mount()
    if mount is None:
        return None
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return mount / line[3:].lstrip("/")
    except OSError:
        pass
    return None


LEAF = "torchcourse-grader"  # where this process moves itself in a delegated cgroup (`delegated_parent`)


def delegated_parent() -> Path | None:
    """A cgroup v2 directory where this process may create children with memory and pids caps, or None.

    That is this process's own cgroup when its memory and pids controllers are enabled for children, or can
    be: at the root of the hierarchy, and in a delegated cgroup (a systemd scope or service with Delegate=yes,
    a container's cgroup) once this process has left it for a leaf of its own, `LEAF`. cgroup v2 hands
    controllers to the children of a cgroup other than the root only while no process is in it: with the
    grader in it, enabling them failed (EBUSY), and every such host got no caps."""
    own = own_cgroup()
    if own is not None and own.name == LEAF:
        own = own.parent  # moved there by an earlier call: the delegated cgroup is the one above
    if own is None or not os.access(own, os.W_OK):
        return None
    try:
        if not set(CONTROLLERS) <= set((own / "cgroup.controllers").read_text().split()):
            return None  # not delegated to us (a hybrid host's v2 tree often has no memory controller)
        control = own / "cgroup.subtree_control"
        if not set(CONTROLLERS) <= set(control.read_text().split()):
            enable = " ".join(f"+{c}" for c in CONTROLLERS)
            try:
                control.write_text(enable)
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    raise
                leaf = own / LEAF  # systemd's rule for a delegated cgroup: processes only in its leaves
                leaf.mkdir(exist_ok=True)
                (leaf / "cgroup.procs").write_text(str(os.getpid()))
                control.write_text(enable)  # EBUSY again if another process is in `own`: no caps, reported
        return own if set(CONTROLLERS) <= set(control.read_text().split()) else None
    except OSError:
        return None


def create(parent: Path, name: str, mem_bytes: int, pids_max: int, pids: list[int]) -> Path:
    """A child cgroup of `parent` with its caps set and `pids` moved into it."""
    d = parent / name
    d.mkdir(exist_ok=True)
    (d / "memory.max").write_text(str(mem_bytes))
    try:
        (d / "memory.swap.max").write_text("0")  # the cap is on memory, not memory moved to swap
    except OSError:
        pass  # no swap accounting on this kernel: nothing to cap
    (d / "pids.max").write_text(str(pids_max))
    for p in pids:
        try:
            (d / "cgroup.procs").write_text(str(p))
        except OSError:
            pass  # gone already
    return d


def remove(d: Path) -> None:
    """Kill whatever is left in cgroup `d` (cgroup.kill, kernel 5.14 on), then remove it."""
    try:
        (d / "cgroup.kill").write_text("1")
    except OSError:
        pass
    rmdir_when_empty(d)


def rmdir_when_empty(d: Path, seconds: float = 5.0) -> None:
    """Remove cgroup `d` once its last process has left it. A killed worker takes tens of milliseconds to free
    its memory: asked often, so that a batch's end does not wait a poll interval a worker. Left after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)


def protect_from_oom(pids: list[int]) -> list[int]:
    """Set the OOM score of `pids` to -1000 (never chosen by the kernel's OOM killer); returns those it could
    not set. A job's own processes set theirs back to 0, so the kernel kills a job, not its worker."""
    failed = []
    for p in pids:
        try:
            Path(f"/proc/{p}/oom_score_adj").write_text("-1000")
        except OSError:
            failed.append(p)
    return failed


def oom_adjust_works() -> bool:
    """Can this process protect a child from the OOM killer (CAP_SYS_RESOURCE)? Tried on a short child."""
    try:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(5)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return False
    try:
        return not protect_from_oom([child.pid])
    finally:
        child.kill()
        child.wait()
