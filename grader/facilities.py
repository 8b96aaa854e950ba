"""What this machine allows the sandbox (bubblewrap, root, a uid of the job's own, namespaces, cgroups, OOM
protection), probed once per process; every protection it lacks is named in words and warned about, never
skipped silently.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from grader import hostlimits


class SandboxWarning(UserWarning):
    """A protection the machine cannot give; the grader says so instead of pretending."""


@dataclass
class Facilities:
    bwrap: str | None
    root: bool
    drop_uid: bool
    netns: bool
    cgroups: bool = False
    job_ns: bool = False         # a fresh IPC namespace and a size-limited tmpfs per job
    missing: list[str] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return not self.missing


def _readable_by_others(path: Path, ancestors: bool = True) -> bool:
    """Can an unprivileged uid read `path` (and reach it, when `ancestors`)?"""
    try:
        st = path.stat()
        if not st.st_mode & stat.S_IROTH or (path.is_dir() and not st.st_mode & stat.S_IXOTH):
            return False
        return not ancestors or all(p.stat().st_mode & stat.S_IXOTH for p in path.resolve().parents)
    except OSError:
        return False


def _probe_files() -> list[Path]:
    """Files every job imports: if other users cannot read these, dropping the uid would break imports."""
    import importlib.util

    found = []
    for name in ("torch", "numpy", "IPython", "torchcourse"):
        spec = importlib.util.find_spec(name)
        if spec and spec.origin:
            found.append(Path(spec.origin))
    return found


def _bwrap_works(bwrap: str) -> bool:
    try:
        done = subprocess.run([bwrap, "--unshare-net", "--unshare-pid", "--die-with-parent",
                               "--ro-bind", "/usr", "/usr",
                               "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                               "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "/usr/bin/true"],
                              capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _job_namespaces_work() -> bool:
    """Can a process here make the IPC, mount and network namespaces and the tmpfs each job gets (root)?"""
    with tempfile.TemporaryDirectory(prefix="torchcourse-probe-") as d:
        try:
            done = subprocess.run(["unshare", "--ipc", "--mount", "--net", "--propagation", "private", "mount", "-t",
                                   "tmpfs",
                                   "-o", "size=1m", "tmpfs", d], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


def _userns_works() -> bool:
    try:
        done = subprocess.run(["unshare", "--user", "--net", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@lru_cache(maxsize=1)
def facilities() -> Facilities:
    """What this machine allows; `missing` lists, in words, every protection that is absent."""
    missing = []
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    if bwrap and not (root and _bwrap_works(bwrap)):
        bwrap = None
    if not bwrap:
        missing.append("bubblewrap (apt-get install bubblewrap; run as root) is unavailable: learner code sees "
                       "the grader's filesystem, so it can read world-readable files such as solutions/")
    # Inside bubblewrap the folders above the environment are recreated readable; outside it they must be.
    needed = [Path(sys.prefix), Path(sys.base_prefix), *_probe_files()]
    readable = all(_readable_by_others(p, ancestors=not bwrap) for p in needed)
    drop = root and readable
    if not root:
        missing.append("not running as root: learner code runs as your own user, with no process-count limit")
    elif not drop:
        missing.append(f"the Python environment ({sys.prefix}) or the course library is not readable by other "
                       "users: learner code keeps root's uid (make them world-readable, or install bubblewrap)")
    netns = bool(bwrap) or root or _userns_works()
    if not netns:
        missing.append("no network namespace: learner code can reach the network")
    cgroups = root and (all(cgroup_v1_dir(c) is not None for c in ("memory", "pids"))
                        or hostlimits.delegated_parent() is not None)
    if not cgroups:
        missing.append("no writable cgroup memory and pids controllers (cgroup v2 delegated to this process, "
                       "or v1): a submission's processes are limited one by one (RLIMIT_AS, RLIMIT_NPROC), not "
                       "in total")
    job_ns = root and _job_namespaces_work()
    if not job_ns:
        missing.append("no per-job IPC, mount and network namespaces (needs root and unshare): a job's shared "
                       "memory, message queues, semaphores and temp files are removed after it by uid, not torn down "
                       "with it, a port it left in TIME_WAIT is still taken in the next job, and its temp space is "
                       "limited per file, not in total")
    if not (root and hostlimits.oom_adjust_works()):
        missing.append("the sandbox worker cannot be protected from the kernel's OOM killer (its OOM score "
                       "cannot be lowered without CAP_SYS_RESOURCE): a job that runs out of memory may cost "
                       "the worker, and the jobs after it a restart")
    return Facilities(bwrap=bwrap, root=root, drop_uid=drop, netns=netns, cgroups=cgroups, job_ns=job_ns,
                      missing=missing)


def cgroup_v1_dir(controller: str) -> Path | None:
    """This process's own cgroup (v1) for `controller`, when this process may create cgroups below it."""
    base = Path("/sys/fs/cgroup") / controller
    if not (base / "cgroup.procs").exists():
        return None
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, rel = line.split(":", 2)
            if controller in ctrls.split(","):
                d = base / rel.lstrip("/")
                return d if os.access(d, os.W_OK) else None
    except (OSError, ValueError):
        pass
    return None


def warn_missing() -> list[str]:
    """Warn (visibly, once per process) about every protection the machine lacks."""
    fac = facilities()
    for line in fac.missing:
        warnings.warn("sandbox: " + line, SandboxWarning, stacklevel=2)
    return fac.missing
