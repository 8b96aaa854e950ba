# Chapter 2, notebook 2.1, exercise 3: accumulate the mean of micro-batch losses into w.grad.
WRONG = [
    # never cleared: a gradient already in w.grad is added in
    "def accumulated_grad(w, batches):\n    for X, t in batches:\n"
    "        (((X @ w - t) ** 2).mean() / len(batches)).backward()\n    return w.grad",
    # not scaled: the sum of the batch losses, not their average
    "def accumulated_grad(w, batches):\n    w.grad = None\n    for X, t in batches:\n"
    "        ((X @ w - t) ** 2).mean().backward()\n    return w.grad",
    # cleared inside the loop: only the last batch survives
    "def accumulated_grad(w, batches):\n    for X, t in batches:\n        w.grad = None\n"
    "        (((X @ w - t) ** 2).mean() / len(batches)).backward()\n    return w.grad",
    # one big batch: the mean over samples, which differs when batch sizes differ
    "def accumulated_grad(w, batches):\n    w.grad = None\n    X = torch.cat([b[0] for b in batches])\n"
    "    t = torch.cat([b[1] for b in batches])\n    ((X @ w - t) ** 2).mean().backward()\n    return w.grad",
    # the note's x.grad.data.zero_(): fails when there is no gradient yet
    "def accumulated_grad(w, batches):\n    w.grad.data.zero_()\n    for X, t in batches:\n"
    "        (((X @ w - t) ** 2).mean() / len(batches)).backward()\n    return w.grad",
    # returns the right gradient but leaves the stale one in w.grad
    "def accumulated_grad(w, batches):\n    v = w.detach().requires_grad_()\n    for X, t in batches:\n"
    "        (((X @ v - t) ** 2).mean() / len(batches)).backward()\n    return v.grad",
    # clears w's values instead of its gradient
    "def accumulated_grad(w, batches):\n    w.data.zero_()\n    w.grad = None\n    for X, t in batches:\n"
    "        (((X @ w - t) ** 2).mean() / len(batches)).backward()\n    return w.grad",
    # takes a gradient-descent step as well: w changes
    "def accumulated_grad(w, batches):\n    w.grad = None\n    for X, t in batches:\n"
    "        (((X @ w - t) ** 2).mean() / len(batches)).backward()\n    with torch.no_grad():\n"
    "        w -= 0.1 * w.grad\n    return w.grad",
]
RIGHT = [
    "def accumulated_grad(w, batches):\n    if w.grad is not None:\n        w.grad.zero_()\n    for X, t in batches:\n"
    "        (((X @ w - t) ** 2).mean() / len(batches)).backward()\n    return w.grad",
    # one backward of the averaged loss accumulates the same gradient
    "def accumulated_grad(w, batches):\n    w.grad = None\n"
    "    (sum(((X @ w - t) ** 2).mean() for X, t in batches) / len(batches)).backward()\n    return w.grad",
    # a zero gradient first, then whole batch losses, divided in place at the end
    "def accumulated_grad(w, batches):\n    w.grad = torch.zeros_like(w)\n    for X, t in batches:\n"
    "        ((X @ w - t) ** 2).mean().backward()\n    w.grad /= len(batches)\n    return w.grad",
    # torch.autograd.grad per batch, summed and assigned to w.grad
    "def accumulated_grad(w, batches):\n"
    "    w.grad = sum(torch.autograd.grad(((X @ w - t) ** 2).mean(), w)[0] for X, t in batches) / len(batches)\n"
    "    return w.grad",
    # the batches' tensors changed in place (the checks pass copies): X @ w - t computed into X's memory
    "def accumulated_grad(w, batches):\n    w.grad = None\n    for X, t in batches:\n        t.neg_()\n"
    "        (((X @ w + t) ** 2).mean() / len(batches)).backward()\n    return w.grad",
]
FAILING_VARIANTS = {
    "inputs-copied": "the task's result is the caller's w.grad: a gradient left in a copy of w never reaches it",
}
