"""The parent's end of the results channel: who holds the grader's pipes, the lines the child sends, and the
results file's line for each cell. Imports nothing of the warm process: tests load it in their own."""

from __future__ import annotations

import json
import os

from .policy import CELL_CAP, STREAM_CAP


def descendants(pid: int) -> list[int]:
    """pid and every process below it, from /proc (the sandbox outside uses it too: this module imports only
    the policy, so the grader can import it without what the worker preloads)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            tasks = os.open(f"/proc/{p}/task", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:  # names looked up from the open folder: procfs's path walk was most of the cost
            for task in os.listdir(tasks):
                children = os.open(f"{task}/children", os.O_RDONLY, dir_fd=tasks)
                try:
                    todo += [int(c) for c in os.read(children, 1 << 16).split()]
                finally:
                    os.close(children)
        except OSError:
            pass
        finally:
            os.close(tasks)
    return found


def _channel_holders(pid: int, pipes: set[str], child_fds: dict[int, str]) -> list[str]:
    """What is wrong with the child's hold on the grader's pipes, read from outside (/proc): another of the
    job's processes holding one, a second descriptor for one, or a descriptor replaced."""
    wrong = []
    own: dict[int, str] = {}  # the child's descriptors as read below: each is read once
    for p in descendants(pid):
        try:
            folder = os.open(f"/proc/{p}/fd", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            for fd in os.listdir(folder):
                try:
                    target = os.readlink(fd, dir_fd=folder)
                except OSError:
                    continue
                if p == pid:
                    own[int(fd)] = target
                if target in pipes and (p != pid or child_fds.get(int(fd)) != target):
                    wrong.append(f"process {p} holds the grader's channel as descriptor {fd}")
        except OSError:
            pass  # the process is gone: it holds nothing
        finally:
            os.close(folder)
    for fd, target in child_fds.items():
        if fd not in own:  # not in the child's descriptors, or they could not be read: either way, not there
            wrong.append(f"descriptor {fd} of the grader's channel was closed")
        elif own[fd] != target:
            wrong.append(f"descriptor {fd} of the grader's channel was replaced")
    return wrong


class _Channel:
    """The parent's end of the results pipe: lines carrying the current nonce are the child's trusted
    code speaking; anything else was written by learner code and is a tampering flag."""

    LINE_CAP = CELL_CAP + STREAM_CAP * 4 + 4096
    CELL_BYTES = 4 * CELL_CAP

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.nonce, self.eof = fd, b"", "", False
        self.received = 0
        self.emits: list[bytes] = []  # each emitted value as the JSON the child wrote
        self.tampered: list[str] = []
        self.result: bytes | None = None  # the cell's result, a JSON object as the child wrote it
        self.envelope = b"\0"
        self.ready = False

    def start(self, nonce: str, tampered: list[str]) -> None:
        """From now on, lines belong to the cell of `nonce`, with `tampered` its flags so far. Lines the
        child wrote after the last cell's result (it runs a batch of plain cells without waiting) are
        already here: they are read as this cell's."""
        self.nonce, self.emits, self.tampered, self.result = nonce, [], list(tampered), None
        self.envelope = b'{"n": "%s", "result": ' % nonce.encode()
        self.emit_envelope = b'{"n": "%s", "emit": ' % nonce.encode()
        self.received = len(self.buf)
        self._drain()

    def feed(self) -> bool:
        """Read what is there; False when the child wrote more than a cell may."""
        data = os.read(self.fd, 1 << 16)  # a pipe's default capacity: a larger buffer is only a larger allocation
        if not data:
            self.eof = True
            return True
        self.received += len(data)
        if self.received > self.CELL_BYTES:
            self.tampered.append("more data on the results channel than a cell may write")
            return False
        self.buf += data
        if b"\n" in data:
            self._drain()
        if len(self.buf) > self.LINE_CAP and b"\n" not in self.buf:
            self.tampered.append("an over-long line on the results channel")
            self.buf = b""
        return True

    def _drain(self) -> None:
        """Read the whole lines there are, up to this cell's result: what follows it is the next cell's."""
        buf, start = self.buf, 0
        while self.result is None and (end := buf.find(b"\n", start)) >= 0:
            self._line(buf[start:end])
            start = end + 1
        self.buf = buf[start:]  # one copy of what is left, not one for every line read

    def _line(self, line: bytes) -> None:
        envelope = self.envelope
        if self.nonce and line.startswith(envelope) and line.startswith(b'{"i": ', len(envelope)) \
                and line.endswith(b"}"):
            # The cell's result, kept as the bytes the child wrote (json.dumps of a dict that opens with "i"):
            # parsing its outputs here, only to write them out again, cost about a tenth of the worker's CPU.
            # The grader parses them, bounded, from the results file; a line carrying the nonce is the
            # child's trusted code (learner code that could read the nonce could forge any line anyway).
            self.result = line[len(envelope):-1]
            return
        if self.nonce and line.startswith(self.emit_envelope) and line.endswith(b"}"):
            # An emitted value, kept as written too (the guard's send: json.dumps of {"n", "emit"}, in that order).
            self.emits.append(line[len(self.emit_envelope):-1])
            return
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            obj = None
        if type(obj) is not dict or obj.get("n") != self.nonce or not self.nonce:
            self.tampered.append("data not written by the grader on the results channel")
            return
        if "ready" in obj:
            self.ready = True
        elif "emit" in obj:  # carries the nonce, but not as the guard writes a value
            self.tampered.append("a malformed emitted value on the results channel")
        elif "tampered" in obj and type(obj["tampered"]) is list:
            self.tampered += [str(t)[:300] for t in obj["tampered"][:20]]
        elif "result" in obj:  # carries the nonce, but not as the child writes a result
            self.tampered.append("a malformed result on the results channel")


def _record(i: int, result: bytes | None, emits: list[bytes], tampered: list[str]) -> bytes:
    """Cell `i`'s line of the results file: the child's result as it came, with the worker's keys (the values
    its checks emitted, as the child wrote them, the cell's index, what was tampered with) appended. JSON keeps
    the last of a repeated key, so these are what the grader reads, whatever the result held; a cell that did
    not report is "unfinished", and what it did say still counts against it. The line opens with the index
    as the worker's own bytes ("w"): if what the child sent does not parse (only a forged line with the
    cell's nonce can do that), the grader still knows whose record it was, and flags it (RECORD_OPENING)."""
    own: dict = {"i": i}
    if tampered:
        own["tampered"] = tampered[:20]
    tail = b'"emits": [' + b", ".join(emits) + b"], " + json.dumps(own, default=repr)[1:].encode()
    head = result[1:-1] + b", " if result is not None else b'"status": "unfinished", "outputs": [], '
    return b'{"w": %d, ' % i + head + tail + b"\n"
