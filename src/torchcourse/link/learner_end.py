"""The learner's end of the link: serves the checker's requests in the learner's process."""

from __future__ import annotations

import socket
import warnings
from typing import Any

import torch

from torchcourse.link.checker_end import _mutables
from torchcourse.link.codec import Codec
from torchcourse.link.wire import LinkError, fingerprint, recv_message, send_message, to_numpy


class LearnerEnd:
    """Serves the checker's requests in the learner's process: names of the notebook, calls, handles."""

    def __init__(self, sock: socket.socket, namespace: dict) -> None:
        self.sock, self.namespace = sock, namespace
        self.pending = bytearray()  # what was read of the link beyond the last request
        self.objects: dict[int, Any] = {}
        # bound now, before any learner code runs: the generator's state is read with these, and compared as
        # bytes (no torch operator, which learner code could re-register, takes part)
        self._rng_state, self._bytes = torch.default_generator.get_state, to_numpy

    def _handle(self, obj: Any) -> dict:
        key = id(obj)
        self.objects[key] = obj
        return {"h": key, "type": type(obj).__name__[:100]}

    def _lookup(self, key: Any) -> Any:
        if type(key) is not int or key not in self.objects:
            raise LinkError("a handle this process does not hold")
        return self.objects[key]

    def _codec(self) -> Codec:
        codec = Codec(handles=self._handle)
        codec.handles_lookup = self._lookup
        return codec

    def serve(self, quiet) -> None:
        """Answer requests until the checker says the cell is done."""
        while True:
            try:
                request = recv_message(self.sock, self.pending)
            except LinkError:
                return
            if type(request) is not dict or request.get("op") == "end":
                self.objects.clear()
                return
            send_message(self.sock, self.answer(request, quiet))

    def answer(self, request: dict, quiet) -> dict:
        codec = self._codec()
        try:
            if request.get("op") == "get":
                name = str(request.get("name"))
                if name not in self.namespace:
                    raise NameError(f"name {name!r} is not defined")
                return {"result": self._encode(codec, self.namespace[name])}
            fn = codec.decode(request["fn"])
            args = codec.decode(request["args"])
            kwargs = codec.decode(request["kwargs"])
        except Exception as exc:
            return {"raised": codec.encode(exc)}
        flat = _mutables((args, kwargs))
        kept = [fingerprint(v) for v in flat]
        before = self._rng_state()
        try:
            with quiet():
                result = fn(*args, **kwargs)
        except BaseException as exc:  # the learner's exception is data for the checker; an interrupt too
            return {"raised": codec.encode(exc), "after": self._after(flat, kept), "moved": self._moved(before)}
        moved = self._moved(before)
        codec.args = flat
        try:
            encoded = self._handle(result) if request.get("keep") is True else self._encode(codec, result)
        except Exception as exc:
            return {"raised": codec.encode(exc), "after": self._after(flat, kept), "moved": moved}
        return {"result": encoded, "after": self._after(flat, kept), "moved": moved}

    def _moved(self, before) -> bool:
        return self._bytes(before).tobytes() != self._bytes(self._rng_state()).tobytes()

    def _encode(self, codec: Codec, value: Any) -> Any:
        return codec.encode(value)

    def _after(self, flat: list, kept: list) -> list:
        """Each argument's state after the call, for the checker to write into its own: None where the call
        left it as it came (the checker then has nothing to write), or where it cannot be sent."""
        codec = Codec(handles=self._handle)
        out = []
        for v, was in zip(flat, kept):
            if was is not None and fingerprint(v) == was:
                out.append(None)
                continue
            try:
                out.append(codec.encode(v))
            except Exception:
                out.append(None)
        return out


class _Quiet:
    """Learner code called by the checker warns nobody: its warnings are not the cell's output."""

    def __init__(self) -> None:
        self.ctx = warnings.catch_warnings()

    def __enter__(self) -> None:
        self.ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)


def quiet_warnings() -> _Quiet:
    return _Quiet()
