"""The end of a job, from the parent: every process of the job's uid killed and waited for, what it left in
shared scratch folders removed, and whether it filled its temp space. Imports nothing of the warm process."""

from __future__ import annotations

import os
import signal
import time

from .confine import _libc
from .policy import KILL_WAIT

# setresuid(2) as a raw system call changes only the calling thread's ids (glibc's wrapper changes every
# thread's); its number where this is known, else the fork below is used.
SYS_SETRESUID = {"x86_64": 117, "aarch64": 147}.get(os.uname().machine)


def _kill_uid(uid: int | None, pid: int) -> None:
    """Kill every process of the job: all of its uid when it has one, else its process group."""
    if uid is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        return
    if SYS_SETRESUID is not None:
        import threading

        done: list[bool] = []
        helper = threading.Thread(target=_kill_as, args=(uid, done))
        helper.start()
        helper.join()
        if done:
            if done[0]:
                _wait_dead(uid, pid)
            return
    helper = os.fork()  # a whole copy of this process: about 10 ms more than the thread above
    if helper == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)  # every process this uid may signal, except this one
        finally:
            os._exit(0)
    os.waitpid(helper, 0)
    _wait_dead(uid, pid)


def _wait_dead(uid: int, pid: int) -> None:
    """Wait until no process of `uid` but the job's child (our own to reap) is still running: a killed
    process takes a moment to die (freeing its memory), and the next job, which runs as the same uid, must
    not find it. Bounded: a process stuck in the kernel does not stop the worker."""
    deadline = time.monotonic() + KILL_WAIT
    while time.monotonic() < deadline:
        running = False
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == pid:
                continue
            try:
                if os.stat(f"/proc/{p}").st_uid != uid:
                    continue
                with open(f"/proc/{p}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue  # gone while we looked
            if state not in (b"Z", b"X"):
                running = True
                break
        if not running:
            return
        time.sleep(0.002)


def _kill_as(uid: int, done: list[bool]) -> None:
    """In a thread of its own: take the job's uid as real and effective id (this thread only; the process's
    main thread, which signals to the worker are checked against, stays root), kill every process that uid
    may signal but this one, and end; the thread's ids go with it. The saved id stays 0, so that the ids
    could be restored; the effective capabilities are gone while the uid is the job's, so the kill reaches
    the job's processes and no others."""
    if _libc.syscall(SYS_SETRESUID, uid, uid, 0) != 0:
        return
    try:
        os.kill(-1, signal.SIGKILL)
        done.append(True)  # something was killed: `_wait_dead` waits for it to be gone
    except OSError:
        done.append(False)  # ESRCH: nothing of the job was left


def _reap_orphans(uid: int | None) -> None:
    """Reap the job's processes that ended as the worker's children: the worker is the subreaper of its
    templates' forks (grader/inside/template.py), so what a job's child started and left is handed to it, not
    to the sandbox's init. Only dead processes of the job's uid: a template (root's) is reaped by its owner."""
    if uid is None:
        return
    me = str(os.getpid()).encode()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            if os.stat(f"/proc/{p}").st_uid != uid:
                continue
            with open(f"/proc/{p}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] == b"Z" and fields[1] == me:
            try:
                os.waitpid(int(p), os.WNOHANG)
            except ChildProcessError:
                pass


def _sweep(uid: int | None) -> None:
    """Remove what a job left in shared scratch folders, so the next submission cannot read it."""
    if uid is None:
        return
    import shutil

    for folder in ("/dev/shm", "/tmp", "/var/tmp"):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _job_space(pid: int) -> int | None:
    """A descriptor on the job's temp space, opened from outside once the child is set up and before any
    learner code runs (its folder is then the child's working directory): it tells afterwards whether the
    job filled the space, whatever the job did to its own view of it."""
    try:
        return os.open(f"/proc/{pid}/cwd", os.O_PATH | os.O_DIRECTORY)
    except OSError:
        return None


def _space_notes(fd: int | None, tmp_mb: int) -> list[str]:
    """What the worker saw of the job's temp space (closing the descriptor frees the space)."""
    if fd is None:
        return []
    try:
        st = os.fstatvfs(fd)
    except OSError:
        return []
    finally:
        os.close(fd)
    if st.f_bavail * st.f_frsize < 2**20 or st.f_favail == 0:
        return [f"the run's temp space ({tmp_mb} MB) was full: writes in it failed with 'No space left on device'"]
    return []
