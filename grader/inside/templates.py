"""The worker's templates (grader/inside/template.py), one per notebook opening of the batch: started on the
first job that asks for one, kept while their memory fits `policy.TEMPLATES_MB`, killed when replaced or when
the worker ends. A template that cannot be made or forked costs nothing but time: its jobs run in full."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import time
from collections import OrderedDict

from .confine import _libc
from .policy import JOB_FILES, SETUP_TIMEOUT, TEMPLATES_KEPT, TEMPLATES_MB, THREADS_QUIET, THREADS_SETTLE

PR_SET_CHILD_SUBREAPER = 36


def take_prefix(jobdir: str) -> dict | None:
    """Read and delete prefix.json (root's, 0600): the release's opening cells for this job's notebook and
    their key, written by the grader from the solution notebook, never from a submission."""
    path = os.path.join(jobdir, "prefix.json")
    try:
        with open(path, encoding="utf-8") as f:
            prefix = json.load(f)
    except OSError:
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    ok = (type(prefix) is dict and type(prefix.get("key")) is str and type(prefix.get("cells")) is list
          and all(type(c) is str for c in prefix["cells"]) and prefix["cells"])
    return prefix if ok else None


def _cut(prefix: dict) -> tuple[int, str] | None:
    """prefix.json's `cut`, when sound: another worker's template of this opening stopped before cell `cells`
    (one that left a thread running), so this worker's stops there at once."""
    cut = prefix.get("cut")
    if type(cut) is not dict or type(cut.get("cells")) is not int or type(cut.get("why")) is not str:
        return None
    return (cut["cells"], cut["why"]) if 0 < cut["cells"] < len(prefix["cells"]) else None


def _threads(pid: int) -> int:
    """How many threads process `pid` runs now (1 if it cannot be read: the final check will tell)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 1


def _asleep(pid: int) -> bool:
    """Whether every thread of process `pid` but its main one is asleep (waiting, not running or ending)."""
    try:
        tids = [t for t in os.listdir(f"/proc/{pid}/task") if t != str(pid)]
        states = []
        for tid in tids:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                states.append(f.read().rpartition(b")")[2].split()[0])
    except (OSError, IndexError):
        return False  # a thread went while we looked: not settled yet
    return all(state == b"S" for state in states)


def _one_thread_soon(pid: int, within: float = THREADS_SETTLE, quiet: float = THREADS_QUIET) -> bool:
    """Whether process `pid` is down to one thread, now or within `within` seconds. A thread a cell joined may
    still be leaving: OpenMP's workers for a thread that ran torch operations (nn.DataParallel's replicas on
    threads) end after it, not with it, and a cell counted at once would cut the template there by chance.
    Threads that all sleep through `quiet` seconds while none ends are taken to stay (the Kineto profiler's
    config thread waits for minutes): waiting the rest of `within` for them would leave a core idle."""
    start = changed = time.monotonic()
    seen = _threads(pid)
    while seen > 1:
        now = time.monotonic()
        if now - start >= within or (now - changed >= quiet and _asleep(pid)):
            return False
        time.sleep(0.005)
        if (n := _threads(pid)) != seen:
            seen, changed = n, time.monotonic()
    return True


class Template:
    """The worker's handle on one template process: its run (the prefix's), its control socket, the records of
    the prefix's cells, and whether it can be forked (`why` says why not)."""

    def __init__(self, key: str, cells: list[str]) -> None:
        self.key, self.cells, self.prefix = key, cells, len(cells)
        self.run = None
        self.sock: socket.socket | None = None
        self.records = b""
        self.why = ""
        self.memory: dict[str, int] = {}
        self.cmd_fd = self.res_fd = -1
        self.seconds = 0.0
        self.cpu = 0.0  # CPU seconds its making took, its cells' processes included
        self.forkable: int | None = None  # set when an opening cell left a thread: the cells before it
        self.shortened = ""  # why this template holds fewer cells than the notebook's opening, if it does

    def start(self, shell, snap: dict, spec: dict, jobdir: str, n: int) -> None:
        """Run the prefix in a fresh template, as a job's child would run those cells; `why` is set if it
        cannot serve."""
        from .parent import _JobRun

        inside = os.path.dirname(jobdir.rstrip("/"))
        folder = os.path.join(inside, f"t{n}")
        os.mkdir(folder, 0o700)
        for entry in os.scandir(jobdir):  # the chapter's data files, the grader's, as a job's folder has them
            if entry.name not in JOB_FILES and entry.is_file(follow_symlinks=False):
                shutil.copyfile(entry.path, os.path.join(folder, entry.name))
                os.chmod(os.path.join(folder, entry.name), 0o644)
        self.folder = folder
        self.results = folder + ".results.jsonl"
        # The job's uid: the template's temp space is its, and the template reaches files as it (child.run_child)
        tspec = {**spec, "id": f"t{n}", "dir": folder, "results": self.results, "isolate": True, "netns": False}
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        began = time.monotonic()
        try:
            self.run = _JobRun(shell, tspec, snap, ctl=theirs)
        finally:
            theirs.close()
        self.sock = mine
        if self.run.set_up() != "ok":
            self.why = "its set-up did not finish"
            return
        # One cell at a time, counting the template's threads after each: a cell that leaves one (the Kineto
        # profiler's config thread, a pool) makes this template unforkable, but the cells before it can still be
        # shared: `forkable` says how many, and the worker makes a template of those instead (`Templates.get`).
        state = "ok"
        for i, cell in enumerate(self.cells):
            state = self.run.run_batch(i, [(cell, None)])
            if state != "ok":
                break
            if not _one_thread_soon(self.run.pid):
                self.forkable = i
                break
        os.close(self.run.results)
        self.run.results = None
        with open(self.results, "rb") as f:
            self.records = f.read()
        os.unlink(self.results)
        self.seconds = time.monotonic() - began
        if state != "ok":
            self.why = f"the opening cells did not run to the end ({state})"
            return
        if self.forkable is not None:
            self.why = f"opening cell {self.forkable} left a thread running"
            return
        for line in self.records.splitlines():
            rec = json.loads(line)
            if rec.get("status") != "ok" or rec.get("tampered") or rec.get("emits"):
                self.why = f"opening cell {rec.get('i')} did not end cleanly ({rec.get('status')})"
                return
        if len(self.records.splitlines()) != self.prefix:
            self.why = "an opening cell did not report"
            return
        from .parent import _send

        _send(self.run.cmd_w, {"hold": True})
        reply = self._reply(SETUP_TIMEOUT)
        if reply is None:
            self.why = "it did not answer after its opening cells"
            return
        self.memory = {k: int(reply.get(k) or 0) for k in ("private_kb", "pss_kb", "rss_kb")}
        cpu = reply.get("cpu_seconds")
        self.cpu = float(cpu) if type(cpu) in (int, float) and cpu >= 0 else 0.0
        self.cmd_fd, self.res_fd = int(reply.get("cmd", -1)), int(reply.get("res", -1))
        if not reply.get("forkable"):
            self.why = str(reply.get("why"))[:300] or "it cannot be forked"

    def _reply(self, timeout: float) -> dict | None:
        """The template's next line on the control socket, or None."""
        assert self.sock is not None
        data = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                return None
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError:  # reset: the template died after taking the request (the job then runs in full)
                return None
            if not chunk:
                return None
            data += chunk
        try:
            obj = json.loads(data.partition(b"\n")[0])
        except ValueError:
            return None
        return obj if type(obj) is dict else None

    def fork(self, spec: dict, cmd: int, res: int, link: socket.socket) -> int | None:
        """A job's child forked from this template (the template's child: `reap` gives its wait status); None
        when the template cannot give one (the job then runs in full)."""
        if self.why or self.sock is None:
            return None
        try:
            socket.send_fds(self.sock, [json.dumps(spec).encode()], [cmd, res, link.fileno()])
        except OSError:
            self.why = "it stopped"
            return None
        reply = self._reply(SETUP_TIMEOUT)
        pid = reply.get("pid") if reply else None
        if type(pid) is not int or pid <= 0:
            self.why = "it stopped, or could not fork"
            return None
        return pid

    def reap(self, pid: int) -> int:
        """The wait status of `pid`, a child forked from this template that the worker has killed. When the
        template cannot tell, it is killed: the child, dead or not, is then the worker's (its subreaper's) to
        reap, as it is when the template is gone already."""
        if self.sock is not None:
            try:
                self.sock.sendall((json.dumps({"reap": pid}) + "\n").encode())
                reply = self._reply(SETUP_TIMEOUT)
            except OSError:
                reply = None
            status = reply.get("status") if reply else None
            if type(status) is int:
                return status
            self.why = "it could not say how a child forked from it ended"
            self.close()
        return os.waitpid(pid, 0)[1]

    def close(self) -> None:
        """Kill the template and reap it; its temp space goes with its namespaces."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        run = self.run
        if run is not None:
            try:
                os.kill(run.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(run.pid, 0)
            except ChildProcessError:
                pass
            for fd in (run.pidfd, run.res_r, run.cmd_w, run.results):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self.run = None
        shutil.rmtree(self.folder, ignore_errors=True) if hasattr(self, "folder") else None


class Templates:
    """The worker's templates by key, the most recently used last."""

    def __init__(self) -> None:
        self.kept: OrderedDict[str, Template] = OrderedDict()
        self.made = 0
        self.batch = None

    def get(self, shell, snap: dict, spec: dict, prefix: dict) -> Template:
        """The template for `prefix` (made now if this worker has none), used or not. A job of another batch
        (a warm Dask worker's next one) ends the templates of the last."""
        if prefix.get("batch") != self.batch:
            self.close()
            self.batch = prefix.get("batch")
        key = prefix["key"]
        t = self.kept.get(key)
        if t is not None:
            self.kept.move_to_end(key)
            return t
        if not self.made:
            # A job's child forked from a template becomes this process's own child when the process between them
            # exits: reaped, timed and killed here like any job's child. Set with the first template, so that a
            # worker that never makes one hands orphans to the sandbox's init, as before.
            _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        cells, shortened = prefix["cells"], ""
        if cut := _cut(prefix):
            cells, shortened = cells[:cut[0]], cut[1]
        t = self._make(shell, snap, spec, key, cells)
        if t.forkable:  # its cells before the one that left a thread: a template of those serves the jobs
            shortened = t.why
            t = self._make(shell, snap, spec, key, cells[:t.forkable])
        t.shortened = shortened
        self.kept[key] = t
        self._fit()
        return t

    def _make(self, shell, snap: dict, spec: dict, key: str, cells: list[str]) -> Template:
        self.made += 1
        t = Template(key, cells)
        try:
            t.start(shell, snap, spec, spec["dir"], self.made)
        except Exception as exc:  # the grader's own trouble: this notebook's jobs run in full
            t.why = f"it could not be started ({type(exc).__name__}: {str(exc)[:200]})"
        if t.why:
            t.close()  # nothing to keep but the answer: the template's memory is freed now
        return t

    def _fit(self) -> None:
        """Drop the least recently used templates beyond `TEMPLATES_KEPT`, or beyond `TEMPLATES_MB` together."""
        while len(self.kept) > TEMPLATES_KEPT or (
                len(self.kept) > 1 and sum(t.memory.get("private_kb", 0) for t in self.kept.values() if not t.why)
                > TEMPLATES_MB * 1024):
            _, old = self.kept.popitem(last=False)
            old.close()
        for t in self.kept.values():
            if not t.why and t.memory.get("private_kb", 0) > TEMPLATES_MB * 1024:
                t.why = f"it holds {t.memory['private_kb'] // 1024} MB of its own, over {TEMPLATES_MB} MB"
                t.close()

    def close(self) -> None:
        for t in self.kept.values():
            t.close()
        self.kept.clear()
