"""The job's child: set itself up, confine itself, then run the cells the parent sends and report each one."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import tempfile
import time

import numpy
import torch

from .base import torchcourse

try:
    from torchcourse.link import LearnerEnd, quiet_warnings
except ImportError:  # reported by the parent as a missing course library
    LearnerEnd = quiet_warnings = None
from .confine import _capture_output, _confine, _confine_template, _huge_pages, _libc, _new_session
from .guard import make_guard
from .policy import CELL_CAP, STREAM_CAP
from .shell import COLLECT, GradeShell, _Sink


def _read_message(fd: int, buf: bytearray) -> dict | None:
    """One JSON line from the parent (None at end of file)."""
    while b"\n" not in buf:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return json.loads(line)


def _seed_everything(seed: int) -> None:
    """A random state derived from `seed` (never the seed itself, so torch.initial_seed() and friends do not
    reveal it), and the course seed set as secret: the checker's is the grading seed, the learner's child
    gets one of its own."""
    import hashlib
    import random

    def derived(what: str, bits: int) -> int:
        return int.from_bytes(hashlib.sha256(f"{seed}:{what}".encode()).digest()[:8], "little") % 2**bits

    random.seed(derived("random", 63))
    numpy.random.seed(derived("numpy", 32))
    # The sandbox shows no accelerator, so the CPU generator is all torch.manual_seed would seed; seeding it
    # directly skips manual_seed's per-device imports and checks (2-4 ms in a freshly forked child).
    torch.default_generator.manual_seed(derived("torch", 63))
    if torchcourse is not None:
        torchcourse.grading.set_seed(seed, secret=True)


def _enter_job_folder(jobdir: str) -> None:
    """The learner's view: the job's folder as working directory and home, a plain environment, and
    stdout/stderr that become the cell's outputs."""
    os.chdir(jobdir)
    os.environ.clear()
    os.environ.update({"HOME": jobdir, "PATH": "/usr/bin:/bin", "TMPDIR": jobdir, "USER": "learner",
                       "MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYTHONDONTWRITEBYTECODE": "1"})
    # The warm process chose tempfile's folder before this job had one (its /tmp, not writable by the job's uid):
    # tempfile.mkdtemp() in a learner's cell must look at TMPDIR again, as it does in a fresh kernel.
    tempfile.tempdir = None
    sys.stdout, sys.stderr = _Sink("stdout", 1), _Sink("stderr", 2)
    sys.stdin = open(os.devnull)


def run_child(shell: GradeShell, spec: dict, cmd: int, res: int, snap: dict, link: int, ctl: int | None = None
              ) -> None:
    """Set up the sandboxed process, then run the cells the parent sends; never returns.

    The parent sends ``{"seed", "nonce"}`` (a seed of this job's own, not the grading seed, which only the
    checker holds), then ``{"cells": [{"i", "nonce", "source"}, ...]}``: a run of plain cells, or one
    checks cell alone (``serve`` true: the child runs none of it, but answers the checker's requests on the
    link, `link`, until the checker says the cell is done), and at the end ``{"end": true}``. Every line
    back carries the nonce of the cell it belongs to.

    With `ctl` (a socket to the worker) the child is a template (grader/inside/template.py): it keeps root's
    uid, runs the release's opening cells and, at ``{"hold": true}``, forks one child per job from there."""
    _new_session(spec)
    raw_reader = _capture_output(spec, keep={cmd, res, link} | ({ctl} if ctl is not None else set()))
    buf = bytearray()
    setup = _read_message(cmd, buf)  # the seed comes down the pipe: no file the job could read or replace
    base = _confine_template(spec) if ctl is not None else _confine(spec)
    if ctl is not None and spec.get("uid") is not None:
        # The template stays root, but reaches files as the job's uid would (the kernel drops root's file
        # capabilities with the filesystem uid), so the prefix can write and read only what a full run's could.
        _libc.setfsgid(spec["gid"])
        _libc.setfsuid(spec["uid"])
    _enter_job_folder(spec["dir"])
    _seed_everything(int(setup["seed"]))
    shell.user_ns["__name__"] = "__main__"
    grading = sys.modules.get("torchcourse.grading")
    hook, check, state = make_guard(shell, snap, res, grading)
    rebind = state.pop("rebind")  # only a template's forks, whose results pipe is another, need it
    state["nonce"] = setup["nonce"]
    sys.addaudithook(hook)  # from here on, every audited event passes the guard; it cannot be removed
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.write(res, (json.dumps({"n": setup["nonce"], "ready": True}) + "\n").encode())
    if ctl is None:
        _serve_cells(shell, cmd, res, buf, raw_reader, state, check, link)
    from .template import hold

    before = open_descriptors()
    _serve_cells(shell, cmd, res, buf, raw_reader, state, check, link, template=True)
    hold(shell, ctl, cmd, res, state, check, rebind, before, base, spec["dir"])


