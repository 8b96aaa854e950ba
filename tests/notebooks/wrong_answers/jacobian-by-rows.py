# Chapter 2, notebook 2.2, exercise 2: the full Jacobian, one VJP per output row.
WRONG = [
    # transposed: (n, m), columns where rows belong
    "def jacobian_by_rows(f, x):\n    return torch.func.jacrev(f)(x).T",
    # x.grad never cleared between rows: row i is the sum of rows 0..i
    "def jacobian_by_rows(f, x):\n    leaf = x.detach().requires_grad_()\n    y = f(leaf)\n    rows = []\n"
    "    for i in range(y.shape[0]):\n        e = torch.zeros_like(y)\n        e[i] = 1.0\n"
    "        y.backward(e, retain_graph=True)\n        rows.append(leaf.grad.clone())\n    return torch.stack(rows)",
    # the graph is freed after the first row (no retain_graph)
    "def jacobian_by_rows(f, x):\n    leaf = x.detach().requires_grad_()\n    y = f(leaf)\n    rows = []\n"
    "    for i in range(y.shape[0]):\n        e = torch.zeros_like(y)\n        e[i] = 1.0\n"
    "        rows.append(torch.autograd.grad(y, leaf, grad_outputs=e)[0])\n    return torch.stack(rows)",
    # every row the gradient of the sum
    "def jacobian_by_rows(f, x):\n    leaf = x.detach().requires_grad_()\n    y = f(leaf)\n"
    "    g = torch.autograd.grad(y.sum(), leaf)[0]\n    return g.expand(y.shape[0], -1)",
    # a list of rows, not a tensor
    "def jacobian_by_rows(f, x):\n    return list(torch.func.jacrev(f)(x))",
    # float64 whatever x's dtype
    "def jacobian_by_rows(f, x):\n    return torch.autograd.functional.jacobian(f, x).double()",
    # row i is the VJP with e_i, but every row uses the same e_0
    "def jacobian_by_rows(f, x):\n    y, fn = torch.func.vjp(f, x)\n    e = torch.zeros_like(y)\n    e[0] = 1.0\n"
    "    return torch.stack([fn(e)[0] for _ in range(y.shape[0])])",
]
RIGHT = [
    "def jacobian_by_rows(f, x):\n    y, fn = torch.func.vjp(f, x)\n"
    "    return torch.stack([fn(e)[0] for e in torch.eye(y.shape[0], dtype=y.dtype)])",
    "def jacobian_by_rows(f, x):\n    return torch.autograd.functional.jacobian(f, x)",
    # the check's own reference
    "def jacobian_by_rows(f, x):\n    return torch.func.jacrev(f)(x)",
    # notebook 2.2's pattern: the VJP function vmapped over the rows of the identity
    "def jacobian_by_rows(f, x):\n    y, vjp_fn = torch.func.vjp(f, x)\n"
    "    return torch.func.vmap(vjp_fn)(torch.eye(y.shape[0], dtype=y.dtype))[0]",
    # columns from JVPs (forward mode): the same matrix
    "def jacobian_by_rows(f, x):\n    return torch.func.jacfwd(f)(x)",
    # backward(e_i) on one retained graph, clearing leaf.grad between rows; columns filled into a transposed buffer
    "def jacobian_by_rows(f, x):\n    leaf = x.detach().requires_grad_()\n    y = f(leaf)\n"
    "    J = torch.empty(leaf.shape[0], y.shape[0], dtype=x.dtype).T\n    for i in range(y.shape[0]):\n"
    "        leaf.grad = None\n        y.backward(torch.eye(y.shape[0], dtype=y.dtype)[i], retain_graph=True)\n"
    "        J[i] = leaf.grad\n    return J",
    # NumPy-built from the rows
    "import numpy as np\ndef jacobian_by_rows(f, x):\n    y, fn = torch.func.vjp(f, x)\n"
    "    rows = [fn(e)[0].numpy() for e in torch.eye(y.shape[0], dtype=y.dtype)]\n"
    "    return torch.from_numpy(np.stack(rows))",
]
