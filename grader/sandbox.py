"""Run one submission's cells under limits and return what the cells claimed, nothing else.

A `SandboxWorker` owns one warm worker process (`grader/inside/`, torch imported once)
started inside bubblewrap when it is available: its own PID, network, IPC and UTS
namespaces, and a filesystem of the entries `grader/inside/policy.py` lists (/usr, a few files
of /etc, an empty /tmp, the virtual environment, the course library, the worker and the jobs'
folder), so the gradebook, solutions/, references and other submissions are simply absent.
Each job is a fresh forked child of the worker that drops to a uid of its own with no
capabilities, under memory, CPU-time, process-count and file-size limits and per-cell and
per-notebook wall budgets (`policy.Limits`), in IPC, mount and network namespaces of its own:
its folder and /dev/shm are one tmpfs of `Limits.tmp_mb`, gone with the job like its shared
memory, message queues and semaphores.

Missing facilities are detected, reported by `facilities()` and warned about; the sandbox
is never weakened silently.
"""

from __future__ import annotations

import json
import os
import queue
import random
import re
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from grader import hostlimits
from grader.course import LIBRARY_MODULE
from grader.inside import policy
from grader.inside.channel import descendants
from grader.inside.policy import Limits
from grader.limits import cap_outputs, parse_bounded, result_lines
from grader.wire import CellResult, CellStatus, RawResult, RunStatus
from torchcourse.contract import split_regions

