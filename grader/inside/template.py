"""A template: one notebook's opening cells, from the release, run once, then one child forked per job from there.

The worker forks a template as it forks a job's child (`child.run_child` with a control socket): same set-up,
same guard, a seed of its own as a job's child gets, a job's limits, NO_NEW_PRIVS, the seccomp filter and a
temp space of its own (its folder and /dev/shm a tmpfs, with IPC and network namespaces), but root's uid: each
child forked from it must drop to its own job's uid, which a process that had dropped could not give it. The
worker sends it the release's cells before the notebook's first answer cell (never a submission's), then
``{"hold": true}``. The template then says whether it can be forked (`unforkable`) and serves the worker's
requests: each one, a job's spec with its pipes and link passed as descriptors, forks a child that goes on as
that job's child would after the prefix: its own namespaces and a tmpfs holding a copy of the template's files
at the template's paths, the job's limits and uid, the guard and the random state as the prefix left them.
The template never runs a cell after the prefix, never runs learner code, and no job's child can reach it (it
is root's; a job's uid cannot signal it, and its temp space is covered in each child's mount namespace).

A job's child stays the template's child: one fork, where handing it to the worker (a fork in between that
exits) cost a second copy of the template's page tables on every job. The worker watches, times and kills it
through its pidfd as it does its own children, and at the job's end asks the template for its wait status
(``{"reap": pid}``); what the child itself started and left goes to the worker, the subreaper, when it dies.
"""

from __future__ import annotations

import gc
import json
import os
import random
import signal
import socket
import sys

import torch

from .confine import PR_SET_PDEATHSIG, _confine, _forked_job_space, _libc, _new_session


def _read_only_file(fd: int, what: str, folder: str) -> bool:
    """Whether descriptor `fd` (on `what`) is a regular file opened read-only that anyone may read, outside the
    template's temp space (`folder`, /dev/shm: a fork writes its own copies of those): a fork can open it again
    for itself (`_reopen`), at the same offset, with the same access a job's uid would have."""
    if what.startswith((folder.rstrip("/") + "/", "/dev/shm/")):
        return False
    import stat

    try:
        with open(f"/proc/self/fdinfo/{fd}") as f:
            flags = int(next(line for line in f if line.startswith("flags:")).split()[1], 8)
        st = os.fstat(fd)
    except (OSError, StopIteration, ValueError):
        return False
    return (flags & os.O_ACCMODE) == os.O_RDONLY and stat.S_ISREG(st.st_mode) and bool(st.st_mode & stat.S_IROTH) \
        and what.startswith("/") and not what.endswith(" (deleted)")


