"""The link between the checker and the learner's process, both ends real, over a real socket: a call's
arguments come back into the checker's own objects exactly as learner code left them, and an argument the
call left as it came comes back as nothing to write."""

from __future__ import annotations

import socket
import threading

import numpy as np
import pytest
import torch

from torchcourse.link import CheckerLink, LearnerEnd, quiet_warnings
from torchcourse.link.codec import Codec
from torchcourse.link.wire import recv_message, send_message


def _set_grad(w):
    w.grad = torch.full_like(w, 3.0)


def _resize(x):
    x.resize_(2, 3)  # past its storage: the storage grows


def _restore(x):
    x.add_(1)
    x.sub_(1)


# learner code that changes its arguments, by each route a learner's answer could take
LEARNER = {
    "same": lambda x, w, a: (x * 2, w.sum(), a.sum()),
    "add_": lambda x: x.add_(1),
    "data_zero": lambda x: x.data.zero_(),
    "numpy_write": lambda x: x.numpy().__setitem__(0, 7.0),
    "requires_grad": lambda x: x.requires_grad_(),
    "set_grad": _set_grad,
    "zero_grad": lambda w: w.grad.zero_(),
    "resize": _resize,
    "array_write": lambda a: a.__setitem__(0, 5),
    "restore": _restore,
}


@pytest.fixture
def link():
    checker_end, learner_end = socket.socketpair()
    served = LearnerEnd(learner_end, dict(LEARNER))

    def serve():
        try:
            while learner_end.fileno() >= 0:
                served.serve(quiet_warnings)
        except OSError:  # the test closed the link
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield CheckerLink(checker_end)
    checker_end.close()
    learner_end.close()


def _raw_call(link, name, args):
    """The learner's reply to a call of LEARNER[name](*args), as it travelled."""
    fn = link.fetch(name)
    send_message(link.sock, {"op": "call", "fn": {"h": fn._id}, "args": Codec(remote=link._remote).encode(list(args)),
                             "kwargs": {"d": []}, "keep": False})
    return recv_message(link.sock, link.pending)


def _leaf_with_grad():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.grad = torch.tensor([0.5, 0.5, 0.5])
    return w


def test_arguments_a_call_left_as_they_came_come_back_as_nothing_to_write(link):
    x, w, a = torch.arange(6.0).reshape(2, 3).t(), _leaf_with_grad(), np.arange(4)
    reply = _raw_call(link, "same", (x, w, a))
    assert reply["after"] == [None, None, None] and "raised" not in reply
    reply = _raw_call(link, "restore", (torch.ones(3),))  # changed and changed back: as it came
    assert reply["after"] == [None]


@pytest.mark.parametrize("name, make, expect", [
    ("add_", lambda: torch.zeros(3), lambda x: torch.equal(x, torch.ones(3))),
    ("data_zero", lambda: torch.ones(3), lambda x: torch.equal(x, torch.zeros(3))),
    ("numpy_write", lambda: torch.zeros(3), lambda x: x.tolist() == [7.0, 0.0, 0.0]),
    ("requires_grad", lambda: torch.zeros(3), lambda x: x.requires_grad and x.is_leaf),
    ("set_grad", lambda: torch.zeros(3, requires_grad=True), lambda w: torch.equal(w.grad, torch.full((3,), 3.0))),
    ("zero_grad", _leaf_with_grad, lambda w: torch.equal(w.grad, torch.zeros(3))),
    ("resize", lambda: torch.ones(3), lambda x: x.shape == (2, 3) and x.flatten()[:3].tolist() == [1.0] * 3),
    ("array_write", lambda: np.zeros(3, dtype=np.int64), lambda a: a.tolist() == [5, 0, 0]),
])
def test_an_argument_the_call_changed_is_written_back_as_learner_code_left_it(link, name, make, expect):
    own = make()
    assert _raw_call(link, name, (make(),))["after"] != [None]  # the change travels
    link.call(link.fetch(name), (own,), {})
    assert expect(own), own


def test_messages_read_together_or_in_pieces_come_out_whole_and_in_order():
    """A read takes what has arrived: two messages at once, or a large one in pieces. Each end keeps what it read
    beyond a message for the next, so every message comes out whole, in order, and a closed link is an error."""
    from torchcourse.link.wire import LinkError

    a, b = socket.socketpair()
    big = {"x": "y" * 300_000}
    with a, b:
        sender = threading.Thread(target=lambda: [send_message(a, m) for m in ({"n": 1}, {"n": 2}, big)])
        sender.start()  # a message larger than the socket's buffer is sent while the other end reads
        pending = bytearray()
        assert recv_message(b, pending) == {"n": 1}
        assert recv_message(b, pending) == {"n": 2}
        assert recv_message(b, pending) == big
        sender.join()
        assert pending == b""
        send_message(a, {"n": 3})
        a.shutdown(socket.SHUT_WR)
        assert recv_message(b, pending) == {"n": 3}
        with pytest.raises(LinkError):
            recv_message(b, pending)
