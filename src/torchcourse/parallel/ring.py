"""Ring all-reduce 环形全归约: its schedule and bytes, and the ring run for real over ``torch.distributed``.

Used by ``chapters/03-parallel/03-ddp-for-real.ipynb`` (section 3, "Collectives and the ring"), by the
ring all-reduce animator (``torchcourse.parallel.ringanim``) and by the script the notebook launches
(``torchcourse.parallel.ddp_train``). Simulating the ring over a list of tensors is the notebook's exercise,
so no simulator lives here: this package is importable by learners.

The schedule: the tensor is cut into N chunks with
``torch.tensor_split``. In reduce-scatter step ``s`` (0 .. N-2) rank ``r`` sends chunk ``(r - s) % N``
to rank ``(r + 1) % N``, which adds it into its own copy of that chunk. After N-1 steps rank ``r`` holds
the complete sum of chunk ``(r + 1) % N``. In all-gather step ``s`` rank ``r`` sends chunk
``(r + 1 - s) % N``, which the receiver copies over its own. Every rank sends 2(N-1) chunks, that is
2(N-1)/N of the data when the chunks are equal.
"""

from __future__ import annotations

import torch


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


def bytes_sent_per_rank(numel: int, world_size: int, itemsize: int) -> list[int]:
    """Bytes each rank sends in the ring all-reduce of ``numel`` elements of ``itemsize`` bytes each."""
    bounds = chunk_bounds(numel, world_size)
    sent = [0] * world_size
    for _, _, src, _, c in schedule(world_size):
        sent[src] += (bounds[c][1] - bounds[c][0]) * itemsize
    return sent


def ring_allreduce_p2p(tensor: torch.Tensor, group=None) -> torch.Tensor:
    """The same schedule between real processes, with ``torch.distributed`` point-to-point messages.

    Sums ``tensor`` over every rank of ``group`` in place and returns it. Each step's send and receive
    are posted together (``batch_isend_irecv``; NCCL runs them as one group) so that no rank waits for a
    neighbour that is itself waiting: a blocking ``send`` first everywhere could deadlock. The receive
    buffer is made on ``tensor``'s device, so the same code runs over gloo (CPU) and nccl (GPU).
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
            incoming = torch.empty(rhi - rlo, dtype=flat.dtype, device=flat.device)
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, outgoing, right, group),
                                           dist.P2POp(dist.irecv, incoming, left, group)])
            for req in reqs:
                req.wait()
            if phase == "reduce-scatter":
                flat[rlo:rhi] += incoming
            else:
                flat[rlo:rhi] = incoming
    return tensor
