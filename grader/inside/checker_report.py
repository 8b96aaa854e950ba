"""The worker's reading of a job's checker: its line for one checks cell, and that cell's result as the job
records it (the checker's status and outputs, with what the learner's child printed meanwhile)."""

from __future__ import annotations

import json
import os
import select
import time


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
