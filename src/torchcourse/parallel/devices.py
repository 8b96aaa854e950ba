"""Which backend and device a DDP process uses: ``gloo`` on the CPU, or ``nccl`` on its own GPU.

Used by the chapter's launched scripts (``torchcourse.parallel.ddp_train`` and
``torchcourse.parallel.ddp_practice``) and shown in ``chapters/03-parallel/03-ddp-for-real.ipynb``
(section 2, "The same script on GPUs").
``choose`` is a pure function of the request, the process's ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` and the
number of visible GPUs, so every choice it makes can be tested on a machine without one. What changes on
GPUs: ``nccl`` carries only CUDA tensors, so each process binds its own GPU (``torch.cuda.set_device``),
and the model, the data and every tensor given to a collective (receive buffers included) live there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from torchcourse.i18n import gettext as _

BACKENDS = ("auto", "gloo", "nccl")


def distributed_line(available: bool) -> str:
    """The first cell's note of whether this PyTorch build has ``torch.distributed`` (``dist.is_available()``), in
    the learner's language; the value is printed as Python shows it."""
    return _("torch.distributed available: {available}").format(available=available)


@dataclass(frozen=True)
class Placement:
    backend: str          # "gloo" or "nccl"
    device: torch.device  # where this process's model, data and collective tensors live
    reason: str           # one sentence: why this choice

    @property
    def device_ids(self) -> list[int] | None:
        """What ``DistributedDataParallel(model, device_ids=...)`` takes: this rank's GPU, or None on the CPU."""
        return [self.device.index] if self.device.type == "cuda" else None


def choose(requested: str, local_rank: int, local_world_size: int, cuda_count: int,
           nccl_available: bool = True) -> Placement:
    """The backend and device for the process with ``local_rank`` of ``local_world_size`` on its machine.

    ``"gloo"``: the CPU. ``"nccl"``: GPU ``local_rank``, one GPU per process (NCCL refuses two ranks on one
    GPU), an error if there are too few. ``"auto"``: ``nccl`` when every local process gets a GPU of its
    own, else ``gloo`` on the CPU.
    """
    if requested not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {requested!r}")
    if not 0 <= local_rank < local_world_size:
        raise ValueError(f"LOCAL_RANK {local_rank} is not between 0 and LOCAL_WORLD_SIZE - 1 = {local_world_size - 1}")
    enough = nccl_available and cuda_count >= local_world_size
    if requested == "nccl" and not enough:
        why = ("this PyTorch has no NCCL" if not nccl_available else
               f"{local_world_size} processes on this machine need one GPU each, and only {_gpus(cuda_count)} "
               f"{'is' if cuda_count == 1 else 'are'} visible")
        raise ValueError(f"--backend nccl: {why}; use --backend gloo (the CPU) or start fewer processes")
    if requested == "nccl" or (requested == "auto" and enough):
        return Placement("nccl", torch.device("cuda", local_rank),
                         f"nccl on cuda:{local_rank}: one GPU per process, {_gpus(cuda_count)} visible")
    why = "asked for" if requested == "gloo" else (
        f"{_gpus(cuda_count)} for {local_world_size} processes" if nccl_available else "no NCCL in this build")
    return Placement("gloo", torch.device("cpu"), f"gloo on the CPU ({why})")


def _gpus(n: int) -> str:
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


def bind(placement: Placement) -> None:
    """Make this process's GPU the current one before anything touches CUDA (a no-op on the CPU).

    Without it every process would use ``cuda:0`` for whatever is created without an explicit index,
    including NCCL's own buffers.
    """
    if placement.device.type == "cuda":
        torch.cuda.set_device(placement.device)


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work, so a timer measures it (kernels return before they finish)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
