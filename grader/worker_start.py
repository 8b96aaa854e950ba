"""Starting the warm worker process: its bubblewrap command line (the tables of `grader/inside/policy.py`), its
environment, the one thread that starts every worker, its cgroups, and what a killed grader left behind.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path

from grader import hostlimits
from grader.facilities import cgroup_v1_dir
from grader.inside import policy
from grader.inside.channel import descendants
from grader.inside.policy import Limits

WORKER = Path(__file__).with_name("inside")  # the worker's package, run as `python -I <folder>`
INSIDE_WORKER = policy.INSIDE_WORKER


def remove_stale_jobs() -> None:
    """Job folders left by a grader that was killed (the pid in their name is gone): remove them."""
    for d in Path(tempfile.gettempdir()).glob("torchcourse-jobs-*-*"):
        pid = d.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            if d.is_dir():
                shutil.rmtree(d, ignore_errors=True)
            else:
                d.unlink(missing_ok=True)


def _remove_stale(parent: Path) -> None:
    """Empty cgroups left by a grader that was killed (its pid is gone): remove them."""
    for d in parent.glob("torchcourse-*-*"):
        pid = d.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                d.rmdir()
            except OSError:
                pass


class Cgroups:
    """One memory and one pids cgroup per worker: a submission's processes are also limited in total."""

    def __init__(self, name: str, pid: int, limits: Limits) -> None:
        self.dirs: list[Path] = []
        mem, pids = (limits.mem_mb + policy.CGROUP_HEADROOM_MB) * 2**20, limits.nproc + policy.CGROUP_HEADROOM_PIDS
        settings = {"memory": {"memory.limit_in_bytes": str(mem)}, "pids": {"pids.max": str(pids)}}
        for controller, values in settings.items():
            parent = cgroup_v1_dir(controller)
            if parent is None:
                continue
            _remove_stale(parent)
            d = parent / name
            d.mkdir(exist_ok=True)
            self.dirs.append(d)
            for key, value in values.items():
                (d / key).write_text(value)
            for p in descendants(pid):  # the worker tree exists already: move all of it
                try:
                    (d / "cgroup.procs").write_text(str(p))
                except OSError:
                    pass
        self.v2 = None  # cgroup v2 (grader.hostlimits), where the v1 controllers are not there
        if not self.dirs and (parent := hostlimits.delegated_parent()) is not None:
            self.v2 = hostlimits.create(parent, name, mem, pids, descendants(pid))

    def remove(self) -> None:
        if self.v2 is not None:
            hostlimits.remove(self.v2)
        for d in self.dirs:
            hostlimits.rmdir_when_empty(d)


def _library_dirs() -> list[Path]:
    """Folders the worker must read: the environment and the course library it imports."""
    dirs = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    try:
        import torchcourse

        dirs.add(Path(torchcourse.__file__).resolve().parent.parent)
    except ImportError:
        pass
    return sorted(d for d in dirs if not str(d).startswith("/usr"))


def _bwrap_command(bwrap: str, jobs_root: Path) -> list[str]:
    """The worker's bubblewrap command line: `policy.UNSHARE` and `policy.BINDS`, in their order."""
    cmd = [bwrap, *(f"--unshare-{ns}" for ns in policy.UNSHARE), "--die-with-parent", "--new-session"]
    # Parent folders bubblewrap creates are 0700 unless told: uid-dropped children could not reach them.
    made: set[str] = {"/", "/tmp", "/usr", "/dev", "/proc", "/etc"}
    for bind in policy.BINDS:
        path, kind = bind.path, bind.kind
        if kind == "ro":
            cmd += ["--ro-bind", path, path]
        elif kind == "ro-try":
            cmd += ["--ro-bind-try", path, path]
        elif kind == "host-top":
            p = Path(path)
            if p.is_symlink():
                cmd += ["--symlink", os.readlink(p), path]
            elif p.is_dir():
                cmd += ["--ro-bind", path, path]
        elif kind in ("dev", "proc"):
            cmd += [f"--{kind}", path]
        elif kind == "tmpfs":
            # /tmp belongs to the worker (root); a job writes only in its own folder, deleted after it, so
            # nothing a job leaves behind can reach the next submission.
            cmd += ["--size", str(bind.size_mb * 2**20), "--perms", "0755", "--tmpfs", path]
        elif kind == "library":
            for d in _library_dirs():
                for parent in reversed(d.parents):
                    if str(parent) not in made:
                        cmd += ["--perms", "0755", "--dir", str(parent)]
                        made.add(str(parent))
                cmd += ["--ro-bind", str(d), str(d)]
                made.add(str(d))
        elif kind == "worker":
            for parent in reversed(Path(path).parents[:-1]):  # all but "/"
                cmd += ["--perms", "0755", "--dir", str(parent)]
            cmd += ["--ro-bind", str(WORKER), path]
        elif kind == "jobs":
            cmd += ["--bind", str(jobs_root), path, "--chdir", path]
        else:
            raise ValueError(f"unknown kind of bind {kind!r} for {path}")
    return cmd + ["--clearenv"]


