"""The checker's end of the link: learner objects as `Remote`s, calls sent as plain data, replies decoded,
arguments' new state written back into the checker's own objects."""

from __future__ import annotations

import socket
from typing import Any

import numpy as np
import torch

from torchcourse.link.codec import Codec
from torchcourse.link.remote import Remote
from torchcourse.link.wire import DEPTH_CAP, LinkError, recv_message, send_message


class CheckerLink:
    """The checker's end: sends a call, decodes the reply, writes each argument's new state back."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pending = bytearray()  # what was read of the link beyond the last reply
        self.calls = 0
        self.last_moved = False  # whether the last call moved the learner's global torch generator

    def fetch(self, name: str) -> Any:
        """The learner's value of a notebook name: plain data, or a `Remote`."""
        send_message(self.sock, {"op": "get", "name": name})
        return self._reply(Codec(remote=self._remote))

    def _remote(self, id_: int, type_name: str) -> Remote:
        return Remote(self, id_, type_name)

    def call(self, fn: Any, args: tuple, kwargs: dict, keep: bool = False) -> Any:
        """fn(*args, **kwargs) in the learner's process: its result decoded (`keep`: a handle to it, whatever
        it is), its arguments' new state written back into the checker's own."""
        codec = Codec(remote=self._remote)
        flat = _mutables((args, kwargs))
        request = {"op": "call", "fn": codec.encode(fn), "args": codec.encode(list(args)),
                   "kwargs": codec.encode(dict(kwargs)), "keep": keep}
        self.calls += 1
        self.last_moved = False
        send_message(self.sock, request)
        reply = recv_message(self.sock, self.pending)
        if type(reply) is not dict:
            raise LinkError("a reply that is not plain data")
        self.last_moved = reply.get("moved") is True
        after = reply.get("after")
        if type(after) is list and len(after) == len(flat):
            for own, state in zip(flat, after):
                _write_back(own, codec, state)
        codec.args = flat
        if "raised" in reply:
            raise codec.decode(reply["raised"])
        if "result" not in reply:
            raise LinkError("a reply without a result")
        return codec.decode(reply["result"])

    def _reply(self, codec: Codec) -> Any:
        reply = recv_message(self.sock, self.pending)
        if type(reply) is not dict:
            raise LinkError("a reply that is not plain data")
        if "raised" in reply:
            raise codec.decode(reply["raised"])
        return codec.decode(reply.get("result"))

    def end(self) -> None:
        send_message(self.sock, {"op": "end"})


def _mutables(value: Any, found: list | None = None, depth: int = 0) -> list:
    """Every tensor and array in a call's arguments, depth first: both sides list them in the same order."""
    found = [] if found is None else found
    if depth > DEPTH_CAP:
        return found
    t = type(value)
    if t in (torch.Tensor, torch.nn.Parameter, np.ndarray):
        found.append(value)
    elif t in (tuple, list):
        for v in value:
            _mutables(v, found, depth + 1)
    elif t is dict:
        for v in value.values():
            _mutables(v, found, depth + 1)
    return found


def _write_back(own: Any, codec: Codec, state: Any) -> None:
    """An argument as learner code left it, into the checker's own object (values, requires_grad, grad)."""
    try:
        new = Codec(remote=codec.remote).decode(state)
    except LinkError:
        return
    if type(own) is np.ndarray:
        if type(new) is np.ndarray and new.shape == own.shape and new.dtype == own.dtype and own.flags.writeable:
            own[...] = new
        return
    if not isinstance(new, torch.Tensor):
        return
    with torch.no_grad():
        if new.shape == own.shape and new.dtype == own.dtype:
            if not torch.equal(own.detach(), new.detach()):
                own.detach().copy_(new.detach())
        else:
            own.data = new.detach().clone()
    if own.is_leaf:
        if own.requires_grad != new.requires_grad and (own.dtype.is_floating_point or own.dtype.is_complex):
            own.requires_grad_(new.requires_grad)
        own.grad = new.grad.detach().clone() if new.is_leaf and new.grad is not None else None


