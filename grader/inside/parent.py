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
from .checker import compile_for_later_checkers, run_checker
from .checker_report import _CheckerReport, _merged
from .child import run_child
from .cleanup import _job_space, _kill_uid, _reap_orphans, _space_notes, _sweep
from .confine import PR_SET_PDEATHSIG, _libc
from .policy import SETUP_TIMEOUT
from .shell import GradeShell
from .templates import take_prefix


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
                link: socket.socket, ctl: socket.socket | None = None) -> int:
    """Fork the job's child, which keeps the read end of `cmd`, the write end of `res` and its end of the
    link to the checker; its pid. With `ctl` (its end of a socket to the worker) the child is a template."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(cmd[1])
        os.close(res[0])
        try:
            if ctl is not None:
                _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the worker gone: so is its template
            run_child(shell, spec, cmd[0], res[1], snap, link.fileno(), None if ctl is None else ctl.fileno())
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

    def __init__(self, shell: GradeShell, spec: dict, snap: dict, template=None, ctl: socket.socket | None = None
                 ) -> None:
        """A job's run; from `template` (a `templates.Template`), its child is forked from there; with `ctl` (a
        socket to the worker) this is the run of a template itself, which has no checker."""
        self.spec = spec
        self.first = 0              # the first cell this run sends (a template's fork starts after the prefix)
        self.forked = False
        self.template = template
        self.start = time.monotonic()
        checker_end, learner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        if ctl is None:
            to_checker, from_checker = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
            self.checker = _fork_checker(to_checker, from_checker, checker_end, [learner_end.fileno()])
            self.chk_w, self.chk_r = to_checker[1], from_checker[0]
            for fd in (self.chk_w, self.chk_r):
                os.set_inheritable(fd, False)
        else:
            checker_end.close()  # a template runs no checks cell
            self.checker = self.chk_w = self.chk_r = None
        cmd, res = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
        pid = template.fork(spec, cmd[0], res[1], learner_end) if template is not None else None
        if pid is not None:
            self.forked, self.first = True, template.prefix
            os.close(cmd[0])
            os.close(res[1])
            learner_end.close()
            child_numbers = (template.cmd_fd, template.res_fd)
        else:
            pid = _fork_child(shell, spec, snap, cmd, res, learner_end, ctl)
            child_numbers = (cmd[0], res[1])
        self.pid = pid
        self.cmd_w, self.res_r = cmd[1], res[0]
        self.job = _take_job(spec["dir"]) if ctl is None else {"cells": [], "seed": None}
        # The child's descriptors and the pipes they must show.
        ours = {cmd[1]: os.readlink(f"/proc/self/fd/{cmd[1]}"), res[0]: os.readlink(f"/proc/self/fd/{res[0]}")}
        self.pipes = set(ours.values())
        self.child_fds = {child_numbers[0]: ours[cmd[1]], child_numbers[1]: ours[res[0]]}
        self.pidfd = os.pidfd_open(self.pid)
        self.chan = _Channel(self.res_r)
        self.poller = select.poll()  # registered once: select.select rebuilt its sets on every wake-up
        self.poller.register(self.pidfd, select.POLLIN)
        self.poller.register(self.res_r, select.POLLIN)
        self.results = os.open(spec["results"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        if self.forked:
            os.write(self.results, template.records)  # the prefix's cells, as the template reported them

    def set_up(self) -> str:
        """Send the grading seed to the checker and a seed of its own to the child; "ok" once the child says
        it is set up, else why not."""
        nonce = secrets.token_hex(16)
        self.chan.start(nonce, [])
        if self.chk_w is not None:
            _send(self.chk_w, {"seed": self.job["seed"], "language": self.job.get("language")})
        # A child forked from a template keeps the random state the prefix left: it gets no seed.
        _send(self.cmd_w, {"nonce": nonce} if self.forked else {"seed": secrets.randbits(63), "nonce": nonce})
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
        i = self.first
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
        compile_for_later_checkers(i, source, hidden)
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
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            if self.checker is not None:
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
        wstatus = self.template.reap(self.pid) if self.forked else os.waitpid(self.pid, 0)[1]
        _reap_orphans(self.spec.get("uid"))
        _sweep(self.spec.get("uid"))
        for fd in (self.pidfd, self.res_r, self.cmd_w, self.results, self.chk_r, self.chk_w):
            if fd is not None:
                os.close(fd)
        return wstatus


def _from_template(shell: GradeShell, spec: dict, snap: dict, templates) -> tuple[object, dict]:
    """The template this job's child is to be forked from (None: a full run), and what to say of it: the job's
    folder holds prefix.json when the grader found its opening byte-identical to the release's."""
    prefix = take_prefix(spec["dir"]) if templates is not None else None
    if prefix is None:
        return None, {}
    if not (spec.get("isolate") and spec.get("uid") is not None):
        return None, {"how": "full", "why": "the sandbox here gives a job no uid or namespaces of its own"}
    template = templates.get(shell, snap, spec, prefix)
    info = {"key": template.key[:16], "template_seconds": round(template.seconds, 3),
            "template_cpu_seconds": round(template.cpu, 3), "cells": template.prefix,
            **template.memory}
    if template.shortened:
        info["shortened"] = template.shortened
    if template.why:
        return None, {**info, "how": "full", "why": template.why}
    return template, info


def run_job(shell: GradeShell, spec: dict, snap: dict, templates=None) -> dict:
    """Fork a child for one job (from the template of its notebook's opening, when it has one that can be
    forked); send it the cells (runs of plain cells, each checks cell alone); write what it reported, cell by
    cell, to spec["results"] (a file of the grader's, outside the job's folder). The reply's status is one of
    grader.wire.RunStatus (this file imports nothing from the grader, so it names them as strings)."""
    template, prefix = _from_template(shell, spec, snap, templates)
    run = _JobRun(shell, spec, snap, template)
    if template is not None:
        if not run.forked:
            prefix = {**prefix, "how": "full", "why": template.why}
        elif [_split(c) for c in run.job["cells"][:template.prefix]] != [(c, None) for c in template.cells]:
            # The grader sends prefix.json only for an opening identical to the release's: this is its bug,
            # and the job is sent again without it (grader/sandbox.py).
            run.end()
            why = "the job's opening cells differ from its template's"
            return {"id": spec["id"], "status": "worker_error", "prefix": {"how": "again", "why": why}, "error": why}
        else:
            prefix = {**prefix, "how": "forked"}
    state = run.set_up()
    if run.forked and state != "ok":
        # No learner code has run: the fork failed to set itself up. The template serves no more jobs, and this
        # one is sent again to run in full (grader/sandbox.py), so that it costs the learner nothing.
        template.why = "a child forked from it could not set itself up"
        template.close()
        run.end()
        why = "a child forked from the notebook's template could not set itself up"
        return {"id": spec["id"], "status": "worker_error", "prefix": {"how": "again", "why": why}, "error": why}
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
    if prefix:
        reply["prefix"] = prefix
    if notes:
        reply["notes"] = notes
    if os.WIFSIGNALED(wstatus):
        reply["signal"] = os.WTERMSIG(wstatus)
    else:
        reply["code"] = os.WEXITSTATUS(wstatus)
    return reply
