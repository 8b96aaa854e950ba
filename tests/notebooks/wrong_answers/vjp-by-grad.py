# Chapter 2, notebook 2.2, exercise 1: v^T J with torch.autograd.grad, leaving x untouched.
WRONG = [
    # J v instead of v^T J (through the full Jacobian)
    "def vjp_of(f, x, v):\n    J = torch.autograd.functional.jacobian(f, x)\n    return J @ v",
    # ignores v: the gradient of the sum of the outputs
    "def vjp_of(f, x, v):\n    leaf = x.detach().requires_grad_()\n    return torch.autograd.grad(f(leaf).sum(), leaf)[0]",
    # changes the caller's x: requires_grad_ and backward on it
    "def vjp_of(f, x, v):\n    x.requires_grad_()\n    f(x).backward(v)\n    return x.grad",
    # returns the tuple that autograd.grad gives
    "def vjp_of(f, x, v):\n    leaf = x.detach().requires_grad_()\n"
    "    return torch.autograd.grad(f(leaf), leaf, grad_outputs=v)",
    # x itself does not require grad: autograd.grad raises
    "def vjp_of(f, x, v):\n    return torch.autograd.grad(f(x), x, grad_outputs=v)[0]",
    # requires grad switched back off, but the gradient is left in the caller's x.grad
    "def vjp_of(f, x, v):\n    x.requires_grad_()\n    f(x).backward(v)\n    g = x.grad.clone()\n"
    "    x.requires_grad_(False)\n    return g",
    # float32 result
    "def vjp_of(f, x, v):\n    leaf = x.detach().requires_grad_()\n"
    "    return torch.autograd.grad(f(leaf), leaf, grad_outputs=v)[0].float()",
]
RIGHT = [
    "def vjp_of(f, x, v):\n    leaf = x.detach().requires_grad_()\n"
    "    return torch.autograd.grad((f(leaf) * v).sum(), leaf)[0]",
    "def vjp_of(f, x, v):\n    return torch.func.vjp(f, x)[1](v)[0]",
    # backward(v) on a detached copy
    "def vjp_of(f, x, v):\n    leaf = x.detach().clone().requires_grad_()\n    f(leaf).backward(v)\n    return leaf.grad",
    # the full Jacobian, then v^T J by a product
    "def vjp_of(f, x, v):\n    return v @ torch.autograd.functional.jacobian(f, x)",
    # NumPy-built from the Jacobian of torch.func.jacrev
    "import numpy as np\ndef vjp_of(f, x, v):\n"
    "    return torch.from_numpy(v.numpy() @ torch.func.jacrev(f)(x).numpy())",
]
FAILING_VARIANTS = {
    "inputs-changed": "the task says the caller's x must stay exactly as it was",
}
