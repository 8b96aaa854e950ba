"""Confinement of a job's child (its uid, seccomp, rlimits, namespaces, temp space), and the warm process's
own place on the host (OOM score, CPU, huge pages). Nothing here runs at import time but the look-up of libc."""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal

from .policy import JOB_FILES, SECCOMP_DENIED, SECCOMP_ONLY_WITH_FLAGS, SYSCALLS

CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
# A job's own namespaces (`_fresh_job_space`): the network one too, since the worker's outlived each job's
# sockets (a loopback port one job left in TIME_WAIT was still taken in the next).
JOB_NAMESPACES = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_libc = ctypes.CDLL(None, use_errno=True)


def _drop(spec: dict) -> None:
    uid, gid = spec.get("uid"), spec.get("gid")
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
    _seccomp()


# The system calls learner code may not make are `policy.SECCOMP_DENIED` (why each: there); this is the filter
# that refuses them, for the machines `policy.SYSCALLS` knows.
_SECCOMP = SYSCALLS.get(os.uname().machine)


def _seccomp_program(arch: int, numbers: dict[str, int]) -> list[tuple[int, int, int, int]]:
    """The classic BPF program (code, jump if true, jump if false, k) that refuses `SECCOMP_DENIED`."""
    allow, errno_ret = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO | the errno
    eperm = errno_ret | errno.EPERM
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    always = [name for name in SECCOMP_DENIED if name not in SECCOMP_ONLY_WITH_FLAGS]
    flagged = [name for name in SECCOMP_DENIED if name in SECCOMP_ONLY_WITH_FLAGS]
    prog = [
        (ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, eperm),   # [4]: the ABI; another one is refused
        (ld, 0, 0, 0), (jge, 0, 1, 0x40000000), (ret, 0, 0, eperm),  # [0]: the number; x32's are refused
        *[ins for name in always
          for ins in ((jeq, 0, 1, numbers[name]), (ret, 0, 0, errno_ret | SECCOMP_DENIED[name]))],
    ]
    if flagged:
        bits, codes = {SECCOMP_ONLY_WITH_FLAGS[n] for n in flagged}, {SECCOMP_DENIED[n] for n in flagged}
        if len(bits) != 1 or len(codes) != 1:  # one test of the flags serves them all
            raise ValueError("the calls refused by their flags must share one flag and one errno")
        bit, code = bits.pop(), codes.pop()
        last = len(flagged) - 1
        prog += [(jeq, last - k, 0, numbers[name]) if k < last else (jeq, 0, 3, numbers[name])
                 for k, name in enumerate(flagged)]
        prog += [(ld, 0, 0, 16), (jset, 0, 1, bit), (ret, 0, 0, errno_ret | code)]  # [16]: the flags (low 32 bits)
    prog.append((ret, 0, 0, allow))
    return prog


def _seccomp() -> None:
    if _SECCOMP is None:
        return  # an architecture whose numbers are not known here: the job may make these calls
    import struct

    prog = _seccomp_program(*_SECCOMP)
    code = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    filt = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Prog(len(prog), ctypes.addressof(filt))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _limits(spec: dict, base: int | None = None) -> None:
    """The job's rlimits. Its address space may grow by `mem_mb` beyond `base` (what the process holds now,
    unless given: a child forked from a template counts from the address space the template had before its
    prefix ran, as a full run of the same cells would)."""
    mem = (_address_space() if base is None else base) + int(spec["mem_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    cpu = int(spec["budget"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    size = int(spec["fsize_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if spec.get("uid") is not None:  # NPROC counts per uid: only meaningful for a uid of our own
        resource.setrlimit(resource.RLIMIT_NPROC, (int(spec["nproc"]), int(spec["nproc"])))


def _mount(source: str, target: str, fstype: str | None, flags: int, options: str | None = None) -> None:
    if _libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                   options.encode() if options else None) != 0:
        raise OSError(ctypes.get_errno(), f"mount {source} on {target} failed")


def _fresh_job_space(jobdir: str, tmp_mb: int, uid: int | None, gid: int | None) -> None:
    """Give this job IPC and network namespaces and a temp space of its own, all torn down with the job.

    A new IPC namespace holds the job's SysV shared memory, message queues and semaphores and its POSIX
    message queues; a new network namespace its sockets (with a loopback of its own); a new mount namespace
    holds one tmpfs of `tmp_mb` MB that backs the job's folder and /dev/shm together, so their total is
    bounded. When the job's last process exits, the namespaces go and everything in them is freed: nothing
    is left for the next job to read, and no memory stays charged to the warm worker.
    Runs as root, before the uid is dropped."""
    _job_namespaces()
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the worker
    # The chapter's data files the grader put beside the cells (job.json is the worker's, raw.out the output's).
    data = {}
    for entry in os.scandir(jobdir):
        if entry.name not in JOB_FILES and entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as f:
                data[entry.name] = f.read()
    parts = _job_tmpfs(jobdir, tmp_mb, uid, gid)
    for name, content in data.items():
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=parts["work"])
        try:
            os.write(fd, content)
        finally:
            os.close(fd)
    # The job's folder becomes the tmpfs's work/, /dev/shm its shm/ (binds go through /proc/self/fd, which
    # still reaches a path once it is covered). /tmp is left alone: the environment and the course library
    # may live under it (a CI clone in mktemp -d), and inside bubblewrap the job cannot write there anyway.
    _mount(f"/proc/self/fd/{parts['work']}", jobdir, None, MS_BIND)
    if os.path.isdir("/dev/shm"):
        _mount(f"/proc/self/fd/{parts['shm']}", "/dev/shm", None, MS_BIND)
    for fd in parts.values():
        os.close(fd)


