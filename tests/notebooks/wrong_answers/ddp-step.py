_HEAD = "def ddp_step(model, loss_fn, optimizer, inputs, targets, group):\n"
_FWD = "    loss = loss_fn(model(inputs), targets)\n    loss.backward()\n"
_REDUCE = "    for p in model.parameters():\n        dist.all_reduce(p.grad, group=group)\n        p.grad /= group.size()\n"
WRONG = [
    # sums the gradients: a step world_size times too large
    _HEAD + "    optimizer.zero_grad()\n" + _FWD
    + "    for p in model.parameters():\n        dist.all_reduce(p.grad, group=group)\n"
    "    optimizer.step()\n    return loss.item()",
    # no all-reduce: each rank trains on its own rows and the copies drift apart
    _HEAD + "    optimizer.zero_grad()\n" + _FWD + "    optimizer.step()\n    return loss.item()",
    # never clears the gradients: the second step adds the first step's gradient
    _HEAD + _FWD + _REDUCE + "    optimizer.step()\n    return loss.item()",
    # steps before averaging: each rank updates with its own gradient
    _HEAD + "    optimizer.zero_grad()\n" + _FWD + "    optimizer.step()\n" + _REDUCE + "    return loss.item()",
    # divides by 2 whatever the world size
    _HEAD + "    optimizer.zero_grad()\n" + _FWD
    + "    for p in model.parameters():\n        dist.all_reduce(p.grad, group=group)\n        p.grad /= 2\n"
    "    optimizer.step()\n    return loss.item()",
    # averages the parameters after a local step instead of the gradients (Adam's state drifts apart)
    _HEAD + "    optimizer.zero_grad()\n" + _FWD + "    optimizer.step()\n"
    "    with torch.no_grad():\n        for p in model.parameters():\n"
    "            dist.all_reduce(p.data, group=group)\n            p.data /= group.size()\n    return loss.item()",
    # averages only the first parameter
    _HEAD + "    optimizer.zero_grad()\n" + _FWD
    + "    p = next(model.parameters())\n    dist.all_reduce(p.grad, group=group)\n    p.grad /= group.size()\n"
    "    optimizer.step()\n    return loss.item()",
    # returns the loss tensor, not a float
    _HEAD + "    optimizer.zero_grad()\n" + _FWD + _REDUCE + "    optimizer.step()\n    return loss",
    # returns the loss after the step
    _HEAD + "    optimizer.zero_grad()\n" + _FWD + _REDUCE + "    optimizer.step()\n"
    "    with torch.no_grad():\n        return loss_fn(model(inputs), targets).item()",
    # returns the loss averaged over the ranks (the task asks for this rank's own)
    _HEAD + "    optimizer.zero_grad()\n" + _FWD + _REDUCE + "    optimizer.step()\n"
    "    avg = loss.detach().clone()\n    dist.all_reduce(avg, group=group)\n    return (avg / group.size()).item()",
]
RIGHT = [
    # the gradients flattened into one buffer: one all-reduce instead of one per parameter (DDP's buckets)
    _HEAD + "    optimizer.zero_grad()\n" + _FWD
    + "    grads = [p.grad for p in model.parameters()]\n    flat = torch.cat([g.reshape(-1) for g in grads])\n"
    "    dist.all_reduce(flat, group=group)\n    flat /= group.size()\n"
    "    for g, chunk in zip(grads, flat.split([g.numel() for g in grads])):\n        g.copy_(chunk.view_as(g))\n"
    "    optimizer.step()\n    return float(loss)",
    # gloo's own average
    _HEAD + "    optimizer.zero_grad()\n" + _FWD
    + "    for p in model.parameters():\n        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG, group=group)\n"
    "    optimizer.step()\n    return loss.item()",
    # model.zero_grad with set_to_none, and a multiplication by the reciprocal
    _HEAD + "    model.zero_grad(set_to_none=True)\n" + _FWD
    + "    for p in model.parameters():\n        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, group=group)\n"
    "        p.grad.mul_(1.0 / group.size())\n    optimizer.step()\n    return float(loss.detach())",
    # the gradients replaced by new tensors, from an asynchronous all-reduce per parameter
    _HEAD + "    optimizer.zero_grad()\n" + _FWD
    + "    works = [(p, dist.all_reduce(p.grad, group=group, async_op=True)) for p in model.parameters()]\n"
    "    for p, work in works:\n        work.wait()\n        p.grad = p.grad / group.size()\n"
    "    optimizer.step()\n    return loss.item()",
]

FAILING_VARIANTS = {
    "inputs-copied": "the step is the task: it must change the model it was given (through its optimizer); a step "
                     "on a copy of the model leaves the rank's model untrained",
}
