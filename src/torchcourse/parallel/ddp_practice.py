"""What a real DDP job does besides the training step: ``torchrun ... -m torchcourse.parallel.ddp_practice``.

Used by ``chapters/03-parallel/04-ddp-in-practice.ipynb`` (section 1), launched through
``torchcourse.parallel.launch`` with ``--max-restarts 1``. Every process

1. resumes from the checkpoint in ``--checkpoint-dir`` if there is one (``torch.load`` with
   ``map_location``: each rank loads onto its own device, not the device rank 0 saved from);
2. trains with gradient accumulation: two micro-batches per step, the first under ``ddp.no_sync()``, so
   DDP all-reduces once per step (a communication hook counts the all-reduces);
3. after every epoch, rank 0 alone saves a checkpoint (written to a temporary file, then renamed, so a
   crash never leaves half a file) and every rank waits at ``dist.barrier()`` until it is on disk;
4. with ``--crash-at-epoch E``, rank 1 exits with an error after epoch E in the job's first attempt:
   ``torchrun`` then stops the other ranks and starts them all again, and they resume from step 1;
5. checks that the final parameters equal one uninterrupted process trained on the whole batch;
6. trains a second model on uneven inputs (rank r takes 2 + r steps) inside ``Join``, which keeps the
   ranks' collectives matched when one runs out of data;
7. evaluates on a test set of 9 samples without a ``DistributedSampler`` (whose padding would count a
   sample twice), next to what the padded shards would give.

Lines start with ``[rank r]``. Runs on gloo (CPU) or nccl (one GPU per process), as ``ddp_train`` does.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from torchcourse.parallel.ddp_train import flat_params, make_data, say
from torchcourse.parallel.devices import BACKENDS, bind, choose

LR, MOMENTUM = 0.05, 0.9


def counting_hook(state: dict, bucket):
    """DDP's own all-reduce of a gradient bucket (averaged over the ranks), counted."""
    state["all_reduces"] += 1
    return allreduce_hook(None, bucket)


def save_checkpoint(path: Path, model: nn.Module, opt: torch.optim.Optimizer, epoch: int) -> None:
    # Rank 0 only: every rank holds the same parameters, so one copy is enough. A temporary file renamed
    # into place: a crash while writing leaves the previous checkpoint whole.
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch}, tmp)
    os.replace(tmp, path)


def train(rank: int, world: int, device: torch.device, device_ids, ckpt: Path, epochs: int, batch: int,
          crash_at: int | None) -> torch.Tensor:
    data = make_data()
    torch.manual_seed(0)
    model = nn.Linear(3, 1).double().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)  # momentum: state worth saving
    start = 0
    if ckpt.exists():
        # map_location: rank 0 saved tensors from its device; each rank loads them onto its own
        state = torch.load(ckpt, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
        say(rank, f"resumed from {ckpt.name}: epoch {state['epoch']} done, starting at epoch {start}")
    ddp = DDP(model, device_ids=device_ids)  # after loading: DDP broadcasts rank 0's parameters anyway
    counter = {"all_reduces": 0}
    ddp.register_comm_hook(counter, counting_hook)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=batch, sampler=sampler)
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    for epoch in range(start, epochs):
        sampler.set_epoch(epoch)
        counter["all_reduces"] = 0
        steps, total = 0, 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            halves = list(zip(xb.tensor_split(2), yb.tensor_split(2)))
            opt.zero_grad()
            with ddp.no_sync():  # the first micro-batch: gradients accumulate locally, nothing is sent
                first = nn.functional.mse_loss(ddp(halves[0][0]), halves[0][1]) / 2
                first.backward()
            second = nn.functional.mse_loss(ddp(halves[1][0]), halves[1][1]) / 2
            second.backward()  # the last micro-batch: the accumulated gradients are all-reduced now
            opt.step()
            steps, total = steps + 1, total + first.item() + second.item()
        say(rank, f"epoch {epoch}: {steps} steps of 2 micro-batches, {counter['all_reduces']} all-reduces; "
                  f"mean loss of my batches {total / max(steps, 1):.4f}")
        if rank == 0:
            save_checkpoint(ckpt, model, opt, epoch)
        dist.barrier()  # nobody goes on (or crashes) before the checkpoint is on disk
        if crash_at == epoch and attempt == 0 and rank == 1:
            say(rank, f"crashing after epoch {epoch} (a simulated failure; torchrun restarts the job)")
            sys.stdout.flush()
            os._exit(1)
    return flat_params(model)


