WRONG = [
    # the halves swapped, but no minus sign
    "def rotate_half(x):\n    x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat([x2, x1], dim=-1)",
    # the minus sign on the wrong half
    "def rotate_half(x):\n    x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat([x2, -x1], dim=-1)",
    # stack adds a new dimension instead of joining along the last one
    "def rotate_half(x):\n    x1, x2 = x.chunk(2, dim=-1)\n    return torch.stack([-x2, x1], dim=-1)",
    # splits and joins along dimension 0: right only for vectors
    "def rotate_half(x):\n    x1, x2 = x.chunk(2)\n    return torch.cat([-x2, x1])",
    # in place: neg_ on a piece of x writes into x
    "def rotate_half(x):\n    x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat([x2.neg_(), x1], dim=-1)",
    # reverses the order instead of rotating it
    "def rotate_half(x):\n    d = x.shape[-1]\n    out = x.flip(-1).clone()\n    out[..., : d // 2] *= -1\n    return out",
    # the interleaved (even/odd) pairing of another convention
    "def rotate_half(x):\n    return torch.stack([-x[..., 1::2], x[..., ::2]], dim=-1).flatten(-2)",
    # split(2) cuts pieces of size 2, not two halves
    "def rotate_half(x):\n"
    "    x1, x2 = x.split(2, dim=-1)[:2]\n"
    "    return torch.cat([-x2, x1], dim=-1)",
    # the loop with a float32 output whatever x's dtype
    "def rotate_half(x):\n"
    "    d = x.shape[-1]\n"
    "    out = torch.empty(x.shape)\n"
    "    for j in range(d // 2):\n"
    "        out[..., j] = -x[..., j + d // 2]\n"
    "        out[..., j + d // 2] = x[..., j]\n"
    "    return out",
]
RIGHT = [
    "def rotate_half(x):\n    d = x.shape[-1] // 2\n    return torch.cat((-x[..., d:], x[..., :d]), dim=-1)",
    "def rotate_half(x):\n    x1, x2 = x.split(x.shape[-1] // 2, dim=-1)\n    return torch.cat([-x2, x1], dim=-1)",
    # roll makes a new tensor; then negate its first half
    "def rotate_half(x):\n    d = x.shape[-1] // 2\n    out = x.roll(d, dims=-1)\n    out[..., :d] *= -1\n    return out",
    # two halves stacked along a new dimension, then flattened back
    "def rotate_half(x):\n"
    "    d = x.shape[-1] // 2\n"
    "    return torch.stack((-x[..., d:], x[..., :d]), dim=-2).flatten(-2)",
    # NumPy-built
    "import numpy as np\n"
    "def rotate_half(x):\n"
    "    a = x.numpy()\n"
    "    d = a.shape[-1] // 2\n"
    "    return torch.from_numpy(np.concatenate([-a[..., d:], a[..., :d]], axis=-1))",
    # a float64 computation, back to x's dtype
    "def rotate_half(x):\n"
    "    d = x.shape[-1] // 2\n"
    "    y = x.double()\n"
    "    return torch.cat([-y[..., d:], y[..., :d]], dim=-1).to(x.dtype)",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "noisy": "the task asks for exactly -x2 followed by x1",
    "inputs-changed": "the task says x itself must not change",
}
