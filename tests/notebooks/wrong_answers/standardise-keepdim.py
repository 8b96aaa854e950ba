WRONG = [
    # no keepdim: the reduced shape aligns with the wrong dimensions (silently, for square inputs)
    "def standardise(x, dim):\n    return (x - x.mean(dim=dim)) / x.std(dim=dim)",
    # ignores dim and always standardises rows
    "def standardise(x, dim):\n    return (x - x.mean(dim=-1, keepdim=True)) / x.std(dim=-1, keepdim=True)",
    # NumPy's population standard deviation instead of PyTorch's default
    "def standardise(x, dim):\n"
    "    return (x - x.mean(dim=dim, keepdim=True)) / x.std(dim=dim, keepdim=True, correction=0)",
    # in place: changes the caller's tensor
    "def standardise(x, dim):\n"
    "    mean, std = x.mean(dim=dim, keepdim=True), x.std(dim=dim, keepdim=True)\n"
    "    x -= mean\n"
    "    x /= std\n"
    "    return x",
    # converts to float32, losing float64 inputs' dtype
    "def standardise(x, dim):\n"
    "    x = x.float()\n"
    "    return (x - x.mean(dim=dim, keepdim=True)) / x.std(dim=dim, keepdim=True)",
    # mean and std over the whole tensor
    "def standardise(x, dim):\n    return (x - x.mean()) / x.std()",
    # a float32 computation for float64 input, converted back: rounded at float32
    "def standardise(x, dim):\n"
    "    y = x.float()\n"
    "    return ((y - y.mean(dim, keepdim=True)) / y.std(dim, keepdim=True)).to(x.dtype)",
]
RIGHT = [
    "def standardise(x, dim):\n"
    "    std, mean = torch.std_mean(x, dim=dim, keepdim=True)\n"
    "    return (x - mean) / std",
    # unsqueeze puts the reduced dimension back, for negative dims too
    "def standardise(x, dim):\n"
    "    return (x - x.mean(dim).unsqueeze(dim)) / x.std(dim).unsqueeze(dim)",
    # computed in float64, back to x's dtype
    "def standardise(x, dim):\n"
    "    y = x.double()\n"
    "    return ((y - y.mean(dim, keepdim=True)) / y.std(dim, keepdim=True)).to(x.dtype)",
    # moves dim to the end and back
    "def standardise(x, dim):\n"
    "    y = x.movedim(dim, -1)\n"
    "    out = (y - y.mean(-1, keepdim=True)) / y.std(-1, keepdim=True)\n"
    "    return out.movedim(-1, dim)",
    # the variance by hand, with Bessel's correction
    "def standardise(x, dim):\n"
    "    n = x.shape[dim]\n"
    "    d = x - x.mean(dim, keepdim=True)\n"
    "    return d / ((d * d).sum(dim, keepdim=True) / (n - 1)).sqrt()",
    # in place on a copy of its own
    "def standardise(x, dim):\n"
    "    out = x.clone()\n"
    "    out -= x.mean(dim, keepdim=True)\n"
    "    out /= x.std(dim, keepdim=True)\n"
    "    return out",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "inputs-changed": "the task says x itself must not change",
}