WORKER = Path(__file__).with_name("inside")  # the worker's package, run as `python -I <folder>`
INSIDE_WORKER = policy.INSIDE_WORKER
RESULTS_CAP = 96 * 2**20   # bytes of results.jsonl the grader reads


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
    cgroups = root and (all(_cgroup_dir(c) is not None for c in ("memory", "pids"))
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


def _cgroup_dir(controller: str) -> Path | None:
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


def _remove_stale_jobs() -> None:
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
            parent = _cgroup_dir(controller)
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


def warn_missing() -> list[str]:
    """Warn (visibly, once per process) about every protection the machine lacks."""
    fac = facilities()
    for line in fac.missing:
        warnings.warn("sandbox: " + line, SandboxWarning, stacklevel=2)
    return fac.missing


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


def _worker_env(preload: tuple[str, ...] = (), cpu: int | None = None) -> dict[str, str]:
    """The worker's whole environment; `preload`: the course library modules it imports before any job;
    `cpu`: the CPU the worker process keeps to (its jobs get back every CPU it had)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython",
           "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "LANG": "C.UTF-8"}
    if preload:
        env["TORCHCOURSE_PRELOAD"] = ",".join(preload)
    if cpu is not None:
        env["TORCHCOURSE_WORKER_CPU"] = str(int(cpu))
    return env


def _json_object(line: bytes | None) -> dict:
    try:
        obj = json.loads(line) if line else {}
    except ValueError:
        return {}
    return obj if type(obj) is dict else {}


def _notes(notes) -> list[str]:
    """The worker's notes on a job, bounded (the worker is trusted, but its reply is read like any line)."""
    return [str(n)[:300] for n in notes[:10]] if type(notes) is list else []


def preload_errors(ready: dict) -> list[str]:
    """``module: error`` for each module the worker's ready line says it could not import."""
    errors = ready.get("preload_errors")
    if type(errors) is not dict:
        return []
    return [f"{str(name)[:200]}: {str(why)[:500]}" for name, why in sorted(errors.items())]


RECORD_OPENING = re.compile(rb'\{"w": (\d{1,9}), ')  # the worker's own opening of a cell's line (channel._record)


def _unreadable_record(raw: bytes, n_cells: int) -> CellResult | None:
    """A line of the worker's (it opens as `_record` writes one), within the bounds, that does not read as a
    cell's result: not JSON, or a status or outputs no cell has. The worker passes a cell's result and emitted
    values on as the child wrote them, and the child's own code writes only valid ones, so the bytes came from
    a forged line with the cell's nonce. The cell is flagged (which also zeroes the checks after it), not
    dropped with the flags its line held."""
    opening = RECORD_OPENING.match(raw)
    i = int(opening.group(1)) if opening else -1
    if not 0 <= i < n_cells:
        return None
    return CellResult(i, CellStatus.UNFINISHED, [], emits=None,
                      tampered=["the cell's results could not be read: a line with its nonce, not written by the "
                                "grader, on the results channel"])


def parse_results(path: Path, n_cells: int) -> dict[int, CellResult]:
    """Per-cell lines the worker wrote (status ok, error, output_limit, or unfinished: a cell that did not
    report but whose emitted values or tampering records arrived): size-capped, first line per cell kept; a
    line of the worker's within the bounds that is not a cell's result becomes a flagged cell
    (`_unreadable_record`); other lines that are not are dropped."""
    cells: dict[int, CellResult] = {}
    try:
        with open(path, "rb") as f:
            data = f.read(RESULTS_CAP)
    except OSError:
        return cells
    for raw in result_lines(data):  # grader.limits: bounded in count and bytes before parsing (issue 17)
        line, bounded = parse_bounded(raw)
        cell = CellResult.parse(line, n_cells)
        if cell is None and bounded:  # over a bound: dropped, as any such line
            cell = _unreadable_record(raw, n_cells)
        if cell is not None and cell.i not in cells:
            cell.outputs = cap_outputs(cell.outputs)
            cells[cell.i] = cell
    return cells


def split_cells(cells: list[str], watch) -> list[dict]:
    """Each cell as the worker runs it: a checks cell (an index in `watch`) in two parts, its visible lines,
    then its hidden block, which the worker runs apart, in a namespace of its own (and sends to the child
    only once the visible part has run)."""
    watched = set(watch)
    out = []
    for i, source in enumerate(cells):
        if i not in watched:
            out.append({"source": source, "hidden": None})
            continue
        regions = split_regions(source)
        visible = "\n".join(line for kind, line in regions if kind in ("outside", "solution"))
        hidden = "\n".join(line for kind, line in regions if kind == "hidden")
        out.append({"source": visible, "hidden": hidden})
    return out


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


@dataclass
class Answered:
    """A job a worker has answered for (`SandboxWorker.dispatch`): its reply, or the result of the worker's
    death, and the files `collect` reads and removes."""
    outside: Path
    results: Path
    n_cells: int
    preload_errors: list[str]
    reply: dict = field(default_factory=dict)
    died: RawResult | None = None

    def remove(self) -> None:
        shutil.rmtree(self.outside, ignore_errors=True)
        self.results.unlink(missing_ok=True)


class SandboxWorker:
    """One warm worker process; `run` grades one notebook's cells at a time."""

    def __init__(self, limits: Limits | None = None, slot: int = 0, wait: bool = True,
                 preload: tuple[str, ...] = (), cpu: int | None = None) -> None:
        self.limits = limits or Limits()
        self.cpu = cpu  # the one CPU the worker process itself runs on (its jobs may use all): see LocalPool
        # The course library's modules the worker imports before any job (all of them when empty).
        self.preload = self.preload_of(preload)
        self.fac = facilities()
        _remove_stale_jobs()
        self.jobs_root = Path(tempfile.mkdtemp(prefix=f"torchcourse-jobs-{os.getpid()}-"))
        os.chmod(self.jobs_root, 0o711)
        # A uid of our own per worker: RLIMIT_NPROC counts per uid, and cleanup kills every process of it.
        self.uid = random.randrange(200_000, 2_000_000_000) + slot if self.fac.drop_uid else None
        self.counter = 0
        self.preload_errors: list[str] = []   # what the worker could not import, from its ready line
        self.isolate = False                  # per-job namespaces (grader/inside/confine.py _fresh_job_space)
        self.proc: subprocess.Popen | None = None
        self.cgroups: Cgroups | None = None
        self.log = open(self.jobs_root.with_suffix(".log"), "w+b")
        self.spawn()
        if wait:
            self.wait_ready()

    @staticmethod
    def preload_of(modules) -> tuple[str, ...]:
        """What of `modules` the worker may be asked to import: names of the course library's modules only."""
        return tuple(m for m in modules if LIBRARY_MODULE.fullmatch(m))

    # ----------------------------------------------------------------- process
    def start(self) -> None:
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the worker process, from the spawner thread (see `_Spawner`), whichever thread asks."""
        python = str(Path(sys.prefix).resolve() / "bin" / "python")
        worker_env = _worker_env(self.preload, self.cpu)
        if self.fac.bwrap:
            cmd = _bwrap_command(self.fac.bwrap, self.jobs_root)
            for k, v in worker_env.items():
                cmd += ["--setenv", k, v]
            cmd += [python, "-I", INSIDE_WORKER]
            env = None
        else:
            cmd, env = [python, "-I", str(WORKER)], worker_env
            env["MPLCONFIGDIR"] = str(self.jobs_root) + ".mpl"
            env["IPYTHONDIR"] = str(self.jobs_root) + ".ipython"
        self.proc = _SPAWNER.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                   env=env, cwd=self.jobs_root, bufsize=0)
        self.pending = b""  # what was read of the worker's stdout beyond the last whole line

    def wait_ready(self) -> None:
        line = self._readline(timeout=180)
        ready = _json_object(line)
        if not ready.get("ready"):
            tail = self.log_tail()  # before close(), which closes the log
            self.close()
            raise RuntimeError("the sandbox worker did not start:\n" + tail)
        self.preload_errors = preload_errors(ready)
        # Per-job namespaces only where the grader's probe and the worker's own (inside the sandbox) agree.
        why = ready.get("job_ns")
        self.isolate = self.fac.job_ns and why == ""
        if self.fac.job_ns and not self.isolate:
            warnings.warn(f"sandbox: the worker cannot give each job IPC, mount and network namespaces of its own "
                          f"({str(why)[:300] if type(why) is str else 'it did not say'}): a job's shared memory, "
                          "queues and temp files are removed after it by uid, and its temp space is limited per "
                          "file, not in total", SandboxWarning, stacklevel=2)
        if self.fac.cgroups and self.proc is not None:
            self.cgroups = Cgroups(f"torchcourse-{os.getpid()}-{self.jobs_root.name}", self.proc.pid, self.limits)
        if self.fac.root and self.proc is not None:  # set from outside: inside bubblewrap the worker may not
            hostlimits.protect_from_oom(descendants(self.proc.pid))

    def log_tail(self, n: int = 4000) -> str:
        self.log.flush()
        self.log.seek(0, os.SEEK_END)
        size = self.log.tell()
        self.log.seek(max(0, size - n))
        return self.log.read().decode("utf-8", "replace")

    def _readline(self, timeout: float) -> bytes | None:
        """The worker's next line on stdout (its ready line, then one reply per job), or None at a timeout
        or end of file. Read in chunks: a byte at a time cost a system call, and a wait for the GIL while the
        main thread judged, per byte."""
        assert self.proc and self.proc.stdout
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line + b"\n"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        self.close_process_only()
        shutil.rmtree(self.jobs_root, ignore_errors=True)
        for extra in (".mpl", ".ipython"):
            shutil.rmtree(str(self.jobs_root) + extra, ignore_errors=True)
        try:
            self.log.close()
            os.unlink(self.jobs_root.with_suffix(".log"))
        except OSError:
            pass

    def __enter__(self) -> SandboxWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------- jobs
    def run(self, cells: list[str], seed: int, watch: list[int] = (), files: dict[str, bytes] | None = None
            ) -> RawResult:
        """Run `cells` in a fresh sandboxed child; never raises for anything the learner did.

        `files` (name -> bytes) are the chapter's own data files, released to learners too, put
        beside the cells as nbgrader puts them beside an autograded notebook."""
        return self.collect(self.dispatch(cells, seed, watch, files))

    def dispatch(self, cells: list[str], seed: int, watch: list[int] = (), files: dict[str, bytes] | None = None
                 ) -> Answered:
        """`run`'s first half: the job runs and the worker answers. The worker is free for the next job when
        this returns; `collect` reads and removes what this job left (a pool does that while the next runs:
        it was 1.6 ms a job the worker waited)."""
        if not self.alive():
            self.start()
        self.counter += 1
        name = f"j{self.counter}"
        outside = self.jobs_root / name
        outside.mkdir(mode=0o700)
        results = self.jobs_root / f"{name}.results.jsonl"  # the worker's (root's), outside the job's folder
        answered = Answered(outside, results, len(cells), list(self.preload_errors))
        try:
            (outside / "job.json").write_text(json.dumps({"cells": split_cells(cells, watch), "seed": seed}))
            os.chmod(outside / "job.json", 0o600)
            for fname, data in (files or {}).items():
                if "/" not in fname and fname not in ("job.json", "results.jsonl", "raw.out", ".", ".."):
                    (outside / fname).write_bytes(data)
                    os.chmod(outside / fname, 0o644)
            if self.uid is not None:
                os.chown(outside, self.uid, self.uid)
            inside = f"/jobs/{name}" if self.fac.bwrap else str(outside)
            spec = {"id": name, "dir": inside, "results": f"/jobs/{results.name}" if self.fac.bwrap else str(results),
                    "uid": self.uid, "gid": self.uid,
                    "netns": (not self.fac.bwrap) and self.fac.root, "isolate": self.isolate,
                    **self.limits.to_dict()}
            assert self.proc and self.proc.stdin
            try:
                self.proc.stdin.write((json.dumps(spec) + "\n").encode())
            except (BrokenPipeError, OSError):
                answered.died = self._died(name)
                return answered
            line = self._readline(timeout=self.limits.budget + 30)
            if line is None:
                answered.died = self._died(name)
                return answered
            answered.reply = json.loads(line)
            return answered
        except BaseException:
            answered.remove()
            raise

    def collect(self, answered: Answered) -> RawResult:
        """`run`'s second half: what the job reported, read from its results file; its files removed."""
        try:
            if answered.died is not None:
                return answered.died
            reply = answered.reply
            cells_done = parse_results(answered.results, answered.n_cells)
            return RawResult(RunStatus.parse(reply.get("status")), cells_done, reply.get("seconds", 0.0),
                             reply.get("code"), reply.get("signal"), reply.get("error", ""),
                             answered.preload_errors, _notes(reply.get("notes")))
        finally:
            answered.remove()

    def _died(self, name: str) -> RawResult:
        cells = parse_results(self.jobs_root / f"{name}.results.jsonl", 10**6)
        tail = self.log_tail()
        self.close_process_only()
        return RawResult(RunStatus.WORKER_DIED, cells, error="the sandbox worker stopped: " + tail[-500:],
                         preload_errors=list(self.preload_errors))

    def kill(self) -> None:
        """Start the worker's end (close waits for it): a pool kills all its workers first, so that their
        exits, hundreds of MB each to free, overlap."""
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass

    def close_process_only(self) -> None:
        if self.proc is not None:
            self.kill()
            try:
                self.proc.wait(timeout=10)
            except Exception:
                pass
            self.proc = None
        if self.cgroups is not None:
            self.cgroups.remove()
            self.cgroups = None
