"""Ring all-reduce 环形全归约, simulated over N ranks in one process and run for real over ``torch.distributed``.

Used by ``chapters/03-parallel/03-ddp-for-real.ipynb`` (section 3, "Collectives and the ring") and by the
ring all-reduce animator (``torchcourse.parallel.ringanim``).

The schedule (the one the notebook's exercise asks for): the tensor is cut into N chunks with
``torch.tensor_split``. In reduce-scatter step ``s`` (0 .. N-2) rank ``r`` sends chunk ``(r - s) % N``
to rank ``(r + 1) % N``, which adds it into its own copy of that chunk. After N-1 steps rank ``r`` holds
the complete sum of chunk ``(r + 1) % N``. In all-gather step ``s`` rank ``r`` sends chunk
``(r + 1 - s) % N``, which the receiver copies over its own. Every rank sends 2(N-1) chunks, that is
2(N-1)/N of the data when the chunks are equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Message:
    """One chunk sent along one link of the ring."""

    phase: str  # "reduce-scatter" or "all-gather"
    step: int
    src: int
    dst: int
    chunk: int
    nbytes: int


def chunk_bounds(numel: int, world_size: int) -> list[tuple[int, int]]:
    """[start, stop) of each chunk, as ``torch.tensor_split`` cuts ``numel`` elements into ``world_size``."""
    base, extra = divmod(numel, world_size)
    bounds, start = [], 0
    for i in range(world_size):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def schedule(world_size: int) -> list[tuple[str, int, int, int, int]]:
    """(phase, step, src, dst, chunk) of every message, in order: phases, then steps, then senders."""
    n = world_size
    out = []
    for phase, shift in (("reduce-scatter", 0), ("all-gather", 1)):
        for step in range(n - 1):
            for r in range(n):
                out.append((phase, step, r, (r + 1) % n, (r + shift - step) % n))
    return out


def simulate_ring_allreduce(
    tensors: list[torch.Tensor],
) -> tuple[list[torch.Tensor], list[Message], list[list[torch.Tensor]]]:
    """Run the ring schedule over ``len(tensors)`` simulated ranks.

    Returns (results, messages, snapshots): each rank's final tensor (the sum), every message sent,
    and after each step a copy of every rank's buffer (for the animator). Inputs are not modified.
    """
    n = len(tensors)
    if n == 0:
        raise ValueError("ring all-reduce needs at least one rank")
    bufs = [t.detach().clone().reshape(-1) for t in tensors]
    numel = bufs[0].numel()
    if any(b.numel() != numel for b in bufs):
        raise ValueError("every rank must hold a tensor of the same size")
    bounds = chunk_bounds(numel, n)
    item = bufs[0].element_size()
    messages: list[Message] = []
    snapshots = [[b.clone() for b in bufs]]
    for phase in ("reduce-scatter", "all-gather"):
        for step in range(n - 1):
            sends = [m for m in schedule(n) if m[0] == phase and m[1] == step]
            # every rank sends at the same time: read all outgoing chunks before any receiver writes
            payloads = [bufs[src][bounds[c][0]:bounds[c][1]].clone() for _, _, src, _, c in sends]
            for (_, _, src, dst, c), data in zip(sends, payloads):
                lo, hi = bounds[c]
                if phase == "reduce-scatter":
                    bufs[dst][lo:hi] += data
                else:
                    bufs[dst][lo:hi] = data
                messages.append(Message(phase, step, src, dst, c, (hi - lo) * item))
            snapshots.append([b.clone() for b in bufs])
    shape = tensors[0].shape
    return [b.reshape(shape) for b in bufs], messages, snapshots


def bytes_sent_per_rank(messages: list[Message], world_size: int) -> list[int]:
    sent = [0] * world_size
    for m in messages:
        sent[m.src] += m.nbytes
    return sent


def ring_allreduce_p2p(tensor: torch.Tensor, group=None) -> torch.Tensor:
    """The same schedule between real processes, with ``torch.distributed`` point-to-point messages.

    Sums ``tensor`` over every rank of ``group`` in place and returns it. Sends and receives are
    posted together (``isend``/``irecv``) so that no rank waits for a neighbour that is itself
    waiting: a blocking ``send`` first everywhere could deadlock.
    """
    import torch.distributed as dist

    n = dist.get_world_size(group)
    r = dist.get_rank(group)
    if n == 1:
        return tensor
    flat = tensor.view(-1)
    bounds = chunk_bounds(flat.numel(), n)
    right = dist.get_global_rank(group, (r + 1) % n) if group is not None else (r + 1) % n
    left = dist.get_global_rank(group, (r - 1) % n) if group is not None else (r - 1) % n
    for phase, shift in (("reduce-scatter", 0), ("all-gather", 1)):
        for step in range(n - 1):
            send_c = (r + shift - step) % n
            recv_c = (r - 1 + shift - step) % n  # what the left neighbour sends at this step
            lo, hi = bounds[send_c]
            rlo, rhi = bounds[recv_c]
            outgoing = flat[lo:hi].clone()
            incoming = torch.empty(rhi - rlo, dtype=flat.dtype)
            reqs = [dist.isend(outgoing, right, group=group), dist.irecv(incoming, left, group=group)]
            for req in reqs:
                req.wait()
            if phase == "reduce-scatter":
                flat[rlo:rhi] += incoming
            else:
                flat[rlo:rhi] = incoming
    return tensor
