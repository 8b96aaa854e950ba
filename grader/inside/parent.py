"""The worker's side of one job: fork the child, send it the cells, keep the clock, write what it reported."""

from __future__ import annotations

import fcntl
import json
import math
import os
import secrets
import select
import signal
import socket
import struct
import sys
import termios
import time

from .channel import _Channel, _channel_holders, _record
from .checker import run_checker
from .child import run_child
from .cleanup import _job_space, _kill_uid, _space_notes, _sweep
from .policy import SETUP_TIMEOUT
from .shell import GradeShell


def _send(fd: int, obj: dict) -> bool:
    data = (json.dumps(obj) + "\n").encode()
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        return False
    return True


def _unread(fd: int) -> int:
    """Bytes sent on the pipe `fd` (our write end) that the child has not read yet (FIONREAD works on either
    end of a pipe): only the child's own read empties it."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


def _split(cell: dict) -> tuple[str, str | None]:
    if type(cell) is str:
        return cell, None
    return str(cell.get("source", "")), cell.get("hidden")


def _take_job(jobdir: str) -> dict:
    """Read and delete job.json (root's, 0600). Called in the parent after the fork: the child never holds
    a cell it has not been sent, and the file is gone before the child runs any learner code."""
    job_path = os.path.join(jobdir, "job.json")
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    os.unlink(job_path)
    return job


def _fork_checker(cmd: tuple[int, int], res: tuple[int, int], link: socket.socket, others: list[int]) -> int:
    """Fork the job's checker, which keeps the read end of `cmd`, the write end of `res` and its end of the
    link; its pid. Forked before the learner's child, so it holds nothing of the learner's process."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the worker's protocol is on 0 and 1: not the checker's to touch
                os.dup2(devnull, fd)
            for fd in (cmd[1], res[0], *others):
                os.close(fd)
            run_checker(cmd[0], res[1], link)
        except BaseException:
            os._exit(70)
    os.close(cmd[0])
    os.close(res[1])
    link.close()
    return pid


def _fork_child(shell: GradeShell, spec: dict, snap: dict, cmd: tuple[int, int], res: tuple[int, int],
                link: socket.socket) -> int:
    """Fork the job's child, which keeps the read end of `cmd`, the write end of `res` and its end of the
    link to the checker; its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(cmd[1])
        os.close(res[0])
        try:
            run_child(shell, spec, cmd[0], res[1], snap, link.fileno())
        except BaseException as exc:
            try:
                os.write(2, f"sandbox child failed: {type(exc).__name__}: {exc}\n".encode())
            finally:
                os._exit(70)
    os.close(cmd[0])
    os.close(res[1])
    link.close()
    return pid


class _JobRun:
    """The parent's side of one job: the child, the pipe that sends it cells, the channel it reports on,
    and the clock (cell limits and the notebook's budget are kept here, whatever the child signals)."""

    def __init__(self, shell: GradeShell, spec: dict, snap: dict) -> None:
        self.spec = spec
        to_checker, from_checker = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
        checker_end, learner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.start = time.monotonic()
        self.checker = _fork_checker(to_checker, from_checker, checker_end, [learner_end.fileno()])
        self.chk_w, self.chk_r = to_checker[1], from_checker[0]
        cmd, res = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
        for fd in (self.chk_w, self.chk_r):
            os.set_inheritable(fd, False)
        self.pid = _fork_child(shell, spec, snap, cmd, res, learner_end)
        self.cmd_w, self.res_r = cmd[1], res[0]
        self.job = _take_job(spec["dir"])
        # The child's descriptors (same numbers as ours before we closed them) and the pipes they must show.
        ours = {cmd[1]: os.readlink(f"/proc/self/fd/{cmd[1]}"), res[0]: os.readlink(f"/proc/self/fd/{res[0]}")}
        self.pipes = set(ours.values())
        self.child_fds = {cmd[0]: ours[cmd[1]], res[1]: ours[res[0]]}
        self.pidfd = os.pidfd_open(self.pid)
        self.chan = _Channel(self.res_r)
        self.poller = select.poll()  # registered once: select.select rebuilt its sets on every wake-up
        self.poller.register(self.pidfd, select.POLLIN)
        self.poller.register(self.res_r, select.POLLIN)
        self.results = os.open(spec["results"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)

    def set_up(self) -> str:
        """Send the grading seed to the checker and a seed of its own to the child; "ok" once the child says
        it is set up, else why not."""
        nonce = secrets.token_hex(16)
        self.chan.start(nonce, [])
        _send(self.chk_w, {"seed": self.job["seed"]})
        _send(self.cmd_w, {"seed": secrets.randbits(63), "nonce": nonce})
        return self.wait(True, None)

    def wait(self, until_ready: bool, cell_timeout: float | None, checks: _CheckerReport | None = None) -> str:
        """Read the channel until the child is ready or the cell's result arrives (for a checks cell, and the
        checker's report); or why not. The clock is the worker's: a line the child writes cannot stop it."""
        chan, pid, start, budget = self.chan, self.pid, self.start, self.spec["budget"]
        sent = time.monotonic()
        interrupted_at = None
        while True:
            if checks is not None and checks.line is None and not checks.eof:
                if select.select([self.chk_r], [], [], 0)[0]:
                    checks.feed()
                    continue
            done = chan.result is not None and (checks is None or checks.line is not None or checks.eof)
            if (until_ready and chan.ready) or (not until_ready and done):
                return "ok"
            now = time.monotonic()
            if cell_timeout is None:
                deadline = min(start + SETUP_TIMEOUT, start + budget)
            elif interrupted_at is None:
                deadline = min(sent + cell_timeout, start + budget)
            else:
                deadline = min(interrupted_at + 2.0, start + budget)
            if now >= deadline:
                if now >= start + budget:
                    return "budget"
                if cell_timeout is not None and interrupted_at is None:
                    if _unread(self.cmd_w):
                        # The child never read this cell: a cell before it was still running when a result
                        # line (forged: it carried that cell's nonce) said it had ended.
                        chan.tampered.append("a cell's result came before the cell had ended (the next cell was "
                                             "never read)")
                    os.kill(pid, signal.SIGINT)  # like Jupyter: a loop in one cell costs only that cell
                    interrupted_at = now
                    continue
                return "timeout"
            if checks is not None and checks.line is None and not checks.eof:
                self.poller.register(self.chk_r, select.POLLIN)
            ready = [fd for fd, _ in self.poller.poll(math.ceil((deadline - now) * 1000))]
            if checks is not None:
                try:
                    self.poller.unregister(self.chk_r)
                except KeyError:
                    pass
            if self.chk_r in ready:
                continue
            if self.res_r in ready:
                if not chan.feed():
                    return "output_limit"
                if chan.eof:
                    self.poller.unregister(self.res_r)  # a closed pipe polls readable for ever
                continue
            if self.pidfd in ready:
                while not chan.eof and select.select([self.res_r], [], [], 0)[0]:
                    if not chan.feed():
                        break
                if checks is not None and checks.line is None:
                    checks.feed_until_end(min(deadline, now + 2.0))
                if (until_ready and chan.ready) or (not until_ready and chan.result is not None):
                    return "ok"
                return "exited"

    def run_cells(self) -> str:
        """Every cell in order, until one does not end well; the run's status. A run of plain cells goes to
        the child in one message, which it runs without waiting for the parent between them; a checks cell
        goes alone, after the channel has been checked again."""
        cells = [_split(cell) for cell in self.job["cells"]]
        i = 0
        while i < len(cells):
            j = i + 1
            while cells[i][1] is None and j < len(cells) and cells[j][1] is None:
                j += 1
            if cells[i][1] is not None:
                state = self.run_checks(i, *cells[i])
            else:
                state = self.run_batch(i, cells[i:j])
            if state != "ok":
                return state if state in ("output_limit", "timeout", "budget", "checker") else "exited"
            i = j
        _send(self.cmd_w, {"end": True})
        select.select([self.pidfd], [], [], 5.0)
        return "exited"

    def run_batch(self, first: int, cells: list[tuple[str, str | None]]) -> str:
        """Send cells `first`, `first + 1`, ...; wait for each one's end (its cell limit counts from the
        previous one's end) and write what it reported to the results file; "ok" or why not."""
        chan = self.chan
        wrong = _channel_holders(self.pid, self.pipes, self.child_fds)
        nonces = [secrets.token_hex(16) for _ in cells]
        chan.start(nonces[0], wrong)  # what arrives from now on (old nonces included) belongs to the first cell
        batch = [{"i": first + k, "nonce": nonce, "source": source} for k, (nonce, (source, _)) in
                 enumerate(zip(nonces, cells))]
        if not _send(self.cmd_w, {"cells": batch}):
            return "exited"
        for k, nonce in enumerate(nonces):
            i = first + k
            if k:
                chan.start(nonce, [])
            state = self.wait(False, self.spec["cell_timeout"])
            if chan.result is not None or chan.tampered or chan.emits:
                os.write(self.results, _record(i, chan.result, chan.emits, chan.tampered))
            if state != "ok":
                return state
        return "ok"

    def run_checks(self, i: int, source: str, hidden: str) -> str:
        """Checks cell `i`: the checker runs it (visible part, then hidden block) while the child serves its
        requests; the cell's result is the checker's status, emitted values and outputs, with what the child
        printed meanwhile placed after the visible part's; "ok" or why not."""
        chan = self.chan
        wrong = _channel_holders(self.pid, self.pipes, self.child_fds)
        nonce = secrets.token_hex(16)
        chan.start(nonce, wrong)
        if not _send(self.cmd_w, {"cells": [{"i": i, "nonce": nonce, "source": "", "serve": True}]}):
            return "exited"
        report = _CheckerReport(self.chk_r)
        if not _send(self.chk_w, {"i": i, "source": source, "hidden": hidden}):
            report.eof = True
        state = self.wait(False, self.spec["cell_timeout"], report)
        if report.line is None and state == "ok":
            report.feed_until_end(time.monotonic() + 2.0)
        if report.line is None:
            self.checker_failed = True
        os.write(self.results, _record(i, _merged(chan.result, report.line), report.emits(), chan.tampered))
        if report.line is None and state == "ok":
            return "checker"
        return state

    def end(self) -> int:
        """Kill every process of the job, reap the child, remove what it left; its wait status."""
        for pid in (self.pid, self.checker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(self.checker, 0)
        except ChildProcessError:
            pass
        _kill_uid(self.spec.get("uid"), self.pid)
        if self.spec.get("uid") is not None:
            # The job's folder outside its temp space is its uid's, and is removed by the grader only while the
            # next job, run as the same uid, already runs: that job could enter it (the name is predictable),
            # read what was left there and write outside its own temp space. Root's from here on.
            try:
                os.chown(self.spec["dir"], 0, 0)
                os.chmod(self.spec["dir"], 0o700)
            except OSError:
                pass
        _, wstatus = os.waitpid(self.pid, 0)
        _sweep(self.spec.get("uid"))
        for fd in (self.pidfd, self.res_r, self.cmd_w, self.results, self.chk_r, self.chk_w):
            os.close(fd)
        return wstatus


class _CheckerReport:
    """The checker's line for one checks cell, read from its pipe (its code is the grader's, so its line is
    trusted; its size is bounded all the same)."""

    CAP = 64 << 20

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.line, self.eof = fd, b"", None, False

    def feed(self) -> None:
        data = os.read(self.fd, 1 << 16)
        if not data:
            self.eof = True
            return
        self.buf += data
        if b"\n" in self.buf:
            raw, _, self.buf = self.buf.partition(b"\n")
            try:
                self.line = json.loads(raw)
            except ValueError:
                self.eof = True
        elif len(self.buf) > self.CAP:
            self.eof = True

    def feed_until_end(self, deadline: float) -> None:
        while self.line is None and not self.eof and time.monotonic() < deadline:
            if select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                self.feed()

    def emits(self) -> list[bytes]:
        if self.line is None:
            return []
        return [str(e).encode() for e in self.line.get("emits", [])]


def _merged(child: bytes | None, checker: dict | None) -> bytes | None:
    """The checks cell's result: the checker's status and outputs, the child's outputs (what learner code
    printed while answering) after the visible part's."""
    if checker is None:
        return None
    outputs = checker.get("outputs", [])
    shown = checker.get("shown", 0)
    line = {"i": checker["i"], "status": checker.get("status", "error"), "outputs": outputs, "shown": shown}
    if child is not None:
        try:
            served = json.loads(child)
        except ValueError:
            served = {}
        if type(served) is dict:
            learner = served.get("outputs") if type(served.get("outputs")) is list else []
            line["outputs"] = outputs[:shown] + learner + outputs[shown:]
            for key in ("execution_count", "seconds"):
                if key in served:
                    line[key] = served[key]
            if served.get("status") == "output_limit":
                line["status"] = "output_limit"
    return json.dumps(line).encode()


def run_job(shell: GradeShell, spec: dict, snap: dict) -> dict:
    """Fork a child for one job; send it the cells (runs of plain cells, each checks cell alone); write what
    it reported, cell by cell, to spec["results"] (a file of the grader's, outside the job's folder). The
    reply's status is one of grader.wire.RunStatus (this file imports nothing from the grader, so it names
    them as strings)."""
    run = _JobRun(shell, spec, snap)
    state = run.set_up()
    space = _job_space(run.pid) if state == "ok" and spec.get("isolate") else None
    if state == "ok":
        status = run.run_cells()
    else:
        status = state if state in ("timeout", "budget") else "exited"
    if status == "checker":
        status = "worker_error"
    wstatus = run.end()
    notes = _space_notes(space, int(spec.get("tmp_mb") or 0))
    reply = {"id": spec["id"], "status": status, "seconds": round(time.monotonic() - run.start, 3)}
    if notes:
        reply["notes"] = notes
    if os.WIFSIGNALED(wstatus):
        reply["signal"] = os.WTERMSIG(wstatus)
    else:
        reply["code"] = os.WEXITSTATUS(wstatus)
    return reply
