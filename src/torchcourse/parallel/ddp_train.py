"""The chapter's real distributed run: ``torchrun --nproc-per-node 2 -m torchcourse.parallel.ddp_train``.

Used by ``chapters/03-parallel/03-ddp-for-real.ipynb`` (sections 2-3) and ``04-ddp-in-practice.ipynb``
(sections 3-4), launched through
``torchcourse.parallel.launch``. Every process runs this file; ``torchrun`` tells each one who it is
through environment variables (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``). ``--backend gloo`` runs it on the CPU; ``--backend nccl`` on one GPU per process
(``--backend auto``, the default, picks nccl when every process on the machine has a GPU of its own:
``torchcourse.parallel.devices``). Each process then binds its GPU (``torch.cuda.set_device(LOCAL_RANK)``)
and keeps the model, the data and every tensor it hands to a collective there, because NCCL carries only
CUDA tensors. It

1. calls the four collectives (broadcast, all_reduce, reduce_scatter, all_gather);
2. runs the hand-built ring all-reduce (``ring.ring_allreduce_p2p``) and checks it against
   ``dist.all_reduce``;
3. trains a small model with ``DistributedDataParallel`` and a ``DistributedSampler`` (``set_epoch``
   every epoch), printing the loss of every epoch, then checks that every rank's parameters are equal to
   each other and to one process training on the whole batch;
4. times a training step with 1 and with all processes (same global batch) next to a cost model, and, on the
   CPU, the same step done as ``nn.DataParallel`` does it: one process, a replica and a thread per device;
5. with ``--fsdp``, shards a model with ``fully_shard`` (FSDP2) and takes a step.

``--skip-training`` leaves out 1-3, ``--skip-timing`` 4. Lines start with ``[rank r]``; rank 0 prints the
summaries.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchcourse.parallel.devices import BACKENDS, bind, choose, synchronize
from torchcourse.parallel.ring import ring_allreduce_p2p


def say(rank: int, text: str) -> None:
    # one write per line, so that two processes sharing the output pipe never split each other's lines
    sys.stdout.write(f"[rank {rank}] {text}\n")
    sys.stdout.flush()


def flat_params(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def make_data(n: int = 24, features: int = 3) -> TensorDataset:
    g = torch.Generator().manual_seed(0)  # the same data on every rank
    x = torch.randn(n, features, generator=g, dtype=torch.float64)
    w = torch.arange(1.0, features + 1, dtype=torch.float64)
    y = (x @ w + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)).unsqueeze(1)
    return TensorDataset(x, y)


def collectives(rank: int, world: int, device: torch.device) -> None:
    # every tensor a collective sees is on this rank's device: nccl refuses CPU tensors
    t = torch.tensor([float(rank + 1)] * 2, device=device)
    dist.broadcast(t, src=0)
    say(rank, f"broadcast from rank 0 -> {t.tolist()}")
    t = torch.tensor([float(rank + 1)] * 2, device=device)
    dist.all_reduce(t)  # op=SUM by default
    say(rank, f"all_reduce (sum) of [rank+1, rank+1] -> {t.tolist()}")
    inputs = list((torch.arange(2.0 * world, device=device) + 10 * rank).chunk(world))
    out = torch.empty(2, device=device)
    dist.reduce_scatter(out, inputs)
    say(rank, f"reduce_scatter: my inputs {[c.tolist() for c in inputs]} -> my summed chunk {out.tolist()}")
    gathered = [torch.empty(2, device=device) for _ in range(world)]
    dist.all_gather(gathered, torch.tensor([float(rank)] * 2, device=device))
    say(rank, f"all_gather of [rank, rank] -> {[g.tolist() for g in gathered]}")


def ring_check(rank: int, device: torch.device) -> None:
    g = torch.Generator().manual_seed(100 + rank)
    data = torch.randn(11, generator=g, dtype=torch.float64).to(device)
    mine = ring_allreduce_p2p(data.clone())
    ref = data.clone()
    dist.all_reduce(ref)
    say(rank, f"hand-built ring all-reduce vs dist.all_reduce: max difference {float((mine - ref).abs().max()):.1e}")


def train(rank: int, world: int, epochs: int, batch: int, lr: float, device: torch.device,
          device_ids: list[int] | None = None) -> None:
    data = make_data()
    torch.manual_seed(rank)  # different initial weights on purpose: DDP broadcasts rank 0's
    model = nn.Linear(3, 1).double().to(device)
    before = flat_params(model)
    ddp = DDP(model, device_ids=device_ids)  # device_ids=[local_rank] on a GPU, None on the CPU
    say(rank, f"weights before DDP {[round(v, 4) for v in before.tolist()]}, "
              f"after DDP(model) {[round(v, 4) for v in flat_params(model).tolist()]}")
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=batch, sampler=sampler)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        say(rank, f"epoch {epoch}: my samples {list(sampler)}")
        total = torch.zeros(2, dtype=torch.float64, device=device)  # (sum of batch losses, batches)
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(xb), yb)
            loss.backward()  # gradients are all-reduced (averaged) here, bucket by bucket
            opt.step()
            total += torch.stack([loss.detach(), torch.ones((), dtype=torch.float64, device=device)])
        dist.all_reduce(total)  # every rank's batches: each rank saw only its own
        if rank == 0:
            say(rank, f"epoch {epoch}: mean loss over all ranks' batches {float(total[0] / total[1]):.4f}")
    mine = flat_params(model)
    everyone = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(everyone, mine)
    if rank == 0:
        spread = max(float((p - mine).abs().max()) for p in everyone)
        say(rank, f"after training, largest difference between ranks' parameters: {spread:.1e}")
        # One process, the whole global batch at each step: the union of every rank's batch.
        torch.manual_seed(0)
        ref = nn.Linear(3, 1).double()
        ref_opt = torch.optim.SGD(ref.parameters(), lr=lr)
        for epoch in range(epochs):
            shards = []
            for r in range(world):
                s = DistributedSampler(data, num_replicas=world, rank=r, shuffle=True, seed=0)
                s.set_epoch(epoch)
                shards.append(list(s))
            for start in range(0, len(shards[0]), batch):
                idx = [i for shard in shards for i in shard[start:start + batch]]
                x, y = data.tensors[0][idx], data.tensors[1][idx]
                ref_opt.zero_grad()
                nn.functional.mse_loss(ref(x), y).backward()
                ref_opt.step()
        diff = float((flat_params(ref) - mine.cpu()).abs().max())
        say(rank, f"DDP parameters vs one process on the full batch: max difference {diff:.1e}")
        say(rank, f"final weights {[round(v, 4) for v in mine.tolist()]}")


def dataparallel_step_time(model: nn.Module, x: torch.Tensor, n: int, steps: int) -> float:
    """Median seconds of a step done as ``nn.DataParallel`` does it, on the CPU: in one process, copy the model
    to ``n`` replicas, run each replica's forward and backward on its chunk of the batch in a thread of its own
    (the threads share one interpreter and its GIL, released only inside PyTorch's kernels), then sum the
    replicas' gradients into the model and step."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    chunks = x.chunk(n)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        replicas = [copy.deepcopy(model) for _ in chunks]  # replicate: every step

        def work(replica: nn.Module, chunk: torch.Tensor) -> None:
            # each chunk's share of the whole batch's mean, so the summed gradients are the batch's
            (replica(chunk).square().mean() * (len(chunk) / len(x))).backward()

        threads = [threading.Thread(target=work, args=pair) for pair in zip(replicas, chunks)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for p, *copies in zip(model.parameters(), *(r.parameters() for r in replicas)):
            p.grad = torch.stack([c.grad for c in copies]).sum(0)  # reduce onto the model
        opt.step()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def timing(rank: int, world: int, steps: int, width: int, global_batch: int, device: torch.device,
           device_ids: list[int] | None = None) -> None:
    solo = dist.new_group([0])  # every rank must call new_group, even those not in it
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width)).to(device)
    x = torch.randn(global_batch, width).to(device)
    nbytes = sum(p.numel() * p.element_size() for p in base.parameters())

    def step_time(model: nn.Module, xb: torch.Tensor) -> float:
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            opt.zero_grad()
            model(xb).square().mean().backward()
            opt.step()
            synchronize(device)  # on a GPU the step is queued work until this returns
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2]

    one = None
    if rank == 0:
        one = step_time(DDP(copy.deepcopy(base), device_ids=device_ids, process_group=solo), x)
    dist.barrier()
    many = step_time(DDP(copy.deepcopy(base), device_ids=device_ids), x.tensor_split(world)[rank])
    grads = torch.zeros(nbytes // 4, device=device)
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(5):
        dist.all_reduce(grads)
    synchronize(device)
    comm = (time.perf_counter() - t0) / 5
    if rank == 0:
        say(rank, f"model {nbytes / 1e6:.2f} MB of float32 parameters, global batch {global_batch}")
        say(rank, f"measured step, 1 process : {1e3 * one:.1f} ms")
        if device.type == "cpu":
            threaded = dataparallel_step_time(copy.deepcopy(base), x, world, steps)
            say(rank, f"measured step, DataParallel's way (1 process, {world} threads, model copied every step): "
                      f"{1e3 * threaded:.1f} ms")
        say(rank, f"measured step, {world} processes: {1e3 * many:.1f} ms")
        say(rank, f"cost model: {1e3 * one:.1f} / {world} (compute split) + {1e3 * comm:.1f} "
                  f"(an all-reduce of the gradients, timed alone) = {1e3 * (one / world + comm):.1f} ms")


def fsdp(rank: int, world: int, device: torch.device) -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    # An explicit mesh on this rank's device: without one, fully_shard builds it on the machine's
    # accelerator whatever the backend, and would move a gloo (CPU) run's model to a GPU.
    mesh = init_device_mesh(device.type, (world,))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    full = sum(p.numel() for p in model.parameters())
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    local = sum(p.to_local().numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = model(torch.randn(8, 16).to(device)).square().mean()
    loss.backward()
    opt.step()
    say(rank, f"fully_shard: this rank stores {local} of the model's {full} parameters "
              f"(and Adam state for those only); one training step ran, loss {loss.item():.4f}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch", type=int, default=4, help="samples per rank per step")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=8, help="timed steps")
    p.add_argument("--width", type=int, default=384)
    p.add_argument("--global-batch", type=int, default=64)
    p.add_argument("--fsdp", action="store_true")
    p.add_argument("--skip-timing", action="store_true")
    p.add_argument("--skip-training", action="store_true", help="no collectives, ring or training run")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="gloo: the CPU; nccl: one GPU per process; auto: nccl if every process gets a GPU")
    args = p.parse_args(argv)
    place = choose(args.backend, int(os.environ.get("LOCAL_RANK", "0")),
                   int(os.environ.get("LOCAL_WORLD_SIZE", "1")), torch.cuda.device_count(),
                   dist.is_nccl_available())
    bind(place)  # torch.cuda.set_device(LOCAL_RANK) on a GPU, before the process group
    dist.init_process_group(place.backend, device_id=place.device if place.device.type == "cuda" else None)
    rank, world = dist.get_rank(), dist.get_world_size()
    env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                          "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT")}
    say(rank, f"{dist.get_backend()} backend on {place.device}, pid {os.getpid()}, "
              + ", ".join(f"{k}={v}" for k, v in env.items()))
    try:
        if not args.skip_training:
            collectives(rank, world, place.device)
            ring_check(rank, place.device)
            train(rank, world, args.epochs, args.batch, args.lr, place.device, place.device_ids)
        if not args.skip_timing:
            timing(rank, world, args.steps, args.width, args.global_batch, place.device, place.device_ids)
        if args.fsdp:
            fsdp(rank, world, place.device)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
