"""The job's checker: the process that runs each checks cell, and never runs learner code.

Forked from the warm worker before the learner's child, it holds what the learner's process never does: the
grading seed and the checks cells' source, visible and hidden. For each checks cell the worker sends, it runs
the cell's code in a namespace of its own, where every name the cell does not define itself (the learner's
answers) is fetched from the learner's process over the link (`torchcourse.link`): plain data comes back as
data, anything else as a `Remote` whose every use is a plain-data request. What it emits is collected by its
own audit hook and sent to the worker with the cell's outputs and status; the worker writes them as the
cell's result. Nothing it computes depends on an object, frame, hook or module of the learner's process.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import signal
import socket
import sys
from types import CodeType

from .child import _read_message, _seed_everything
from .confine import PR_SET_PDEATHSIG, _libc
from .policy import CANONICAL, STREAM_CAP

_BUILTINS = frozenset(dir(builtins))

# The checks cells' code, compiled once per worker: the worker compiles each cell it sends
# (compile_for_later_checkers), and every checker forked after that runs the code object it inherited instead
# of compiling the same text again. The text is the grader's: the release's checks cell (restored over whatever
# the learner's notebook held) and its hidden block. Keyed by name and text, so a cell whose text differs is
# compiled anew. The worker never runs a code object, so each checker starts from the same unspecialised code a
# fresh compile gives.
_COMPILED: dict[tuple[str, str], CodeType] = {}
_COMPILED_MAX = 256


class _Namespace(dict):
    """A checks cell's globals: the checker's own names first, then the learner's answers, fetched on first
    use (a dict subclass: CPython looks globals up through ``__getitem__``, and so ``__missing__``)."""

    def __init__(self, base: dict) -> None:
        super().__init__(base)
        self.link = None
        self.fetched: set[str] = set()

    def __missing__(self, name: str):
        if name in _BUILTINS or self.link is None or name.startswith("__"):
            raise KeyError(name)
        try:
            value = self.link.fetch(name)
        except NameError:
            raise KeyError(name) from None
        self[name] = value
        self.fetched.add(name)
        return value

    def forget_fetched(self) -> None:
        """A new checks cell reads the learner's answers as they are now."""
        for name in self.fetched:
            self.pop(name, None)
        self.fetched.clear()


def _stream(name: str, text: str) -> dict:
    if len(text) > STREAM_CAP:
        text = text[:STREAM_CAP] + "\n[output truncated]\n"
    return {"output_type": "stream", "name": name, "text": text}


def _error(exc: BaseException) -> dict:
    return {"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc)[:STREAM_CAP], "traceback": []}


def checks_name(i: int, hidden: bool = False) -> str:
    """The file name a checks cell's part runs under (its tracebacks show it)."""
    return f"<hidden-checks-{i}>" if hidden else f"<checks-{i}>"


def compiled(source: str, filename: str) -> CodeType:
    """`source` compiled as `filename`, from this process's cache (raises what compile() raises)."""
    code = _COMPILED.get((filename, source))
    if code is None:
        code = compile(source, filename, "exec")
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[(filename, source)] = code
    return code


def compile_for_later_checkers(i: int, source: str, hidden: str | None) -> None:
    """In the worker: compile checks cell `i` once, so that the checkers forked for later jobs inherit the code.
    A part that does not compile is left to the checker, which reports it as the cell's error."""
    for text, name in ((source, checks_name(i)), (hidden, checks_name(i, hidden=True))):
        if text:
            try:
                compiled(text, name)
            except Exception:
                pass


def run_part(source: str, filename: str, ns: dict, outputs: list) -> bool:
    """Run one part of a checks cell; its prints and error (if any) go to `outputs`."""
    out, err = io.StringIO(), io.StringIO()
    ok = True
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compiled(source, filename), ns)
        except BaseException as exc:  # a failing check is data; so is an interrupt or a broken link
            error = exc
            ok = False
    for name, buf in (("stdout", out), ("stderr", err)):
        if buf.getvalue():
            outputs.append(_stream(name, buf.getvalue()))
    if not ok:
        outputs.append(_error(error))
    return ok


def run_checker(cmd: int, res: int, sock: socket.socket) -> None:
    """The checker's loop; never returns. The worker sends ``{"seed"}``, then ``{"i", "source", "hidden"}``
    for each checks cell (while the learner's child serves the link), and closes the pipe at the end."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.setsid()
    from torchcourse import grading
    from torchcourse.link import CheckerLink

    emitted: list = []

    def hook(event: str, args: tuple) -> None:
        if event == "torchcourse.emit" and args and type(args[0]) is dict:
            emitted.append(args[0])

    sys.addaudithook(hook)
    buf = bytearray()
    setup = _read_message(cmd, buf)
    if setup is None:
        os._exit(0)
    _seed_everything(int(setup["seed"]))  # the grading seed: hidden cases are drawn from it
    if setup.get("language"):  # the checks' messages in the language of the release submitted
        os.environ["TORCHCOURSE_LANGUAGE"] = str(setup["language"])[:16]
    canonical = {name: sys.modules[mod] for name, mod in CANONICAL.items() if mod in sys.modules}
    canonical.update({name: getattr(grading, name) for name in grading.__all__ if hasattr(grading, name)})
    ns = _Namespace({"__name__": "__main__", "__builtins__": builtins, **canonical})
    link = CheckerLink(sock)
    ns.link = link
    while (msg := _read_message(cmd, buf)) is not None:
        ns.forget_fetched()
        emitted.clear()
        outputs: list = []
        ok = run_part(msg["source"], checks_name(msg["i"]), ns, outputs)
        shown = len(outputs)
        if ok and msg.get("hidden"):
            ok = run_part(msg["hidden"], checks_name(msg["i"], hidden=True), ns, outputs)
        try:
            link.end()
        except OSError:
            pass
        emits = []
        for record in emitted:
            try:
                emits.append(json.dumps(record, allow_nan=False))
            except (TypeError, ValueError):
                emits.append(json.dumps({"slug": str(record.get("slug")), "name": str(record.get("name")),
                                         "value": {"error": "a value that could not be written"}}))
        line = {"i": msg["i"], "status": "ok" if ok else "error", "outputs": outputs, "shown": shown,
                "emits": emits, "calls": link.calls}
        data = (json.dumps(line, default=repr) + "\n").encode()
        while data:
            data = data[os.write(res, data):]
    os._exit(0)
