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
]
RIGHT = [
    "def standardise(x, dim):\n"
    "    std, mean = torch.std_mean(x, dim=dim, keepdim=True)\n"
    "    return (x - mean) / std",
    # unsqueeze puts the reduced dimension back, for negative dims too
    "def standardise(x, dim):\n"
    "    return (x - x.mean(dim).unsqueeze(dim)) / x.std(dim).unsqueeze(dim)",
]