def reference(world: int, epochs: int, batch: int) -> torch.Tensor:
    """One process, no interruption, every step on the union of the ranks' batches."""
    data = make_data()
    torch.manual_seed(0)
    model = nn.Linear(3, 1).double()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for epoch in range(epochs):
        shards = []
        for r in range(world):
            s = DistributedSampler(data, num_replicas=world, rank=r, shuffle=True, seed=0)
            s.set_epoch(epoch)
            shards.append(list(s))
        for start in range(0, len(shards[0]), batch):
            idx = [i for shard in shards for i in shard[start:start + batch]]
            opt.zero_grad()
            nn.functional.mse_loss(model(data.tensors[0][idx]), data.tensors[1][idx]).backward()
            opt.step()
    return flat_params(model)


def uneven(rank: int, world: int, device: torch.device, device_ids) -> None:
    torch.manual_seed(0)
    model = nn.Linear(3, 1).double().to(device)
    ddp = DDP(model, device_ids=device_ids)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    data = make_data()
    x, y = data.tensors[0].to(device), data.tensors[1].to(device)
    steps = 2 + rank  # rank 0 runs out of data first
    with Join([ddp]):  # a finished rank joins the others' all-reduces with zeros until all are done
        for i in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(ddp(x[i::5]), y[i::5]).backward()
            opt.step()
    mine = flat_params(model)
    everyone = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(everyone, mine)
    spread = max(float((p - mine).abs().max()) for p in everyone)
    say(rank, f"Join: I took {steps} steps; largest difference between ranks' parameters {spread:.1e}")


def evaluate(rank: int, world: int, device: torch.device, model: nn.Module) -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(9, 3, generator=g, dtype=torch.float64)
    y = (x @ torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).unsqueeze(1)
    with torch.no_grad():
        errors = (model(x.to(device)) - y.to(device)).square().reshape(-1)
    # What a DistributedSampler would do: 9 samples on `world` ranks, padded so every rank gets as many
    shard = list(DistributedSampler(range(9), num_replicas=world, rank=rank, shuffle=False))
    sums = torch.stack([errors[shard].sum(), torch.tensor(float(len(shard)), dtype=torch.float64, device=device)])
    dist.all_reduce(sums)
    if rank == 0:  # without a sampler: every test sample exactly once (here on rank 0, the others wait)
        say(rank, f"test MSE on all 9 samples, no sampler: {float(errors.mean()):.6f}; over padded "
                  f"DistributedSampler shards ({int(sums[1])} samples, one counted twice): "
                  f"{float(sums[0] / sums[1]):.6f}")
    dist.barrier()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint-dir", required=True, type=Path)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch", type=int, default=4, help="samples per rank per step (two micro-batches)")
    p.add_argument("--crash-at-epoch", type=int, default=None)
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    args = p.parse_args(argv)
    place = choose(args.backend, int(os.environ.get("LOCAL_RANK", "0")),
                   int(os.environ.get("LOCAL_WORLD_SIZE", "1")), torch.cuda.device_count(),
                   dist.is_nccl_available())
    bind(place)
    dist.init_process_group(place.backend, device_id=place.device if place.device.type == "cuda" else None)
    rank, world = dist.get_rank(), dist.get_world_size()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")) + 1  # torchrun counts its restarts
    say(rank, f"{place.backend} on {place.device}, attempt {attempt}")
    try:
        ckpt = args.checkpoint_dir / "checkpoint.pt"
        mine = train(rank, world, place.device, place.device_ids, ckpt, args.epochs, args.batch, args.crash_at_epoch)
        if rank == 0:
            diff = float((reference(world, args.epochs, args.batch) - mine.cpu()).abs().max())
            say(rank, f"final parameters vs one uninterrupted process on the whole batch: max difference {diff:.1e}")
        uneven(rank, world, place.device, place.device_ids)
        model = nn.Linear(3, 1).double().to(place.device)
        model.load_state_dict(torch.load(ckpt, map_location=place.device, weights_only=True)["model"])
        evaluate(rank, world, place.device, model)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
