# Chapter 2, notebook 2.4, exercise 1: one gradient per sample of (tanh(X[i] @ w) - t[i]) ** 2.
def _f(*lines: str) -> str:
    return "def per_sample_grads(w, X, t):\n" + "".join(f"    {line}\n" for line in lines)


_BATCH = ("leaf = w.detach().clone().requires_grad_()",
          "((torch.tanh(X @ leaf) - t) ** 2).mean().backward()")

WRONG = [
    # the batch's gradient (a mean), repeated for every sample
    _f(*_BATCH, "return leaf.grad.expand(X.shape[0], -1).clone()"),
    # the batch's gradient of the summed loss, repeated
    _f("leaf = w.detach().clone().requires_grad_()", "((torch.tanh(X @ leaf) - t) ** 2).sum().backward()",
       "return leaf.grad.expand(X.shape[0], -1).clone()"),
    # each per-sample gradient divided by n, as if taken from the batch's mean loss
    _f("y = torch.tanh(X @ w)", "return (2 * (y - t) * (1 - y ** 2)).unsqueeze(1) * X / X.shape[0]"),
    # the factor 2 of the square forgotten
    _f("y = torch.tanh(X @ w)", "return ((y - t) * (1 - y ** 2)).unsqueeze(1) * X"),
    # tanh's derivative forgotten
    _f("y = torch.tanh(X @ w)", "return (2 * (y - t)).unsqueeze(1) * X"),
    # the result transposed: (d, n)
    _f("y = torch.tanh(X @ w)", "return ((2 * (y - t) * (1 - y ** 2)).unsqueeze(1) * X).T.contiguous()"),
    # a loop that forgets to clear the gradient between samples: row i holds the sum of rows 0..i
    _f("leaf = w.detach().clone().requires_grad_()", "rows = []", "for i in range(X.shape[0]):",
       "    ((torch.tanh(X[i] @ leaf) - t[i]) ** 2).backward()", "    rows.append(leaf.grad.clone())",
       "return torch.stack(rows)"),
    # always float32
    _f("y = torch.tanh(X @ w)", "return ((2 * (y - t) * (1 - y ** 2)).unsqueeze(1) * X).float()"),
]
RIGHT = [
    # by hand, the chain rule written out
    _f("y = torch.tanh(X @ w)", "return (2 * (y - t) * (1 - y ** 2)).unsqueeze(1) * X"),
    # a loop of one backward pass per sample, each on a fresh leaf
    _f("rows = []", "for i in range(X.shape[0]):", "    leaf = w.detach().clone().requires_grad_()",
       "    ((torch.tanh(X[i] @ leaf) - t[i]) ** 2).backward()", "    rows.append(leaf.grad)",
       "return torch.stack(rows)"),
    # the Jacobian of the vector of per-sample losses: row i is dL_i/dw
    _f("return torch.func.jacrev(lambda v: (torch.tanh(X @ v) - t) ** 2)(w)"),
    # autograd.grad with is_grads_batched over one-hot vectors, inputs changed in place afterwards
    _f("leaf = w.detach().clone().requires_grad_()", "losses = (torch.tanh(X @ leaf) - t) ** 2",
       "eye = torch.eye(X.shape[0], dtype=X.dtype)",
       "(out,) = torch.autograd.grad(losses, leaf, grad_outputs=eye, is_grads_batched=True)",
       "X.zero_()", "return out"),
]
