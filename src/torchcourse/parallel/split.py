"""Three ways to split work over simulated devices, each checked against the unsplit model.

Used by ``chapters/03-parallel/02-splitting-the-work.ipynb`` (sections 1-4). A "virtual device" here is
just a label: every tensor lives in this process's CPU memory, and what would cross between devices is
counted in bytes instead of being sent. The arithmetic is exactly what the real thing computes.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field

import torch
from torch import nn

from torchcourse.parallel.ring import chunk_bounds


@dataclass
class SplitResult:
    """What a split computation produced and what it would have had to communicate."""

    output: torch.Tensor
    comm_bytes: int  # bytes crossing between devices for one forward pass
    log: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def stage_bounds(n_layers: int, n_stages: int) -> list[tuple[int, int]]:
    """Consecutive layers per stage, as even as possible (earlier stages get the extra layer): the same cut
    as a ring all-reduce's chunks."""
    return chunk_bounds(n_layers, n_stages)


def pipeline_parallel(model: nn.Sequential, x: torch.Tensor, n_stages: int) -> SplitResult:
    """Model (pipeline) parallelism: consecutive layers on consecutive devices.

    Only the activation at each stage boundary crosses a link (and its gradient, the same size, comes
    back in the backward pass).
    """
    layers = list(model)
    comm, log = 0, []
    h = x
    for s, (lo, hi) in enumerate(stage_bounds(len(layers), n_stages)):
        for layer in layers[lo:hi]:
            h = layer(h)
        if s < n_stages - 1:
            comm += nbytes(h)
            log.append(f"device {s} -> device {s + 1}: activation {tuple(h.shape)}, {nbytes(h)} bytes")
    return SplitResult(h, comm, log)


def column_parallel(x: torch.Tensor, linear: nn.Linear, n: int) -> list[torch.Tensor]:
    """Each device holds some output rows of the weight and computes some output features."""
    rows = torch.tensor_split(torch.arange(linear.out_features), n)
    return [x @ linear.weight[idx].T + (linear.bias[idx] if linear.bias is not None else 0) for idx in rows]


def row_parallel_partials(h_shards: list[torch.Tensor], linear: nn.Linear) -> list[torch.Tensor]:
    """Each device holds the weight columns for its own input features; the partial outputs must be summed."""
    cols = torch.tensor_split(torch.arange(linear.in_features), len(h_shards))
    return [h @ linear.weight[:, idx].T for h, idx in zip(h_shards, cols)]


def tensor_parallel_mlp(x: torch.Tensor, fc1: nn.Linear, fc2: nn.Linear, n: int) -> SplitResult:
    """Tensor parallelism: ``fc1`` column-parallel, ReLU locally, ``fc2`` row-parallel, one all-reduce.

    The column split needs no communication (each device has the whole input ``x``); the row split
    leaves every device with a partial sum of the full output, which an all-reduce adds up. That is one
    all-reduce of the output in the forward pass, and one of the input's gradient in the backward pass.
    """
    h_shards = [torch.relu(h) for h in column_parallel(x, fc1, n)]
    partials = row_parallel_partials(h_shards, fc2)
    out = torch.stack(partials).sum(0) + fc2.bias
    ring = 2 * (n - 1) * nbytes(out) // n if n > 1 else 0
    log = [f"device {d}: hidden units {tuple(h.shape)}, partial output {tuple(p.shape)}"
           for d, (h, p) in enumerate(zip(h_shards, partials))]
    log.append(f"one all-reduce of the {tuple(out.shape)} output: each device sends {ring} bytes in a ring")
    return SplitResult(out, ring, log, {"partials": partials})


def data_parallel_grads(model: nn.Module, loss_fn, x: torch.Tensor, y: torch.Tensor, n: int) -> SplitResult:
    """Data parallelism: every device holds a full copy, takes a slice of the batch, and the gradients
    are averaged (an all-reduce of every gradient, then divide by n).

    With equal slices and a mean loss, the averaged gradient equals the full batch's gradient.
    ``output`` is the flat averaged gradient; ``extra["replica_grads"]`` each device's own.
    """
    replica_grads = []
    for xs, ys in zip(x.tensor_split(n), y.tensor_split(n)):
        replica = copy.deepcopy(model)
        loss_fn(replica(xs), ys).backward()
        replica_grads.append(torch.cat([p.grad.reshape(-1) for p in replica.parameters()]))
    avg = torch.stack(replica_grads).mean(0)
    ring = 2 * (n - 1) * nbytes(avg) // n if n > 1 else 0
    log = [f"each of {n} devices computes a gradient of {avg.numel()} numbers on {len(x) // n} samples",
           f"one all-reduce of {nbytes(avg)} bytes of gradients: each device sends {ring} bytes in a ring"]
    return SplitResult(avg, ring, log, {"replica_grads": replica_grads})


# --------------------------------------------------------------------------- DataParallel on CPU

def dataparallel_forward(module: nn.Module, x: torch.Tensor, n_devices: int) -> SplitResult:
    """``nn.DataParallel``'s four steps done by hand on CPU, where ``torch.nn.parallel``'s own
    functions refuse to run (they need CUDA devices).

    scatter: ``x.chunk(n)`` (what ``torch.nn.parallel.comm.scatter`` does, so a batch of 2 on 4
    devices uses only 2); replicate: a copy of the module per device; parallel_apply: one Python thread
    per replica; gather: concatenate the outputs on device 0.
    """
    chunks = x.chunk(n_devices)
    replicas = [copy.deepcopy(module) for _ in chunks]
    outputs: list[torch.Tensor | None] = [None] * len(chunks)

    def work(i: int) -> None:
        outputs[i] = replicas[i](chunks[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(chunks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = torch.cat(outputs)  # type: ignore[arg-type]
    params = sum(nbytes(p) for p in module.parameters())
    moved = params * (len(chunks) - 1) + sum(nbytes(c) for c in chunks[1:]) + sum(nbytes(o) for o in outputs[1:])
    log = [f"scatter: batch {len(x)} -> chunks {[len(c) for c in chunks]}",
           f"replicate: one copy per device, {params} bytes each ({len(replicas) - 1} of them cross a link)",
           f"parallel_apply: {len(threads)} threads, one per replica",
           f"gather: outputs {[tuple(o.shape) for o in outputs]} -> {tuple(out.shape)} on device 0"]
    return SplitResult(out, moved, log, {"chunks": [len(c) for c in chunks]})


def dataparallel_memory(param_bytes: int, act_bytes_per_sample: int, out_bytes_per_sample: int,
                        batch: int, n_devices: int, optimizer_factor: float = 2.0) -> list[int]:
    """A model of peak bytes on each device under ``nn.DataParallel`` (a model, not a measurement).

    Every device: a replica's parameters and gradients, and the activations of its chunk. Device 0 also
    keeps the optimizer state (``optimizer_factor`` x parameters, 2 for Adam's two moments), the
    gathered outputs of the whole batch and the loss computed from them.
    """
    sizes = [len(c) for c in torch.empty(batch).chunk(n_devices)] + [0] * n_devices
    mem = []
    for d in range(n_devices):
        b = sizes[d]
        used = 2 * param_bytes + b * act_bytes_per_sample if b else 0
        if d == 0:
            used += int(optimizer_factor * param_bytes) + batch * out_bytes_per_sample
        mem.append(used)
    return mem