def unforkable(before: dict[int, str], folder: str) -> tuple[str, dict[int, str]]:
    """Why this process cannot be forked into jobs that behave as a full run would, or "", and the read-only
    files the prefix left open (each fork opens them again for itself: an offset shared between forks running
    at once would mix their reads). Not forkable: a thread (it would not exist in the fork: torch's pools,
    gloo's, a profiler's), a child process, any other descriptor the prefix opened (a socket, a pipe, a file
    open for writing), or a shared writable mapping (a file or shared memory every fork would write into)."""
    threads = os.listdir("/proc/self/task")
    if len(threads) != 1:
        names = []
        for t in threads:
            try:
                with open(f"/proc/self/task/{t}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                pass
        return f"the opening cells left {len(threads) - 1} thread(s) running ({', '.join(names[1:])[:80]})", {}
    with open(f"/proc/self/task/{threads[0]}/children") as f:
        if f.read().split():
            return "the opening cells left a child process running", {}
    reopen = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            what = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        fd = int(fd)
        if before.get(fd) == what or (fd not in before and what.startswith("/proc/")):
            continue  # the template's own, or the listing's
        if fd not in before and _read_only_file(fd, what, folder):
            reopen[fd] = what
            continue
        return f"the opening cells left a descriptor open ({what[:80]})", {}
    with open("/proc/self/maps") as f:
        for line in f:
            perms = line.split()[1]
            if perms[1] == "w" and perms[3] == "s":
                return "the opening cells left a shared writable mapping (" + " ".join(line.split()[5:])[:80] + ")", {}
    return "", reopen


def _reopen(files: dict[int, str]) -> list[int]:
    """In a fork: each read-only file the prefix left open, opened again at its number and offset (the fork's
    own copy, for a file of the template's folder: the same path reaches it); the descriptors reopened. One the
    template closed since (a figure's font, collected) is left alone: its number may be another file's now."""
    done = []
    for fd, path in files.items():
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != path:
                continue
        except OSError:
            continue
        done.append(fd)
        offset = os.lseek(fd, 0, os.SEEK_CUR)
        mine = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        os.lseek(mine, offset, os.SEEK_SET)
        os.dup2(mine, fd, inheritable=os.get_inheritable(fd))
        os.close(mine)
    return done


def memory_kb() -> dict[str, int]:
    """What this template costs: its proportional set size, and what it holds that no other process shares
    (both from /proc/self/smaps_rollup), in kB."""
    out = {}
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Rss", "Pss", "Private_Dirty", "Private_Clean"):
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    return out


def cpu_seconds() -> float:
    """The CPU this template has spent since it was forked, the processes its cells started and waited for
    included (a launched DDP run's): what making it cost the batch, which may be more than its wall time."""
    import resource

    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def _folder_kb(path: str) -> int:
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    return (st.f_blocks - st.f_bfree) * st.f_frsize // 1024


def hold(shell, ctl: int, cmd: int, res: int, state: dict, check, rebind, before: dict[int, str], base: int,
         folder: str) -> None:
    """The template's life after its prefix: report whether it can be forked, then fork a child per request
    until the worker closes the socket; never returns."""
    sock = socket.socket(fileno=ctl)
    why, reopen = unforkable(before, folder)
    mem = memory_kb()
    reply = {"forkable": not why, "why": why, "cmd": cmd, "res": res,
             "private_kb": mem.get("Private_Dirty", 0) + mem.get("Private_Clean", 0) + _folder_kb(folder),
             "pss_kb": mem.get("Pss", 0), "rss_kb": mem.get("Rss", 0), "cpu_seconds": round(cpu_seconds(), 3)}
    sock.sendall((json.dumps(reply) + "\n").encode())
    if why:
        os._exit(0)
    # As the worker does before its first fork (child.settle): what the prefix left alive goes out of the
    # collector's reach, so a collection in a fork never walks, and so never copies, the template's pages.
    # The prefix's garbage is collected first, once, as a full run's next collection would.
    gc.collect()
    gc.freeze()
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
        except OSError:
            os._exit(0)
        if not msg:
            os._exit(0)  # the worker is gone, or done with this template
        spec = json.loads(msg)
        if not fds and type(spec.get("reap")) is int:
            sock.sendall((json.dumps({"status": _reap(spec["reap"])}) + "\n").encode())
            continue
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            sock.sendall(b'{"pid": null}\n')
            continue
        # Python's random module seeds itself again in every forked child (os.register_at_fork): the fork
        # puts back the state the prefix left, as the rest of a full run would find it.
        drawn = random.getstate()
        pid = os.fork()
        if pid == 0:
            try:
                random.setstate(drawn)
                _become_job(shell, spec, fds, ctl, cmd, res, state, check, rebind, base, folder, reopen)
            except BaseException as exc:
                try:
                    os.write(2, f"sandbox child failed: {type(exc).__name__}: {exc}\n".encode())
                finally:
                    os._exit(70)
        for fd in fds:
            os.close(fd)
        sock.sendall((json.dumps({"pid": pid}) + "\n").encode())


def _reap(pid: int) -> int | None:
    """Wait for this template's child `pid` (a job's, which the worker has killed); its wait status, or None
    if it is not this template's child."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


def _become_job(shell, spec: dict, fds: list[int], ctl: int, cmd: int, res: int, state: dict, check, rebind,
                base: int, folder: str, reopen: dict[int, str]) -> None:
    """In the forked child: the job's child from the prefix on. Its pipes take the numbers the template's had
    (the guard writes on the results pipe's number), its temp space a copy of the template's, its uid the
    job's; then the cells the worker sends, as `child._serve_cells` runs them."""
    from .child import _enter_job_folder, _read_message, _serve_cells

    os.close(ctl)
    _libc.setfsuid(0)  # root's file access back for the set-up (copies, chown); `_confine` drops it for good
    _libc.setfsgid(0)
    reopened = _reopen(reopen)  # first, before this child opens anything; root's still, but only files anyone
    # may read (`_read_only_file`), and in the template's mount namespace, where the prefix opened them
    # torch's at-fork handler marks its intra-op thread pool lost in every fork, to be made again on first use. In
    # a fork of a template that first use could come from new threads of the rest's cells (chapter 3's gloo
    # ranks), and failed there ("Invalid thread pool!", then a collective's timeout) where a full run's did not:
    # the pool is made again here, in the fork's one thread, with the thread count it had.
    torch.set_num_threads(torch.get_num_threads())
    new_cmd, new_res, link = fds
    # Not inherited by what the job starts, as a job's own pipes and link are not (pipe2(O_CLOEXEC), sockets).
    os.dup2(new_cmd, cmd, inheritable=False)
    os.dup2(new_res, res, inheritable=False)
    os.close(new_cmd)
    os.close(new_res)
    os.set_inheritable(link, False)
    rebind()  # the guard's check that its channel was not replaced now knows this fork's pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for a cell, never for this set-up
    _libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
    _new_session({})
    jobdir = spec["dir"]
    raw_path = os.path.join(jobdir, "raw.out")
    raw = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    raw_reader = os.open(raw_path, os.O_RDONLY)
    sys.stdout.flush()
    _forked_job_space(jobdir, folder, int(spec["tmp_mb"]), spec.get("uid"), spec.get("gid"))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(raw, 1)
    os.dup2(raw, 2)
    keep = sorted({cmd, res, link, raw_reader, *reopened})
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    import resource

    os.closerange(low, max(resource.getrlimit(resource.RLIMIT_NOFILE)[0], low))
    if spec.get("uid") is not None:
        os.fchown(raw_reader, spec["uid"], spec["gid"])
    buf = bytearray()
    setup = _read_message(cmd, buf)  # the nonce only: the random state is the one the prefix left
    _confine(spec, base)
    _enter_job_folder(folder)
    state["nonce"] = setup["nonce"]
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.write(res, (json.dumps({"n": setup["nonce"], "ready": True}) + "\n").encode())
    _serve_cells(shell, cmd, res, buf, raw_reader, state, check, link)