def _worker_env(preload: tuple[str, ...] = (), cpu: int | None = None, jobs_on_cpu: bool = False) -> dict[str, str]:
    """The worker's whole environment; `preload`: the course library modules it imports before any job;
    `cpu`: the CPU the worker process keeps to (its templates get back every CPU it had, and its jobs too
    unless `jobs_on_cpu`: grader/inside/confine.py, _keep_to_cpu)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython",
           "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "LANG": "C.UTF-8"}
    if preload:
        env["TORCHCOURSE_PRELOAD"] = ",".join(preload)
    if cpu is not None:
        env["TORCHCOURSE_WORKER_CPU"] = str(int(cpu))
        if jobs_on_cpu:
            env["TORCHCOURSE_JOBS_ON_WORKER_CPU"] = "1"
    return env


class _Spawner:
    """The one thread that starts every worker process, alive as long as this process.

    bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started it ends,
    not the process. A worker restarted from a pool's job thread, after a job killed it, died when that
    thread's executor shut down, and the next job sent to it came back as a grader-side failure."""

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="sandbox-spawner", daemon=True)
        self.started = threading.Lock()

    def popen(self, *args, **kwargs) -> subprocess.Popen:
        with self.started:
            if not self.thread.is_alive():
                self.thread.start()
        done: Future = Future()
        self.requests.put((done, args, kwargs))
        return done.result()

    def _serve(self) -> None:
        while True:
            done, args, kwargs = self.requests.get()
            try:
                done.set_result(subprocess.Popen(*args, **kwargs))
            except BaseException as exc:  # raised again in the thread that asked
                done.set_exception(exc)


_SPAWNER = _Spawner()
os.register_at_fork(after_in_child=lambda: globals().update(_SPAWNER=_Spawner()))  # threads do not fork


def start_worker(bwrap: str | None, jobs_root: Path, preload: tuple[str, ...], cpu: int | None,
                 log, jobs_on_cpu: bool = False) -> subprocess.Popen:
    """Start the worker process, from the spawner thread (see `_Spawner`), whichever thread asks: inside
    bubblewrap when `bwrap` is given, else as a plain child whose matplotlib and IPython folders sit beside
    `jobs_root` (the worker's owner removes them); its stderr goes to `log`."""
    python = str(Path(sys.prefix).resolve() / "bin" / "python")
    worker_env = _worker_env(preload, cpu, jobs_on_cpu)
    if bwrap:
        cmd = _bwrap_command(bwrap, jobs_root)
        for k, v in worker_env.items():
            cmd += ["--setenv", k, v]
        cmd += [python, "-I", INSIDE_WORKER]
        env = None
    else:
        cmd, env = [python, "-I", str(WORKER)], worker_env
        env["MPLCONFIGDIR"] = str(jobs_root) + ".mpl"
        env["IPYTHONDIR"] = str(jobs_root) + ".ipython"
    return _SPAWNER.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                          env=env, cwd=jobs_root, bufsize=0)
