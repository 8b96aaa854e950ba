"""The sandbox's policy as data, read by both sides of the wall: the worker inside imports it from its own
folder, the grader outside as `grader.inside.policy`. It imports nothing but the standard library, so the
worker loads it before, and without, the course library.

A new restriction is a row here, and a test: `tests/grader/test_policy.py` checks the seccomp filter and the
bubblewrap command against these tables with no process started, `tests/grading/test_policy_in_a_job.py`
makes every refused call in a real job. The code that applies each table (`grader/worker_start.py` for the
binds and the cgroups, `confine.py` for the rlimits and seccomp, `guard.py` for the audited events) reads it.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field

# --------------------------------------------------------------------------- limits of a job


def _contract(name: str) -> float:
    """One of the course's time limits (torchcourse.contract), read when a `Limits` is made: only the grader
    makes one, and the worker must start even where the course library cannot be imported."""
    from torchcourse import contract

    return float(getattr(contract, name))


@dataclass(frozen=True)
class Limits:
    """A job's resources: sent to the worker with every job (`to_dict`), applied by `confine._limits` (rlimits)
    and `parent._JobRun` (the clock); the worker as a whole gets `CGROUP_HEADROOM` more in its cgroups."""

    # wall seconds per cell (then SIGINT, then SIGKILL), and per notebook
    cell_timeout: float = field(default_factory=lambda: _contract("CELL_TIMEOUT_S"))
    budget: float = field(default_factory=lambda: _contract("NOTEBOOK_BUDGET_S"))
    mem_mb: int = 2048           # address space the child may add to what the warm worker holds (RLIMIT_AS)
    nproc: int = 64              # processes and threads of the job's uid (RLIMIT_NPROC)
    fsize_mb: int = 64           # largest file the child may write (RLIMIT_FSIZE)
    tmp_mb: int = 256            # the job's folder and /dev/shm together (a tmpfs: it counts as memory)

    def to_dict(self) -> dict:
        return dict(cell_timeout=self.cell_timeout, budget=self.budget, mem_mb=self.mem_mb,
                    nproc=self.nproc, fsize_mb=self.fsize_mb, tmp_mb=self.tmp_mb)


# What the worker's cgroups (memory, pids) allow beyond one job's `mem_mb` and `nproc`: the warm worker itself.
CGROUP_HEADROOM_MB = 512
CGROUP_HEADROOM_PIDS = 64

# Templates (grader/inside/template.py): how many a worker keeps (a chapter's notebooks, one batch), and the
# memory all of them may hold together beyond what they share with the worker: they live in the worker's
# cgroups, whose headroom beyond a job's `mem_mb` is CGROUP_HEADROOM_MB.
TEMPLATES_KEPT = 8
TEMPLATES_MB = 256
# Seconds a template waits, after an opening cell, for threads the cell ended to be gone (templates._one_thread_soon):
# at most THREADS_SETTLE, and no more than THREADS_QUIET while every thread left sleeps and none ends.
THREADS_SETTLE = 1.0
THREADS_QUIET = 0.25

SETUP_TIMEOUT = 60.0          # seconds a child may take to set itself up before its first cell
KILL_WAIT = 2.0               # seconds the worker waits for a job's killed processes to finish dying

# --------------------------------------------------------------------------- what comes back: output caps
# Applied inside while a cell's outputs stream (`shell._Collector`), and again by the grader on what it keeps
# (`executed._clean_output`), which trusts nothing the worker wrote.

STREAM_CAP = 100_000          # characters kept per stream per cell, of an error's text, of a traceback line
TRACEBACK_LINES = 200         # lines kept of an error's traceback
DISPLAY_CAP = 4_000_000       # bytes of one display bundle, serialised
CELL_CAP = 16_000_000         # bytes of one cell's outputs, serialised

# --------------------------------------------------------------------------- the filesystem (bubblewrap)


@dataclass(frozen=True)
class Bind:
    """One entry of the worker's filesystem inside bubblewrap, in the order given. `kind`:
    "ro"        the host's `path`, read-only;
    "ro-try"    the same, where the host has it;
    "host-top"  `path` as the host has it (a symbolic link copied, a folder bound read-only, absent left out);
    "dev", "proc"  a minimal /dev, a fresh /proc;
    "tmpfs"     an empty tmpfs of `size_mb`, the worker's (root's): a job cannot write there;
    "library"   each folder of the Python environment and the course library, read-only at its own path
                (`path` only names it);
    "worker"    this package's folder, read-only at `path`;
    "jobs"      the grader's folder of job folders, writable, at `path` (each job's own folder in it is the
                only place the job can write)."""

    path: str
    kind: str
    size_mb: int = 0


# What the worker itself puts in a job's folder: the cells (job.json, root's, read and deleted by the worker
# once the job's processes are forked), the job's C-level output (raw.out) and the release's opening cells a
# template runs (prefix.json, root's). A chapter's data file may take none of these names.
JOB_FILES = ("job.json", "raw.out", "prefix.json")

INSIDE_WORKER = "/opt/torchcourse-grader/inside"  # where the worker's package is bound, and run from
JOBS = "/jobs"

BINDS = [
    Bind("/usr", "ro"),
    *(Bind(f"/{top}", "host-top") for top in ("bin", "lib", "lib64", "lib32", "sbin")),
    *(Bind(f, "ro-try") for f in ("/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/passwd",
                                  "/etc/group", "/etc/nsswitch.conf", "/etc/fonts")),
    Bind("/dev", "dev"),
    Bind("/proc", "proc"),
    Bind("/tmp", "tmpfs", size_mb=256),
    Bind("the Python environment and the course library", "library"),
    Bind(INSIDE_WORKER, "worker"),
    Bind(JOBS, "jobs"),
]
# The worker's own namespaces (bubblewrap's --unshare-*): no network, no other process, IPC or host name.
UNSHARE = ("pid", "net", "ipc", "uts", "cgroup-try")

# --------------------------------------------------------------------------- system calls (seccomp)
# What learner code may not do, refused by a seccomp filter (as Docker's default profile refuses it), each
# call with the errno it gets:
# * make a user namespace: in one of its own a job was root, and mounted a tmpfs of any size beside the temp
#   space `confine._fresh_job_space` bounds. unshare and clone with CLONE_NEWUSER (`SECCOMP_ONLY_WITH_FLAGS`)
#   get EPERM; clone3, whose flags a filter cannot read, ENOSYS (glibc then uses clone).
# * use the kernel keyrings (add_key, request_key, keyctl: EPERM). They are kept per uid, not per process or
#   namespace: a key a job left in its user keyring was read by the next job, run as the same uid, and a job
#   can set the keyring's permissions so that nothing without CAP_SYS_ADMIN could empty it after the job.
# A system call of another ABI (i386, x32) is refused too (EPERM), so none goes around the filter.

CLONE_NEWUSER = 0x10000000
SECCOMP_DENIED = {"clone3": errno.ENOSYS, "add_key": errno.EPERM, "request_key": errno.EPERM,
                  "keyctl": errno.EPERM, "unshare": errno.EPERM, "clone": errno.EPERM}
# Calls refused only when their first argument (the flags) holds one of these bits; the others always are.
SECCOMP_ONLY_WITH_FLAGS = {"unshare": CLONE_NEWUSER, "clone": CLONE_NEWUSER}
# Per machine: the audit architecture seccomp sees, and the number of every call above. Where the machine is
# not listed, no filter is installed (the job may do all of these).
SYSCALLS = {
    "x86_64": (0xC000003E, {"unshare": 272, "clone": 56, "clone3": 435, "add_key": 248, "request_key": 249,
                            "keyctl": 250}),
    "aarch64": (0xC00000B7, {"unshare": 97, "clone": 220, "clone3": 435, "add_key": 217, "request_key": 218,
                             "keyctl": 219}),
}

# --------------------------------------------------------------------------- the integrity guard (audit events)
# Learner code shares the child's process; `guard.py` compares, at every boundary of a checks cell and at
# every emitted value, these modules' functions, classes and submodules with a snapshot taken before any
# learner code ran (and every `torchcourse` module's).

WATCHED = ["builtins", "math", "operator", "sys", "re", "random", "json", "hashlib", "numpy", "numpy.testing",
           "numpy.linalg", "numpy.random", "torch", "torch.testing", "torch.nn", "torch.nn.functional",
           "torch.overrides", "torch.autograd", "IPython.display", "IPython.core.display_functions"]
# Names a notebook binds to libraries; a hidden block sees the library itself whatever the notebook rebound.
CANONICAL = {"torch": "torch", "np": "numpy", "numpy": "numpy", "math": "math", "re": "re", "random": "random",
             "F": "torch.nn.functional", "nn": "torch.nn"}
LIBRARY_NAMES = frozenset({"torch", "np", "numpy", "F", "nn"})
# Attributes whose reading (frames) or writing (a function's code swapped in place) is tampering.
CODE_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
# Audit events that are tampering whoever raised them in the job's process...
ALWAYS = frozenset({"sys.settrace", "sys.setprofile", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                    "sys._current_frames"})
# ... and those that are when a notebook cell's code raised them.
LEARNER = frozenset({"sys._getframe", "compile", "code.__new__", "function.__new__"})
# Every event the guard looks at (and "ctypes.*"); anything else returns at once. Rendering one figure raises
# thousands of "builtins.id" events, each a call of the hook.
GUARDED = ALWAYS | LEARNER | {"torchcourse.emit", "torchcourse.called", "object.__getattr__", "object.__setattr__",
                              "object.__delattr__", "open"}