def open_descriptors() -> dict[int, str]:
    """This process's open descriptors and what each one is."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass  # the descriptor listdir itself held
    return found


def _serve_cells(shell: GradeShell, cmd: int, res: int, buf: bytearray, raw_reader: int, state: dict, check,
                 link_fd: int, template: bool = False) -> None:
    """Run each cell the parent sends and report it; exits the process at the end. Called before any
    learner code runs: everything the loop uses is bound to a local here, because learner code can rebind
    this module's globals. A template's loop (`template`: it runs release code only) returns instead at
    ``{"hold": true}``."""
    read_message, dumps, write, monotonic, fflush, read, exit_ = _read_message, json.dumps, os.write, \
        time.monotonic, _libc.fflush, os.read, os._exit
    collect, run_cell, user_ns = COLLECT, shell.run_cell, shell.user_ns
    learner_end = LearnerEnd(socket.socket(fileno=link_fd), user_ns)

    def serve_cell(msg: dict) -> bool:
        """Run one cell, or serve the checker through a checks cell, and report it; False when the parent
        has gone."""
        state["nonce"] = msg["nonce"]
        serving = msg.get("serve")
        collect.reset()
        started = monotonic()
        if serving:
            check("before the checks cell")
            learner_end.serve(quiet_warnings)
            check("after the checks cell")
            shell.execution_count += 1  # the cell counts as run here, as it does in a notebook
            ok = True
        else:
            try:
                ok = bool(run_cell(msg["source"], store_history=True).success)
            except BaseException as exc:  # run_cell catches nearly everything; record what slips through
                collect.error(type(exc).__name__, str(exc), [])
                ok = False
        shown = len(collect.outputs)
        fflush(None)
        chunk = read(raw_reader, STREAM_CAP + 1)
        while read(raw_reader, 1 << 20):  # skip, but keep the offset moving
            pass
        if chunk:
            text = chunk[:STREAM_CAP].decode("utf-8", "replace")
            if len(chunk) > STREAM_CAP:
                text += "\n[output truncated]\n"
            collect.stream("stdout", text)
        # "i" first: the parent finds a result by how it opens (_Channel._line)
        line = {"i": msg["i"], "status": "ok" if ok else "error", "execution_count": shell.execution_count - 1,
                "seconds": round(monotonic() - started, 4), "outputs": collect.outputs, "shown": shown}
        data = (dumps({"n": msg["nonce"], "result": line}, default=repr) + "\n").encode()
        if len(data) > CELL_CAP + STREAM_CAP * 4:
            data = (dumps({"n": msg["nonce"], "result": {"i": msg["i"], "status": "output_limit", "outputs": []}})
                    + "\n").encode()
        write(res, data)
        return True

    while (batch := read_message(cmd, buf)) is not None and not batch.get("end"):
        if template and batch.get("hold"):
            return
        if not all(serve_cell(msg) for msg in batch["cells"]):
            break
    exit_(0)


def settle() -> None:
    """The last step before the first fork: pay for lazy set-up here, once, not in every child, and move
    everything alive now out of the garbage collector's reach (gc.freeze). A collection in a child then
    never walks, and so never copies, the pages of the warm process's objects; those objects live as long
    as the worker anyway."""
    import gc

    _seed_everything(0)
    _first_uses()
    gc.freeze()  # no collection first: the warm process has next to no garbage, and a full one is slow
    _huge_pages()


def _first_uses() -> None:
    """What torch sets up on an operation's first use in a process, done in the worker, so that no job pays
    for it: its templates, learners' processes and checkers are all forked from here. A tensor's first repr
    imports torch._subclasses.schema_check_mode (otherwise every job's checker whose checks show a tensor
    imports it again); record_function, which an optimizer's step and zero_grad, a DataLoader's iterator and
    the profiler call, imports torch.profiler._cupti_monitor."""
    repr(torch.zeros(1))
    with torch.autograd.profiler.record_function("settle"):
        pass