def _job_namespaces() -> None:
    """Enter a job's own mount, IPC and network namespaces, its loopback up (`_fresh_job_space`, and its probe)."""
    if _libc.unshare(JOB_NAMESPACES) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET) failed")
    _loopback_up()


def _loopback_up() -> None:
    """Bring up the loopback interface of a new network namespace (it starts down): lessons talk to
    127.0.0.1 (chapter 3's gloo), as they did in the worker's namespace."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack_from("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH14x", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _job_namespaces_here() -> str:
    """"" when a job child here can make what `_fresh_job_space` makes (IPC, mount, network namespaces, a tmpfs),
    else why not. Probed once, at start, in a throw-away child: the grader's own probe ran outside the
    sandbox, and inside it a capability may be missing."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            _job_namespaces()
            _mount("none", "/", None, MS_REC | MS_PRIVATE)
            _mount("tmpfs", os.getcwd(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")
        except BaseException as exc:
            os.write(w, f"{type(exc).__name__}: {exc}".encode()[:300])
            code = 1
        os._exit(code)
    os.close(w)
    why = os.read(r, 400).decode("utf-8", "replace")
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return "" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else (why or "the probe did not finish")


def _new_session(spec: dict) -> None:
    """A session of its own (the parent kills its group), signals as a cell expects, and outside
    bubblewrap a network namespace of its own when the OS allows."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for a cell, never for this set-up
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if spec.get("netns"):
        if _libc.unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")


def _capture_output(spec: dict, keep: set[int]) -> int:
    """Send fds 1 and 2 (C and subprocess output) to raw.out, give the job its own IPC and temp space, close
    every inherited descriptor but `keep`; the descriptor the child reads raw.out back with."""
    jobdir = spec["dir"]
    raw_path = os.path.join(jobdir, "raw.out")
    raw = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    raw_reader = os.open(raw_path, os.O_RDONLY)
    if spec.get("isolate"):  # opened above, raw.out stays outside the job's own temp space
        _fresh_job_space(jobdir, int(spec["tmp_mb"]), spec.get("uid"), spec.get("gid"))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(raw, 1)
    os.dup2(raw, 2)
    # Every inherited descriptor but these, a range at a time (close_range(2), not a close per number).
    low = 3
    for fd in sorted(k for k in keep | {raw_reader} if k >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, max(resource.getrlimit(resource.RLIMIT_NOFILE)[0], low))
    if spec.get("uid") is not None:
        os.fchown(raw_reader, spec["uid"], spec["gid"])
    return raw_reader


def _confine(spec: dict, base: int | None = None) -> None:
    """The limits, then the uid of the job: from here on the process can do only what the learner may."""
    _oom_score("0")
    if JOB_CPUS:
        os.sched_setaffinity(0, JOB_CPUS)  # see _keep_to_cpu
    _limits(spec, base)
    _drop(spec)


def _confine_template(spec: dict) -> int:
    """A template's confinement (grader/inside/template.py): a job's limits, NO_NEW_PRIVS and the seccomp
    filter, but root's uid, which each child forked from it drops to a uid of its job's own. The filter refuses
    nothing a fork's set-up needs (setresuid, mount, unshare without CLONE_NEWUSER). Returns the address space
    before the prefix runs, from which each fork's `mem_mb` counts."""
    _oom_score("0")
    if TEMPLATE_CPUS:
        os.sched_setaffinity(0, TEMPLATE_CPUS)
    base = _address_space()
    _limits({**spec, "uid": None}, base)  # no RLIMIT_NPROC: it would count the uid's jobs, not the template
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
    _seccomp()
    return base


def _copy_tree(src: str, dst: str, uid: int | None, gid: int | None) -> None:
    """`src`'s entries (files, folders, links; modes kept) into the existing folder `dst`, each made the job's
    uid's, as the job's own process would have left them."""
    import shutil

    for entry in os.scandir(src):
        target = os.path.join(dst, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
            if uid is not None:
                os.lchown(target, uid, gid)
            continue
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(target)
            _copy_tree(entry.path, target, uid, gid)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, target, follow_symlinks=False)
        else:
            continue  # a fifo or socket left by the prefix: not a file a later cell can read back
        os.chmod(target, entry.stat(follow_symlinks=False).st_mode & 0o7777)
        if uid is not None:
            os.chown(target, uid, gid)


def _job_tmpfs(jobdir: str, tmp_mb: int, uid: int | None, gid: int | None) -> dict[str, int]:
    """A tmpfs of `tmp_mb` MB on the job's folder, with `work` (the job's, 0700) and `shm` (1777) in it; an
    O_PATH descriptor of each, to bind them where the job sees them."""
    _mount("tmpfs", jobdir, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,nr_inodes=65536,mode=0755")
    parts = {}
    for name, mode in (("work", 0o700), ("shm", 0o1777)):
        path = os.path.join(jobdir, name)
        os.mkdir(path)
        os.chmod(path, mode)
        parts[name] = os.open(path, os.O_PATH | os.O_DIRECTORY)
    if uid is not None:
        os.chown(os.path.join(jobdir, "work"), uid, gid)
    return parts


def _forked_job_space(jobdir: str, template_dir: str, tmp_mb: int, uid: int | None, gid: int | None) -> None:
    """`_fresh_job_space` for a child forked from a template: its own IPC, network and mount namespaces and a
    tmpfs of `tmp_mb` MB, holding a copy of what the template's folder and /dev/shm held after the prefix, bound
    at the template's own paths (the folder the prefix ran in is the folder the rest runs in, as in a full
    run). The template's own temp space is covered in this child's mount namespace, so nothing the job writes
    reaches the template or another job. Runs as root, before the uid is dropped."""
    _job_namespaces()
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    parts = _job_tmpfs(jobdir, tmp_mb, uid, gid)
    _copy_tree(template_dir, os.path.join(jobdir, "work"), uid, gid)
    if os.path.isdir("/dev/shm"):
        _copy_tree("/dev/shm", os.path.join(jobdir, "shm"), uid, gid)
    _mount(f"/proc/self/fd/{parts['work']}", template_dir, None, MS_BIND)
    if os.path.isdir("/dev/shm"):
        _mount(f"/proc/self/fd/{parts['shm']}", "/dev/shm", None, MS_BIND)
    for fd in parts.values():
        os.close(fd)


MADV_COLLAPSE = 25
HUGE = 2 * 2**20  # x86-64's and arm64's (4 KiB base pages) transparent huge page


def _huge_pages() -> None:
    """Back the warm process's anonymous memory (the heap: about 220 MB of torch's and Python's objects for
    chapter 1) with transparent huge pages, once. fork copies one page-table entry per 2 MiB,
    not one per 4 KiB, and a child's exit frees as few: on chapter 1, fork fell from 5 to 1.3 ms and a small
    child's run and exit from 10.4 to 5.9 ms. A child's write to a huge page still copies only 4 KiB (the
    kernel splits the entry first, since Linux 5.8). Only memory there now is collapsed: the regions are not
    marked MADV_HUGEPAGE, so what a child allocates later gets ordinary pages, as before. MADV_COLLAPSE needs
    Linux 6.1; where it fails (an older kernel, say) the memory stays as it was: correct, only slower."""
    madvise = _libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        with open("/proc/self/maps") as f:
            regions = f.read().splitlines()
    except OSError:
        return
    for line in regions:
        fields = line.split()
        if len(fields) < 5 or "w" not in fields[1] or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # files, the stack, vdso: not ours to change
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        lo, hi = (lo + HUGE - 1) & ~(HUGE - 1), hi & ~(HUGE - 1)
        if hi > lo:
            madvise(lo, hi - lo, MADV_COLLAPSE)  # a failure leaves the region as it was


# The CPUs a job's processes and a template's run on, when the worker keeps to one CPU (see _keep_to_cpu).
JOB_CPUS: set[int] = set()
TEMPLATE_CPUS: set[int] = set()


def _keep_to_cpu(cpu: str | None, jobs_too: bool = False) -> None:
    """Run the worker process on `cpu` alone (the grader's choice, one per worker). A job and the worker hand
    each other every cell and every line of results, and a checks cell's every request goes between the
    learner's process and the checker (forked from the worker, on its CPU): on one CPU such a hand-over costs
    about 4 us here, in a virtual machine, against about 70 us when it wakes another CPU.

    The templates get back every CPU the worker had: their openings launch a lesson's processes (DDP's ranks),
    which run as in Jupyter. A job's processes keep to the worker's CPU too with `jobs_too`, which the grader
    gives when every CPU has a worker of its own: another CPU would be taken from another worker's job, and
    its hand-overs would wake it. Otherwise they get every CPU too. Nothing happens where the CPU cannot be set."""
    if not cpu:
        return
    try:
        everything = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {int(cpu)})
    except (OSError, ValueError):
        return
    TEMPLATE_CPUS.update(everything)
    JOB_CPUS.update({int(cpu)} if jobs_too else everything)


def _oom_score(value: str) -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(value)
    except OSError:
        pass
